/* processes.h - a process and everything it started, found through /proc.
 *
 * A process group or a session is the learner's to leave (setpgid, setsid), so what the
 * learner's code started is found by parentage instead: every process whose chain of parents
 * leads to the root. An orphan is reparented to the nearest subreaper (the checker makes itself
 * one), so it stays in the tree of whoever started the code.
 */
#ifndef COURSE_PROCESSES_H
#define COURSE_PROCESSES_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* The descendants of root (not root itself), at most `room` of them, into pids; how many. */
size_t processes_below(pid_t root, pid_t *pids, size_t room);
/* Sends sig to root's descendants, and to root too when asked; returns how many got it. Run it
 * again after SIGKILL: a descendant may have forked between the scan and its signal. */
size_t signal_processes_below(pid_t root, int sig, bool root_too);

#endif

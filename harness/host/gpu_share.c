/* gpu_share.c - the GPU's lock files, shared by the programs beside each other (gpu_share.h). */
#define _GNU_SOURCE
#include "gpu_share.h"
#include "processes.h"
#include "timing.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

/* A holder that has had the GPU this long, while a timed test of another program waits for
 * it, stops until the timed test is done. So a test that hangs, or a long program, holds up
 * the timed tests beside it for a moment, not for its whole time, and, stopped, cannot disturb
 * their timing either. (Work it had already queued on the GPU goes on: a copy, or at most
 * GPU_WORK_MAX_BUSY_MS of gpu_work_keep_busy, which uses one thread of the GPU.) Short, since
 * the GPU is nobody's while the timed test waits for the last holder, and every program
 * beside it idles meanwhile: at 0.3 s, 16 test hosts spent most of their time so
 * (grader/README.md); at 0.05 s, with the holders looking every 0.02 s, a fifth of a class's
 * grading was such waits, 68 ms each (dev/gpu_lock_timeline.py, docs/performance.md). */
#define YIELD_AFTER_S 0.02

static struct {
    int gpu_lock, turnstile; /* -1 where nobody shares the GPU */
    bool alone;              /* held alone: for a timed test */
    double since;            /* when the holder got the GPU */
} share = {-1, -1, false, 0};

static double now_s(void)
{
    return host_clock_ms() / 1e3;
}

/* A lock is named by a path (VARIABLE=PATH: make check and make test), or handed over as an
 * open descriptor (VARIABLE_FD=N: make grade, whose sandbox holds no lock file the learner's
 * code could reach). Either way this process's copy is close-on-exec: a program it starts
 * must not hold the GPU's locks. */
int gpu_share_open_lock(const char *variable)
{
    char fd_variable[64];
    snprintf(fd_variable, sizeof fd_variable, "%s_FD", variable);
    const char *fd_text = getenv(fd_variable);
    if (fd_text != NULL && fd_text[0] != '\0') {
        char *end = NULL;
        long fd = strtol(fd_text, &end, 10);
        if (end != fd_text && *end == '\0' && fd > 2 && fd < 65536 && fcntl((int)fd, F_GETFD) != -1)
            return fcntl((int)fd, F_DUPFD_CLOEXEC, 3);
        return -1;
    }
    const char *path = getenv(variable);
    return path != NULL && path[0] != '\0' ? open(path, O_RDONLY | O_CLOEXEC) : -1;
}

void gpu_share_lock(int fd, int how)
{
    while (fd >= 0 && flock(fd, how) != 0 && errno == EINTR)
        ;
}

void gpu_share_open_context_turns(context_turns *turns)
{
    turns->held = -1;
    for (int i = 0; i < CONTEXT_TURNS; i++) {
        char variable[64];
        if (i == 0)
            snprintf(variable, sizeof variable, "COURSE_CONTEXT_LOCK");
        else
            snprintf(variable, sizeof variable, "COURSE_CONTEXT_LOCK_%d", i);
        turns->fds[i] = gpu_share_open_lock(variable);
    }
    turns->line = gpu_share_open_lock("COURSE_CONTEXT_LINE");
    turns->front = gpu_share_open_lock("COURSE_CONTEXT_FRONT");
}

/* A turn that nobody holds, taken without waiting; the number of turns there are, in *open. */
static bool take_a_free_turn(context_turns *turns, int *open)
{
    *open = 0;
    for (int i = 0; i < CONTEXT_TURNS && turns->held < 0; i++) {
        if (turns->fds[i] < 0)
            continue;
        ++*open;
        if (flock(turns->fds[i], LOCK_EX | LOCK_NB) == 0)
            turns->held = i;
    }
    return turns->held >= 0;
}

/* Whether a program waits at the line's front: it holds the front's lock. */
static bool someone_in_front(const context_turns *turns)
{
    if (turns->front < 0)
        return false;
    if (flock(turns->front, LOCK_SH | LOCK_NB) != 0)
        return true;
    gpu_share_lock(turns->front, LOCK_UN);
    return false;
}

double gpu_share_take_context_turn(context_turns *turns, bool ahead)
{
    const double asked = now_s();
    int open_turns = 0;
    if (turns->line >= 0) {
        /* In line, the first of it looking for whichever turn is given back first: no turn
         * idles while programs wait, and none that comes later takes a turn before those in
         * line. Each waiting for a turn of its own instead (without a line, below), all three
         * were taken only 52% of the time in a make test on an H100 while 21 programs waited
         * for one on average (docs/performance.md). The chains wait at the front, first of all
         * (gpu_share.h). */
        const bool in_front = ahead && turns->front >= 0;
        const int waits_at = in_front ? turns->front : turns->line;
        gpu_share_lock(waits_at, LOCK_EX);
        for (;;) {
            if ((in_front || !someone_in_front(turns)) &&
                (take_a_free_turn(turns, &open_turns) || open_turns == 0))
                break;
            nanosleep(&(struct timespec){0, 1000 * 1000}, NULL);
        }
        gpu_share_lock(waits_at, LOCK_UN);
        return now_s() - asked;
    }
    if (take_a_free_turn(turns, &open_turns) || open_turns == 0)
        return now_s() - asked;
    for (int i = 0, pick = (int)(getpid() % open_turns); i < CONTEXT_TURNS; i++) {
        if (turns->fds[i] >= 0 && pick-- == 0) {
            gpu_share_lock(turns->fds[i], LOCK_EX);
            turns->held = i;
            break;
        }
    }
    return now_s() - asked;
}

void gpu_share_give_back_context_turn(context_turns *turns)
{
    if (turns->held >= 0)
        gpu_share_lock(turns->fds[turns->held], LOCK_UN);
    turns->held = -1;
}

void gpu_share_open(void)
{
    share.gpu_lock = gpu_share_open_lock("COURSE_GPU_LOCK");
    share.turnstile = gpu_share_open_lock("COURSE_GPU_TURNSTILE");
}

bool gpu_share_active(void)
{
    return share.turnstile >= 0;
}

void gpu_share_close(void)
{
    if (share.gpu_lock >= 0)
        close(share.gpu_lock);
    if (share.turnstile >= 0)
        close(share.turnstile);
    share.gpu_lock = share.turnstile = -1;
}

void gpu_share_take(bool alone)
{
    gpu_share_lock(share.turnstile, LOCK_EX);
    gpu_share_lock(share.gpu_lock, alone ? LOCK_EX : LOCK_SH);
    gpu_share_lock(share.turnstile, LOCK_UN);
    share.alone = alone;
    share.since = now_s();
}

void gpu_share_give_back(void)
{
    gpu_share_lock(share.gpu_lock, LOCK_UN);
}

/* A timed test that waits holds the turnstile. A program on its way in holds it for the instant
 * between taking it and taking the GPU shared, so a turnstile held counts only when it is still
 * held a moment later. */
static bool a_timed_test_waits(void)
{
    for (int look = 0; look < 2; look++) {
        if (flock(share.turnstile, LOCK_SH | LOCK_NB) == 0) {
            flock(share.turnstile, LOCK_UN);
            return false;
        }
        if (look == 0)
            nanosleep(&(struct timespec){0, 1000 * 1000}, NULL);
    }
    return true;
}

bool gpu_share_should_yield(void)
{
    return share.turnstile >= 0 && !share.alone && now_s() - share.since >= YIELD_AFTER_S &&
           a_timed_test_waits();
}

double gpu_share_yield(pid_t root)
{
    const double stopped = now_s();
    /* The process and all it started, found by parentage: a group or a session is the
     * learner's code's to leave. Twice, for a fork between the scan and the signal. */
    signal_processes_below(root, SIGSTOP, true);
    signal_processes_below(root, SIGSTOP, true);
    gpu_share_give_back();
    gpu_share_take(false); /* after the timed test: it has the turnstile until it has the GPU */
    signal_processes_below(root, SIGCONT, true);
    return now_s() - stopped;
}

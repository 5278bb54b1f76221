/* gpu_share.h - how the programs that use one GPU side by side share it.
 *
 * Where several programs share a GPU (make check, make grade and make test name the lock files
 * in the environment: harness/gpu_locks.sh), a test that times the GPU must have it to itself,
 * and the others may share it. A program holds COURSE_GPU_LOCK shared while it runs an untimed
 * test, alone while it runs a timed one. A waiting timed test holds the turnstile beside it,
 * which every program passes on its way in, so that a stream of untimed tests cannot keep it
 * out for ever; and a program that has held the GPU shared for a while when a timed test waits
 * stops what it runs (SIGSTOP) until the timed test is done (gpu_share_yield). Test programs
 * do this in their judge (harness/host/runner.c); other programs, through tools/gpu_share.c.
 * Where the variables are not set, nobody shares the GPU and every call here does nothing.
 */
#ifndef GPU_SHARE_H
#define GPU_SHARE_H

#include <stdbool.h>
#include <sys/types.h>

/* Opens the lock files the environment names; -1 each where it names none. */
void gpu_share_open(void);
/* Whether the environment named them: whether this program shares the GPU at all. */
bool gpu_share_active(void);
/* Closes them: for a child that must not hold or release what its parent holds. */
void gpu_share_close(void);
/* Waits for the GPU: alone (a timed test) or shared. */
void gpu_share_take(bool alone);
void gpu_share_give_back(void);
/* Whether the holder should let a waiting timed test in now: it holds the GPU shared, has
 * held it for a while, and a timed test waits. Call it every GPU_SHARE_CHECK_S or so: every
 * program beside the GPU waits for the slowest to look. */
bool gpu_share_should_yield(void);
/* Stops `root` and every process below it, lets the timed test have the GPU, takes it shared
 * again and lets them go on. Returns the seconds they were stopped. */
double gpu_share_yield(pid_t root);

#define GPU_SHARE_CHECK_S 0.005

/* The lock a variable names, opened for flock: VARIABLE_FD=N, a descriptor handed over, or
 * VARIABLE=PATH; -1 where it names none. */
int gpu_share_open_lock(const char *variable);
/* flock(fd, how), again after a signal; nothing for fd -1. */
void gpu_share_lock(int fd, int how);

/* The turns to make a CUDA context: CONTEXT_TURNS lock files (COURSE_CONTEXT_LOCK,
 * COURSE_CONTEXT_LOCK_1, ...), so that at most that many are made at once on the machine. The
 * driver makes more of them a second several at a time than one at a time (dev/context_rate,
 * docs/performance.md), and each takes longer the more are made beside it: a few at a time
 * keeps both the rate and each one's wait. */
#define CONTEXT_TURNS 3
typedef struct context_turns {
    int fds[CONTEXT_TURNS]; /* -1 each where the environment names none */
    int line;               /* COURSE_CONTEXT_LINE: where the programs wait when all are taken */
    int front;              /* COURSE_CONTEXT_FRONT: the line's front, for the chains (below) */
    int held;               /* the index of the one held, -1 when none */
} context_turns;
void gpu_share_open_context_turns(context_turns *turns);
/* Waits for a turn, in line (COURSE_CONTEXT_LINE) behind the programs that wait already, for
 * whichever is given back first: no turn idles while programs wait. Without the line: a free
 * one if there is one, else the one this process's id picks. Returns the seconds it waited.
 * `ahead`: the context is a link of a chain, contexts made one after another that the rest of
 * a run waits for (a test host's third worker or later, each replacing one the learner's code
 * ended): it waits at the front (COURSE_CONTEXT_FRONT), and nobody in line takes a turn while a
 * program waits there. In a make test on an H100 a worker waited 7 s for its turn on average,
 * and a host whose code ended its worker in every test waited that long for each. */
double gpu_share_take_context_turn(context_turns *turns, bool ahead);
void gpu_share_give_back_context_turn(context_turns *turns);

#endif

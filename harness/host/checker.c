/* checker.c - the checker's side of the line to the judge (checker.h): the running test's state,
 * the deadline the judge moves on, and the GPU taken alone for a timed test's measurement. */
#include "checker.h"
#include "io.h"
#include "harness.h"
#include "remote_worker.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

double checker_now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

checker_state checker = {.command_fd = -1, .reply_fd = -1, .arena = -1};

/* The judge's news, taken into the checker's state: a deadline moved on (MOVE), a stop to come
 * (STOPPING). False for any other command. */
static bool take_news(const command *c)
{
    if (c->kind == COMMAND_MOVE)
        checker.deadline += c->seconds;
    else if (c->kind == COMMAND_STOPPING)
        checker.stops++;
    else
        return false;
    return true;
}

bool checker_read_judge(void)
{
    /* After a STOPPING, the MOVE that says how long the stop took is waited for: the judge
     * sends it only once it has let this process go on, and a deadline judged in between, the
     * stop's time not yet added, failed a test that a neighbour's timed test had stopped for
     * 2.04 s of its 2 ("did not finish within 2 s", docs/performance.md, stop 53). */
    bool move_due = false;
    for (;;) {
        struct pollfd fd = {checker.command_fd, POLLIN, 0};
        if (!move_due && poll(&fd, 1, 0) <= 0)
            return true;
        command c;
        if (!read_all(checker.command_fd, &c, sizeof c))
            return false;
        if (c.kind == COMMAND_QUIT)
            return false;
        if (take_news(&c))
            move_due = c.kind == COMMAND_STOPPING;
    }
}

unsigned harness_stops_so_far(void)
{
    (void)checker_read_judge(); /* a judge that is gone is seen by the next wait */
    return checker.stops;
}

void checker_not_graded(const char *why)
{
    if (!checker.not_graded)
        snprintf(checker.not_graded_why, sizeof checker.not_graded_why, "%s", why);
    checker.not_graded = true;
}

bool course_test_is_timed(void)
{
    return checker.in_test && checker.timed;
}

void checker_tell_judge(enum reply_kind kind)
{
    reply r = {kind, checker.exercise, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    if (kind == REPLY_STARTED) { /* this start's, never an earlier one's */
        r.turn_wait_s = checker.worker_turn_wait_s;
        r.making_s = checker.worker_making_s;
        checker.worker_turn_wait_s = checker.worker_making_s = 0;
    }
    if (!write_all(checker.reply_fd, &r, sizeof r))
        _exit(0); /* the judge is gone: nothing is graded any more */
}

/* Where programs share the GPU, the judge takes it alone for the test (after the programs that
 * hold it now let go) and then says go on; the time it waits is not the test's. */
void harness_gpu_alone_begin(void)
{
    ck_assert_msg(course_test_is_timed(),
                  "the course's test measures the GPU but is not declared with COURSE_TIMED_TEST "
                  "(a bug in the course)");
    if (checker.alone)
        return;
    /* A worker that has to start does so first: its turn to make a context, behind every
     * program that shares the GPU, must not come out of the window's time while nobody else
     * may use the GPU. */
    remote_ready_worker();
    if (checker.gpu_shared) {
        fflush(NULL); /* what the test printed so far goes out before the judge stops reading */
        const double asked = checker_now_s();
        checker_tell_judge(REPLY_ALONE);
        for (;;) {
            command go;
            if (!read_all(checker.command_fd, &go, sizeof go))
                _exit(0); /* the judge is gone: nothing is graded any more */
            if (go.kind == COMMAND_GO)
                break;
            (void)take_news(&go);
        }
        checker.deadline += checker_now_s() - asked;
    }
    checker.alone = true;
    const double probing = checker_now_s();
    harness_gpu_quiet(); /* nobody's work still queued on it (checks_timing.c) */
    /* The probe is the harness's time, not the test's (the judge's backstop allows for it). */
    checker.alone_since = checker_now_s();
    checker.deadline += checker.alone_since - probing;
}

void harness_gpu_alone_end(void)
{
    if (!checker.alone)
        return;
    checker.alone = false;
    if (!checker.gpu_shared)
        return;
    checker_tell_judge(REPLY_SHARED);
}

bool harness_gpu_is_alone(void)
{
    return checker.alone;
}


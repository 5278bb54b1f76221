/* test_judge_news.c - unit tests of the checker's reading of the judge's news
 * (harness/host/checker.c, checker_read_judge): a deadline moved on is added at once, and after
 * a STOPPING the checker waits for the MOVE that says how long the stop took, so that no
 * deadline is judged without it. A neighbour's timed test stopped a test 2.04 s of its 2, and
 * the checker, reading the STOPPING an instant before the MOVE, ended it as a hang
 * (docs/performance.md, stop 53).
 */
#include "checker.h"
#include "io.h"
#include "unit_main.h"

#include <check.h>
#include <pthread.h>
#include <time.h>
#include <unistd.h>

static int judge[2]; /* the judge's end writes, the checker's reads */

static void open_channel(void)
{
    ck_assert_int_eq(pipe(judge), 0);
    checker.command_fd = judge[0];
    checker.deadline = 100.0;
    checker.stops = 0;
}

static void close_channel(void)
{
    close(judge[0]);
    close(judge[1]);
}

static void send_news(enum command_kind kind, double seconds)
{
    const command c = {kind, 0, 0, 0, seconds};
    ck_assert(write_all(judge[1], &c, sizeof c));
}

/* The judge's side of a stop: the MOVE, once the stop is over. */
static void *move_after_the_stop(void *unused)
{
    (void)unused;
    nanosleep(&(struct timespec){0, 300 * 1000 * 1000}, NULL);
    send_news(COMMAND_MOVE, 2.5);
    return NULL;
}

START_TEST(a_deadline_moved_on_is_added_without_waiting)
{
    open_channel();
    send_news(COMMAND_MOVE, 1.5);
    ck_assert(checker_read_judge());
    ck_assert_double_eq_tol(checker.deadline, 101.5, 1e-9);
    const double began = checker_now_s();
    ck_assert(checker_read_judge()); /* nothing sent: it returns at once */
    ck_assert_double_lt(checker_now_s() - began, 0.1);
    close_channel();
}
END_TEST

START_TEST(after_a_stopping_the_move_is_waited_for)
{
    open_channel();
    send_news(COMMAND_STOPPING, 0);
    pthread_t judge_thread;
    const double began = checker_now_s();
    ck_assert_int_eq(pthread_create(&judge_thread, NULL, move_after_the_stop, NULL), 0);
    ck_assert(checker_read_judge());
    const double waited = checker_now_s() - began;
    pthread_join(judge_thread, NULL);
    ck_assert_msg(checker.deadline == 102.5,
                  "checker_read_judge returned after %.3f s with the deadline at %.1f, where "
                  "102.5 was due: it read the STOPPING and returned before the MOVE that says "
                  "how long the stop took, so a deadline judged next leaves the stop's time out",
                  waited, checker.deadline);
    ck_assert_uint_eq(checker.stops, 1);
    close_channel();
}
END_TEST

START_TEST(a_judge_gone_after_a_stopping_ends_the_wait)
{
    open_channel();
    send_news(COMMAND_STOPPING, 0);
    close(judge[1]);
    ck_assert(!checker_read_judge());
    close(judge[0]);
}
END_TEST

int main(void)
{
    Suite *suite = suite_create("judge_news");
    TCase *tc = tcase_create("read");
    tcase_add_test(tc, a_deadline_moved_on_is_added_without_waiting);
    tcase_add_test(tc, after_a_stopping_the_move_is_waited_for);
    tcase_add_test(tc, a_judge_gone_after_a_stopping_ends_the_wait);
    suite_add_tcase(suite, tc);
    return run_unit_suite(suite);
}

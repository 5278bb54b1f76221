/* test_context_turns.c - unit tests of the turns to make a CUDA context (harness/host/gpu_share.c):
 * a program that finds every turn taken gets whichever is given back first, so that no turn
 * idles while programs wait for one; one that waits at the line's front gets it before them.
 *
 * The holders here are this process's own descriptors of the lock files: flock locks an open
 * file, so two descriptors of one process exclude each other as two processes would.
 */
#define _GNU_SOURCE
#include "gpu_share.h"
#include "unit_main.h"

#include <check.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

static char folder[] = "/tmp/context-turns-XXXXXX";
static const char *const turn_variables[CONTEXT_TURNS] = {
    "COURSE_CONTEXT_LOCK", "COURSE_CONTEXT_LOCK_1", "COURSE_CONTEXT_LOCK_2"};

/* The lock files, named in the environment as harness/gpu_locks.sh names them. */
static void make_lock_files(void)
{
    ck_assert_ptr_nonnull(mkdtemp(folder));
    char path[128];
    for (int i = 0; i <= CONTEXT_TURNS + 1; i++) {
        const char *variable = i < CONTEXT_TURNS    ? turn_variables[i]
                               : i == CONTEXT_TURNS ? "COURSE_CONTEXT_LINE"
                                                    : "COURSE_CONTEXT_FRONT";
        snprintf(path, sizeof path, "%s/%s.lock", folder, variable);
        int fd = open(path, O_CREAT | O_WRONLY, 0644);
        ck_assert_int_ge(fd, 0);
        close(fd);
        setenv(variable, path, 1);
    }
}

/* A descriptor of turn i holding it, as another program would. */
static int hold_turn(int i)
{
    int fd = open(getenv(turn_variables[i]), O_RDONLY);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(flock(fd, LOCK_EX | LOCK_NB), 0);
    return fd;
}

/* The lock files made, and every turn held, as other programs would: held[i] holds turn i. */
static void hold_every_turn(int held[CONTEXT_TURNS])
{
    make_lock_files();
    for (int i = 0; i < CONTEXT_TURNS; i++)
        held[i] = hold_turn(i);
}

typedef struct taker {
    pthread_t thread;
    context_turns turns;
    bool ahead;     /* it waits at the line's front */
    atomic_int got; /* the turn it took, -1 while it waits */
} taker;

static void *take(void *arg)
{
    taker *t = arg;
    gpu_share_take_context_turn(&t->turns, t->ahead);
    atomic_store(&t->got, t->turns.held);
    return NULL;
}

static void start_taker_at(taker *t, bool ahead)
{
    gpu_share_open_context_turns(&t->turns);
    t->ahead = ahead;
    atomic_store(&t->got, -1);
    ck_assert_int_eq(pthread_create(&t->thread, NULL, take, t), 0);
}

static void start_taker(taker *t)
{
    start_taker_at(t, false);
}

/* Two takers that have their turns: joined, and their turns given back. */
static void end_takers(taker *a, taker *b)
{
    pthread_join(a->thread, NULL);
    pthread_join(b->thread, NULL);
    gpu_share_give_back_context_turn(&a->turns);
    gpu_share_give_back_context_turn(&b->turns);
}

/* The turn it took within `seconds`, or -1. */
static int turn_taken_within(taker *t, double seconds)
{
    for (int waited_ms = 0; waited_ms < seconds * 1000; waited_ms++) {
        if (atomic_load(&t->got) >= 0)
            return atomic_load(&t->got);
        nanosleep(&(struct timespec){0, 1000 * 1000}, NULL);
    }
    return atomic_load(&t->got);
}

START_TEST(a_free_turn_is_taken_at_once)
{
    make_lock_files();
    int first = hold_turn(0);
    taker t;
    start_taker(&t);
    ck_assert_int_eq(turn_taken_within(&t, 1.0), 1);
    pthread_join(t.thread, NULL);
    gpu_share_give_back_context_turn(&t.turns);
    close(first);
}
END_TEST

/* Whichever of the three is given back, the waiting program takes it: each in turn. */
START_TEST(a_waiting_program_takes_whichever_turn_is_given_back)
{
    make_lock_files();
    for (int given_back = 0; given_back < CONTEXT_TURNS; given_back++) {
        int held[CONTEXT_TURNS];
        for (int i = 0; i < CONTEXT_TURNS; i++)
            held[i] = hold_turn(i);
        taker t;
        start_taker(&t);
        ck_assert_msg(turn_taken_within(&t, 0.05) == -1, "a turn was taken while all were held");
        close(held[given_back]);
        ck_assert_msg(turn_taken_within(&t, 2.0) == given_back,
                      "turn %d was given back, and the waiting program did not take it",
                      given_back);
        pthread_join(t.thread, NULL);
        gpu_share_give_back_context_turn(&t.turns);
        for (int i = 0; i < CONTEXT_TURNS; i++)
            if (i != given_back)
                close(held[i]);
    }
}
END_TEST

/* Two programs waiting, two turns given back one after the other: each goes to one of them. */
START_TEST(two_waiting_programs_take_two_turns_given_back)
{
    int held[CONTEXT_TURNS];
    hold_every_turn(held);
    taker a, b;
    start_taker(&a);
    start_taker(&b);
    close(held[2]);
    for (int waited_ms = 0; waited_ms < 2000 && atomic_load(&a.got) < 0 && atomic_load(&b.got) < 0;
         waited_ms++)
        nanosleep(&(struct timespec){0, 1000 * 1000}, NULL);
    nanosleep(&(struct timespec){0, 20 * 1000 * 1000}, NULL); /* time for a second, wrong taker */
    ck_assert_msg((atomic_load(&a.got) == 2) + (atomic_load(&b.got) == 2) == 1 &&
                      atomic_load(&a.got) + atomic_load(&b.got) == 1,
                  "one of the two waiting programs should have the turn given back, the other "
                  "still wait");
    close(held[0]);
    ck_assert_int_eq(turn_taken_within(atomic_load(&a.got) == 2 ? &b : &a, 2.0), 0);
    end_takers(&a, &b);
    close(held[1]);
}
END_TEST

/* A program in line, then one at the front: the first turn given back goes to the one at the
 * front, though it came later, and the next to the one in line. */
START_TEST(a_program_at_the_front_takes_a_turn_before_the_line)
{
    int held[CONTEXT_TURNS];
    hold_every_turn(held);
    taker in_line, in_front;
    start_taker(&in_line);
    nanosleep(&(struct timespec){0, 20 * 1000 * 1000}, NULL); /* in line first */
    start_taker_at(&in_front, true);
    nanosleep(&(struct timespec){0, 20 * 1000 * 1000}, NULL);
    close(held[1]);
    ck_assert_msg(turn_taken_within(&in_front, 2.0) == 1,
                  "turn 1 was given back, and the program at the front did not take it");
    nanosleep(&(struct timespec){0, 20 * 1000 * 1000}, NULL); /* time for a wrong taker */
    ck_assert_msg(atomic_load(&in_line.got) == -1,
                  "the program in line took a turn while one waited at the front");
    close(held[2]);
    ck_assert_msg(turn_taken_within(&in_line, 2.0) == 2,
                  "turn 2 was given back, and the program in line did not take it");
    end_takers(&in_line, &in_front);
    close(held[0]);
}
END_TEST

int main(void)
{
    Suite *suite = suite_create("context turns");
    TCase *tc = tcase_create("turns");
    tcase_add_test(tc, a_free_turn_is_taken_at_once);
    tcase_add_test(tc, a_waiting_program_takes_whichever_turn_is_given_back);
    tcase_add_test(tc, two_waiting_programs_take_two_turns_given_back);
    tcase_add_test(tc, a_program_at_the_front_takes_a_turn_before_the_line);
    suite_add_tcase(suite, tc);
    return run_unit_suite(suite);
}

/* host.h - the test host's exercises, shared by its three parts: runner.c (main: the modules,
 * the options, the reports), judge.c (the judge's side of each test) and checker_main.c (the
 * checker's loop). */
#ifndef COURSE_HOST_H
#define COURSE_HOST_H

#include "harness.h"
#include "report.h"

#include <stdbool.h>
#include <stddef.h>

#define MAX_TESTS 64
/* How far past a test's own limit the judge waits for the checker, which enforces the limit
 * on the learner's code: past this, the checker itself is stuck (a problem of the course). */
#define BACKSTOP_S 20.0

typedef struct registered_test {
    const TTest *test;
    int points;
    int line;
    bool timed;
    bool host_only; /* COURSE_HOST_TEST: runs where there is no GPU */
} registered_test;

/* An exercise this program runs: a test module, and the learner's module it calls. */
typedef struct exercise_entry {
    const course_exercise *info;
    registered_test tests[MAX_TESTS];
    int count;
    report_options options;
    const char *report_path; /* --report: where its block goes */
    const char *learner;     /* --learner: the learner's module */
    bool skip_timed;
    bool gpu_absent;      /* no GPU: only its COURSE_HOST_TESTs run, in a checker without CUDA */
    int gpus_needed;      /* COURSE_EXERCISE_NEEDS_GPUS, else 1 */
    int work_queues;      /* COURSE_EXERCISE_WORK_QUEUES, else 0: the environment's */
    bool timed_with_all_queues; /* COURSE_EXERCISE_TIMED_WITH_ALL_QUEUES */
    int gpus_seen;        /* where fewer than needed: how many the checker saw, else 0 */
    void *module;         /* dlopen's handle */
    char unloadable[512]; /* why a module could not be loaded; "" when it was */
} exercise_entry;

/* The exercises, in the order they were named (runner.c). */
extern exercise_entry **host_entries;
extern int host_entry_count;
/* The hardware work queues the worker's context is made with: the most any exercise of this run
 * asks for, or 0 for the environment's (runner.c, work_queues_for_all). */
extern int host_work_queues;

/* "the_floats_come_back_unchanged" reads as "the floats come back unchanged". */
void host_sentence_from_name(const char *name, char *sentence, size_t size);

/* COURSE_RUNNER_STATS=1: a line on standard error for each checker and worker started, each
 * test's time, each fresh start and each stop, to find where a run's time and contexts go. */
void host_stat(const char *format, ...) __attribute__((format(printf, 1, 2)));

/* --- The judge (judge.c) ---------------------------------------------------------------------- */

/* Runs exercise x's tests, one after another, in the checker (started where there is none),
 * into outcomes. False, with why, when the first checker found no GPU to use. */
bool judge_run_exercise(int x, test_outcome *outcomes, double timeout, bool use_cuda, char *why,
                        size_t why_size);
/* Asks the checker to end, and ends it and all below it. */
void judge_stop_checker(void);
/* make grade's result channel, which no checker may keep (-1: none). */
void judge_keep_result_channel_from_checkers(int fd);
/* Bytes the learner's code printed in the last exercise's tests. */
size_t judge_printed_bytes(void);
/* "2 checkers and 3 workers replaced for 99 tests", for COURSE_RUNNER_STATS. */
void judge_say_what_it_took(int tests);

/* --- The checker (checker_main.c) -------------------------------------------------------- */

/* The checker's life: its shared memory and CUDA context, then each test the judge names. */
_Noreturn void checker_main(int command_fd, int reply_fd, bool use_cuda, bool gpu_shared);

#endif

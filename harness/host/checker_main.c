/* checker_main.c - the checker's loop (host.h): its shared memory and CUDA context first, then
 * each test the judge names, run with Check in no-fork mode, its verdict sent back.
 *
 * The checker is the judge's child and the worker's parent. It runs the tests' bodies, which
 * call the learner's functions in the worker (remote.c), and decides every verdict: a test
 * that passes here passed on what the checker itself read back, or on the worker's evidence
 * (report.c counts the difference).
 */
#define _GNU_SOURCE /* pipe2 */
#include "arena.h"
#include "checker.h"
#include "device_info.h"
#include "gpu_share.h"
#include "host.h"
#include "io.h"
#include "remote_worker.h"
#include "trace.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <unistd.h>

#define MESSAGE_LIMIT ((size_t)64 << 10) /* the longest failure message Check takes */

extern bool course_test_completed;  /* harness.c */

/* Runs one test function with Check in no-fork mode: a runner, ready to read, that the caller
 * frees. */
static SRunner *run_with_check(const char *suite_name, const char *case_name, const TTest *test)
{
    Suite *suite = suite_create(suite_name);
    TCase *test_case = tcase_create(case_name);
    tcase_add_test(test_case, test);
    suite_add_tcase(suite, test_case);
    SRunner *runner = srunner_create(suite);
    srunner_set_fork_status(runner, CK_NOFORK);
    /* Check ends the process on a failure message over its limit (4 KiB unless told): a
     * diagnostic that lists many calls must be cut short in the report, not end the checker.
     * The message reaches the report cut to its size. */
    check_set_max_msg_size(MESSAGE_LIMIT);
    srunner_run_all(runner, CK_SILENT);
    return runner;
}

/* Runs a test; its failure message goes in message. */
static enum verdict run_test(const exercise_entry *e, const registered_test *test, char *message,
                             size_t size)
{
    char sentence[256];
    host_sentence_from_name(test->test->name, sentence, sizeof sentence);
    course_test_completed = false;
    SRunner *runner = run_with_check(e->info->id, sentence, test->test);

    enum verdict verdict = VERDICT_FAIL;
    TestResult **results = srunner_results(runner);
    if (srunner_ntests_run(runner) != 1) {
        snprintf(message, size, "the test did not run (Check ran %d tests)",
                 srunner_ntests_run(runner));
    } else if (tr_rtype(results[0]) == CK_PASS && course_test_completed) {
        verdict = VERDICT_PASS;
        snprintf(message, size, "%s", harness_test_note()); /* usually "" */
    } else if (tr_rtype(results[0]) == CK_PASS) {
        snprintf(message, size, "the test stopped before its end without failing");
    } else {
        snprintf(message, size, "%s", tr_msg(results[0]) ? tr_msg(results[0]) : "failed");
    }
    free(results);
    srunner_free(runner);
    return verdict;
}

/* A failed test's undo (harness_undo_if_failed), run as a test of Check's own, so that a
 * worker lost meanwhile ends it as it ends a test; what it finds is not the test's verdict. */
START_TEST(undo_after_a_failed_test)
{
    checker.undo(checker.undo_what);
}
END_TEST

/* The undo takes a few seconds at most: one that does not return in them has its worker ended,
 * as the threads it would have ended would have. */
#define UNDO_S 5.0

static void undo_after_a_failed_test_if_asked(void)
{
    /* Only in the worker that made what it undoes, still running: never a fresh one. (Each
     * test's start forgets the undo the test before it asked for.) */
    if (checker.undo == NULL || worker.pid == 0 || remote_lost_in_this_test ||
        checker.undo_worker != remote_workers_started())
        return;
    trace_start(); /* no error injected and no delay left by the test */
    trace_stop();
    const double limit = checker_now_s() + UNDO_S;
    if (checker.deadline > limit)
        checker.deadline = limit;
    const checker_state test = checker; /* what the test met, whatever the undo meets */
    srunner_free(run_with_check("undo", "undo after a failed test", undo_after_a_failed_test));
    checker.undo = NULL; /* done, once */
    checker.not_graded = test.not_graded;
    memcpy(checker.not_graded_why, test.not_graded_why, sizeof checker.not_graded_why);
}

/* What the learner's code printed, under a failure. */
static void append_output(char *message, size_t size)
{
    size_t dropped = 0;
    const char *printed = remote_test_output(&dropped);
    if (printed[0] == '\0')
        return;
    size_t used = strlen(message);
    snprintf(message + used, size - used, "\nIt printed%s:\n%s%s",
             dropped ? " (the end of it)" : "", dropped ? "..." : "", printed);
    used = strlen(message);
    while (used > 0 && message[used - 1] == '\n')
        message[--used] = '\0';
}

static void send_hello(int reply_fd, bool gpu_ok, int devices, const char *why, double turn_wait_s,
                       double making_s)
{
    hello h;
    memset(&h, 0, sizeof h);
    h.gpu_ok = gpu_ok;
    h.devices = devices;
    h.turn_wait_s = turn_wait_s;
    h.making_s = making_s;
    snprintf(h.why, sizeof h.why, "%s", why);
    (void)write_all(reply_fd, &h, sizeof h);
}

/* The checker's context has one hardware work queue to the GPU, where a context has 8 by default
 * (CUDA_DEVICE_MAX_CONNECTIONS). The driver takes longer to make a context the more queues the
 * GPU already serves and the more the new one asks for: beside 64 idle contexts, 1.47 s with 8
 * and 0.15 s with 1 (docs/performance.md, "What a context costs"). One queue still runs the
 * checker's own two streams side by side (both_directions' reference copies both ways at once;
 * measured there too). The worker, whose streams are the learner's, has what the environment
 * says, or one queue for an exercise whose code uses one stream (remote_worker.c): the variable
 * is put back as it was before anything else is started. */
#define CHECKER_CONNECTIONS "1"

static cudaError_t make_checker_context(int *count)
{
    const char *was = getenv(CONNECTIONS_VARIABLE);
    char *saved = was != NULL ? strdup(was) : NULL;
    setenv(CONNECTIONS_VARIABLE, CHECKER_CONNECTIONS, 1);
    cudaError_t err = cudaGetDeviceCount(count);
    if (err == cudaSuccess && *count > 0)
        err = cudaFree(NULL); /* makes the context now, outside any test's time */
    if (saved != NULL)
        setenv(CONNECTIONS_VARIABLE, saved, 1);
    else
        unsetenv(CONNECTIONS_VARIABLE);
    free(saved);
    return err;
}

/* The shared memory at its fixed address, before CUDA reserves its own ranges; then the CUDA
 * context, in one of the turns the programs that share the GPU take (gpu_share.h). Says hello
 * either way; false when the checker cannot go on. */
static bool checker_open(int reply_fd, bool use_cuda)
{
    char why[256] = "";
    double turn_wait_s = 0, making_s = 0;
    int count = 0;
    checker.arena = arena_create(why, sizeof why);
    if (checker.arena < 0 || !arena_map(checker.arena, why, sizeof why)) {
        send_hello(reply_fd, false, 0, why, 0, 0);
        return false;
    }
    if (use_cuda) {
        const double asked = checker_now_s();
        gpu_share_take_context_turn(&checker.context_turns, false);
        const double making = checker_now_s();
        cudaError_t err = make_checker_context(&count);
        gpu_share_give_back_context_turn(&checker.context_turns);
        turn_wait_s = making - asked;
        making_s = checker_now_s() - making;
        if (err != cudaSuccess || count == 0) {
            if (err != cudaSuccess)
                no_device_reason(err, why, sizeof why);
            else
                snprintf(why, sizeof why, "the CUDA runtime found no device");
            send_hello(reply_fd, false, 0, why, turn_wait_s, making_s);
            return false;
        }
    }
    send_hello(reply_fd, true, count, "", turn_wait_s, making_s);
    return true;
}

/* What became of the test that the worker's end of it says more about: a poisoned context
 * fails it whatever it saw; a test held up by something outside the code is not graded. */
static enum verdict after_the_worker(enum verdict verdict, uint32_t fresh_start,
                                     const char *poisoned_by, char *message, size_t size)
{
    if (fresh_start & FRESH_POISONED) {
        const size_t used = verdict == VERDICT_PASS ? 0 : strlen(message);
        snprintf(message + used, size - used,
                 "%sthe code left the GPU in an error state that no later call can clear: "
                 "%s. This happens when a kernel touches memory it does not own, or a launch "
                 "fails; every CUDA call after it in this process fails the same way",
                 used ? ". Also, " : "", poisoned_by);
        verdict = VERDICT_FAIL;
    }
    if ((fresh_start & FRESH_OVER_SHARE) && !(fresh_start & FRESH_POISONED)) {
        /* Whatever it saw: the students beside it could not have their share meanwhile. */
        remote_memory_over_words(message, size);
        verdict = VERDICT_FAIL;
    }
    if (checker.not_graded && verdict != VERDICT_PASS) {
        verdict = VERDICT_NOT_GRADED;
        snprintf(message, size, "not graded: %s", checker.not_graded_why);
    }
    return verdict;
}

/* Runs the test the judge named and sends its verdict; false when the judge is gone. */
static bool checker_run(const command *c, int reply_fd)
{
    static char message[sizeof(((test_outcome *)0)->message)];
    const exercise_entry *e = host_entries[c->exercise];
    const registered_test *test = &e->tests[c->test];
    checker.exercise = c->exercise;
    checker.learner_module = e->learner;
    checker.timeout = c->seconds;
    checker.deadline = checker_now_s() + c->seconds;
    checker.alone = checker.not_graded = checker.unloadable = false;
    checker.not_graded_why[0] = '\0';
    checker.timed = test->timed;
    checker.in_test = true;
    remote_on_device(0); /* a test that failed on another GPU's buffer left it current */
    remote_test_begin();
    enum verdict verdict = run_test(e, test, message, sizeof message);
    checker.in_test = false;
    harness_gpu_alone_end(); /* a test that failed while it measured */
    const bool evidence = trace_evidence_read && !harness_results_were_compared;
    const bool unloadable = checker.unloadable;
    if (verdict != VERDICT_PASS) {
        append_output(message, sizeof message);
        undo_after_a_failed_test_if_asked();
    }
    harness_release_buffers();
    char poisoned_by[256];
    const uint32_t fresh_start = remote_end_of_test(poisoned_by, sizeof poisoned_by);
    verdict = after_the_worker(verdict, fresh_start, poisoned_by, message, sizeof message);
    fflush(NULL); /* what the test printed goes out before its verdict */
    reply r = {REPLY_VERDICT,
               c->exercise,
               c->test,
               verdict,
               (evidence ? REPLY_EVIDENCE : 0) | (unloadable ? REPLY_UNLOADABLE : 0),
               fresh_start,
               remote_printed_bytes(),
               (uint32_t)strlen(message),
               0,
               0,
               0};
    return write_all(reply_fd, &r, sizeof r) && write_all(reply_fd, message, strlen(message));
}

_Noreturn void checker_main(int command_fd, int reply_fd, bool use_cuda, bool gpu_shared)
{
    checker.command_fd = command_fd;
    checker.reply_fd = reply_fd;
    checker.use_cuda = use_cuda;
    checker.gpu_shared = gpu_shared;
    gpu_share_open_context_turns(&checker.context_turns);
    /* The learner's orphans come back here, where their end can be seen to. */
    (void)prctl(PR_SET_CHILD_SUBREAPER, 1);
    if (!checker_open(reply_fd, use_cuda))
        _exit(0);
    remote_fit_worker(host_work_queues);
    for (command c; read_all(command_fd, &c, sizeof c);) {
        if (c.kind == COMMAND_QUIT)
            break;
        if (c.kind != COMMAND_RUN || c.exercise >= (uint32_t)host_entry_count ||
            c.test >= (uint32_t)host_entries[c.exercise]->count)
            continue; /* a MOVE or a STOPPING for a test that has ended */
        if (!checker_run(&c, reply_fd))
            break;
    }
    remote_quit();
    fflush(NULL);
    _exit(0);
}

/* runner.c - main() of the test host (build/tests/host): a judge, its checker, and the worker.
 *
 * Three processes, so that no verdict is decided where the learner's code runs:
 *
 *   - the judge (this process) loads the exercises' test modules (a test file and the stubs of
 *     its exercise's functions; never any learner code), holds the GPU's lock files and the
 *     result channel, and never touches CUDA: a child forked after that would find it unusable.
 *     It hands the checker one test at a time, with a time limit, and writes the reports;
 *   - the checker, its child, runs each test's body with Check in no-fork mode, in one CUDA
 *     context for all of them: the checks that decide a verdict run here;
 *   - the worker, the checker's child (remote.c, worker_main.c), loads the learner's modules and
 *     runs the learner's functions as the tests call them, across a socket, with the tests'
 *     host buffers in shared memory and their device buffers shared by CUDA IPC.
 *
 * A crash, a hang, an exit() or a CUDA error that poisons the context in the learner's code
 * ends the worker's process, fails that one test in the learner's terms, and the next test
 * gets a fresh worker; in the normal case an exercise costs no context of its own, the checker
 * and the worker one each for a whole run. What the worker says about itself (its call trace,
 * its threads) is evidence: a test that passes on it counts only where a test that rests on
 * results alone passed too (report.c). The judge and the checker mark themselves not dumpable,
 * so the worker, which runs as the same user, cannot open or trace their memory; the worker's
 * seccomp filter keeps it from signalling them.
 *
 * Usage: host [OPTION...] --module TESTS.so [EXERCISE-OPTION...] [--module ...]...
 *   options: --tally FILE, --color|--no-color, --verbose, --rubric, --result-fd N
 *   exercise options, for the module named before them:
 *            --learner FILE (the learner's module: their file and its dispatchers),
 *            --source FILE, --json FILE, --report FILE (the block goes to that file, not to
 *            standard output), --skip-timed (as COURSE_SKIP_TIMED=1, for this exercise alone)
 * Exit status: 0 all tests passed, 1 some failed, 2 usage, 77 no CUDA device.
 * COURSE_TEST_TIMEOUT: seconds one test may take (default 20).
 * COURSE_RUNNER_STATS=1: where the time and the workers went, on standard error.
 * COURSE_SKIP_TIMED=1: the timed tests are not run, and fail saying so (the self-test's first
 * look at a known mistake, whose diagnostic usually comes from an untimed test).
 * COURSE_SKIP_GPU_PROBE=1: no CUDA at all (the harness's own self-test).
 *
 * --result-fd N is make grade's result channel (grader/README.md): each exercise's JSON record
 * goes to the inherited descriptor N once its tests have finished, one record after another.
 * Only the judge ever writes it; the checker closes it before it runs anything.
 */
#define _GNU_SOURCE /* strsignal, pipe2 */
#include "arena.h"
#include "checker.h"
#include "io.h"
#include "device_info.h"
#include "gpu_share.h"
#include "harness.h"
#include "processes.h"
#include "report.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_TESTS 64
#define DEFAULT_TIMEOUT_S 20.0
#define MAX_TIMEOUT_S 3600.0
#define EXIT_NO_GPU 77
#define CHECKER_START_S 120.0 /* a context can take a second when many processes ask at once */
/* How far past a test's own limit the judge waits for the checker, which enforces the limit
 * on the learner's code: past this, the checker itself is stuck (a problem of the course). */
#define BACKSTOP_S 20.0
#define MESSAGE_LIMIT ((size_t)64 << 10) /* the longest failure message Check takes */

extern bool course_test_completed; /* harness.c */
void harness_release_buffers(void); /* harness.c */

typedef struct registered_test {
    const TTest *test;
    int points;
    int line;
    bool timed;
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
    void *module;         /* dlopen's handle */
    char unloadable[512]; /* why a module could not be loaded; "" when it was */
} exercise_entry;

static exercise_entry *loading; /* where constructors register tests: a module's entry */
static exercise_entry **entries;
static int entry_count;
static const registered_test *running_test; /* in the checker, while a test runs */

void course_register_test(const TTest *test, int points, int line, bool timed)
{
    if (loading == NULL) {
        fprintf(stderr, "harness: a test registered outside a module\n");
        exit(2);
    }
    if (loading->count == MAX_TESTS) {
        fprintf(stderr, "harness: more than %d tests in one exercise\n", MAX_TESTS);
        exit(2);
    }
    loading->tests[loading->count++] = (registered_test){test, points, line, timed};
}

static int by_line(const void *a, const void *b)
{
    const int x = ((const registered_test *)a)->line;
    const int y = ((const registered_test *)b)->line;
    return (x > y) - (x < y);
}

/* "the_floats_come_back_unchanged" reads as "the floats come back unchanged". */
static void sentence_from_name(const char *name, char *sentence, size_t size)
{
    snprintf(sentence, size, "%s", name);
    for (char *c = sentence; *c; c++)
        if (*c == '_')
            *c = ' ';
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* COURSE_RUNNER_STATS=1: a line on standard error for each checker and worker started, each
 * test's time, each fresh start and each stop, to find where a run's time and contexts go. */
__attribute__((format(printf, 1, 2))) static void runner_stat(const char *format, ...)
{
    const char *wanted = getenv("COURSE_RUNNER_STATS");
    if (wanted == NULL || wanted[0] == '\0' || strcmp(wanted, "0") == 0)
        return;
    va_list args;
    va_start(args, format);
    fputs("runner: ", stderr);
    vfprintf(stderr, format, args);
    fputc('\n', stderr);
    va_end(args);
}

/* --- The checker ------------------------------------------------------------------------ */

/* Runs a test with Check in no-fork mode; its failure message goes in message. */
static enum verdict run_test(const exercise_entry *e, const registered_test *test, char *message,
                             size_t size)
{
    char sentence[256];
    sentence_from_name(test->test->name, sentence, sizeof sentence);
    Suite *suite = suite_create(e->info->id);
    TCase *test_case = tcase_create(sentence);
    tcase_add_test(test_case, test->test);
    suite_add_tcase(suite, test_case);
    SRunner *runner = srunner_create(suite);
    srunner_set_fork_status(runner, CK_NOFORK);
    /* Check ends the process on a failure message over its limit (4 KiB unless told): a
     * diagnostic that lists many calls must be cut short in the report, not end the checker.
     * The message reaches the report cut to its size. */
    check_set_max_msg_size(MESSAGE_LIMIT);
    course_test_completed = false;
    srunner_run_all(runner, CK_SILENT);

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

/* What the learner's code printed, under a failure. */
static void append_output(char *message, size_t size)
{
    size_t dropped = 0;
    const char *printed = remote_test_output(&dropped);
    if (printed[0] == '\0')
        return;
    size_t used = strlen(message);
    snprintf(message + used, size - used, "\nIt printed%s:\n%s%s", dropped ? " (the end of it)" : "",
             dropped ? "..." : "", printed);
    used = strlen(message);
    while (used > 0 && message[used - 1] == '\n')
        message[--used] = '\0';
}

static void send_hello(int reply_fd, bool gpu_ok, const char *why, double turn_wait_s,
                       double making_s)
{
    hello h;
    memset(&h, 0, sizeof h);
    h.gpu_ok = gpu_ok;
    h.turn_wait_s = turn_wait_s;
    h.making_s = making_s;
    snprintf(h.why, sizeof h.why, "%s", why);
    (void)write_all(reply_fd, &h, sizeof h);
}

static _Noreturn void checker_main(int command_fd, int reply_fd, bool use_cuda, bool gpu_shared)
{
    checker.command_fd = command_fd;
    checker.reply_fd = reply_fd;
    checker.use_cuda = use_cuda;
    checker.gpu_shared = gpu_shared;
    checker.context_lock = gpu_share_open_lock("COURSE_CONTEXT_LOCK");
    /* The learner's orphans come back here, where their end can be seen to. */
    (void)prctl(PR_SET_CHILD_SUBREAPER, 1);
    char why[256] = "";
    double turn_wait_s = 0, making_s = 0;
    /* The shared memory first, at its fixed address, before CUDA reserves its own ranges. */
    checker.arena = arena_create(why, sizeof why);
    if (checker.arena < 0 || !arena_map(checker.arena, why, sizeof why)) {
        send_hello(reply_fd, false, why, 0, 0);
        _exit(0);
    }
    if (use_cuda) {
        int count = 0;
        const double asked = now_s();
        gpu_share_lock(checker.context_lock, LOCK_EX);
        const double making = now_s();
        cudaError_t err = cudaGetDeviceCount(&count);
        if (err == cudaSuccess && count > 0)
            err = cudaFree(NULL); /* makes the context now, outside any test's time */
        gpu_share_lock(checker.context_lock, LOCK_UN);
        turn_wait_s = making - asked;
        making_s = now_s() - making;
        if (err != cudaSuccess || count == 0) {
            if (err != cudaSuccess)
                no_device_reason(err, why, sizeof why);
            else
                snprintf(why, sizeof why, "the CUDA runtime found no device");
            send_hello(reply_fd, false, why, turn_wait_s, making_s);
            _exit(0);
        }
    }
    send_hello(reply_fd, true, "", turn_wait_s, making_s);

    static char message[sizeof(((test_outcome *)0)->message)];
    for (command c; read_all(command_fd, &c, sizeof c);) {
        if (c.kind == COMMAND_QUIT)
            break;
        if (c.kind != COMMAND_RUN || c.exercise >= (uint32_t)entry_count ||
            c.test >= (uint32_t)entries[c.exercise]->count)
            continue; /* a MOVE for a test that has ended */
        const exercise_entry *e = entries[c.exercise];
        checker.exercise = c.exercise;
        checker.learner_module = e->learner;
        checker.timeout = c.seconds;
        checker.deadline = now_s() + c.seconds;
        checker.alone = checker.not_graded = checker.unloadable = false;
        checker.not_graded_why[0] = '\0';
        running_test = &e->tests[c.test];
        checker.timed = running_test->timed;
        checker.in_test = true;
        remote_test_begin();
        enum verdict verdict = run_test(e, running_test, message, sizeof message);
        running_test = NULL;
        checker.in_test = false;
        harness_gpu_alone_end(); /* a test that failed while it measured */
        const bool evidence = trace_evidence_read && !harness_results_were_compared;
        const bool unloadable = checker.unloadable;
        if (verdict != VERDICT_PASS)
            append_output(message, sizeof message);
        harness_release_buffers();
        char poisoned_by[256];
        uint32_t fresh_start = remote_end_of_test(poisoned_by, sizeof poisoned_by);
        if (fresh_start & FRESH_POISONED) {
            /* The worker's context cannot be used again: whatever the test saw, it fails. */
            const size_t used = verdict == VERDICT_PASS ? 0 : strlen(message);
            snprintf(message + used, sizeof message - used,
                     "%sthe code left the GPU in an error state that no later call can clear: "
                     "%s. This happens when a kernel touches memory it does not own, or a launch "
                     "fails; every CUDA call after it in this process fails the same way",
                     used ? ". Also, " : "", poisoned_by);
            verdict = VERDICT_FAIL;
        }
        if (checker.not_graded && verdict != VERDICT_PASS) {
            verdict = VERDICT_NOT_GRADED;
            snprintf(message, sizeof message, "not graded: %s", checker.not_graded_why);
        }
        fflush(NULL); /* what the test printed goes out before its verdict */
        reply r = {REPLY_VERDICT,
                   c.exercise,
                   c.test,
                   verdict,
                   (evidence ? REPLY_EVIDENCE : 0) | (unloadable ? REPLY_UNLOADABLE : 0),
                   fresh_start,
                   remote_printed_bytes(),
                   (uint32_t)strlen(message),
                   0};
        if (!write_all(reply_fd, &r, sizeof r) || !write_all(reply_fd, message, strlen(message)))
            break;
    }
    remote_quit();
    fflush(NULL);
    _exit(0);
}

/* --- The judge ----------------------------------------------------------------------------- */

typedef struct checker_process {
    pid_t pid;
    int command_fd, reply_fd, output_fd;
} checker_process;

static int result_fd = -1; /* make grade's channel, held by the judge alone */
static checker_process the_checker = {0, -1, -1, -1};
static int checkers_started, workers_replaced;

/* Starts the checker: its standard output and error go to a pipe the judge reads (what the
 * course's own code prints; the learner's goes to the checker). */
static bool start_checker(checker_process *k, bool use_cuda)
{
    int to_checker[2], from_checker[2], output[2];
    if (pipe2(to_checker, O_CLOEXEC) != 0)
        return false;
    if (pipe2(from_checker, O_CLOEXEC) != 0 || pipe2(output, O_CLOEXEC) != 0) {
        close(to_checker[0]);
        close(to_checker[1]);
        return false;
    }
    fflush(NULL);
    const bool gpu_shared = gpu_share_active();
    pid_t pid = fork();
    if (pid == 0) {
        setpgid(0, 0); /* its own group, so that what it starts dies with it */
        signal(SIGPIPE, SIG_DFL);
        if (result_fd >= 0)
            close(result_fd);
        gpu_share_close(); /* the judge's: a checker that unlocked them would unlock its */
        dup2(output[1], STDOUT_FILENO);
        dup2(output[1], STDERR_FILENO);
        close(to_checker[1]);
        close(from_checker[0]);
        close(output[0]);
        checker_main(to_checker[0], from_checker[1], use_cuda, gpu_shared);
    }
    close(to_checker[0]);
    close(from_checker[1]);
    close(output[1]);
    if (pid < 0) {
        close(to_checker[1]);
        close(from_checker[0]);
        close(output[0]);
        return false;
    }
    setpgid(pid, pid);
    fcntl(output[0], F_SETFL, O_NONBLOCK);
    fcntl(from_checker[0], F_SETFL, O_NONBLOCK);
    *k = (checker_process){pid, to_checker[1], from_checker[0], output[0]};
    checkers_started++;
    return true;
}

/* The checker's own output: the course's, kept for the note when it dies. */
static char checker_said[1024];

static bool drain_output(const checker_process *k)
{
    char buffer[65536];
    for (;;) {
        ssize_t got = read(k->output_fd, buffer, sizeof buffer);
        if (got > 0) {
            size_t keep = (size_t)got < sizeof checker_said - 1 ? (size_t)got
                                                                : sizeof checker_said - 1;
            memcpy(checker_said, buffer + got - keep, keep);
            checker_said[keep] = '\0';
            continue;
        }
        return !(got == 0 || (got < 0 && errno != EAGAIN && errno != EINTR));
    }
}

/* Stops the checker, its worker and all they started, for as long as a timed test of another
 * program has the GPU, and tells the checker how long that was: its deadline moves on. */
static void yield_to_a_timed_test(const checker_process *k, double *deadline)
{
    if (!gpu_share_should_yield())
        return;
    const double stopped = gpu_share_yield(k->pid);
    *deadline += stopped;
    command move = {COMMAND_MOVE, 0, 0, 0, stopped};
    (void)write_all(k->command_fd, &move, sizeof move);
    runner_stat("a test stopped for %.2f s while a timed test had the GPU", stopped);
}

/* Waits until the checker's pipe holds `size` more bytes at buffer, or the deadline, reading its
 * output meanwhile. Returns 1 when read, 0 at the pipe's end, -1 at the deadline. While
 * `running` (a test has the GPU), it yields the GPU to timed tests that wait for it. */
static int await(const checker_process *k, void *buffer, size_t size, double *deadline, bool running)
{
    char *at = buffer;
    while (size > 0) {
        double left = *deadline - now_s();
        if (left <= 0)
            return -1;
        if (running && gpu_share_active() && left > GPU_SHARE_CHECK_S)
            left = GPU_SHARE_CHECK_S;
        struct pollfd fds[2] = {{k->reply_fd, POLLIN, 0}, {k->output_fd, POLLIN, 0}};
        int ready = poll(fds, 2, (int)ceil(left * 1000));
        if (ready < 0 && errno != EINTR)
            return 0;
        if (running)
            yield_to_a_timed_test(k, deadline);
        if (fds[1].revents)
            (void)drain_output(k);
        if (fds[0].revents == 0)
            continue;
        ssize_t got = read(k->reply_fd, at, size);
        if (got == 0 || (got < 0 && errno != EAGAIN && errno != EINTR))
            return 0;
        if (got > 0) {
            at += got;
            size -= (size_t)got;
        }
    }
    return 1;
}

/* Ends the checker and everything below it (its worker, what the learner's code started). */
static void stop_checker(checker_process *k, bool ask_first)
{
    if (ask_first) {
        command quit = {COMMAND_QUIT, 0, 0, 0, 0};
        (void)write_all(k->command_fd, &quit, sizeof quit);
    }
    close(k->command_fd);
    pid_t done = 0;
    int status;
    for (int tries = 0; tries < 400 && (done = waitpid(k->pid, &status, WNOHANG)) == 0; tries++) {
        (void)drain_output(k);
        usleep(5000);
    }
    for (int pass = 0; pass < 2; pass++)
        signal_processes_below(k->pid, SIGKILL, done == 0);
    if (done == 0)
        waitpid(k->pid, &status, 0);
    (void)drain_output(k);
    close(k->reply_fd);
    close(k->output_fd);
    k->pid = 0;
}

static size_t printed_total; /* bytes the learner's code printed in this exercise's tests */

/* What became of each test of an exercise, one after another */
static bool run_exercise(int x, test_outcome *outcomes, double timeout, bool use_cuda, char *why,
                         size_t why_size)
{
    exercise_entry *e = entries[x];
    checker_process *k = &the_checker;
    runner_stat("exercise %s (%s)", e->info->id, e->options.source ? e->options.source : "");
    for (int t = 0; t < e->count; t++) {
        if (e->skip_timed && e->tests[t].timed) {
            outcomes[t].ran = true;
            snprintf(outcomes[t].message, sizeof outcomes[t].message,
                     "not run: COURSE_SKIP_TIMED=1 skips the tests that time the GPU");
            continue;
        }
        if (e->unloadable[0] != '\0') {
            outcomes[t].ran = true;
            snprintf(outcomes[t].message, sizeof outcomes[t].message, "%s", e->unloadable);
            continue;
        }
        if (k->pid == 0) {
            hello h;
            if (!start_checker(k, use_cuda)) {
                snprintf(outcomes[t].message, sizeof outcomes[t].message,
                         "not graded: no process could be started for the test (%s)",
                         strerror(errno));
                outcomes[t].not_graded = true;
                continue;
            }
            const double starting = now_s();
            double started_by = starting + CHECKER_START_S;
            int got = await(k, &h, sizeof h, &started_by, false);
            runner_stat("checker %d ready in %.2f s (%.2f s waiting for a turn to make its "
                        "context, %.2f s making it)",
                        checkers_started, now_s() - starting, got == 1 ? h.turn_wait_s : 0,
                        got == 1 ? h.making_s : 0);
            if (got != 1 || !h.gpu_ok) {
                stop_checker(k, false);
                if (got == 1)
                    snprintf(why, why_size, "%s", h.why);
                else
                    snprintf(why, why_size, "the CUDA runtime %s while looking for a device",
                             got == 0 ? "crashed" : "hung");
                if (checkers_started == 1)
                    return false;
                snprintf(outcomes[t].message, sizeof outcomes[t].message,
                         "not graded: its process could not use the GPU (%s)", why);
                outcomes[t].not_graded = true;
                continue;
            }
        }

        command c = {COMMAND_RUN, (uint32_t)x, (uint32_t)t, 0, timeout};
        reply r;
        /* The test's time starts once it has the GPU: waiting for it is not the test's doing.
         * Every test shares it at first; a timed test has it alone while it measures. */
        const double waiting = now_s();
        gpu_share_take(false);
        const double running = now_s();
        double deadline = running + timeout + BACKSTOP_S, alone_since = 0, alone_s = 0,
               alone_wait_s = 0;
        bool alone = false;
        int got = write_all(k->command_fd, &c, sizeof c) ? 1 : 0;
        while (got == 1) {
            got = await(k, &r, sizeof r, &deadline, true);
            if (got != 1 || r.kind == REPLY_VERDICT)
                break;
            if (r.kind == REPLY_ALONE && !alone && e->tests[t].timed) {
                const double asked = now_s();
                gpu_share_give_back();
                gpu_share_take(true);
                alone = true;
                alone_since = now_s();
                alone_wait_s += alone_since - asked;
                deadline += alone_since - asked;
                command go = {COMMAND_GO, (uint32_t)x, (uint32_t)t, 0, 0};
                if (!write_all(k->command_fd, &go, sizeof go))
                    got = 0;
            } else if (r.kind == REPLY_SHARED && alone) {
                alone = false;
                alone_s += now_s() - alone_since;
                const double asked = now_s();
                gpu_share_give_back();
                gpu_share_take(false);
                /* Taking it back may wait behind another program's timed test: not the test's
                 * time either. */
                const double waited = now_s() - asked;
                deadline += waited;
                command move = {COMMAND_MOVE, (uint32_t)x, (uint32_t)t, 0, waited};
                (void)write_all(k->command_fd, &move, sizeof move);
            }
        }
        if (alone)
            alone_s += now_s() - alone_since;
        bool genuine = got == 1 && r.kind == REPLY_VERDICT && r.exercise == c.exercise &&
                       r.test == c.test && r.message_length < sizeof outcomes[t].message;
        if (genuine) {
            got = await(k, outcomes[t].message, r.message_length, &deadline, true);
            outcomes[t].message[got == 1 ? r.message_length : 0] = '\0';
            genuine = got == 1;
        }
        outcomes[t].ran = true;
        if (genuine) {
            (void)drain_output(k);
            outcomes[t].passed = r.verdict == VERDICT_PASS;
            outcomes[t].not_graded = r.verdict == VERDICT_NOT_GRADED;
            outcomes[t].evidence = (r.flags & REPLY_EVIDENCE) != 0;
            printed_total += (size_t)r.printed;
            text_make_printable(outcomes[t].message, sizeof outcomes[t].message);
            if (r.flags & REPLY_UNLOADABLE)
                snprintf(e->unloadable, sizeof e->unloadable, "%.*s",
                         (int)sizeof e->unloadable - 1, outcomes[t].message);
            if (r.fresh_start) {
                workers_replaced++;
                runner_stat("a fresh worker after test %d: %s", t + 1,
                            fresh_start_words(r.fresh_start));
            }
        } else {
            /* The checker is the course's: a crash or a hang of its own says nothing of the
             * learner's code, so the test is not graded, never failed. */
            stop_checker(k, false);
            outcomes[t].passed = false;
            outcomes[t].not_graded = true;
            snprintf(outcomes[t].message, sizeof outcomes[t].message,
                     "not graded: the course's checking process %s (a problem of the course or "
                     "the machine, not of this code)%s%s",
                     got == -1 ? "stopped answering" : "ended in the middle of the test",
                     checker_said[0] ? ". It said: " : "", checker_said);
            text_make_printable(outcomes[t].message, sizeof outcomes[t].message);
        }
        gpu_share_give_back(); /* once the checker is done with it, or gone */
        runner_stat("test %d%s took %.2f s (%.2f s of it with the GPU alone), after %.2f s "
                    "waiting for the GPU",
                    t + 1, e->tests[t].timed ? " (timed)" : "", now_s() - running - alone_wait_s,
                    alone_s, running - waiting + alone_wait_s);
    }
    return true;
}

/* Loads a test module: its tests register as its constructors run. It holds the course's test
 * file and the stubs of the exercise's functions; the learner's code is never loaded here. */
static void load_module(exercise_entry *e, const char *path)
{
    loading = e;
    void *module = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    loading = NULL;
    const course_exercise *info = module ? dlsym(module, "course_exercise_info") : NULL;
    if (info != NULL) {
        e->info = info;
        e->module = module;
        /* A module named twice is loaded once: its constructors ran for the first entry. */
        for (int x = 0; e->count == 0 && x < entry_count; x++) {
            if (entries[x] != e && entries[x]->module == module) {
                memcpy(e->tests, entries[x]->tests, sizeof e->tests);
                e->count = entries[x]->count;
            }
        }
        return;
    }
    fprintf(stderr, "harness: the course's test module %s could not be loaded: %s\n", path,
            module ? "it declares no exercise (course_exercise_info)" : dlerror());
    exit(2);
}

static exercise_entry *new_entry(void)
{
    exercise_entry **grown = realloc(entries, (size_t)(entry_count + 1) * sizeof *entries);
    exercise_entry *e = calloc(1, sizeof *e);
    if (grown == NULL || e == NULL) {
        perror("harness");
        exit(2);
    }
    entries = grown;
    entries[entry_count++] = e;
    return e;
}

/* Sends standard output to path while an exercise's block is written there (--report). */
static int report_to(const char *path)
{
    if (path == NULL)
        return -1;
    fflush(stdout);
    int saved = dup(STDOUT_FILENO);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (saved < 0 || fd < 0) {
        perror(path);
        exit(2);
    }
    dup2(fd, STDOUT_FILENO);
    close(fd);
    return saved;
}

static void report_back(int saved)
{
    if (saved < 0)
        return;
    fflush(stdout);
    dup2(saved, STDOUT_FILENO);
    close(saved);
}

/* The outcomes of an exercise's tests, named, before they run. */
static test_outcome *outcomes_for(const exercise_entry *e)
{
    test_outcome *outcomes = calloc((size_t)(e->count ? e->count : 1), sizeof *outcomes);
    if (outcomes == NULL) {
        perror("harness");
        exit(2);
    }
    for (int t = 0; t < e->count; t++) {
        sentence_from_name(e->tests[t].test->name, outcomes[t].sentence,
                           sizeof outcomes[t].sentence);
        outcomes[t].points = e->tests[t].points;
        outcomes[t].timed = e->tests[t].timed;
    }
    return outcomes;
}

static bool source_is_untouched_stub(const char *path)
{
    if (path == NULL)
        return false;
    FILE *file = fopen(path, "r");
    if (file == NULL)
        return false;
    char line[1024];
    bool has_todo = false;
    while (!has_todo && fgets(line, sizeof line, file))
        has_todo = strstr(line, "TODO") != NULL;
    fclose(file);
    return has_todo;
}

/* Runs exercise x and reports it; false when it did not all pass. */
static bool run_and_report(int x, double timeout, bool use_cuda, bool *no_gpu, char *why,
                           size_t why_size)
{
    exercise_entry *e = entries[x];
    test_outcome *outcomes = outcomes_for(e);
    const double started = now_s();
    const int saved = report_to(e->report_path);
    bool all_passed = false;
    printed_total = 0;
    if (*no_gpu || !run_exercise(x, outcomes, timeout, use_cuda, why, why_size)) {
        *no_gpu = true;
        report_no_gpu(&e->options, outcomes, e->count, why);
    } else if (e->unloadable[0] != '\0' && e->count > 0 && !outcomes[0].passed &&
               strcmp(outcomes[0].message, e->unloadable) == 0) {
        report_unloadable(&e->options, e->unloadable);
    } else {
        bool none_passed = true;
        for (int t = 0; t < e->count; t++) {
            if (!outcomes[t].ran && outcomes[t].message[0] == '\0')
                snprintf(outcomes[t].message, sizeof outcomes[t].message,
                         "the test did not run (the test program itself failed)");
            none_passed &= !outcomes[t].passed;
        }
        e->options.not_started = none_passed && source_is_untouched_stub(e->options.source);
        e->options.printed_bytes = printed_total;
        e->options.seconds = now_s() - started;
        all_passed = report_results(&e->options, outcomes, e->count);
    }
    report_back(saved);
    free(outcomes);
    return all_passed;
}

static double timeout_seconds(void)
{
    const char *text = getenv("COURSE_TEST_TIMEOUT");
    if (text == NULL || text[0] == '\0')
        return DEFAULT_TIMEOUT_S;
    char *end = NULL;
    errno = 0;
    double seconds = strtod(text, &end);
    if (end == text || *end != '\0' || errno != 0 || !(seconds >= 0.1 && seconds <= MAX_TIMEOUT_S)) {
        fprintf(stderr,
                "COURSE_TEST_TIMEOUT=%s is not a time this harness can keep: say how many "
                "seconds one test may take, a number from 0.1 to %g (the default is %g)\n",
                text, MAX_TIMEOUT_S, DEFAULT_TIMEOUT_S);
        exit(2);
    }
    return seconds;
}

static _Noreturn void usage(const char *program, const char *problem)
{
    fprintf(stderr,
            "%s%s%susage: %s [--tally FILE] [--color|--no-color] [--verbose] [--rubric] "
            "[--result-fd N] --module FILE [EXERCISE-OPTION...] [--module FILE ...]...\n"
            "  exercise options: --learner FILE, --source FILE, --json FILE, --report FILE, "
            "--skip-timed\n",
            problem ? program : "", problem ? ": " : "", problem ? problem : "", program);
    exit(2);
}

/* The descriptor number in text, if it names an open descriptor other than 0 to 2. */
static int parse_result_fd(const char *text)
{
    char *end = NULL;
    long fd = strtol(text, &end, 10);
    if (end == text || *end != '\0' || fd <= STDERR_FILENO || fd > INT_MAX)
        return -1;
    return fcntl((int)fd, F_GETFD) == -1 ? -1 : (int)fd;
}

int main(int argc, char **argv)
{
    report_options shared = {.color = report_color_wanted(), .result_fd = -1};
    bool rubric_only = false;
    const char *skip = getenv("COURSE_SKIP_TIMED");
    const bool skip_timed = skip != NULL && strcmp(skip, "1") == 0;
    exercise_entry *current = NULL;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        bool has_value = i + 1 < argc;
        bool per_exercise = strcmp(arg, "--source") == 0 || strcmp(arg, "--json") == 0 ||
                            strcmp(arg, "--report") == 0 || strcmp(arg, "--skip-timed") == 0 ||
                            strcmp(arg, "--learner") == 0;
        if (per_exercise && current == NULL)
            usage(argv[0], "an exercise option before any --module");
        if (strcmp(arg, "--module") == 0 && has_value) {
            current = new_entry();
            load_module(current, argv[++i]);
        } else if (strcmp(arg, "--learner") == 0 && has_value)
            current->learner = argv[++i];
        else if (strcmp(arg, "--source") == 0 && has_value)
            current->options.source = argv[++i];
        else if (strcmp(arg, "--json") == 0 && has_value)
            current->options.json_path = argv[++i];
        else if (strcmp(arg, "--report") == 0 && has_value)
            current->report_path = argv[++i];
        else if (strcmp(arg, "--skip-timed") == 0)
            current->skip_timed = true;
        else if (strcmp(arg, "--tally") == 0 && has_value)
            shared.tally_path = argv[++i];
        else if (strcmp(arg, "--color") == 0)
            shared.color = true;
        else if (strcmp(arg, "--no-color") == 0)
            shared.color = false;
        else if (strcmp(arg, "--verbose") == 0)
            shared.verbose = true;
        else if (strcmp(arg, "--rubric") == 0)
            rubric_only = true;
        else if (strcmp(arg, "--result-fd") == 0 && has_value) {
            result_fd = shared.result_fd = parse_result_fd(argv[++i]);
            if (result_fd < 0) {
                fprintf(stderr, "%s: --result-fd needs an open descriptor above 2\n", argv[0]);
                exit(2);
            }
        } else
            usage(argv[0], NULL);
    }
    if (entry_count == 0)
        usage(argv[0], "no exercise: name one with --module");

    for (int x = 0; x < entry_count; x++) {
        exercise_entry *e = entries[x];
        qsort(e->tests, (size_t)e->count, sizeof e->tests[0], by_line);
        report_options own = e->options;
        e->options = shared;
        e->options.exercise = e->info;
        e->options.source = own.source;
        e->options.json_path = own.json_path;
        e->skip_timed |= skip_timed;
        if (!rubric_only && e->learner == NULL)
            usage(argv[0], "an exercise without its learner's module (--learner)");
    }
    if (rubric_only) {
        for (int x = 0; x < entry_count; x++) {
            test_outcome *outcomes = outcomes_for(entries[x]);
            const int saved = report_to(entries[x]->report_path);
            report_rubric(&entries[x]->options, outcomes, entries[x]->count);
            report_back(saved);
            free(outcomes);
        }
        return 0;
    }

    double timeout = timeout_seconds();
    prctl(PR_SET_DUMPABLE, 0); /* the worker runs as this user: keep it out of this memory */
    signal(SIGPIPE, SIG_IGN);  /* a checker that died mid-test is noticed by its pipe's end */
    /* The harness's own self-test runs tests that never touch CUDA, GPU or not. */
    bool use_cuda = getenv("COURSE_SKIP_GPU_PROBE") == NULL;
    gpu_share_open();
    char why[256] = "";
    bool no_gpu = false, all_passed = true;
    int tests = 0;
    for (int x = 0; x < entry_count; x++) {
        all_passed &= run_and_report(x, timeout, use_cuda, &no_gpu, why, sizeof why);
        tests += entries[x]->count;
    }
    if (the_checker.pid != 0)
        stop_checker(&the_checker, true);
    runner_stat("%d checker%s and %d worker%s replaced for %d tests", checkers_started,
                checkers_started == 1 ? "" : "s", workers_replaced,
                workers_replaced == 1 ? "" : "s", tests);
    return no_gpu ? EXIT_NO_GPU : all_passed ? 0 : 1;
}

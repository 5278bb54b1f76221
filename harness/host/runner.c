/* runner.c - main() of the test host (build/tests/host): a judge, its checker, and the worker.
 *
 * This file: the options, the test modules loaded and their tests registered, and the reports;
 * judge.c runs each test from the judge's side, checker_main.c from the checker's (host.h).
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
 * and the worker one each for a whole run (the worker's context with the work queues its
 * exercises' code needs: work_queues_for_all). What the worker
 * says about itself (its call trace, its threads) is evidence: a test that passes on it counts
 * only where a test that rests on results alone passed too (report.c). The judge and the
 * checker mark themselves not dumpable, so the worker, which runs as the same user, cannot open
 * or trace their memory; the worker's seccomp filter keeps it from signalling them.
 *
 * Usage: host [OPTION...] --module TESTS.so [EXERCISE-OPTION...] [--module ...]...
 *   options: --tally FILE, --color|--no-color, --verbose, --rubric, --result-fd N
 *   exercise options, for the module named before them:
 *            --learner FILE (the learner's module: their file and its dispatchers),
 *            --source FILE, --json FILE, --fields FILE (the same record as lines for the
 *            shell: report.c), --report FILE (the block goes to that file, not to standard
 *            output), --skip-timed (as COURSE_SKIP_TIMED=1, for this exercise alone)
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
#define _GNU_SOURCE /* O_CLOEXEC */
#include "checker.h"
#include "gpu_share.h"
#include "harness.h"
#include "host.h"
#include "report.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#define DEFAULT_TIMEOUT_S 20.0
#define MAX_TIMEOUT_S 3600.0
#define EXIT_NO_GPU 77

exercise_entry **host_entries;
int host_entry_count;
static exercise_entry *loading; /* where constructors register tests: a module's entry */

void course_register_test(const TTest *test, int points, int line, enum course_test_kind kind)
{
    if (loading == NULL) {
        fprintf(stderr, "harness: a test registered outside a module\n");
        exit(2);
    }
    if (loading->count == MAX_TESTS) {
        fprintf(stderr, "harness: more than %d tests in one exercise\n", MAX_TESTS);
        exit(2);
    }
    loading->tests[loading->count++] =
        (registered_test){test, points, line, kind == COURSE_TEST_TIMED, kind == COURSE_TEST_HOST};
}

static int by_line(const void *a, const void *b)
{
    const int x = ((const registered_test *)a)->line;
    const int y = ((const registered_test *)b)->line;
    return (x > y) - (x < y);
}

void host_sentence_from_name(const char *name, char *sentence, size_t size)
{
    snprintf(sentence, size, "%s", name);
    for (char *c = sentence; *c; c++)
        if (*c == '_')
            *c = ' ';
}

void host_stat(const char *format, ...)
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

/* Loads a test module: its tests register as its constructors run. It holds the course's test
 * file and the stubs of the exercise's functions; the learner's code is never loaded here. */
static void load_module(exercise_entry *e, const char *path)
{
    loading = e;
    void *module = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    loading = NULL;
    const course_exercise *info = module ? dlsym(module, "course_exercise_info") : NULL;
    if (info != NULL) {
        const int *gpus = dlsym(module, "course_exercise_gpus");
        e->info = info;
        e->module = module;
        e->gpus_needed = gpus != NULL && *gpus > 1 ? *gpus : 1;
        const int *queues = dlsym(module, "course_exercise_work_queues");
        e->work_queues = queues != NULL && *queues > 0 ? *queues : 0;
        e->timed_with_all_queues =
            dlsym(module, "course_exercise_timed_with_all_queues") != NULL;
        /* A module named twice is loaded once: its constructors ran for the first entry. */
        for (int x = 0; e->count == 0 && x < host_entry_count; x++) {
            if (host_entries[x] != e && host_entries[x]->module == module) {
                memcpy(e->tests, host_entries[x]->tests, sizeof e->tests);
                e->count = host_entries[x]->count;
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
    exercise_entry **grown =
        realloc(host_entries, (size_t)(host_entry_count + 1) * sizeof *host_entries);
    exercise_entry *e = calloc(1, sizeof *e);
    if (grown == NULL || e == NULL) {
        perror("harness");
        exit(2);
    }
    host_entries = grown;
    host_entries[host_entry_count++] = e;
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
        host_sentence_from_name(e->tests[t].test->name, outcomes[t].sentence,
                                sizeof outcomes[t].sentence);
        outcomes[t].points = e->tests[t].points;
        outcomes[t].timed = e->tests[t].timed;
        outcomes[t].host_only = e->tests[t].host_only;
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

/* An untouched stub: no test passed, and the file still has its TODO. */
static bool is_not_started(const exercise_entry *e, const test_outcome *outcomes)
{
    for (int t = 0; t < e->count; t++)
        if (outcomes[t].passed)
            return false;
    return source_is_untouched_stub(e->options.source);
}

/* Runs exercise x and reports it; false when it did not all pass. */
static bool run_and_report(int x, double timeout, bool use_cuda, bool *no_gpu, char *why,
                           size_t why_size)
{
    exercise_entry *e = host_entries[x];
    test_outcome *outcomes = outcomes_for(e);
    const double started = checker_now_s();
    const int saved = report_to(e->report_path);
    bool all_passed = false;
    if (*no_gpu || !judge_run_exercise(x, outcomes, timeout, use_cuda, why, why_size)) {
        /* No GPU: the tests that need none run all the same, in a checker and a worker that
         * make no CUDA context (the first checker, which looked for a device, has ended). */
        *no_gpu = true;
        e->gpu_absent = true;
        free(outcomes);
        outcomes = outcomes_for(e);
        char unused[256];
        (void)judge_run_exercise(x, outcomes, timeout, false, unused, sizeof unused);
        e->options.not_started = is_not_started(e, outcomes);
        all_passed = report_no_gpu(&e->options, outcomes, e->count, why);
    } else if (e->gpus_seen > 0) {
        char need[64], why_here[128];
        snprintf(need, sizeof need, "%d GPUs", e->gpus_needed);
        snprintf(why_here, sizeof why_here, "it needs %d GPUs and this machine has %d",
                 e->gpus_needed, e->gpus_seen);
        /* An untouched stub is "not started" here too: the learner's progress says so, and
         * its record says nothing of the machine (make check's word on no GPU at all, by
         * contrast, goes in every record: it says so once for all). */
        e->options.not_started = is_not_started(e, outcomes);
        all_passed = report_not_run(&e->options, outcomes, e->count, "too_few_gpus", need,
                                    e->options.not_started ? NULL : why_here);
    } else if (e->unloadable[0] != '\0' && e->count > 0 && !outcomes[0].passed &&
               strcmp(outcomes[0].message, e->unloadable) == 0) {
        report_unloadable(&e->options, e->unloadable);
    } else {
        for (int t = 0; t < e->count; t++)
            if (!outcomes[t].ran && outcomes[t].message[0] == '\0')
                snprintf(outcomes[t].message, sizeof outcomes[t].message,
                         "the test did not run (the test program itself failed)");
        e->options.not_started = is_not_started(e, outcomes);
        e->options.printed_bytes = judge_printed_bytes();
        e->options.seconds = checker_now_s() - started;
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
    if (end == text || *end != '\0' || errno != 0 ||
        !(seconds >= 0.1 && seconds <= MAX_TIMEOUT_S)) {
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
            "  exercise options: --learner FILE, --source FILE, --json FILE, --fields FILE, "
            "--report FILE, --skip-timed\n",
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

/* The options: --module starts an exercise, the options after it are its own. */
static void read_options(int argc, char **argv, report_options *shared, bool *rubric_only)
{
    exercise_entry *current = NULL;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        bool has_value = i + 1 < argc;
        bool per_exercise = strcmp(arg, "--source") == 0 || strcmp(arg, "--json") == 0 ||
                            strcmp(arg, "--fields") == 0 || strcmp(arg, "--report") == 0 ||
                            strcmp(arg, "--skip-timed") == 0 || strcmp(arg, "--learner") == 0;
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
        else if (strcmp(arg, "--fields") == 0 && has_value)
            current->options.fields_path = argv[++i];
        else if (strcmp(arg, "--report") == 0 && has_value)
            current->report_path = argv[++i];
        else if (strcmp(arg, "--skip-timed") == 0)
            current->skip_timed = true;
        else if (strcmp(arg, "--tally") == 0 && has_value)
            shared->tally_path = argv[++i];
        else if (strcmp(arg, "--color") == 0)
            shared->color = true;
        else if (strcmp(arg, "--no-color") == 0)
            shared->color = false;
        else if (strcmp(arg, "--verbose") == 0)
            shared->verbose = true;
        else if (strcmp(arg, "--rubric") == 0)
            *rubric_only = true;
        else if (strcmp(arg, "--result-fd") == 0 && has_value) {
            shared->result_fd = parse_result_fd(argv[++i]);
            if (shared->result_fd < 0) {
                fprintf(stderr, "%s: --result-fd needs an open descriptor above 2\n", argv[0]);
                exit(2);
            }
        } else
            usage(argv[0], NULL);
    }
    if (host_entry_count == 0)
        usage(argv[0], "no exercise: name one with --module");
}

/* Each exercise's tests in the order of the file, and its options over the shared ones. */
static void settle_entries(const char *program, const report_options *shared, bool rubric_only)
{
    const char *skip = getenv("COURSE_SKIP_TIMED");
    const bool skip_timed = skip != NULL && strcmp(skip, "1") == 0;
    for (int x = 0; x < host_entry_count; x++) {
        exercise_entry *e = host_entries[x];
        qsort(e->tests, (size_t)e->count, sizeof e->tests[0], by_line);
        report_options own = e->options;
        e->options = *shared;
        e->options.exercise = e->info;
        e->options.gpus_needed = e->gpus_needed;
        e->options.source = own.source;
        e->options.json_path = own.json_path;
        e->options.fields_path = own.fields_path;
        e->skip_timed |= skip_timed;
        if (!rubric_only && e->learner == NULL)
            usage(program, "an exercise without its learner's module (--learner)");
    }
}

/* The worker's work queues (harness.h, COURSE_EXERCISE_WORK_QUEUES): the most any exercise of
 * the host asks for, and the environment's (0) where one names none or is to run a timed test
 * that wants them (COURSE_EXERCISE_TIMED_WITH_ALL_QUEUES). One worker serves all of a host's
 * exercises (a student graded whole): a worker of fewer queues, then another for the rest, would
 * cost a context more. make check and the self-test give each host exercises of one kind
 * (harness/hosts.sh, queue_group). */
int host_work_queues;

static void work_queues_for_all(void)
{
    host_work_queues = 1;
    for (int x = 0; x < host_entry_count; x++) {
        const exercise_entry *e = host_entries[x];
        if (e->work_queues == 0 || (e->timed_with_all_queues && !e->skip_timed)) {
            host_work_queues = 0;
            return;
        }
        if (e->work_queues > host_work_queues)
            host_work_queues = e->work_queues;
    }
}

int main(int argc, char **argv)
{
    report_options shared = {.color = report_color_wanted(), .result_fd = -1};
    bool rubric_only = false;
    read_options(argc, argv, &shared, &rubric_only);
    settle_entries(argv[0], &shared, rubric_only);
    if (rubric_only) {
        for (int x = 0; x < host_entry_count; x++) {
            test_outcome *outcomes = outcomes_for(host_entries[x]);
            const int saved = report_to(host_entries[x]->report_path);
            report_rubric(&host_entries[x]->options, outcomes, host_entries[x]->count);
            report_back(saved);
            free(outcomes);
        }
        return 0;
    }

    work_queues_for_all();
    double timeout = timeout_seconds();
    prctl(PR_SET_DUMPABLE, 0); /* the worker runs as this user: keep it out of this memory */
    signal(SIGPIPE, SIG_IGN);  /* a checker that died mid-test is noticed by its pipe's end */
    judge_keep_result_channel_from_checkers(shared.result_fd);
    /* The harness's own self-test runs tests that never touch CUDA, GPU or not. */
    bool use_cuda = getenv("COURSE_SKIP_GPU_PROBE") == NULL;
    gpu_share_open();
    char why[256] = "";
    bool no_gpu = false, all_passed = true;
    int tests = 0;
    for (int x = 0; x < host_entry_count; x++) {
        all_passed &= run_and_report(x, timeout, use_cuda, &no_gpu, why, sizeof why);
        tests += host_entries[x]->count;
    }
    judge_stop_checker();
    judge_say_what_it_took(tests);
    return no_gpu ? EXIT_NO_GPU : all_passed ? 0 : 1;
}

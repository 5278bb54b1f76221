/* runner.c - main() of every exercise's test program.
 *
 * Runs the exercise's tests with Check in fork mode, one test case per test so
 * each has its own timeout, then prints the exercise's block of the report and
 * writes the machine-readable result. The parent process never touches the
 * CUDA runtime: a child forked after that would find it unusable. Whether
 * there is a GPU at all is asked in a child of its own.
 *
 * Usage: TEST-PROGRAM [--source FILE] [--json FILE] [--tally FILE] [--color|--no-color]
 *                     [--verbose] [--rubric] [--result-fd N]
 * Exit status: 0 all tests passed, 1 some failed, 2 usage, 77 no CUDA device.
 *
 * --result-fd N is make grade's result channel (grader/README.md): the JSON
 * record goes to the inherited descriptor N once every test has finished. Only
 * this process ever writes it. Each test's child closes N before the test
 * starts (a checked fixture, run in the child), so the code under test, which
 * runs only in those children, cannot reach it, whatever it prints or writes.
 */
#include "harness.h"
#include "report.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_TESTS 64
#define DEFAULT_TIMEOUT_S 20.0
#define EXIT_NO_GPU 77

extern const course_exercise course_exercise_info;

static struct {
    const TTest *test;
    int points;
    int line;
} registered[MAX_TESTS];
static int registered_count;

void course_register_test(const TTest *test, int points, int line)
{
    if (registered_count == MAX_TESTS) {
        fprintf(stderr, "harness: more than %d tests in one exercise\n", MAX_TESTS);
        exit(2);
    }
    registered[registered_count].test = test;
    registered[registered_count].points = points;
    registered[registered_count].line = line;
    registered_count++;
}

static int by_line(const void *a, const void *b)
{
    const int x = ((const __typeof__(registered[0]) *)a)->line;
    const int y = ((const __typeof__(registered[0]) *)b)->line;
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

/* Asks, in a child process, whether the runtime sees a device; the reason goes in `why`. */
static bool gpu_present(char *why, size_t size)
{
    int channel[2];
    if (pipe(channel) != 0) {
        snprintf(why, size, "could not create a pipe: %s", strerror(errno));
        return false;
    }
    fflush(NULL);
    pid_t child = fork();
    if (child == 0) {
        close(channel[0]);
        int count = 0;
        cudaError_t err = cudaGetDeviceCount(&count);
        char message[256];
        if (err != cudaSuccess)
            cuda_error_describe(err, message, sizeof message);
        else
            snprintf(message, sizeof message, "%d", count);
        ssize_t ignored = write(channel[1], message, strlen(message));
        (void)ignored;
        _exit(err == cudaSuccess && count > 0 ? 0 : 1);
    }
    close(channel[1]);
    ssize_t got = child > 0 ? read(channel[0], why, size - 1) : -1;
    why[got > 0 ? got : 0] = '\0';
    close(channel[0]);
    int status = 0;
    if (child < 0 || waitpid(child, &status, 0) < 0) {
        snprintf(why, size, "could not start a process to look for a GPU");
        return false;
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
        return true;
    if (got <= 0)
        snprintf(why, size, "the CUDA runtime crashed while looking for a device");
    else if (strcmp(why, "0") == 0)
        snprintf(why, size, "the CUDA runtime found no device");
    return false;
}

static double timeout_seconds(void)
{
    const char *text = getenv("COURSE_TEST_TIMEOUT");
    double seconds = text ? strtod(text, NULL) : 0;
    return seconds > 0 ? seconds : DEFAULT_TIMEOUT_S;
}

/* Check's words for a test that did not finish, in the learner's terms. */
static void explain_error(const char *message, double timeout, char *out, size_t size)
{
    int signal_number = 0, exit_value = 0;
    if (strstr(message, "timeout") != NULL)
        snprintf(out, size,
                 "did not finish within %g s: the code hangs, waits for something that never "
                 "happens, or loops without end",
                 timeout);
    else if (sscanf(message, "Received signal %d", &signal_number) == 1)
        snprintf(out, size,
                 "crashed: %s. Look for a pointer used after it was freed, a host "
                 "pointer dereferenced on the wrong side, or an index past the end",
                 message);
    else if (sscanf(message, "Early exit with return value %d", &exit_value) == 1)
        snprintf(out, size,
                 "the code called exit(%d) instead of returning: report errors to "
                 "the caller, never end the program from a library function",
                 exit_value);
    else
        snprintf(out, size, "%s", message);
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

static void usage(const char *program)
{
    fprintf(stderr,
            "usage: %s [--source FILE] [--json FILE] [--tally FILE] [--color|--no-color] "
            "[--verbose] [--rubric] [--result-fd N]\n",
            program);
    exit(2);
}

/* The result channel, while this process holds it; -1 otherwise. */
static int result_fd = -1;

/* A checked fixture: Check runs it in each test's child before the test body,
 * so no code under test ever runs while the child holds the channel. */
static void close_result_channel(void)
{
    if (result_fd >= 0)
        close(result_fd);
    result_fd = -1;
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
    report_options options = {
        .color = report_color_wanted(), .exercise = &course_exercise_info, .result_fd = -1};
    bool rubric_only = false;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        bool has_value = i + 1 < argc;
        if (strcmp(arg, "--source") == 0 && has_value)
            options.source = argv[++i];
        else if (strcmp(arg, "--json") == 0 && has_value)
            options.json_path = argv[++i];
        else if (strcmp(arg, "--tally") == 0 && has_value)
            options.tally_path = argv[++i];
        else if (strcmp(arg, "--color") == 0)
            options.color = true;
        else if (strcmp(arg, "--no-color") == 0)
            options.color = false;
        else if (strcmp(arg, "--verbose") == 0)
            options.verbose = true;
        else if (strcmp(arg, "--rubric") == 0)
            rubric_only = true;
        else if (strcmp(arg, "--result-fd") == 0 && has_value) {
            result_fd = options.result_fd = parse_result_fd(argv[++i]);
            if (result_fd < 0) {
                fprintf(stderr, "%s: --result-fd needs an open descriptor above 2\n", argv[0]);
                exit(2);
            }
        } else
            usage(argv[0]);
    }

    qsort(registered, (size_t)registered_count, sizeof registered[0], by_line);
    test_outcome outcomes[MAX_TESTS];
    memset(outcomes, 0, sizeof outcomes);
    for (int t = 0; t < registered_count; t++) {
        sentence_from_name(registered[t].test->name, outcomes[t].sentence,
                           sizeof outcomes[t].sentence);
        outcomes[t].points = registered[t].points;
    }
    if (rubric_only) {
        report_rubric(&options, outcomes, registered_count);
        return 0;
    }

    /* The harness's own self-test runs tests that never touch CUDA, GPU or not. */
    char why[256];
    if (getenv("COURSE_SKIP_GPU_PROBE") == NULL && !gpu_present(why, sizeof why)) {
        report_no_gpu(&options, outcomes, registered_count, why);
        return EXIT_NO_GPU;
    }

    double timeout = timeout_seconds();
    Suite *suite = suite_create(course_exercise_info.id);
    for (int t = 0; t < registered_count; t++) {
        /* One case per test, named by its sentence: Check reports results by case. */
        TCase *test_case = tcase_create(outcomes[t].sentence);
        tcase_set_timeout(test_case, timeout);
        if (result_fd >= 0)
            tcase_add_checked_fixture(test_case, close_result_channel, NULL);
        tcase_add_exit_test(test_case, registered[t].test, COURSE_TEST_COMPLETED);
        suite_add_tcase(suite, test_case);
    }
    SRunner *runner = srunner_create(suite);
    srunner_set_fork_status(runner, CK_FORK); /* whatever CK_FORK in the environment says */
    srunner_run_all(runner, CK_SILENT);

    TestResult **results = srunner_results(runner);
    int result_count = srunner_ntests_run(runner);
    for (int r = 0; r < result_count; r++) {
        for (int t = 0; t < registered_count; t++) {
            if (strcmp(tr_tcname(results[r]), outcomes[t].sentence) != 0)
                continue;
            outcomes[t].ran = true;
            outcomes[t].passed = tr_rtype(results[r]) == CK_PASS;
            const char *message = tr_msg(results[r]) ? tr_msg(results[r]) : "";
            if (tr_rtype(results[r]) == CK_ERROR)
                explain_error(message, timeout, outcomes[t].message, sizeof outcomes[t].message);
            else if (!outcomes[t].passed)
                snprintf(outcomes[t].message, sizeof outcomes[t].message, "%s", message);
        }
    }
    free(results);
    srunner_free(runner);

    bool all_passed = true;
    bool none_passed = true;
    for (int t = 0; t < registered_count; t++) {
        if (!outcomes[t].ran)
            snprintf(outcomes[t].message, sizeof outcomes[t].message,
                     "the test did not run (the test program itself failed)");
        all_passed &= outcomes[t].passed;
        none_passed &= !outcomes[t].passed;
    }
    options.not_started = none_passed && source_is_untouched_stub(options.source);
    report_results(&options, outcomes, registered_count);
    return all_passed ? 0 : 1;
}

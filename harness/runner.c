/* runner.c - main() of every exercise's test program: a judge and its worker.
 *
 * The judge (this process) never touches the CUDA runtime, since a child
 * forked after that would find it unusable. It forks a worker, which creates
 * the CUDA context once and then runs the exercise's tests one at a time, as
 * the judge names them, with Check in no-fork mode. The judge sees each test
 * through three pipes: the test it asks for, the verdict the worker sends
 * back, and everything the worker prints. It never trusts the worker to end
 * well:
 *
 *   - a test counts as passed only when the worker's verdict for it arrives,
 *     carrying the number the judge drew at random for that test; an exit
 *     status, a record printed somewhere or a verdict for another test counts
 *     for nothing;
 *   - a test whose worker dies (a crash, exit(), abort()) or outlives its time
 *     fails with what happened, said in the learner's terms, and the next
 *     test gets a fresh worker;
 *   - after each test the worker gives back whatever the test left held (the
 *     ledger of trace.c), and asks for a fresh start itself when it cannot
 *     vouch for the next test: a CUDA error that poisons the context (which
 *     also fails the test that caused it), threads left running, device memory
 *     it could not get back.
 *
 * So in the normal case an exercise costs one CUDA context, however many
 * tests it has, and a misbehaving test costs itself alone. The judge marks
 * itself not dumpable, so the worker, which runs as the same user, cannot
 * open or trace the judge's memory.
 *
 * The same judge and worker also serve several exercises at once. The test host
 * (build/tests/host: this file, the harness, the course's library, Check and the
 * CUDA runtime, with every symbol exported) loads exercise modules (an exercise's
 * tests and a learner's file as a shared object, linked with the same --wrap
 * flags, so that their CUDA calls reach the harness's wrappers), each named by
 * --module, before it forks its first worker. The worker then runs one
 * exercise's tests after another's in one CUDA context, and starts afresh only
 * where one of them cannot vouch for the next: make grade runs a student's
 * exercises so, make test the known mistakes.
 *
 * Usage: TEST-PROGRAM [OPTION...] [EXERCISE-OPTION...] [--module FILE [EXERCISE-OPTION...]]...
 *   options: --tally FILE, --color|--no-color, --verbose, --rubric, --result-fd N
 *   exercise options, for the program's own exercise or the module named before them:
 *            --source FILE, --json FILE, --report FILE (the block goes there, not to standard
 *            output), --skip-timed (as COURSE_SKIP_TIMED=1, for this exercise alone)
 * Exit status: 0 all tests passed, 1 some failed, 2 usage, 77 no CUDA device.
 * COURSE_TEST_TIMEOUT: seconds one test may take (default 20).
 * COURSE_RUNNER_STATS=1: where the time and the workers went, on standard error.
 * COURSE_SKIP_TIMED=1: the timed tests are not run, and fail saying so (the self-test's first
 * look at a known mistake, whose diagnostic usually comes from an untimed test).
 *
 * --result-fd N is make grade's result channel (grader/README.md): each
 * exercise's JSON record goes to the inherited descriptor N once its tests have
 * finished, one record after another. Only the judge ever writes it; the worker
 * closes it before it runs anything.
 */
#define _GNU_SOURCE /* strsignal, pipe2 */
#include "device_info.h"
#include "gpu_share.h"
#include "harness.h"
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
#include <sys/random.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_TESTS 64
#define DEFAULT_TIMEOUT_S 20.0
#define MAX_TIMEOUT_S 3600.0
#define EXIT_NO_GPU 77
/* Creating a context can take a second when many processes ask at once. */
#define WORKER_START_S 120.0
/* Device memory a test may leave the pools holding before the worker starts afresh. */
#define DEVICE_MEMORY_SLACK ((size_t)256 << 20)
#define OUTPUT_KEPT 2048 /* bytes of a test's own output kept for its diagnostic */
#define MESSAGE_LIMIT ((size_t)64 << 10) /* the longest failure message Check takes */

/* The test program's own exercise, where its test file is linked in; the host has none. */
extern const course_exercise course_exercise_info __attribute__((weak));
extern bool course_test_completed; /* harness.c */
void harness_release_buffers(void); /* harness.c */

typedef struct registered_test {
    const TTest *test;
    int points;
    int line;
    bool timed;
} registered_test;

/* An exercise this program runs: its own, or a module's. */
typedef struct exercise_entry {
    const course_exercise *info;
    registered_test tests[MAX_TESTS];
    int count;
    report_options options;
    const char *report_path; /* --report: where its block goes */
    bool skip_timed;
    void *module;         /* dlopen's handle; NULL for the program's own exercise */
    char unloadable[512]; /* why its module could not be loaded; "" when it was */
} exercise_entry;

static exercise_entry own_exercise; /* where a linked-in test file's constructors register */
/* Where constructors register tests: a module's entry while it loads. */
static exercise_entry *loading = &own_exercise;
static exercise_entry **entries;
static int entry_count;
static const registered_test *running_test; /* in the worker, while a test runs */

void course_register_test(const TTest *test, int points, int line, bool timed)
{
    if (loading->count == MAX_TESTS) {
        fprintf(stderr, "harness: more than %d tests in one exercise\n", MAX_TESTS);
        exit(2);
    }
    loading->tests[loading->count++] = (registered_test){test, points, line, timed};
}

bool course_test_is_timed(void)
{
    return running_test != NULL && running_test->timed;
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

/* --- What travels between the judge and the worker ---------------------------------------- */

#define QUIT UINT32_MAX

typedef struct command {
    uint32_t exercise; /* index into entries[] */
    uint32_t test;     /* index into its tests[], or QUIT */
    uint64_t nonce;
} command;

typedef struct hello {
    int32_t gpu_ok;
    char why[256];      /* when there is no GPU */
    double turn_wait_s; /* waiting for COURSE_CONTEXT_LOCK */
    double making_s;    /* making the context */
} hello;

enum verdict { VERDICT_PASS, VERDICT_FAIL };

/* What the worker says during a test: its verdict, at the end; in a timed test, also when its
 * measurement starts and ends (harness_gpu_alone_begin and _end). */
enum reply_kind { REPLY_VERDICT, REPLY_ALONE, REPLY_SHARED };

typedef struct reply {
    uint64_t nonce;
    uint32_t kind;
    uint32_t exercise;
    uint32_t test;
    uint32_t verdict;
    uint32_t start_afresh; /* why the worker cannot vouch for the next test; 0: it can */
    uint32_t message_length;
} reply;

static bool write_all(int fd, const void *data, size_t size)
{
    const char *at = data;
    while (size > 0) {
        ssize_t written = write(fd, at, size);
        if (written < 0 && errno == EINTR)
            continue;
        if (written <= 0)
            return false;
        at += written;
        size -= (size_t)written;
    }
    return true;
}

static bool read_all(int fd, void *data, size_t size)
{
    char *at = data;
    while (size > 0) {
        ssize_t got = read(fd, at, size);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            return false;
        at += got;
        size -= (size_t)got;
    }
    return true;
}

/* --- The worker ---------------------------------------------------------------------------- */

typedef struct worker_state {
    bool use_cuda;
    size_t threads; /* after the context was made */
    size_t device_free;
    /* COURSE_CONTEXT_LOCK, where programs share the GPU (gpu_share.h), makes contexts one at a
     * time: the driver creates them faster that way than side by side. -1 where nobody shares
     * the GPU. */
    int context_lock;
    bool gpu_shared; /* other test programs may use the GPU at the same time */
} worker_state;

static double now_s(void);

/* COURSE_RUNNER_STATS=1: a line on standard error for each worker started, each test's time,
 * each fresh start and each stop, to find where a run's time and contexts go. */
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
     * diagnostic that lists many calls must be cut short in the report, not look like the
     * learner's exit(). The message reaches the report cut to its size. */
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
        snprintf(message, size,
                 "the test stopped before its end without failing: the code under test left "
                 "it by a jump (longjmp, or a signal handler's return)");
    } else {
        snprintf(message, size, "%s", tr_msg(results[0]) ? tr_msg(results[0]) : "failed");
    }
    free(results);
    srunner_free(runner);
    return verdict;
}

/* Why a worker cannot vouch for the next test (a reply's start_afresh, a set of these). */
enum fresh_start_reason {
    FRESH_POISONED = 1,      /* a CUDA error that no call clears */
    FRESH_LEDGER_FULL = 2,   /* more held than the ledger could note, so not all given back */
    FRESH_MEMORY_KEPT = 4,   /* device memory missing that the ledger did not know of */
    FRESH_THREADS_LEFT = 8,  /* threads of the code under test still running */
};

static const char *fresh_start_words(uint32_t reasons)
{
    return reasons & FRESH_POISONED      ? "the context was poisoned"
           : reasons & FRESH_LEDGER_FULL ? "more was held than the ledger notes"
           : reasons & FRESH_MEMORY_KEPT ? "device memory was not all given back"
           : reasons & FRESH_THREADS_LEFT ? "threads were left running"
                                          : "no reason";
}

/* After a test: gives back what it left, and says (0, or the reasons) whether the next test
 * can share this process. A context that a CUDA error has poisoned fails the test that
 * poisoned it. */
static uint32_t tidy_up(const worker_state *state, enum verdict *verdict, char *message,
                        size_t size)
{
    trace_stop();
    cuda_check_set_handler(NULL);
    harness_release_buffers();
    if (!state->use_cuda)
        return harness_thread_count() <= state->threads ? 0 : FRESH_THREADS_LEFT;

    cudaError_t err = cudaDeviceSynchronize();
    if (err != cudaSuccess) {
        (void)cudaGetLastError(); /* an ordinary error clears; one that poisons stays */
        err = cudaDeviceSynchronize();
    }
    (void)cudaGetLastError();
    if (err != cudaSuccess) {
        char why[256];
        size_t used = strlen(message);
        snprintf(message + used, size - used,
                 "%sthe code left the GPU in an error state that no later call can clear: %s. "
                 "This happens when a kernel touches memory it does not own, or a launch fails; "
                 "every CUDA call after it in this process fails the same way",
                 used ? ". Also, " : "", cuda_error_describe(err, why, sizeof why));
        *verdict = VERDICT_FAIL;
        return FRESH_POISONED;
    }
    bool complete = true;
    (void)ledger_release_all(&complete);
    /* The device's free memory says what this process kept only while no other program uses
     * the GPU: beside others (make check, make grade) it moves with theirs. There the ledger
     * is the whole story, since make grade refuses the allocations it does not see. */
    size_t device_free = 0, total = 0;
    bool memory_back = state->gpu_shared ||
                       (cudaMemGetInfo(&device_free, &total) == cudaSuccess &&
                        device_free + DEVICE_MEMORY_SLACK >= state->device_free);
    (void)cudaGetLastError();
    return (complete ? 0 : FRESH_LEDGER_FULL) | (memory_back ? 0 : FRESH_MEMORY_KEPT) |
           (harness_thread_count() <= state->threads ? 0 : FRESH_THREADS_LEFT);
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

/* The test the worker runs, for the messages it sends during it. */
static struct {
    int command_fd, reply_fd;
    bool gpu_shared;
    command running;
    bool alone; /* between harness_gpu_alone_begin and _end */
} in_test = {-1, -1, false, {0, 0, 0}, false};

bool harness_gpu_is_alone(void)
{
    return in_test.alone;
}

/* Where programs share the GPU, the judge takes it alone for the test (after the programs that
 * hold it now let go) and then says go on; the time it waits is not the test's. */
void harness_gpu_alone_begin(void)
{
    ck_assert_msg(course_test_is_timed(),
                  "the course's test measures the GPU but is not declared with COURSE_TIMED_TEST "
                  "(a bug in the course)");
    if (in_test.alone)
        return;
    in_test.alone = true;
    pinned_pool_set_measuring(true);
    if (!in_test.gpu_shared)
        return;
    fflush(NULL); /* what the test printed so far goes out before the judge stops reading */
    reply r = {in_test.running.nonce, REPLY_ALONE, in_test.running.exercise,
               in_test.running.test, 0, 0, 0};
    command go;
    if (!write_all(in_test.reply_fd, &r, sizeof r) ||
        !read_all(in_test.command_fd, &go, sizeof go) || go.nonce != in_test.running.nonce)
        _exit(0); /* the judge is gone, or confused: it fails the test */
}

void harness_gpu_alone_end(void)
{
    if (!in_test.alone)
        return;
    in_test.alone = false;
    pinned_pool_set_measuring(false);
    if (!in_test.gpu_shared)
        return;
    reply r = {in_test.running.nonce, REPLY_SHARED, in_test.running.exercise,
               in_test.running.test, 0, 0, 0};
    if (!write_all(in_test.reply_fd, &r, sizeof r))
        _exit(0);
}

static _Noreturn void worker_main(int command_fd, int reply_fd, bool use_cuda)
{
    worker_state state = {use_cuda, 0, 0, gpu_share_open_lock("COURSE_CONTEXT_LOCK"),
                          getenv("COURSE_GPU_LOCK") != NULL && getenv("COURSE_GPU_LOCK")[0]};
    double turn_wait_s = 0, making_s = 0;
    if (use_cuda) {
        int count = 0;
        char why[256] = "";
        const double asked = now_s();
        gpu_share_lock(state.context_lock, LOCK_EX);
        const double making = now_s();
        cudaError_t err = cudaGetDeviceCount(&count);
        if (err == cudaSuccess && count > 0)
            err = cudaFree(NULL); /* makes the context now, outside any test's time */
        gpu_share_lock(state.context_lock, LOCK_UN);
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
        size_t total = 0;
        (void)cudaMemGetInfo(&state.device_free, &total);
    }
    state.threads = harness_thread_count();
    send_hello(reply_fd, true, "", turn_wait_s, making_s);

    static char message[sizeof(((test_outcome *)0)->message)];
    for (command c; read_all(command_fd, &c, sizeof c) && c.test != QUIT;) {
        if (c.exercise >= (uint32_t)entry_count || c.test >= (uint32_t)entries[c.exercise]->count)
            break;
        const exercise_entry *e = entries[c.exercise];
        in_test = (__typeof__(in_test)){command_fd, reply_fd, state.gpu_shared, c, false};
        pinned_pool_set_measuring(false);
        running_test = &e->tests[c.test];
        enum verdict verdict = run_test(e, running_test, message, sizeof message);
        running_test = NULL;
        uint32_t fresh_start = tidy_up(&state, &verdict, message, sizeof message);
        fflush(NULL); /* what the test printed goes out before its verdict */
        reply r = {c.nonce,      REPLY_VERDICT, c.exercise, c.test,
                   verdict,      fresh_start,   (uint32_t)strlen(message)};
        if (!write_all(reply_fd, &r, sizeof r) || !write_all(reply_fd, message, strlen(message)))
            break;
        if (fresh_start)
            break;
    }
    fflush(NULL);
    _exit(0);
}

/* --- The judge ----------------------------------------------------------------------------- */

typedef struct worker {
    pid_t pid;
    int command_fd, reply_fd, output_fd;
} worker;

static int result_fd = -1; /* make grade's channel, held by the judge alone */

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Starts a worker: its standard output and error go to a pipe the judge reads. */
static bool start_worker(worker *w, bool use_cuda)
{
    int to_worker[2], from_worker[2], output[2];
    if (pipe2(to_worker, O_CLOEXEC) != 0)
        return false;
    if (pipe2(from_worker, O_CLOEXEC) != 0 || pipe2(output, O_CLOEXEC) != 0) {
        close(to_worker[0]);
        close(to_worker[1]);
        return false;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        setpgid(0, 0); /* its own group, so that what it starts dies with it */
        signal(SIGPIPE, SIG_DFL);
        if (result_fd >= 0)
            close(result_fd);
        gpu_share_close(); /* the judge's: a worker that unlocked them would unlock its */
        dup2(output[1], STDOUT_FILENO);
        dup2(output[1], STDERR_FILENO);
        close(to_worker[1]);
        close(from_worker[0]);
        close(output[0]);
        worker_main(to_worker[0], from_worker[1], use_cuda);
    }
    close(to_worker[0]);
    close(from_worker[1]);
    close(output[1]);
    if (pid < 0) {
        close(to_worker[1]);
        close(from_worker[0]);
        close(output[0]);
        return false;
    }
    setpgid(pid, pid);
    fcntl(output[0], F_SETFL, O_NONBLOCK);
    fcntl(from_worker[0], F_SETFL, O_NONBLOCK);
    *w = (worker){pid, to_worker[1], from_worker[0], output[0]};
    return true;
}

/* A test's own output: the last OUTPUT_KEPT bytes, and how many came before them. */
typedef struct captured_output {
    char text[OUTPUT_KEPT + 1];
    size_t length;
    size_t dropped;
} captured_output;

static void keep_output(captured_output *out, const char *data, size_t size)
{
    if (size >= OUTPUT_KEPT) {
        out->dropped += out->length + size - OUTPUT_KEPT;
        memcpy(out->text, data + size - OUTPUT_KEPT, OUTPUT_KEPT);
        out->length = OUTPUT_KEPT;
    } else {
        size_t keep = out->length + size > OUTPUT_KEPT ? OUTPUT_KEPT - size : out->length;
        out->dropped += out->length - keep;
        memmove(out->text, out->text + out->length - keep, keep);
        memcpy(out->text + keep, data, size);
        out->length = keep + size;
    }
    out->text[out->length] = '\0';
}

static size_t printed_total; /* bytes the tests printed, all of them */

/* Reads what the worker printed that is there now; false at its end. */
static bool drain_output(const worker *w, captured_output *out)
{
    char buffer[65536];
    for (;;) {
        ssize_t got = read(w->output_fd, buffer, sizeof buffer);
        if (got > 0) {
            printed_total += (size_t)got;
            if (out != NULL)
                keep_output(out, buffer, (size_t)got);
            continue;
        }
        return !(got == 0 || (got < 0 && errno != EAGAIN && errno != EINTR));
    }
}

/* An untimed test that has held the GPU for a while when a timed test of another program waits
 * is stopped until the timed test is done (gpu_share.h), and its deadline moves on by the time
 * it was stopped. */
static void yield_to_a_timed_test(const worker *w, double *deadline)
{
    if (!gpu_share_should_yield())
        return;
    const double stopped = gpu_share_yield(w->pid);
    *deadline += stopped;
    runner_stat("a test stopped for %.2f s while a timed test had the GPU", stopped);
}

/* Waits until the worker's verdict pipe holds `size` more bytes at buffer, or the deadline,
 * reading its output meanwhile. Returns 1 when read, 0 at the pipe's end, -1 at the deadline.
 * While `running` (a test has the GPU), it yields the GPU to timed tests that wait for it. */
static int await(const worker *w, void *buffer, size_t size, double *deadline, bool running,
                 captured_output *out)
{
    char *at = buffer;
    while (size > 0) {
        double left = *deadline - now_s();
        if (left <= 0)
            return -1;
        if (running && gpu_share_active() && left > GPU_SHARE_CHECK_S)
            left = GPU_SHARE_CHECK_S;
        struct pollfd fds[2] = {{w->reply_fd, POLLIN, 0}, {w->output_fd, POLLIN, 0}};
        int ready = poll(fds, 2, (int)ceil(left * 1000));
        if (ready < 0 && errno != EINTR)
            return 0;
        if (running)
            yield_to_a_timed_test(w, deadline);
        if (fds[1].revents)
            (void)drain_output(w, out);
        if (fds[0].revents == 0)
            continue;
        ssize_t got = read(w->reply_fd, at, size);
        if (got == 0 || (got < 0 && errno != EAGAIN && errno != EINTR))
            return 0;
        if (got > 0) {
            at += got;
            size -= (size_t)got;
        }
    }
    return 1;
}

/* Ends the worker (it has had its chance) and says how it ended, in `status`. */
static void stop_worker(worker *w, bool ask_first, int *status, captured_output *out)
{
    if (ask_first) {
        command quit = {0, QUIT, 0};
        (void)write_all(w->command_fd, &quit, sizeof quit);
    }
    close(w->command_fd);
    /* A worker that has already ended, or is ending, gets a moment to say how. */
    pid_t done = 0;
    for (int tries = 0; tries < 200 && (done = waitpid(w->pid, status, WNOHANG)) == 0; tries++) {
        (void)drain_output(w, out);
        usleep(5000);
    }
    if (done == 0) {
        kill(-w->pid, SIGKILL);
        kill(w->pid, SIGKILL);
        waitpid(w->pid, status, 0);
    }
    kill(-w->pid, SIGKILL); /* whatever it started */
    (void)drain_output(w, out);
    close(w->reply_fd);
    close(w->output_fd);
    w->pid = 0;
}

/* What ended a worker in the middle of a test, in the learner's terms, with what it printed. */
static void explain_death(int status, const char *printed, char *out, size_t size)
{
    /* The C library's last words when free() is given what malloc never returned. */
    bool bad_free = strstr(printed, "free(): invalid pointer") != NULL ||
                    strstr(printed, "munmap_chunk(): invalid pointer") != NULL ||
                    strstr(printed, "free(): invalid size") != NULL;
    bool double_free = strstr(printed, "double free") != NULL;
    if (WIFSIGNALED(status) && (bad_free || double_free)) {
        snprintf(out, size,
                 "crashed in free(): %s. Memory from cudaMalloc is given back with cudaFree, "
                 "pinned memory from cudaMallocHost with cudaFreeHost; free() takes only what "
                 "malloc returned, once",
                 double_free ? "the same pointer was freed twice"
                             : "free() was given a pointer that malloc never returned");
        return;
    }
    if (WIFSIGNALED(status)) {
        int signal_number = WTERMSIG(status);
        const char *advice =
            signal_number == SIGABRT
                ? "The C library aborts like this when free() or realloc() is given a pointer "
                  "malloc never returned (device memory, pinned memory from cudaMallocHost, "
                  "a pointer freed already) or when a buffer was overrun"
                : "Look for a pointer used after it was freed, a device pointer dereferenced on "
                  "the host, or an index past the end";
        snprintf(out, size, "crashed: Received signal %d (%s). %s", signal_number,
                 strsignal(signal_number), advice);
    } else if (WIFEXITED(status)) {
        snprintf(out, size,
                 "the code called exit(%d) instead of returning: report errors to the caller, "
                 "never end the program from a library function",
                 WEXITSTATUS(status));
    } else {
        snprintf(out, size, "the test's process ended unexpectedly");
    }
}

static void append_output(char *message, size_t size, const captured_output *out)
{
    if (out->length == 0)
        return;
    size_t used = strlen(message);
    snprintf(message + used, size - used, "\nIt printed%s:\n%s%s",
             out->dropped ? " (the end of it)" : "", out->dropped ? "..." : "", out->text);
    used = strlen(message);
    while (used > 0 && message[used - 1] == '\n')
        message[--used] = '\0';
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

static _Noreturn void usage(const char *program, const char *problem)
{
    fprintf(stderr,
            "%s%s%susage: %s [--tally FILE] [--color|--no-color] [--verbose] [--rubric] "
            "[--result-fd N] [EXERCISE-OPTION...] [--module FILE [EXERCISE-OPTION...]]...\n"
            "  exercise options: --source FILE, --json FILE, --report FILE, --skip-timed\n",
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

static uint64_t draw_nonce(void)
{
    uint64_t nonce = 0;
    if (getrandom(&nonce, sizeof nonce, 0) != (ssize_t)sizeof nonce)
        nonce = (uint64_t)now_s() * 2654435761u ^ (uint64_t)getpid() << 32;
    return nonce;
}

static worker the_worker = {0, -1, -1, -1}; /* shared by the exercises, one after another */
static int workers_started;

/* Runs exercise x's tests, each in the current worker or, after one could not go on, a new
 * one. Returns false, with the reason in why, when the first worker found no GPU. */
static bool run_exercise(int x, test_outcome *outcomes, double timeout, bool use_cuda, char *why,
                         size_t why_size)
{
    const exercise_entry *e = entries[x];
    worker *w = &the_worker;
    runner_stat("exercise %s (%s)", e->info->id, e->options.source ? e->options.source : "");
    for (int t = 0; t < e->count; t++) {
        captured_output out = {.length = 0};
        if (e->skip_timed && e->tests[t].timed) {
            outcomes[t].ran = true;
            snprintf(outcomes[t].message, sizeof outcomes[t].message,
                     "not run: COURSE_SKIP_TIMED=1 skips the tests that time the GPU");
            continue;
        }
        if (w->pid == 0) {
            hello h;
            int status = 0;
            if (!start_worker(w, use_cuda)) {
                snprintf(outcomes[t].message, sizeof outcomes[t].message,
                         "the test did not run: no process could be started for it (%s)",
                         strerror(errno));
                continue;
            }
            workers_started++;
            const double starting = now_s();
            double started_by = starting + WORKER_START_S;
            int got = await(w, &h, sizeof h, &started_by, false, &out);
            runner_stat("worker %d ready in %.2f s (%.2f s waiting for a turn to make its "
                        "context, %.2f s making it)",
                        workers_started, now_s() - starting, got == 1 ? h.turn_wait_s : 0,
                        got == 1 ? h.making_s : 0);
            if (got != 1 || !h.gpu_ok) {
                stop_worker(w, false, &status, &out);
                if (got == 1)
                    snprintf(why, why_size, "%s", h.why);
                else
                    snprintf(why, why_size,
                             "the CUDA runtime %s while looking for a device",
                             got == 0 ? "crashed" : "hung");
                if (workers_started == 1)
                    return false;
                snprintf(outcomes[t].message, sizeof outcomes[t].message,
                         "the test did not run: its process could not use the GPU (%s)", why);
                continue;
            }
            out.length = out.dropped = 0;
        }

        command c = {(uint32_t)x, (uint32_t)t, draw_nonce()};
        reply r;
        /* The test's time starts once it has the GPU: waiting for it is not the test's doing.
         * Every test shares it at first; a timed test has it alone while it measures. */
        const double waiting = now_s();
        gpu_share_take(false);
        const double running = now_s();
        double deadline = running + timeout, alone_since = 0, alone_s = 0, alone_wait_s = 0;
        bool alone = false;
        int got = write_all(w->command_fd, &c, sizeof c) ? 1 : 0;
        while (got == 1) {
            got = await(w, &r, sizeof r, &deadline, true, &out);
            if (got != 1 || r.nonce != c.nonce || r.kind == REPLY_VERDICT)
                break;
            if (r.kind == REPLY_ALONE && !alone && e->tests[t].timed) {
                const double asked = now_s();
                gpu_share_give_back();
                gpu_share_take(true);
                alone = true;
                alone_since = now_s();
                alone_wait_s += alone_since - asked;
                deadline += alone_since - asked;
                if (!write_all(w->command_fd, &c, sizeof c))
                    got = 0;
            } else if (r.kind == REPLY_SHARED && alone) {
                alone = false;
                alone_s += now_s() - alone_since;
                gpu_share_give_back();
                gpu_share_take(false);
            }
        }
        if (alone)
            alone_s += now_s() - alone_since;
        bool genuine = got == 1 && r.nonce == c.nonce && r.kind == REPLY_VERDICT &&
                       r.exercise == c.exercise && r.test == c.test &&
                       r.message_length < sizeof outcomes[t].message;
        if (genuine) {
            got = await(w, outcomes[t].message, r.message_length, &deadline, true, &out);
            outcomes[t].message[got == 1 ? r.message_length : 0] = '\0';
            genuine = got == 1;
        }
        outcomes[t].ran = true;
        if (genuine) {
            (void)drain_output(w, &out);
            outcomes[t].passed = r.verdict == VERDICT_PASS;
            if (r.start_afresh) {
                int status;
                stop_worker(w, true, &status, NULL);
                runner_stat("a fresh worker after test %d: %s", t + 1,
                            fresh_start_words(r.start_afresh));
            }
        } else {
            int status = 0;
            stop_worker(w, false, &status, &out);
            outcomes[t].passed = false;
            if (got == -1)
                snprintf(outcomes[t].message, sizeof outcomes[t].message,
                         "did not finish within %g s: the code hangs, waits for something that "
                         "never happens, or loops without end",
                         timeout);
            else if (got == 0)
                explain_death(status, out.text, outcomes[t].message, sizeof outcomes[t].message);
            else
                snprintf(outcomes[t].message, sizeof outcomes[t].message,
                         "the test's verdict did not come back whole: something in the test's "
                         "process wrote over the harness's own channel");
        }
        gpu_share_give_back(); /* once the worker is done with it, or gone */
        runner_stat("test %d%s took %.2f s (%.2f s of it with the GPU alone), after %.2f s "
                    "waiting for the GPU",
                    t + 1, e->tests[t].timed ? " (timed)" : "", now_s() - running - alone_wait_s,
                    alone_s, running - waiting + alone_wait_s);
        if (!outcomes[t].passed)
            append_output(outcomes[t].message, sizeof outcomes[t].message, &out);
    }
    return true;
}

/* Loads a module: its tests register as its constructors run. Nothing of it runs in a worker
 * before the judge asks. */
static void load_module(exercise_entry *e, const char *path)
{
    loading = e;
    void *module = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    loading = &own_exercise;
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
    snprintf(e->unloadable, sizeof e->unloadable, "%s",
             module ? "it declares no exercise (course_exercise_info)" : dlerror());
    e->count = 0;
    /* Its name, for its report: chNN-slug/name.so is exercise chNN-slug/name. */
    course_exercise *named = calloc(1, sizeof *named);
    char *id = strdup(path);
    if (named == NULL || id == NULL) {
        perror("harness");
        exit(2);
    }
    char *end = strrchr(id, '.');
    if (end != NULL && strcmp(end, ".so") == 0)
        *end = '\0';
    char *last = strrchr(id, '/');
    if (last != NULL) {
        *last = '\0';
        char *before = strrchr(id, '/');
        *last = '/';
        named->id = before ? before + 1 : id;
    } else {
        named->id = id;
    }
    named->title = "";
    named->hint = "";
    e->info = named;
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

/* Runs exercise x and reports it; false when it did not all pass. */
static bool run_and_report(int x, double timeout, bool use_cuda, bool *no_gpu, char *why,
                           size_t why_size)
{
    exercise_entry *e = entries[x];
    test_outcome *outcomes = outcomes_for(e);
    const double started = now_s();
    const int saved = report_to(e->report_path);
    bool all_passed = false;
    if (e->unloadable[0] != '\0') {
        report_unloadable(&e->options, e->unloadable);
    } else if (*no_gpu || !run_exercise(x, outcomes, timeout, use_cuda, why, why_size)) {
        *no_gpu = true;
        report_no_gpu(&e->options, outcomes, e->count, why);
    } else {
        all_passed = true;
        bool none_passed = true;
        for (int t = 0; t < e->count; t++) {
            if (!outcomes[t].ran && outcomes[t].message[0] == '\0')
                snprintf(outcomes[t].message, sizeof outcomes[t].message,
                         "the test did not run (the test program itself failed)");
            all_passed &= outcomes[t].passed;
            none_passed &= !outcomes[t].passed;
        }
        e->options.not_started = none_passed && source_is_untouched_stub(e->options.source);
        e->options.printed_bytes = printed_total;
        e->options.seconds = now_s() - started;
        report_results(&e->options, outcomes, e->count);
    }
    report_back(saved);
    printed_total = 0;
    free(outcomes);
    return all_passed;
}

int main(int argc, char **argv)
{
    report_options shared = {.color = report_color_wanted(), .result_fd = -1};
    bool rubric_only = false;
    const char *skip = getenv("COURSE_SKIP_TIMED");
    const bool skip_timed = skip != NULL && strcmp(skip, "1") == 0;
    if (&course_exercise_info != NULL) {
        own_exercise.info = &course_exercise_info;
        entries = malloc(sizeof *entries);
        if (entries == NULL)
            return 2;
        entries[entry_count++] = &own_exercise;
    }
    exercise_entry *current = entry_count ? &own_exercise : NULL;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        bool has_value = i + 1 < argc;
        bool per_exercise = strcmp(arg, "--source") == 0 || strcmp(arg, "--json") == 0 ||
                            strcmp(arg, "--report") == 0 || strcmp(arg, "--skip-timed") == 0;
        if (per_exercise && current == NULL)
            usage(argv[0], "an exercise option before any --module");
        if (strcmp(arg, "--module") == 0 && has_value) {
            current = new_entry();
            load_module(current, argv[++i]);
        } else if (strcmp(arg, "--source") == 0 && has_value)
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
    signal(SIGPIPE, SIG_IGN);  /* a worker that died mid-test is noticed by its pipe's end */
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
    if (the_worker.pid != 0) {
        int status;
        stop_worker(&the_worker, true, &status, NULL);
    }
    runner_stat("%d worker%s for %d tests", workers_started, workers_started == 1 ? "" : "s",
                tests);
    return no_gpu ? EXIT_NO_GPU : all_passed ? 0 : 1;
}

/* remote_worker.c - in the checker: the worker's life (remote_worker.h). It is started on first
 * need, by posix_spawn (a fresh program: CUDA does not survive fork, and the checker has a context
 * of its own), given the running exercise's learner module, waited for within the test's
 * deadline, watched for the device memory it holds, and ended, with what ended it said in the
 * learner's terms.
 */
#define _GNU_SOURCE /* pipe2, F_DUPFD_CLOEXEC, strsignal */
#include "checker.h"
#include "device_memory.h"
#include "gpu_share.h"
#include "harness.h"
#include "io.h"
#include "processes.h"
#include "remote_worker.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

#define WATCH_INTERVAL_NS (20 * 1000 * 1000)
/* A host's third worker, and every one after it, replaces a second one that the learner's code
 * ended: a chain of contexts that the rest of its tests wait for, made at the line's front
 * (gpu_share.h). */
#define CHAIN_FROM_WORKER 3

remote_worker_state worker = {0, -1, -1, {false}, 0};
remote_watch_state watch;
bool remote_lost_in_this_test;
static int workers_started;

int remote_workers_started(void)
{
    return workers_started;
}

/* --- The device's word on the worker's memory ------------------------------------------------ */

static unsigned long long allowed_now(void)
{
    return worker.baseline + watch.limit + watch.test_buffers + DEVICE_SLACK;
}

static void *watch_worker(void *unused)
{
    (void)unused;
    for (;;) {
        nanosleep(&(struct timespec){0, WATCH_INTERVAL_NS}, NULL);
        const pid_t pid = watch.watched;
        unsigned long long held = 0;
        if (pid > 0 && watch.over == 0 && device_memory_of(pid, &held) && held > allowed_now()) {
            watch.over = held;
            kill(pid, SIGKILL);
        }
    }
    return NULL;
}

bool remote_worker_over_share(void)
{
    unsigned long long held = 0;
    if (watch.on && worker.pid > 0 && watch.over == 0 && device_memory_of(worker.pid, &held) &&
        held > allowed_now())
        watch.over = held;
    return watch.over != 0;
}

void remote_memory_over_words(char *out, size_t size)
{
    snprintf(out, size,
             "the code held %llu MiB of device memory, more than a test may here (its share: %llu "
             "MiB, beside the test's own buffers), so the test stopped it. Allocate only what the "
             "exercise needs, and give it back",
             watch.over >> 20, watch.limit >> 20);
}

/* Where make grade shares the device's memory out and NVML can say what a process holds. */
static void start_watch(void)
{
    static bool tried;
    if (tried || !checker.use_cuda)
        return;
    tried = true;
    const char *text = getenv("COURSE_MEMORY_LIMIT_MB");
    char *end = NULL;
    unsigned long long megabytes = text ? strtoull(text, &end, 10) : 0;
    char bus_id[32], why[256];
    if (megabytes == 0 || end == text || *end != '\0' ||
        cudaDeviceGetPCIBusId(bus_id, sizeof bus_id, 0) != cudaSuccess ||
        !device_memory_open(bus_id, why, sizeof why)) {
        (void)cudaGetLastError();
        return;
    }
    watch.limit = megabytes << 20;
    watch.on = pthread_create(&watch.thread, NULL, watch_worker, NULL) == 0;
}

/* --- Starting and ending the worker ---------------------------------------------------------- */

/* The worker's program: build/tests/worker, beside this one (the grader copies both). */
static const char *worker_program(void)
{
    static char path[PATH_MAX];
    ssize_t length = readlink("/proc/self/exe", path, sizeof path - 16);
    if (length <= 0)
        return "worker";
    path[length] = '\0';
    char *slash = strrchr(path, '/');
    snprintf(slash ? slash + 1 : path, 16, "worker");
    return path;
}

/* A descriptor above the worker's fixed ones, close-on-exec, in place of fd. */
static int moved_up(int fd)
{
    int moved = fcntl(fd, F_DUPFD_CLOEXEC, 10);
    close(fd);
    return moved;
}

/* Waits until `size` bytes from the worker are at buffer, reading its output and the judge's
 * news meanwhile, until the deadline (or, with the GPU alone, the window's limit). */
wait_result remote_await(void *buffer, size_t size, double deadline_override)
{
    char *at = buffer;
    while (size > 0) {
        if (!checker_read_judge())
            return WAIT_GONE; /* the judge is gone: nothing will be graded */
        double limit = deadline_override > 0 ? deadline_override : checker.deadline;
        const bool alone_cap =
            deadline_override <= 0 && checker.alone && checker.alone_since + ALONE_LIMIT_S < limit;
        if (alone_cap)
            limit = checker.alone_since + ALONE_LIMIT_S;
        double left = limit - checker_now_s();
        if (left <= 0)
            return alone_cap ? WAIT_ALONE_TOO_LONG : WAIT_DEADLINE;
        if (left > 0.05)
            left = 0.05; /* the judge's news are read every so often */
        struct pollfd fds[3] = {{worker.socket, POLLIN, 0},
                                {worker.output, POLLIN, 0},
                                {checker.command_fd, POLLIN, 0}};
        int ready = poll(fds, 3, (int)ceil(left * 1000));
        if (ready < 0 && errno != EINTR)
            return WAIT_GONE;
        if (fds[1].revents)
            (void)remote_drain_output();
        if (fds[0].revents == 0)
            continue;
        ssize_t got = read(worker.socket, at, size);
        if (got == 0 || (got < 0 && errno != EAGAIN && errno != EINTR))
            return WAIT_GONE;
        if (got > 0) {
            at += got;
            size -= (size_t)got;
        }
    }
    return WAIT_OK;
}

/* Ends the worker and everything it started, and says how it ended, in *status. */
void remote_end_worker(int *status)
{
    *status = 0;
    if (worker.pid == 0)
        return;
    /* A worker that has already ended, or is ending, gets a moment to say how. */
    pid_t done = 0;
    for (int tries = 0; tries < 40 && (done = waitpid(worker.pid, status, WNOHANG)) == 0; tries++) {
        (void)remote_drain_output();
        nanosleep(&(struct timespec){0, 5 * 1000 * 1000}, NULL);
    }
    if (done == 0) {
        kill(worker.pid, SIGKILL);
        waitpid(worker.pid, status, 0);
    }
    /* Whatever it started: found by parentage, since a group or a session is its to leave, and
     * an orphan comes back to this process, the subreaper. Twice: a fork between the scan and
     * the signal. */
    for (int pass = 0; pass < 2; pass++)
        signal_processes_below(getpid(), SIGKILL, false);
    while (waitpid(-1, NULL, WNOHANG) > 0)
        ;
    (void)remote_drain_output();
    watch.watched = 0;
    close(worker.socket);
    close(worker.output);
    worker.pid = 0;
    worker.socket = worker.output = -1;
    memset(worker.loaded, 0, sizeof worker.loaded);
    remote_forget_device_buffers();
    watch.test_buffers = 0;
}

void remote_quit(void)
{
    if (worker.pid == 0)
        return;
    remote_request quit = {.op = OP_QUIT};
    (void)write_all(worker.socket, &quit, sizeof quit);
    int status;
    remote_end_worker(&status);
}

/* What ended the worker in the middle of a test, in the learner's terms, with what it printed. */
static void explain_death(int status, char *out, size_t size)
{
    size_t dropped;
    const char *printed = remote_test_output(&dropped);
    /* The C library's last words when free() is given what malloc never returned. */
    bool bad_free = strstr(printed, "free(): invalid pointer") != NULL ||
                    strstr(printed, "munmap_chunk(): invalid pointer") != NULL ||
                    strstr(printed, "free(): invalid size") != NULL;
    bool double_free = strstr(printed, "double free") != NULL;
    if (watch.over != 0) {
        remote_memory_over_words(out, size);
    } else if (WIFSIGNALED(status) && (bad_free || double_free)) {
        snprintf(out, size,
                 "crashed in free(): %s. Memory from cudaMalloc is given back with cudaFree, "
                 "pinned memory from cudaMallocHost with cudaFreeHost; free() takes only what "
                 "malloc returned, once",
                 double_free ? "the same pointer was freed twice"
                             : "free() was given a pointer that malloc never returned");
    } else if (WIFSIGNALED(status)) {
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
        snprintf(out, size, "the test's worker process ended unexpectedly");
    }
}

/* The worker is lost in the middle of a test: it ends, and so does the test, saying why. */
_Noreturn void remote_lose_worker(wait_result why)
{
    int status = 0;
    remote_lost_in_this_test = true;
    const bool gone = why == WAIT_GONE;
    if (!gone)
        kill(worker.pid, SIGKILL);
    remote_end_worker(&status);
    if (!checker_read_judge())
        _exit(0);
    char message[1024];
    if (why == WAIT_DEADLINE)
        snprintf(message, sizeof message,
                 "did not finish within %g s: the code hangs, waits for something that never "
                 "happens, or loops without end",
                 checker.timeout);
    else if (why == WAIT_DAMAGED)
        snprintf(message, sizeof message,
                 "the code wrote over the channel between its process and the test's, so what "
                 "came back could not be believed: the test stopped its process. Print with "
                 "printf or fprintf(stderr, ...), and write only into memory that is yours");
    else if (why == WAIT_ALONE_TOO_LONG)
        snprintf(message, sizeof message,
                 "the code ran for more than %g s while the test had the GPU to itself, so the "
                 "test stopped it there: meanwhile nobody else may use the GPU. A copy or a "
                 "kernel of this test's takes milliseconds; look for a sleep, a wait that never "
                 "ends, or work done over and over",
                 ALONE_LIMIT_S);
    else
        explain_death(status, message, sizeof message);
    ck_abort_msg("%s", message);
}

static void fail_to_start(const char *why)
{
    ck_abort_msg("the test did not run: the process that runs your code could not start (%s)", why);
}

/* Why the learner's module could not be loaded, in the learner's terms: the loader names one
 * symbol nothing defines ("undefined symbol: roundtrip_floats"), which is the linker's error
 * make check would have shown for a program. */
static const char *unloadable_words(const char *why)
{
    static char words[768];
    const char *undefined = strstr(why, "undefined symbol: ");
    if (undefined != NULL) {
        char name[128];
        if (sscanf(undefined + strlen("undefined symbol: "), "%127[A-Za-z0-9_]", name) == 1) {
            snprintf(words, sizeof words,
                     "it compiles, but does not link: the linker found no definition of %s: "
                     "define it in your file, spelled as the header declares it",
                     name);
            return words;
        }
    }
    snprintf(words, sizeof words, "it compiles, but the test program could not load it: %s", why);
    return words;
}

/* The hardware work queues every worker's context is made with (harness.h,
 * COURSE_EXERCISE_WORK_QUEUES, the most of the host's exercises: runner.c), 0 for the
 * environment's; an instructor's CUDA_DEVICE_MAX_CONNECTIONS always wins. */
static int queues_wanted;

void remote_fit_worker(int work_queues)
{
    queues_wanted = getenv(CONNECTIONS_VARIABLE) == NULL ? work_queues : 0;
}

/* The environment the worker starts with: the checker's, with the work queues wanted (made again
 * at each start, from the checker's environment as it is then). */
static char **worker_environment(void)
{
    static char setting[sizeof CONNECTIONS_VARIABLE "=" + 12];
    static char **with_queues;
    if (queues_wanted == 0)
        return environ;
    size_t count = 0;
    while (environ[count] != NULL)
        count++;
    char **grown = realloc(with_queues, (count + 2) * sizeof *with_queues);
    if (grown == NULL)
        fail_to_start("out of memory");
    with_queues = grown;
    snprintf(setting, sizeof setting, "%s=%d", CONNECTIONS_VARIABLE, queues_wanted);
    memcpy(with_queues, environ, count * sizeof *with_queues);
    with_queues[count] = setting;
    with_queues[count + 1] = NULL;
    return with_queues;
}

/* Starts the worker: its socket, its output's pipe and the arena as its only descriptors, in a
 * process group of its own, its CUDA context made in a turn among the programs that share
 * the GPU; and, where make grade shares the GPU's memory out, the watch on what it holds. */
static void spawn_worker(void)
{
    int sockets[2], pipe_ends[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sockets) != 0)
        fail_to_start(strerror(errno));
    if (pipe2(pipe_ends, O_CLOEXEC) != 0) {
        close(sockets[0]);
        close(sockets[1]);
        fail_to_start(strerror(errno));
    }
    const int theirs = moved_up(sockets[1]), printed = moved_up(pipe_ends[1]);
    posix_spawn_file_actions_t actions;
    posix_spawnattr_t attributes;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&actions, printed, 1);
    posix_spawn_file_actions_adddup2(&actions, printed, 2);
    posix_spawn_file_actions_adddup2(&actions, theirs, WORKER_FD_SOCKET);
    posix_spawn_file_actions_adddup2(&actions, checker.arena, WORKER_FD_ARENA);
    posix_spawnattr_init(&attributes);
    sigset_t none, defaults;
    sigemptyset(&none);
    sigemptyset(&defaults);
    sigaddset(&defaults, SIGPIPE);
    posix_spawnattr_setsigmask(&attributes, &none);
    posix_spawnattr_setsigdefault(&attributes, &defaults);
    posix_spawnattr_setpgroup(&attributes, 0); /* its own group, for the yields' signals */
    posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF |
                                              POSIX_SPAWN_SETPGROUP);
    char *arguments[] = {"worker", checker.use_cuda ? NULL : "--no-cuda", NULL};
    fflush(NULL);
    pid_t pid = 0;
    int spawned =
        posix_spawn(&pid, worker_program(), &actions, &attributes, arguments, worker_environment());
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attributes);
    close(theirs);
    close(printed);
    if (spawned != 0) {
        close(sockets[0]);
        close(pipe_ends[0]);
        fail_to_start(strerror(spawned));
    }
    workers_started++;
    worker.pid = pid;
    worker.socket = sockets[0];
    worker.output = pipe_ends[0];
    fcntl(worker.output, F_SETFL, O_NONBLOCK);
    remote_hello hello;
    const double start_by = checker_now_s() + WORKER_START_S;
    wait_result got = remote_await(&hello, sizeof hello, start_by);
    if (got == WAIT_OK && hello.gpu_ok == HELLO_WANTS_A_TURN) {
        /* A few contexts at a time, where programs share the GPU (gpu_share.h). The checker
         * holds the turn for the making alone; the learner's code never sees it. */
        checker.worker_turn_wait_s = gpu_share_take_context_turn(
            &checker.context_turns, workers_started >= CHAIN_FROM_WORKER);
        const double taken = checker_now_s();
        const unsigned char go = 1;
        got = write_all(worker.socket, &go, 1) ? remote_await(&hello, sizeof hello, start_by)
                                               : WAIT_GONE;
        gpu_share_give_back_context_turn(&checker.context_turns);
        checker.worker_making_s = checker_now_s() - taken;
    }
    if (got != WAIT_OK || hello.gpu_ok != 1) {
        int status;
        char why[sizeof hello.why + 64];
        if (got == WAIT_OK)
            snprintf(why, sizeof why, "%.*s", (int)sizeof hello.why - 1, hello.why);
        else
            snprintf(why, sizeof why, "it %s before it was ready",
                     got == WAIT_GONE ? "ended" : "hung");
        remote_end_worker(&status);
        fail_to_start(why);
    }
    start_watch();
    if (watch.on) {
        unsigned long long held = 0;
        worker.baseline = device_memory_of(pid, &held) ? held : 0;
        watch.over = 0;
        watch.watched = pid;
    }
}

/* The running exercise's learner module, loaded into the worker if it is not yet: a module
 * that does not load fails the test in the learner's terms. */
static void load_learner_module(void)
{
    if (checker.learner_module == NULL || checker.exercise >= MAX_EXERCISES ||
        worker.loaded[checker.exercise])
        return;
    const size_t length = strlen(checker.learner_module) + 1;
    remote_request load = {
        .op = OP_LOAD, .exercise = checker.exercise, .payload = (uint32_t)length};
    remote_reply reply;
    char why[512] = "";
    if (!write_all(worker.socket, &load, sizeof load) ||
        !write_all(worker.socket, checker.learner_module, length))
        remote_lose_worker(WAIT_GONE);
    wait_result got = remote_await(&reply, sizeof reply, 0);
    if (got == WAIT_OK && reply.message_length > 0)
        got = remote_await(
            why, reply.message_length < sizeof why ? reply.message_length : sizeof why - 1, 0);
    if (got != WAIT_OK)
        remote_lose_worker(got);
    if (reply.status != REMOTE_OK) {
        checker.unloadable = true;
        ck_abort_msg("%s", unloadable_words(why));
    }
    worker.loaded[checker.exercise] = true;
}

void remote_ready_worker(void)
{
    if (worker.pid == 0) {
        /* A worker's start waits for its turn to make a context behind every program that
         * shares the GPU, many seconds when a class is graded: not the test's time. The judge
         * holds its deadline meanwhile, and stops nothing for a timed test while the context
         * lock may be held (the timed test's own checker may need it). */
        const double began = checker_now_s();
        checker_tell_judge(REPLY_STARTING);
        spawn_worker();
        checker.deadline += checker_now_s() - began;
        checker_tell_judge(REPLY_STARTED);
    }
    load_learner_module();
}

/* remote.c - in the checker: the worker that runs the learner's code, and every call across.
 *
 * The worker (worker_main.c) is started on first need, by posix_spawn (a fresh program: CUDA
 * does not survive fork, and the checker has a context of its own), and used for one test
 * after another, one exercise after another, in one CUDA context. It is replaced when it
 * cannot vouch for the next test: it crashed, hung, exited, poisoned its context, left threads
 * or device memory behind. Everything it sends is checked against its bounds before it is
 * believed, and what it says of itself (its call trace, its threads, where a pointer lives) is
 * evidence (trace.h): the checks that decide a verdict read the shared memory and the GPU.
 *
 * Waiting for the worker, the checker keeps the test's deadline (moved on by the judge while
 * the test waits for the GPU, or is stopped for another program's timed test), reads what the
 * worker prints (the last OUTPUT_KEPT bytes are shown under a failure), and, while a timed
 * test has the GPU alone, gives the learner's code at most ALONE_LIMIT_S: nobody else may use
 * the GPU meanwhile. Where make grade shares the GPU's memory out (COURSE_MEMORY_LIMIT_MB), a
 * thread asks the device every few milliseconds how much the worker holds, whatever allocated
 * it, and ends the worker as soon as it holds more than its share.
 */
#define _GNU_SOURCE /* pipe2, F_DUPFD_CLOEXEC */
#include "checker.h"
#include "io.h"
#include "device_memory.h"
#include "gpu_share.h"
#include "harness.h"
#include "processes.h"
#include "report.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

#define OUTPUT_KEPT 2048     /* bytes of a test's own output kept for its diagnostic */
#define WORKER_START_S 120.0 /* making a context can take a second when many ask at once */
#define ALONE_LIMIT_S 5.0    /* the learner's code, while a timed test has the GPU alone */
#define MAX_EXERCISES 256
#define MAX_DEVICE_BUFFERS 256
#define WATCH_INTERVAL_NS (20 * 1000 * 1000)
#define DEVICE_SLACK ((unsigned long long)192 << 20) /* what a context's own use may grow by */

static struct {
    pid_t pid;
    int socket, output;
    bool loaded[MAX_EXERCISES];
    unsigned long long baseline; /* device memory it held once ready, where NVML says */
} worker = {0, -1, -1, {false}, 0};

static int workers_started;
static bool lost_in_this_test; /* the worker ended in the middle of the running test */

int remote_workers_started(void)
{
    return workers_started;
}

/* --- What the worker prints ------------------------------------------------------------------ */

static struct {
    char text[OUTPUT_KEPT + 1];
    size_t length, dropped;
} output;
static size_t printed_total;

static void keep_output(const char *data, size_t size)
{
    if (size >= OUTPUT_KEPT) {
        output.dropped += output.length + size - OUTPUT_KEPT;
        memcpy(output.text, data + size - OUTPUT_KEPT, OUTPUT_KEPT);
        output.length = OUTPUT_KEPT;
    } else {
        size_t keep = output.length + size > OUTPUT_KEPT ? OUTPUT_KEPT - size : output.length;
        output.dropped += output.length - keep;
        memmove(output.text, output.text + output.length - keep, keep);
        memcpy(output.text + keep, data, size);
        output.length = keep + size;
    }
    output.text[output.length] = '\0';
}

/* Reads what the worker printed that is there now; false at its end. */
static bool drain_output(void)
{
    char buffer[65536];
    while (worker.output >= 0) {
        ssize_t got = read(worker.output, buffer, sizeof buffer);
        if (got > 0) {
            printed_total += (size_t)got;
            keep_output(buffer, (size_t)got);
            continue;
        }
        return !(got == 0 || (got < 0 && errno != EAGAIN && errno != EINTR));
    }
    return false;
}

const char *remote_test_output(size_t *dropped)
{
    (void)drain_output();
    *dropped = output.dropped;
    /* The kept end may begin inside a character: from the next one on. */
    size_t skip = 0;
    while (output.dropped && skip < 3 && ((unsigned char)output.text[skip] & 0xC0) == 0x80)
        skip++;
    return output.text + skip;
}

size_t remote_printed_bytes(void)
{
    return printed_total;
}

void remote_test_begin(void)
{
    printed_total = 0;
    output.length = output.dropped = 0;
    output.text[0] = '\0';
}

/* --- The device's word on the worker's memory ------------------------------------------------ */

static struct {
    bool on;
    unsigned long long limit; /* COURSE_MEMORY_LIMIT_MB, the learner's share */
    unsigned long long test_buffers; /* the test's own device buffers in the worker, now */
    volatile pid_t watched;
    volatile unsigned long long over; /* what it held when it was stopped; 0 if never */
    pthread_t thread;
    bool thread_started;
} watch;

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

typedef enum wait_result {
    WAIT_OK,
    WAIT_GONE,
    WAIT_DEADLINE,
    WAIT_ALONE_TOO_LONG,
    WAIT_DAMAGED /* what came back is no reply: the learner's code wrote on the channel */
} wait_result;

/* Waits until `size` bytes from the worker are at buffer, reading its output and the judge's
 * news meanwhile, until the deadline (or, with the GPU alone, the window's limit). */
static wait_result await(void *buffer, size_t size, double deadline_override)
{
    char *at = buffer;
    while (size > 0) {
        if (!checker_read_judge())
            return WAIT_GONE; /* the judge is gone: nothing will be graded */
        double limit = deadline_override > 0 ? deadline_override : checker.deadline;
        const bool alone_cap = deadline_override <= 0 && checker.alone &&
                               checker.alone_since + ALONE_LIMIT_S < limit;
        if (alone_cap)
            limit = checker.alone_since + ALONE_LIMIT_S;
        double left = limit - checker_now_s();
        if (left <= 0)
            return alone_cap ? WAIT_ALONE_TOO_LONG : WAIT_DEADLINE;
        if (left > 0.05)
            left = 0.05; /* the judge's news are read every so often */
        struct pollfd fds[3] = {{worker.socket, POLLIN, 0}, {worker.output, POLLIN, 0},
                                {checker.command_fd, POLLIN, 0}};
        int ready = poll(fds, 3, (int)ceil(left * 1000));
        if (ready < 0 && errno != EINTR)
            return WAIT_GONE;
        if (fds[1].revents)
            (void)drain_output();
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
static void end_worker(int *status)
{
    *status = 0;
    if (worker.pid == 0)
        return;
    /* A worker that has already ended, or is ending, gets a moment to say how. */
    pid_t done = 0;
    for (int tries = 0; tries < 40 && (done = waitpid(worker.pid, status, WNOHANG)) == 0; tries++) {
        (void)drain_output();
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
    (void)drain_output();
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
    end_worker(&status);
}

/* What ended the worker in the middle of a test, in the learner's terms, with what it printed. */
static void explain_death(int status, char *out, size_t size)
{
    const char *printed = output.text;
    /* The C library's last words when free() is given what malloc never returned. */
    bool bad_free = strstr(printed, "free(): invalid pointer") != NULL ||
                    strstr(printed, "munmap_chunk(): invalid pointer") != NULL ||
                    strstr(printed, "free(): invalid size") != NULL;
    bool double_free = strstr(printed, "double free") != NULL;
    if (watch.over != 0) {
        snprintf(out, size,
                 "the code held %llu MiB of device memory, more than a test may here (its "
                 "share: %llu MiB, beside the test's own buffers), so the test stopped it. "
                 "Allocate only what the exercise needs, and give it back",
                 watch.over >> 20, watch.limit >> 20);
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
static _Noreturn void lose_worker(wait_result why)
{
    int status = 0;
    lost_in_this_test = true;
    const bool gone = why == WAIT_GONE;
    if (!gone)
        kill(worker.pid, SIGKILL);
    end_worker(&status);
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
    ck_abort_msg("the test did not run: the process that runs your code could not start (%s)",
                 why);
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

/* A worker ready for the running exercise: started if need be, its module loaded. */
static void ready_worker(void)
{
    if (worker.pid == 0) {
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
        /* Contexts one at a time, where programs share the GPU: the driver makes them faster
         * so. The checker holds the lock; the learner's code never sees it. */
        if (checker.use_cuda)
            gpu_share_lock(checker.context_lock, LOCK_EX);
        fflush(NULL);
        pid_t pid = 0;
        int spawned = posix_spawn(&pid, worker_program(), &actions, &attributes, arguments, environ);
        posix_spawn_file_actions_destroy(&actions);
        posix_spawnattr_destroy(&attributes);
        close(theirs);
        close(printed);
        if (spawned != 0) {
            gpu_share_lock(checker.context_lock, LOCK_UN);
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
        wait_result got = await(&hello, sizeof hello, checker_now_s() + WORKER_START_S);
        gpu_share_lock(checker.context_lock, LOCK_UN);
        if (got != WAIT_OK || !hello.gpu_ok) {
            int status;
            char why[sizeof hello.why + 64];
            if (got == WAIT_OK)
                snprintf(why, sizeof why, "%.*s", (int)sizeof hello.why - 1, hello.why);
            else
                snprintf(why, sizeof why, "it %s before it was ready",
                         got == WAIT_GONE ? "ended" : "hung");
            end_worker(&status);
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
    if (checker.learner_module != NULL && checker.exercise < MAX_EXERCISES &&
        !worker.loaded[checker.exercise]) {
        const size_t length = strlen(checker.learner_module) + 1;
        remote_request load = {.op = OP_LOAD, .exercise = checker.exercise,
                               .payload = (uint32_t)length};
        remote_reply reply;
        char why[512] = "";
        if (!write_all(worker.socket, &load, sizeof load) ||
            !write_all(worker.socket, checker.learner_module, length))
            lose_worker(WAIT_GONE);
        wait_result got = await(&reply, sizeof reply, 0);
        if (got == WAIT_OK && reply.message_length > 0)
            got = await(why, reply.message_length < sizeof why ? reply.message_length
                                                                : sizeof why - 1, 0);
        if (got != WAIT_OK)
            lose_worker(got);
        if (reply.status != REMOTE_OK) {
            checker.unloadable = true;
            ck_abort_msg("%s", unloadable_words(why));
        }
        worker.loaded[checker.exercise] = true;
    }
}

/* One request, and its reply's header, within its bounds; the worker's loss ends the test. */
static void exchange(const remote_request *request, const void *payload, remote_reply *reply)
{
    ready_worker();
    if (!write_all(worker.socket, request, sizeof *request) ||
        !write_all(worker.socket, payload, request->payload))
        lose_worker(WAIT_GONE);
    wait_result got = await(reply, sizeof *reply, 0);
    if (got != WAIT_OK)
        lose_worker(got);
    if (reply->status > REMOTE_FAILED || reply->records > TRACE_CAPACITY ||
        reply->message_length > REMOTE_TEXT_MAX || reply->out_length > REMOTE_TEXT_MAX ||
        reply->err_length > REMOTE_TEXT_MAX)
        lose_worker(WAIT_DAMAGED);
}

/* A body that follows a reply, `size` bytes of at most `room`; the excess is read and dropped. */
static void take_body(void *into, size_t size, size_t room)
{
    static char excess[4096];
    const size_t kept = size < room ? size : room;
    wait_result got = kept ? await(into, kept, 0) : WAIT_OK;
    for (size_t left = size - kept; got == WAIT_OK && left > 0;) {
        const size_t n = left < sizeof excess ? left : sizeof excess;
        got = await(excess, n, 0);
        left -= n;
    }
    if (got != WAIT_OK)
        lose_worker(got);
}

/* A harness operation that returns a value, or fails the test as the course's problem. */
static remote_reply operation(remote_op op, uint64_t a, uint64_t b, double ms, const char *what)
{
    remote_request request = {.op = op, .exercise = checker.exercise, .a = a, .b = b, .ms = ms};
    remote_reply reply;
    exchange(&request, NULL, &reply);
    char why[512] = "";
    take_body(why, reply.message_length, sizeof why - 1);
    if (reply.status != REMOTE_OK)
        ck_abort_msg("the test could not %s: the worker refused (a problem of the course, not of "
                     "your code)%s%s",
                     what, why[0] ? ": " : "", why);
    return reply;
}

/* --- The test's device buffers, opened here by IPC ------------------------------------------- */

typedef struct device_view {
    uintptr_t theirs; /* the worker's address, which the test holds */
    void *mine;       /* the same memory, opened here */
    size_t bytes;
} device_view;
static device_view views[MAX_DEVICE_BUFFERS];
static size_t view_count;

void *remote_device_alloc(size_t bytes)
{
    ck_assert_msg(view_count < MAX_DEVICE_BUFFERS, "the test allocated too many device buffers");
    remote_reply reply = operation(OP_DEVICE_ALLOC, bytes, 0, 0, "allocate device memory");
    if (reply.error != cudaSuccess) {
        if (reply.error == cudaErrorMemoryAllocation)
            checker_not_graded("the GPU had no room for the test's own buffers");
        ck_abort_msg("the test could not allocate %zu bytes of device memory: %s (a problem of "
                     "the machine or the course, not of your code)",
                     bytes, error_text((cudaError_t)reply.error));
    }
    void *mine = NULL;
    if (checker.use_cuda) {
        cudaError_t err = cudaIpcOpenMemHandle(&mine, reply.handle, cudaIpcMemLazyEnablePeerAccess);
        if (err != cudaSuccess) {
            (void)cudaGetLastError();
            ck_abort_msg("the test could not open its device buffer in its checking process: %s "
                         "(a problem of the machine or the course, not of your code)",
                         error_text(err));
        }
    }
    views[view_count++] = (device_view){(uintptr_t)reply.value, mine, bytes};
    watch.test_buffers += bytes;
    return (void *)(uintptr_t)reply.value;
}

void *remote_device_view(const void *ptr, size_t bytes)
{
    const uintptr_t p = (uintptr_t)ptr;
    for (size_t i = 0; i < view_count; i++)
        if (p >= views[i].theirs && p - views[i].theirs <= views[i].bytes &&
            bytes <= views[i].bytes - (p - views[i].theirs))
            return (char *)views[i].mine + (p - views[i].theirs);
    return NULL;
}

static void close_view(size_t i)
{
    if (views[i].mine != NULL && cudaIpcCloseMemHandle(views[i].mine) != cudaSuccess)
        (void)cudaGetLastError();
    watch.test_buffers -= views[i].bytes < watch.test_buffers ? views[i].bytes : watch.test_buffers;
    views[i] = views[--view_count];
}

void remote_device_free(void *d_buffer)
{
    for (size_t i = 0; i < view_count; i++)
        if (views[i].theirs == (uintptr_t)d_buffer) {
            close_view(i);
            (void)operation(OP_DEVICE_FREE, (uint64_t)(uintptr_t)d_buffer, 0, 0,
                            "free a device buffer");
            return;
        }
    ck_abort_msg("the test freed a device buffer it did not allocate (a bug in the course)");
}

void remote_forget_device_buffers(void)
{
    while (view_count > 0)
        close_view(view_count - 1);
}

void remote_register(void *h_buffer, size_t bytes)
{
    remote_reply reply = operation(OP_REGISTER, (uint64_t)(uintptr_t)h_buffer, bytes, 0,
                                   "pin its host buffer");
    if (reply.error != cudaSuccess)
        ck_abort_msg("the test could not pin %zu bytes of host memory for your code: %s (a "
                     "problem of the machine or the course, not of your code)",
                     bytes, error_text((cudaError_t)reply.error));
}

cudaStream_t remote_stream_create(unsigned int flags)
{
    remote_reply reply = operation(OP_STREAM_CREATE, flags, 0, 0, "create a stream");
    if (reply.error != cudaSuccess)
        ck_abort_msg("the test could not create a stream: %s (a problem of the course, not of "
                     "your code)",
                     error_text((cudaError_t)reply.error));
    return (cudaStream_t)(uintptr_t)reply.value;
}

double remote_synchronize(cudaStream_t stream)
{
    remote_reply reply = operation(stream ? OP_STREAM_SYNCHRONIZE : OP_SYNCHRONIZE,
                                   (uint64_t)(uintptr_t)stream, 0, 0, "wait for the GPU");
    ck_assert_msg(reply.error == cudaSuccess,
                  "waiting for what your code queued on the GPU failed: %s. An error from "
                  "earlier work surfaces here: a copy or a kernel the code queued failed",
                  error_text((cudaError_t)reply.error));
    return stream ? 0 : (double)reply.value / 1e3;
}

cudaError_t remote_keep_busy(cudaStream_t stream, double milliseconds)
{
    return (cudaError_t)operation(OP_KEEP_BUSY, (uint64_t)(uintptr_t)stream, 0, milliseconds,
                                  "hold the GPU up")
        .error;
}

memory_location remote_locate(const void *ptr)
{
    trace_evidence_read = true;
    remote_reply reply = operation(OP_LOCATE, (uint64_t)(uintptr_t)ptr, 0, 0,
                                   "ask where memory lives");
    return reply.value <= LOCATION_UNKNOWN ? (memory_location)reply.value : LOCATION_UNKNOWN;
}

memory_location trace_locate(const void *ptr)
{
    return remote_locate(ptr);
}

size_t remote_threads(void)
{
    trace_evidence_read = true;
    return (size_t)operation(OP_THREADS, 0, 0, 0, "count threads").value;
}

/* --- Captured output ------------------------------------------------------------------------- */

static struct {
    bool on;
    char text[2][REMOTE_TEXT_MAX];
    size_t length[2];
} captured;

void remote_capture(bool on)
{
    captured.on = on;
    if (on)
        captured.length[0] = captured.length[1] = 0;
}

size_t remote_captured(int stream, char *text, size_t size)
{
    size_t n = captured.length[stream] < size - 1 ? captured.length[stream] : size - 1;
    memcpy(text, captured.text[stream], n);
    text[n] = '\0';
    return n;
}

static void keep_captured(int stream, const char *text, size_t length)
{
    size_t room = sizeof captured.text[0] - captured.length[stream];
    size_t n = length < room ? length : room;
    memcpy(captured.text[stream] + captured.length[stream], text, n);
    captured.length[stream] += n;
}

/* --- Calls of the learner's functions -------------------------------------------------------- */

void remote_call_begin(remote_call *call, uint32_t function, const char *name)
{
    call->function = function;
    call->name = name;
    call->used = 0;
}

static void append(remote_call *call, const void *data, size_t size)
{
    ck_assert_msg(call->used + size <= sizeof call->arguments,
                  "the arguments of %s are too long to send (a bug in the course)", call->name);
    memcpy(call->arguments + call->used, data, size);
    call->used += size;
}

void remote_call_argument(remote_call *call, const void *value, size_t size)
{
    const uint32_t declared = (uint32_t)size;
    append(call, &declared, sizeof declared);
    append(call, value, size);
}

void remote_call_string(remote_call *call, const char *text)
{
    const uint32_t length = text ? (uint32_t)strlen(text) + 1 : UINT32_MAX;
    append(call, &length, sizeof length);
    if (text)
        append(call, text, length);
}

/* A record the worker sent, made safe to read: every enum within its range. */
static void sanitize(traced_call *call)
{
    if ((unsigned)call->function >= TRACED_FUNCTION_COUNT)
        call->function = TRACED_FUNCTION_COUNT; /* named "(unknown call)" */
    if ((unsigned)call->dst_location > LOCATION_UNKNOWN)
        call->dst_location = LOCATION_UNKNOWN;
    if ((unsigned)call->src_location > LOCATION_UNKNOWN)
        call->src_location = LOCATION_UNKNOWN;
    call->injected = call->injected != 0;
    call->over_limit = call->over_limit != 0;
}

void remote_call_run(remote_call *call, void *result, size_t result_size)
{
    static unsigned char payload[sizeof(remote_trace_settings) + REMOTE_ARGUMENTS_MAX];
    remote_trace_settings settings;
    memset(&settings, 0, sizeof settings);
    settings.tracing = trace_is_on();
    settings.delay_direction = trace_delay.direction;
    settings.delay_ms = trace_delay.milliseconds;
    settings.delay_copies = trace_delay.copies;
    settings.host_copy_delay_ms = trace_delay.host_milliseconds;
    settings.room = TRACE_CAPACITY - trace_recorded;
    for (int f = 0; f < TRACED_FUNCTION_COUNT; f++) {
        settings.made[f] = trace_made[f];
        settings.injection[f].armed = trace_injections[f].armed;
        settings.injection[f].n = trace_injections[f].n;
        settings.injection[f].error = trace_injections[f].error;
    }
    memcpy(payload, &settings, sizeof settings);
    memcpy(payload + sizeof settings, call->arguments, call->used);
    remote_request request = {.op = OP_CALL, .exercise = checker.exercise,
                              .function = call->function,
                              .flags = (captured.on ? REMOTE_CAPTURE_OUTPUT : 0) |
                                       (checker.alone ? REMOTE_MEASURING : 0),
                              .payload = (uint32_t)(sizeof settings + call->used)};
    remote_reply reply;
    exchange(&request, payload, &reply);

    /* The record of the calls the function made, appended to the checker's copy. */
    const size_t room = TRACE_CAPACITY - trace_recorded;
    const size_t kept = reply.records < room ? reply.records : room;
    take_body(trace_calls + trace_recorded, (size_t)reply.records * sizeof trace_calls[0],
              kept * sizeof trace_calls[0]);
    for (size_t i = 0; i < kept; i++)
        sanitize(&trace_calls[trace_recorded + i]);
    trace_recorded += kept;
    trace_dropped_calls += (size_t)(reply.records - kept) + (size_t)reply.dropped;
    for (int f = 0; f < TRACED_FUNCTION_COUNT; f++)
        trace_made[f] = (size_t)reply.made[f];

    static char text[REMOTE_TEXT_MAX];
    take_body(text, reply.message_length, sizeof text - 1);
    text[reply.message_length < sizeof text ? reply.message_length : sizeof text - 1] = '\0';
    static char printed[2][REMOTE_TEXT_MAX];
    take_body(printed[0], reply.out_length, sizeof printed[0]);
    take_body(printed[1], reply.err_length, sizeof printed[1]);
    if (captured.on) {
        keep_captured(0, printed[0], reply.out_length < sizeof printed[0] ? reply.out_length
                                                                          : sizeof printed[0]);
        keep_captured(1, printed[1], reply.err_length < sizeof printed[1] ? reply.err_length
                                                                          : sizeof printed[1]);
    }
    if (reply.status == REMOTE_FAILED)
        ck_abort_msg("%s", text);
    if (reply.status != REMOTE_OK)
        ck_abort_msg("the worker could not call %s (a bug in the course)%s%s", call->name,
                     text[0] ? ": " : "", text);
    memcpy(result, reply.result, result_size < REMOTE_RESULT_MAX ? result_size : REMOTE_RESULT_MAX);
}

/* --- After a test ---------------------------------------------------------------------------- */

uint32_t remote_end_of_test(char *poisoned_by, size_t size)
{
    if (size > 0)
        poisoned_by[0] = '\0';
    remote_forget_device_buffers(); /* the checker's views close before the worker frees */
    captured.on = false;
    const bool lost = lost_in_this_test;
    lost_in_this_test = false;
    if (worker.pid == 0)
        return lost ? FRESH_GONE : 0;
    remote_request request = {.op = OP_TIDY, .flags = checker.gpu_shared ? 0 : 1};
    remote_reply reply;
    uint32_t reasons = FRESH_GONE;
    if (write_all(worker.socket, &request, sizeof request) &&
        await(&reply, sizeof reply, checker_now_s() + 30) == WAIT_OK) {
        char why[512];
        const size_t why_length = reply.message_length < sizeof why ? reply.message_length
                                                                     : sizeof why - 1;
        reasons = (uint32_t)reply.value & ~(uint32_t)FRESH_GONE;
        /* A longer message than a tidy writes leaves the channel out of step: a new worker. */
        if (reply.message_length >= sizeof why ||
            (why_length > 0 && await(why, why_length, checker_now_s() + 5) != WAIT_OK))
            reasons |= FRESH_GONE;
        why[why_length] = '\0';
        if ((reasons & FRESH_POISONED) && size > 0) {
            snprintf(poisoned_by, size, "%s", why[0] ? why : "an error it did not name");
            text_make_printable(poisoned_by, size);
        }
    }
    /* Nothing the learner's code started outlives its test: below this process there is the
     * worker, and nothing else (an orphan of the learner's comes back here, the subreaper). */
    pid_t below[2];
    if (processes_below(getpid(), below, 2) > 1)
        reasons |= FRESH_PROCESSES_LEFT;
    if (watch.on && reasons == 0) {
        unsigned long long held = 0;
        if (device_memory_of(worker.pid, &held) && held > worker.baseline + DEVICE_SLACK)
            reasons |= FRESH_MEMORY_KEPT;
    }
    if (reasons != 0) {
        int status;
        kill(worker.pid, SIGKILL);
        end_worker(&status);
    }
    watch.test_buffers = 0;
    return reasons;
}

const char *fresh_start_words(uint32_t reasons)
{
    return reasons & FRESH_GONE             ? "the worker ended or stopped answering"
           : reasons & FRESH_POISONED       ? "the context was poisoned"
           : reasons & FRESH_LEDGER_FULL    ? "more was held than the ledger notes"
           : reasons & FRESH_MEMORY_KEPT    ? "device memory was not all given back"
           : reasons & FRESH_THREADS_LEFT   ? "threads were left running"
           : reasons & FRESH_PROCESSES_LEFT ? "processes were left running"
                                            : "no reason";
}

/* worker_main.c - main() of build/tests/worker: the process that runs the learner's code.
 *
 * The checker (harness/host/remote.c) starts it with the socket it talks on (descriptor 3), the
 * shared arena (4), and its standard output and error on pipes the checker reads. Before any
 * learner code is loaded the worker closes every other descriptor, maps the arena where the
 * checker has it, binds its life to the checker's (PR_SET_PDEATHSIG), and installs a seccomp
 * filter under which it may signal no process but itself and read or trace no other process's
 * memory: so its code cannot stop, kill or spy on the checker, which runs as the same user.
 * Then it makes its CUDA context, says hello, and serves requests (remote.h) until told to quit
 * or killed: loading an exercise's learner module, calling its functions, and the harness's own
 * operations on the test's behalf (device buffers shared by IPC, streams, waits).
 *
 * Usage: worker [--no-cuda]   (--no-cuda: the harness's self-test, which runs no CUDA)
 */
#define _GNU_SOURCE /* close_range, dup3 */
#include "arena.h"
#include "device_info.h"
#include "gpu_work.h"
#include "harness.h"
#include "io.h"
#include "remote.h"
#include "timing.h"
#include "worker.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static int channel = WORKER_FD_SOCKET;

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* --- The learner's modules ------------------------------------------------------------------ */

/* By the checker's index of the exercise: make check's selftest loads a module per solution,
 * stub and known mistake into one worker, well over a hundred. */
#define MAX_MODULES 65536

typedef struct learner_module {
    void *handle;
    const remote_function *table;
    int count;
} learner_module;
static learner_module *modules;
static uint32_t module_slots;

static bool load_module(uint32_t exercise, const char *path, char *why, size_t why_size)
{
    if (exercise >= MAX_MODULES) {
        snprintf(why, why_size, "too many exercises for one worker");
        return false;
    }
    if (exercise >= module_slots) {
        const uint32_t slots = exercise + 64 < MAX_MODULES ? exercise + 64 : MAX_MODULES;
        learner_module *grown = realloc(modules, slots * sizeof *grown);
        if (grown == NULL) {
            snprintf(why, why_size, "the worker ran out of memory");
            return false;
        }
        memset(grown + module_slots, 0, (slots - module_slots) * sizeof *grown);
        modules = grown;
        module_slots = slots;
    }
    if (modules[exercise].handle != NULL)
        return true;
    void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (handle == NULL) {
        snprintf(why, why_size, "%s", dlerror());
        return false;
    }
    const remote_function *table = dlsym(handle, REMOTE_TABLE);
    const int *count = dlsym(handle, REMOTE_TABLE_COUNT);
    if (table == NULL || count == NULL) {
        snprintf(why, why_size, "the module holds no table of the exercise's functions (%s)",
                 REMOTE_TABLE);
        return false;
    }
    modules[exercise].handle = handle;
    modules[exercise].table = table;
    modules[exercise].count = *count;
    return true;
}

/* --- The arguments of a call, for the dispatchers (remote_stubs.awk) ------------------------- */

void remote_take(remote_arguments *arguments, void *value, size_t size)
{
    uint32_t declared = 0;
    if (arguments->bad || arguments->size - arguments->at < sizeof declared + size) {
        arguments->bad = true;
        memset(value, 0, size);
        return;
    }
    memcpy(&declared, arguments->data + arguments->at, sizeof declared);
    arguments->bad |= declared != size;
    memcpy(value, arguments->data + arguments->at + sizeof declared, size);
    arguments->at += sizeof declared + size;
}

const char *remote_take_string(remote_arguments *arguments)
{
    uint32_t length = 0;
    if (arguments->bad || arguments->size - arguments->at < sizeof length) {
        arguments->bad = true;
        return NULL;
    }
    memcpy(&length, arguments->data + arguments->at, sizeof length);
    arguments->at += sizeof length;
    if (length == UINT32_MAX)
        return NULL; /* a NULL string */
    if (length == 0 || arguments->size - arguments->at < length ||
        arguments->data[arguments->at + length - 1] != '\0') {
        arguments->bad = true;
        return NULL;
    }
    const char *text = (const char *)arguments->data + arguments->at;
    arguments->at += length;
    return text;
}

void remote_give(remote_arguments *arguments, const void *value, size_t size)
{
    memcpy(arguments->result, value, size < REMOTE_RESULT_MAX ? size : REMOTE_RESULT_MAX);
}

/* --- A call, and what the learner's code did during it --------------------------------------- */

static struct {
    bool running;
    pthread_t thread;     /* the one that runs it: the learner's code may start others */
    const char *function; /* the exercise function called */
    char message[REMOTE_TEXT_MAX / 2];
} in_call;

bool worker_in_call(void)
{
    return in_call.running && trace_is_on();
}

bool worker_call_running(void)
{
    return in_call.running;
}

bool worker_on_calling_thread(void)
{
    return in_call.running && pthread_equal(pthread_self(), in_call.thread);
}

const char *worker_called_function(void)
{
    return in_call.running && in_call.function ? in_call.function : "the code";
}

void worker_fail(const char *format, ...)
{
    if (in_call.message[0] != '\0')
        return; /* the first is the one to read */
    va_list arguments;
    va_start(arguments, format);
    vsnprintf(in_call.message, sizeof in_call.message, format, arguments);
    va_end(arguments);
}

/* What a call prints, when the test asked to see it: standard output and error go to temporary
 * files for the call's duration. */
static struct {
    FILE *file[2];
    int saved[2];
} capture;

static void capture_begin(void)
{
    fflush(stdout);
    fflush(stderr);
    for (int s = 0; s < 2; s++) {
        capture.file[s] = tmpfile();
        capture.saved[s] = capture.file[s] ? dup(1 + s) : -1;
        if (capture.saved[s] >= 0)
            dup2(fileno(capture.file[s]), 1 + s);
    }
}

static size_t capture_end(int s, char *text, size_t size)
{
    if (s == 0) {
        fflush(stdout);
        fflush(stderr);
    }
    size_t got = 0;
    if (capture.saved[s] >= 0) {
        dup2(capture.saved[s], 1 + s);
        close(capture.saved[s]);
        if (fseek(capture.file[s], 0, SEEK_SET) == 0)
            got = fread(text, 1, size, capture.file[s]);
    }
    if (capture.file[s])
        fclose(capture.file[s]);
    capture.file[s] = NULL;
    capture.saved[s] = -1;
    return got;
}

static void apply_settings(const remote_trace_settings *settings)
{
    trace_recorded = 0;
    trace_dropped_calls = 0;
    trace_room = settings->room < TRACE_CAPACITY ? (size_t)settings->room : TRACE_CAPACITY;
    for (int f = 0; f < TRACED_FUNCTION_COUNT; f++) {
        trace_made[f] = (size_t)settings->made[f];
        trace_injections[f].armed = settings->injection[f].armed != 0;
        trace_injections[f].n = (size_t)settings->injection[f].n;
        trace_injections[f].error = (cudaError_t)settings->injection[f].error;
    }
    trace_delay.direction = (enum cudaMemcpyKind)settings->delay_direction;
    trace_delay.milliseconds = settings->delay_ms;
    trace_delay.copies = (size_t)settings->delay_copies;
    trace_delay.host_milliseconds = settings->host_copy_delay_ms;
    trace_delay.kernel_milliseconds = settings->kernel_delay_ms;
    trace_delay.prefetches_skipped = settings->prefetches_skipped != 0;
    trace_delay.peers_unreachable = settings->peers_unreachable != 0;
    trace_delay_count_again();
    static bool kernel_loaded;
    if ((trace_delay.milliseconds > 0 || trace_delay.kernel_milliseconds > 0) && !kernel_loaded) {
        /* Load the delaying kernel now, once, untraced: loading it at its first launch, in the
         * middle of the learner's calls, could make the host wait there. A runtime without
         * kernels simply does not delay the copies and kernels. */
        if (gpu_work_keep_busy(NULL, 0.0) != cudaSuccess ||
            __real_cudaDeviceSynchronize() != cudaSuccess)
            (void)cudaGetLastError();
        kernel_loaded = true;
    }
}

static void serve_call(const remote_request *request, const unsigned char *payload)
{
    static char texts[REMOTE_TEXT_MAX];
    remote_reply reply;
    memset(&reply, 0, sizeof reply);
    const uint32_t x = request->exercise;
    const bool known = x < module_slots && modules[x].handle != NULL &&
                       request->function < (uint32_t)modules[x].count &&
                       request->payload >= sizeof(remote_trace_settings);
    if (!known) {
        reply.status = REMOTE_REFUSED;
        (void)write_all(channel, &reply, sizeof reply);
        return;
    }
    remote_trace_settings settings;
    memcpy(&settings, payload, sizeof settings);
    remote_arguments arguments = {
        payload + sizeof settings, request->payload - sizeof settings, 0, false, {0}};
    apply_settings(&settings);
    pinned_pool_set_measuring(request->flags & REMOTE_MEASURING);
    const bool capturing = request->flags & REMOTE_CAPTURE_OUTPUT;
    if (capturing)
        capture_begin();
    in_call.message[0] = '\0';
    in_call.function = modules[x].table[request->function].name;
    in_call.thread = pthread_self();
    in_call.running = true;
    if (settings.tracing)
        trace_resume();
    reply.began_ms = host_clock_ms();
    modules[x].table[request->function].call(&arguments);
    reply.ended_ms = host_clock_ms();
    trace_stop();
    in_call.running = false;
    fflush(NULL);
    size_t used = 0;
    if (capturing) {
        reply.out_length = (uint32_t)capture_end(0, texts, sizeof texts / 2);
        used = reply.out_length;
        reply.err_length = (uint32_t)capture_end(1, texts + used, sizeof texts / 2);
        used += reply.err_length;
    }
    if (arguments.bad) {
        reply.status = REMOTE_REFUSED;
        snprintf(in_call.message, sizeof in_call.message,
                 "the call's arguments did not match the function (a bug in the course)");
    } else if (in_call.message[0] != '\0') {
        reply.status = REMOTE_FAILED;
    }
    reply.message_length = (uint32_t)strlen(in_call.message);
    memcpy(reply.result, arguments.result, sizeof reply.result);
    for (int f = 0; f < TRACED_FUNCTION_COUNT; f++)
        reply.made[f] = trace_made[f];
    reply.dropped = trace_dropped_calls;
    reply.records = (uint32_t)trace_recorded;
    if (write_all(channel, &reply, sizeof reply) &&
        write_all(channel, trace_calls, trace_recorded * sizeof trace_calls[0]) &&
        write_all(channel, in_call.message, reply.message_length))
        (void)write_all(channel, texts, used);
}

static void serve(const remote_request *request, const unsigned char *payload)
{
    remote_reply reply;
    memset(&reply, 0, sizeof reply);
    char why[512] = "";
    if (request->op == OP_LOAD) {
        if (request->payload == 0 || payload[request->payload - 1] != '\0' ||
            !load_module(request->exercise, (const char *)payload, why, sizeof why))
            reply.status = REMOTE_REFUSED;
    } else {
        worker_operation(request, &reply, why, sizeof why);
    }
    reply.message_length = (uint32_t)strlen(why);
    if (write_all(channel, &reply, sizeof reply))
        (void)write_all(channel, why, reply.message_length);
}

static _Noreturn void say_hello_and_end(remote_hello *hello)
{
    (void)write_all(channel, hello, sizeof *hello);
    _exit(0);
}

int main(int argc, char **argv)
{
    const bool use_cuda = !(argc > 1 && strcmp(argv[1], "--no-cuda") == 0);
    remote_hello hello;
    memset(&hello, 0, sizeof hello);
    /* Nothing of the checker's but what it gave on purpose. */
    for (int fd = WORKER_FD_ARENA + 1; fd < 1024; fd++)
        (void)close(fd);
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() == 1)
        _exit(1); /* the checker is gone already */
    signal(SIGPIPE, SIG_DFL);
    if (!arena_map(WORKER_FD_ARENA, hello.why, sizeof hello.why))
        say_hello_and_end(&hello);
    close(WORKER_FD_ARENA); /* the mapping stays */
    if (!worker_confine(hello.why, sizeof hello.why) &&
        getenv("COURSE_WORKER_FILTER_OPTIONAL") == NULL)
        say_hello_and_end(&hello);
    if (use_cuda) {
        /* The self-test's stand-in for a busy machine's slow start (25-isolation.sh): a worker's
         * start must never count against a test's time. Before the turn is asked, not in it:
         * a turn held idle is one that every other program waits for. */
        const char *delay = getenv("COURSE_WORKER_START_DELAY_S");
        const double delay_s = delay != NULL ? atof(delay) : 0;
        if (delay_s > 0) {
            struct timespec pause = {(time_t)delay_s,
                                     (long)((delay_s - (double)(time_t)delay_s) * 1e9)};
            (void)nanosleep(&pause, NULL);
        }
        /* The context is made in the checker's turn (remote.h), the driver's start (cuInit, in
         * the first runtime call) with it: started outside the turns, by every program waiting
         * for one, a driver's start took 0.7 s (dev/context_rate beside them) and the contexts
         * made in the turns were slower (docs/performance.md, stop 51). */
        remote_hello turn = hello;
        turn.gpu_ok = HELLO_WANTS_A_TURN;
        unsigned char go;
        if (!write_all(channel, &turn, sizeof turn) || !read_all(channel, &go, 1))
            _exit(0);
        int count = 0;
        const double making = now_s();
        cudaError_t err = cudaGetDeviceCount(&count);
        if (err == cudaSuccess && count > 0)
            err = cudaFree(NULL); /* makes the context now, outside any test's time */
        hello.making_s = now_s() - making;
        if (err != cudaSuccess || count == 0) {
            if (err != cudaSuccess)
                no_device_reason(err, hello.why, sizeof hello.why);
            else
                snprintf(hello.why, sizeof hello.why, "the CUDA runtime found no device");
            say_hello_and_end(&hello);
        }
    }
    worker_operations_start(use_cuda);
    hello.gpu_ok = 1;
    hello.why[0] = '\0';
    if (!write_all(channel, &hello, sizeof hello))
        _exit(0);

    static unsigned char payload[REMOTE_ARGUMENTS_MAX + sizeof(remote_trace_settings) + 4096];
    for (remote_request request; read_all(channel, &request, sizeof request);) {
        if (request.payload > sizeof payload || !read_all(channel, payload, request.payload))
            break;
        if (request.op == OP_QUIT)
            break;
        if (request.op == OP_CALL)
            serve_call(&request, payload);
        else
            serve(&request, payload);
    }
    fflush(NULL);
    _exit(0);
}

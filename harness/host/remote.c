/* remote.c - in the checker: every call across to the worker that runs the learner's code (its
 * life is remote_worker.c's).
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
#define _GNU_SOURCE
#include "checker.h"
#include "device_memory.h"
#include "harness.h"
#include "io.h"
#include "processes.h"
#include "remote_worker.h"
#include "report.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_DEVICE_BUFFERS 256

/* One request, and its reply's header, within its bounds; the worker's loss ends the test. */
static void exchange(const remote_request *request, const void *payload, remote_reply *reply)
{
    remote_ready_worker();
    if (!write_all(worker.socket, request, sizeof *request) ||
        !write_all(worker.socket, payload, request->payload))
        remote_lose_worker(WAIT_GONE);
    wait_result got = remote_await(reply, sizeof *reply, 0);
    if (got != WAIT_OK)
        remote_lose_worker(got);
    if (reply->status > REMOTE_FAILED || reply->records > TRACE_CAPACITY ||
        reply->message_length > REMOTE_TEXT_MAX || reply->out_length > REMOTE_TEXT_MAX ||
        reply->err_length > REMOTE_TEXT_MAX)
        remote_lose_worker(WAIT_DAMAGED);
}

/* A body that follows a reply, `size` bytes of at most `room`; the excess is read and dropped. */
static void take_body(void *into, size_t size, size_t room)
{
    static char excess[4096];
    const size_t kept = size < room ? size : room;
    wait_result got = kept ? remote_await(into, kept, 0) : WAIT_OK;
    for (size_t left = size - kept; got == WAIT_OK && left > 0;) {
        const size_t n = left < sizeof excess ? left : sizeof excess;
        got = remote_await(excess, n, 0);
        left -= n;
    }
    if (got != WAIT_OK)
        remote_lose_worker(got);
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
    int device; /* the GPU it lives on */
} device_view;
static device_view views[MAX_DEVICE_BUFFERS];
static size_t view_count;

/* The checker works on the first GPU; memory of another is opened, set and waited for with
 * that one current (remote_on_device), then the first is current again. */
void remote_on_device(int device)
{
    if (checker.use_cuda && cudaSetDevice(device) != cudaSuccess)
        (void)cudaGetLastError(); /* the call that follows says what is wrong */
}

void *remote_device_alloc(int device, size_t bytes)
{
    ck_assert_msg(view_count < MAX_DEVICE_BUFFERS, "the test allocated too many device buffers");
    remote_reply reply =
        operation(OP_DEVICE_ALLOC, bytes, (uint64_t)device, 0, "allocate device memory");
    if (reply.error != cudaSuccess) {
        if (reply.error == cudaErrorMemoryAllocation)
            checker_not_graded("the GPU had no room for the test's own buffers");
        ck_abort_msg("the test could not allocate %zu bytes of device memory: %s (a problem of "
                     "the machine or the course, not of your code)",
                     bytes, error_text((cudaError_t)reply.error));
    }
    void *mine = NULL;
    if (checker.use_cuda) {
        remote_on_device(device);
        cudaError_t err = cudaIpcOpenMemHandle(&mine, reply.handle, cudaIpcMemLazyEnablePeerAccess);
        remote_on_device(0);
        if (err != cudaSuccess) {
            (void)cudaGetLastError();
            ck_abort_msg("the test could not open its device buffer in its checking process: %s "
                         "(a problem of the machine or the course, not of your code)",
                         error_text(err));
        }
    }
    views[view_count++] = (device_view){(uintptr_t)reply.value, mine, bytes, device};
    watch.test_buffers += bytes;
    return (void *)(uintptr_t)reply.value;
}

/* The test's buffer that holds [ptr, ptr + bytes), if any. */
static const device_view *view_holding(const void *ptr, size_t bytes)
{
    const uintptr_t p = (uintptr_t)ptr;
    for (size_t i = 0; i < view_count; i++)
        if (p >= views[i].theirs && p - views[i].theirs <= views[i].bytes &&
            bytes <= views[i].bytes - (p - views[i].theirs))
            return &views[i];
    return NULL;
}

void *remote_device_view(const void *ptr, size_t bytes)
{
    const device_view *view = view_holding(ptr, bytes);
    return view != NULL ? (char *)view->mine + ((uintptr_t)ptr - view->theirs) : NULL;
}

int remote_device_of(const void *ptr, size_t bytes)
{
    const device_view *view = view_holding(ptr, bytes);
    return view != NULL ? view->device : -1;
}

bool remote_on_device_of(const void *ptr, size_t bytes)
{
    const int device = remote_device_of(ptr, bytes);
    remote_on_device(device < 0 ? 0 : device);
    return device >= 0;
}

void remote_device_done(void)
{
    CUDA_CHECK(cudaDeviceSynchronize());
    remote_on_device(0);
}

static void close_view(size_t i)
{
    remote_on_device(views[i].device);
    if (views[i].mine != NULL && cudaIpcCloseMemHandle(views[i].mine) != cudaSuccess)
        (void)cudaGetLastError();
    remote_on_device(0);
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
    remote_reply reply =
        operation(OP_REGISTER, (uint64_t)(uintptr_t)h_buffer, bytes, 0, "pin its host buffer");
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

void remote_settle(void)
{
    remote_reply reply = operation(OP_SETTLE, 0, 0, 0, "wait for the copies your code made");
    ck_assert_msg(reply.error == cudaSuccess,
                  "waiting for what your code queued on the GPU failed: %s. An error from "
                  "earlier work surfaces here: a copy or a kernel the code queued failed",
                  error_text((cudaError_t)reply.error));
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
    remote_reply reply =
        operation(OP_LOCATE, (uint64_t)(uintptr_t)ptr, 0, 0, "ask where memory lives");
    return reply.value <= LOCATION_UNKNOWN ? (memory_location)reply.value : LOCATION_UNKNOWN;
}

memory_location trace_locate(const void *ptr)
{
    return remote_locate(ptr);
}

void remote_set_device(int device)
{
    remote_reply reply =
        operation(OP_SET_DEVICE, (uint64_t)device, 0, 0, "make a GPU current for your code");
    if (reply.error != cudaSuccess)
        ck_abort_msg("the test could not make GPU %d current for your code: %s (a problem of the "
                     "machine or the course, not of your code)",
                     device, error_text((cudaError_t)reply.error));
}

int remote_current_device(void)
{
    trace_evidence_read = true;
    return (int)operation(OP_CURRENT_DEVICE, 0, 0, 0, "ask which GPU is current").value;
}

cudaError_t remote_last_error(void)
{
    trace_evidence_read = true;
    return (cudaError_t)operation(OP_LAST_ERROR, 0, 0, 0, "ask for the last error").value;
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
    settings.kernel_delay_ms = trace_delay.kernel_milliseconds;
    settings.prefetches_skipped = trace_delay.prefetches_skipped;
    settings.peers_unreachable = trace_delay.peers_unreachable;
    settings.room = TRACE_CAPACITY - trace_recorded;
    for (int f = 0; f < TRACED_FUNCTION_COUNT; f++) {
        settings.made[f] = trace_made[f];
        settings.injection[f].armed = trace_injections[f].armed;
        settings.injection[f].n = trace_injections[f].n;
        settings.injection[f].error = trace_injections[f].error;
    }
    memcpy(payload, &settings, sizeof settings);
    memcpy(payload + sizeof settings, call->arguments, call->used);
    remote_request request = {.op = OP_CALL,
                              .exercise = checker.exercise,
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
    trace_span_add(reply.began_ms, reply.ended_ms);

    static char text[REMOTE_TEXT_MAX];
    take_body(text, reply.message_length, sizeof text - 1);
    text[reply.message_length < sizeof text ? reply.message_length : sizeof text - 1] = '\0';
    static char printed[2][REMOTE_TEXT_MAX];
    take_body(printed[0], reply.out_length, sizeof printed[0]);
    take_body(printed[1], reply.err_length, sizeof printed[1]);
    if (captured.on) {
        keep_captured(0, printed[0],
                      reply.out_length < sizeof printed[0] ? reply.out_length : sizeof printed[0]);
        keep_captured(1, printed[1],
                      reply.err_length < sizeof printed[1] ? reply.err_length : sizeof printed[1]);
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
    const bool lost = remote_lost_in_this_test;
    remote_lost_in_this_test = false;
    if (worker.pid == 0)
        return lost ? FRESH_GONE : 0;
    /* The watch samples while the test runs; a call quicker than its interval slips between
     * the samples, but what it keeps is still held now. */
    const bool over_share = remote_worker_over_share();
    remote_request request = {.op = OP_TIDY, .flags = checker.gpu_shared ? 0 : 1};
    remote_reply reply;
    uint32_t reasons = FRESH_GONE;
    if (write_all(worker.socket, &request, sizeof request) &&
        remote_await(&reply, sizeof reply, checker_now_s() + 30) == WAIT_OK) {
        char why[512];
        const size_t why_length =
            reply.message_length < sizeof why ? reply.message_length : sizeof why - 1;
        reasons = (uint32_t)reply.value & ~(uint32_t)FRESH_GONE;
        /* A longer message than a tidy writes leaves the channel out of step: a new worker. */
        if (reply.message_length >= sizeof why ||
            (why_length > 0 && remote_await(why, why_length, checker_now_s() + 5) != WAIT_OK))
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
    if (over_share)
        reasons |= FRESH_OVER_SHARE;
    if (watch.on && reasons == 0) {
        unsigned long long held = 0;
        if (device_memory_of(worker.pid, &held) && held > worker.baseline + DEVICE_SLACK)
            reasons |= FRESH_MEMORY_KEPT;
    }
    if (reasons != 0) {
        int status;
        kill(worker.pid, SIGKILL);
        remote_end_worker(&status);
    }
    watch.test_buffers = 0;
    return reasons;
}

const char *fresh_start_words(uint32_t reasons)
{
    return reasons & FRESH_GONE             ? "the worker ended or stopped answering"
           : reasons & FRESH_POISONED       ? "the context was poisoned"
           : reasons & FRESH_OVER_SHARE     ? "it held more device memory than its share"
           : reasons & FRESH_LEDGER_FULL    ? "more was held than the ledger notes"
           : reasons & FRESH_MEMORY_KEPT    ? "device memory was not all given back"
           : reasons & FRESH_THREADS_LEFT   ? "threads were left running"
           : reasons & FRESH_PROCESSES_LEFT ? "processes were left running"
                                            : "no reason";
}

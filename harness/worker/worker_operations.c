/* worker_operations.c - the harness's own operations in the worker (worker.h): the test's device
 * buffers and streams, which the checker opens by IPC and which are given back when the test
 * ends; waits and delays queued untraced; and the tidying after each test, which says whether
 * the next can share this process. None of it is traced or in the learner's ledger.
 */
#include "gpu_work.h"
#include "harness.h"
#include "remote.h"
#include "worker.h"

#include <dirent.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define MAX_HELD 256

/* The test's device buffers and streams, given back when it ends. */
static void *test_buffers[MAX_HELD];
static size_t test_buffer_count;
static cudaStream_t test_streams[MAX_HELD];
static size_t test_stream_count;

static struct {
    bool use_cuda;
    int devices;        /* the GPUs this process sees */
    size_t threads;     /* after the context was made */
    size_t device_free; /* likewise */
} state;

/* Runs `action` with each GPU current in turn, then makes `back_to` current: what the learner's
 * code left queued or enabled may be on any of them. The first error. */
static cudaError_t on_every_device(cudaError_t (*action)(void), int back_to)
{
    cudaError_t first = cudaSuccess;
    for (int device = 0; device < state.devices; device++) {
        cudaError_t err = __real_cudaSetDevice(device);
        if (err == cudaSuccess)
            err = action();
        if (first == cudaSuccess)
            first = err;
    }
    (void)__real_cudaSetDevice(back_to);
    return first;
}

/* The device the learner's code made current, which the harness's own work between its calls
 * must leave so. */
static int current_device(void)
{
    int device = 0;
    return cudaGetDevice(&device) == cudaSuccess ? device : 0;
}

/* Peer access the learner's code enabled lasts as long as the context: each test starts with
 * none, as each starts with the first device current. Errors are for pairs that had none. */
static cudaError_t disable_peer_access_from_current(void)
{
    int device = current_device();
    for (int peer = 0; peer < state.devices; peer++)
        if (peer != device)
            (void)__real_cudaDeviceDisablePeerAccess(peer);
    (void)cudaGetLastError();
    return cudaSuccess;
}

/* The threads of this process that the code under test may have started: those that bear the
 * program's own name. The CUDA runtime names its helper threads (cuda-EvtHandlr, ...) and
 * starts them when it pleases, so they are not counted. */
static size_t thread_count(void)
{
    char own_name[64] = "", name[64], path[300]; /* a task name is at most 255 bytes */
    FILE *file = fopen("/proc/self/comm", "r");
    if (file == NULL || fgets(own_name, sizeof own_name, file) == NULL) {
        if (file)
            fclose(file);
        return 0;
    }
    fclose(file);
    DIR *tasks = opendir("/proc/self/task");
    size_t count = 0;
    if (tasks == NULL)
        return 0;
    for (struct dirent *entry; (entry = readdir(tasks)) != NULL;) {
        if (entry->d_name[0] == '.')
            continue;
        snprintf(path, sizeof path, "/proc/self/task/%s/comm", entry->d_name);
        file = fopen(path, "r");
        if (file != NULL) {
            count += fgets(name, sizeof name, file) != NULL && strcmp(name, own_name) == 0;
            fclose(file);
        }
    }
    closedir(tasks);
    return count;
}

/* The driver's own helper threads that bear the program's name, started now so that the baseline
 * holds them. A prefetch queued behind work still running on its stream starts one (seen on the
 * H200 with CUDA 13: one thread, kept for the life of the process); counted as the learner's, it
 * made every test of a chapter 4 exercise end its worker, and the next test wait for a context. */
static void start_driver_threads(void)
{
    enum { PAGE = 4096 };
    cudaStream_t stream = NULL;
    void *page = NULL;
    int device = 0;
    if (cudaGetDevice(&device) == cudaSuccess &&
        __real_cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) == cudaSuccess &&
        __real_cudaMallocManaged(&page, PAGE, cudaMemAttachGlobal) == cudaSuccess &&
        gpu_work_keep_busy(stream, 1.0) == cudaSuccess) {
        const struct cudaMemLocation gpu = {.type = cudaMemLocationTypeDevice, .id = device};
        (void)__real_cudaMemPrefetchAsync(page, PAGE, gpu, 0, stream);
        (void)__real_cudaStreamSynchronize(stream);
    }
    if (page != NULL)
        (void)__real_cudaFree(page);
    if (stream != NULL)
        (void)__real_cudaStreamDestroy(stream);
    (void)cudaGetLastError(); /* best effort: a runtime without managed memory or kernels */
}

void worker_operations_start(bool use_cuda)
{
    state.use_cuda = use_cuda;
    if (use_cuda) {
        start_driver_threads();
        if (cudaGetDeviceCount(&state.devices) != cudaSuccess || state.devices < 1)
            state.devices = 1;
        size_t total = 0;
        (void)cudaMemGetInfo(&state.device_free, &total);
    }
    state.threads = thread_count();
}

static void forget(void **list, size_t *count, const void *item)
{
    for (size_t i = 0; i < *count; i++)
        if (list[i] == item) {
            list[i] = list[--*count];
            return;
        }
}

/* After a test: gives back what it left, and says (0, or the reasons) whether the next test can
 * share this process; a poisoned context's error goes into why, for the test's verdict. */
static uint32_t tidy(bool check_device_memory, char *why, size_t size)
{
    trace_stop();
    pinned_pool_set_measuring(false);
    if (!state.use_cuda) {
        bool complete = true;
        (void)ledger_release_all(&complete);
        return thread_count() <= state.threads ? 0 : FRESH_THREADS_LEFT;
    }
    cudaError_t err = on_every_device(__real_cudaDeviceSynchronize, 0);
    if (err != cudaSuccess) {
        (void)cudaGetLastError(); /* an ordinary error clears; one that poisons stays */
        err = on_every_device(__real_cudaDeviceSynchronize, 0);
    }
    (void)cudaGetLastError();
    if (err != cudaSuccess) {
        (void)cuda_error_describe(err, why, size);
        return FRESH_POISONED;
    }
    if (state.devices > 1)
        (void)on_every_device(disable_peer_access_from_current, 0);
    bool complete = true;
    (void)ledger_release_all(&complete);
    while (test_stream_count > 0)
        (void)__real_cudaStreamDestroy(test_streams[--test_stream_count]);
    while (test_buffer_count > 0)
        (void)__real_cudaFree(test_buffers[--test_buffer_count]);
    (void)cudaGetLastError();
    size_t device_free = 0, total = 0;
    bool memory_back =
        !check_device_memory || (cudaMemGetInfo(&device_free, &total) == cudaSuccess &&
                                 device_free + ((size_t)256 << 20) >= state.device_free);
    (void)cudaGetLastError();
    return (complete ? 0 : FRESH_LEDGER_FULL) | (memory_back ? 0 : FRESH_MEMORY_KEPT) |
           (thread_count() <= state.threads ? 0 : FRESH_THREADS_LEFT);
}

/* A wait for every GPU, in a thread of its own (the current device is the thread's: it starts
 * from the one the learner's code made current, and leaves it so). */
typedef struct device_wait {
    int back_to;
    cudaError_t result;
    atomic_bool done;
} device_wait;

static void *wait_for_every_device(void *argument)
{
    device_wait *wait = argument;
    (void)__real_cudaSetDevice(wait->back_to);
    wait->result = on_every_device(__real_cudaDeviceSynchronize, wait->back_to);
    atomic_store(&wait->done, true);
    return NULL;
}

static double monotonic_s(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)now.tv_sec + (double)now.tv_nsec / 1e9;
}

/* Waits for what every GPU has queued; *waited_s is how long that took, the time this process
 * was stopped left out. A timed test of another program stops every program beside it for its
 * window (SIGSTOP, harness/host/gpu_share.c): stopped in the middle of this wait, a worker whose
 * code had left nothing running measured 442 ms where the bar was 10. So the wait runs in a
 * thread of its own while this one counts the time in steps of 0.2 ms, leaving out any step of
 * 5 ms or more: the process was stopped, or not run, meanwhile. */
static cudaError_t synchronize_every_device(double *waited_s)
{
    enum { STEP_NS = 200 * 1000 };
    const double longest_step_s = 0.005;
    device_wait wait = {.back_to = current_device(), .result = cudaSuccess};
    atomic_init(&wait.done, false);
    pthread_t waiter;
    if (pthread_create(&waiter, NULL, wait_for_every_device, &wait) != 0) {
        const double began = monotonic_s(); /* no thread to spare: the plain wait, timed */
        cudaError_t err = on_every_device(__real_cudaDeviceSynchronize, wait.back_to);
        *waited_s = monotonic_s() - began;
        return err;
    }
    double counted = 0, last = monotonic_s();
    while (!atomic_load(&wait.done)) {
        nanosleep(&(struct timespec){0, STEP_NS}, NULL);
        const double now = monotonic_s();
        if (now - last < longest_step_s)
            counted += now - last;
        last = now;
    }
    pthread_join(waiter, NULL);
    *waited_s = counted;
    return wait.result;
}

/* What a cudaMemcpy on the legacy default stream, made in this process after the learner's code
 * returned, would wait for: the legacy stream's work and, through it, that of every blocking
 * stream; not that of a non-blocking one. The checker reads device memory in a context of its
 * own, which waits for none of it: a pageable cudaMemcpy returns once its bytes are staged, before
 * they land, so without this a correct copy's last bytes could be read before they arrive. */
static cudaError_t settle(void)
{
    cudaEvent_t done = NULL;
    cudaError_t err = __real_cudaEventCreateWithFlags(&done, cudaEventDisableTiming);
    if (err == cudaSuccess)
        err = __real_cudaEventRecord(done, cudaStreamLegacy);
    if (err == cudaSuccess)
        err = __real_cudaEventSynchronize(done);
    if (done != NULL)
        (void)__real_cudaEventDestroy(done);
    return err;
}

/* A device buffer of the test's on the GPU it names, with the IPC handle the checker opens it by;
 * the learner's current device is left as it was. */
static void allocate_test_buffer(const remote_request *request, remote_reply *reply)
{
    void *d = NULL;
    const int was = current_device();
    reply->error = __real_cudaSetDevice((int)request->b);
    if (reply->error == cudaSuccess)
        reply->error = __real_cudaMalloc(&d, (size_t)request->a);
    if (reply->error == cudaSuccess)
        reply->error = cudaIpcGetMemHandle(&reply->handle, d);
    (void)__real_cudaSetDevice(was);
    if (reply->error == cudaSuccess && test_buffer_count < MAX_HELD) {
        test_buffers[test_buffer_count++] = d;
        ledger_forget_given_back(d, (size_t)request->a); /* the test's now, not dangling */
        reply->value = (uint64_t)(uintptr_t)d;
    } else if (d != NULL) {
        (void)__real_cudaFree(d);
    }
    (void)cudaGetLastError();
}

void worker_operation(const remote_request *request, remote_reply *reply, char *why, size_t size)
{
    switch (request->op) {
    case OP_DEVICE_ALLOC: allocate_test_buffer(request, reply); break;
    case OP_DEVICE_FREE: {
        void *d = (void *)(uintptr_t)request->a;
        forget(test_buffers, &test_buffer_count, d);
        reply->error = __real_cudaFree(d);
        (void)cudaGetLastError();
        break;
    }
    case OP_REGISTER:
        reply->error =
            worker_register_test_buffer((void *)(uintptr_t)request->a, (size_t)request->b);
        (void)cudaGetLastError();
        break;
    case OP_STREAM_CREATE: {
        cudaStream_t stream = NULL;
        reply->error = __real_cudaStreamCreateWithFlags(&stream, (unsigned int)request->a);
        if (reply->error == cudaSuccess && test_stream_count < MAX_HELD) {
            test_streams[test_stream_count++] = stream;
            ledger_forget_given_back(stream, 0);
            reply->value = (uint64_t)(uintptr_t)stream;
        }
        (void)cudaGetLastError();
        break;
    }
    case OP_SYNCHRONIZE: {
        /* Where the test held work up, the GPU says whether any of it still runs: if none
         * does, the wait's time is the driver's, not the learner's work. */
        const int holds_running = worker_holds_still_running();
        double waited_s = 0;
        reply->error = synchronize_every_device(&waited_s);
        reply->value = holds_running == 0 ? 0 : (uint64_t)(waited_s * 1e6);
        (void)cudaGetLastError();
        break;
    }
    case OP_STREAM_SYNCHRONIZE:
        reply->error = __real_cudaStreamSynchronize((cudaStream_t)(uintptr_t)request->a);
        (void)cudaGetLastError();
        break;
    case OP_SETTLE:
        reply->error = on_every_device(settle, current_device());
        (void)cudaGetLastError();
        break;
    case OP_KEEP_BUSY:
        reply->error = gpu_work_keep_busy((cudaStream_t)(uintptr_t)request->a, request->ms);
        (void)cudaGetLastError();
        break;
    case OP_LOCATE:
        reply->value = (uint64_t)worker_locate((const void *)(uintptr_t)request->a);
        break;
    case OP_THREADS: {
        const size_t now = thread_count();
        reply->value = now > state.threads ? now - state.threads : 0;
        break;
    }
    case OP_TIDY: reply->value = tidy(request->flags != 0, why, size); break;
    case OP_SET_DEVICE:
        reply->error = __real_cudaSetDevice((int)request->a);
        (void)cudaGetLastError();
        break;
    case OP_CURRENT_DEVICE: reply->value = (uint64_t)current_device(); break;
    case OP_LAST_ERROR: reply->value = (uint64_t)cudaPeekAtLastError(); break;
    default: reply->status = REMOTE_REFUSED;
    }
}

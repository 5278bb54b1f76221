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
    size_t threads;     /* after the context was made */
    size_t device_free; /* likewise */
} state;

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
    cudaError_t err = __real_cudaDeviceSynchronize();
    if (err != cudaSuccess) {
        (void)cudaGetLastError(); /* an ordinary error clears; one that poisons stays */
        err = __real_cudaDeviceSynchronize();
    }
    (void)cudaGetLastError();
    if (err != cudaSuccess) {
        (void)cuda_error_describe(err, why, size);
        return FRESH_POISONED;
    }
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

void worker_operation(const remote_request *request, remote_reply *reply, char *why, size_t size)
{
    switch (request->op) {
    case OP_DEVICE_ALLOC: {
        void *d = NULL;
        reply->error = __real_cudaMalloc(&d, (size_t)request->a);
        if (reply->error == cudaSuccess)
            reply->error = cudaIpcGetMemHandle(&reply->handle, d);
        if (reply->error == cudaSuccess && test_buffer_count < MAX_HELD) {
            test_buffers[test_buffer_count++] = d;
            ledger_forget_given_back(d, (size_t)request->a); /* the test's now, not dangling */
            reply->value = (uint64_t)(uintptr_t)d;
        } else if (d != NULL) {
            (void)__real_cudaFree(d);
        }
        (void)cudaGetLastError();
        break;
    }
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
        struct timespec before, after;
        clock_gettime(CLOCK_MONOTONIC, &before);
        reply->error = __real_cudaDeviceSynchronize();
        clock_gettime(CLOCK_MONOTONIC, &after);
        reply->value = (uint64_t)((after.tv_sec - before.tv_sec) * 1000000 +
                                  (after.tv_nsec - before.tv_nsec) / 1000);
        (void)cudaGetLastError();
        break;
    }
    case OP_STREAM_SYNCHRONIZE:
        reply->error = __real_cudaStreamSynchronize((cudaStream_t)(uintptr_t)request->a);
        (void)cudaGetLastError();
        break;
    case OP_SETTLE:
        reply->error = settle();
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
    default: reply->status = REMOTE_REFUSED;
    }
}

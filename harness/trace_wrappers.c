/* trace_wrappers.c - the link-time wrappers for the calls in traced_calls.def.
 *
 * The linker sends every reference to cudaX in the program to __wrap_cudaX
 * (-Wl,--wrap=cudaX), and __real_cudaX reaches the runtime. Each wrapper asks
 * whether this call is to fail, records it, and otherwise passes it on.
 */
#include "trace.h"

#include <string.h>

#define DECLARE_REAL(ret, name, params) ret __real_##name params;

/* Start a record for this call; `call` and `error` are in scope afterwards. */
#define BEGIN(name)                                                                                \
    traced_call call;                                                                              \
    memset(&call, 0, sizeof call);                                                                 \
    call.function = TRACED_##name;                                                                 \
    bool tracing = trace_is_on();                                                                  \
    cudaError_t error = cudaSuccess;                                                               \
    bool fail = tracing && trace_should_fail(TRACED_##name, &error)

/* Pass the call on unless it is to fail, record it, return its result. */
#define FINISH(real_call)                                                                          \
    do {                                                                                           \
        if (!fail)                                                                                 \
            error = real_call;                                                                     \
        call.result = error;                                                                       \
        call.injected = fail;                                                                      \
        if (tracing)                                                                               \
            trace_record(&call);                                                                   \
        return error;                                                                              \
    } while (0)

DECLARE_REAL(cudaError_t, cudaMalloc, (void **, size_t))
cudaError_t __wrap_cudaMalloc(void **ptr, size_t bytes)
{
    BEGIN(cudaMalloc);
    call.bytes = bytes;
    if (!fail) {
        error = __real_cudaMalloc(ptr, bytes);
        call.allocated = error == cudaSuccess && ptr ? *ptr : NULL;
    }
    FINISH(error);
}

DECLARE_REAL(cudaError_t, cudaFree, (void *))
cudaError_t __wrap_cudaFree(void *ptr)
{
    BEGIN(cudaFree);
    call.dst = ptr;
    FINISH(__real_cudaFree(ptr));
}

DECLARE_REAL(cudaError_t, cudaMallocHost, (void **, size_t))
cudaError_t __wrap_cudaMallocHost(void **ptr, size_t bytes)
{
    BEGIN(cudaMallocHost);
    call.bytes = bytes;
    if (!fail) {
        error = __real_cudaMallocHost(ptr, bytes);
        call.allocated = error == cudaSuccess && ptr ? *ptr : NULL;
    }
    FINISH(error);
}

DECLARE_REAL(cudaError_t, cudaHostAlloc, (void **, size_t, unsigned int))
cudaError_t __wrap_cudaHostAlloc(void **ptr, size_t bytes, unsigned int flags)
{
    BEGIN(cudaHostAlloc);
    call.bytes = bytes;
    if (!fail) {
        error = __real_cudaHostAlloc(ptr, bytes, flags);
        call.allocated = error == cudaSuccess && ptr ? *ptr : NULL;
    }
    FINISH(error);
}

DECLARE_REAL(cudaError_t, cudaFreeHost, (void *))
cudaError_t __wrap_cudaFreeHost(void *ptr)
{
    BEGIN(cudaFreeHost);
    call.dst = ptr;
    FINISH(__real_cudaFreeHost(ptr));
}

/* Copies and sets: where both ends live is looked up before the call runs. */
static void locate_ends(traced_call *call, void *dst, const void *src, size_t bytes)
{
    call->dst = dst;
    call->src = src;
    call->bytes = bytes;
    call->dst_location = trace_locate(dst);
    call->src_location = src ? trace_locate(src) : LOCATION_NULL;
}

DECLARE_REAL(cudaError_t, cudaMemcpy, (void *, const void *, size_t, enum cudaMemcpyKind))
cudaError_t __wrap_cudaMemcpy(void *dst, const void *src, size_t bytes, enum cudaMemcpyKind kind)
{
    BEGIN(cudaMemcpy);
    if (tracing)
        locate_ends(&call, dst, src, bytes);
    call.kind = kind;
    FINISH(__real_cudaMemcpy(dst, src, bytes, kind));
}

DECLARE_REAL(cudaError_t, cudaMemcpyAsync,
             (void *, const void *, size_t, enum cudaMemcpyKind, cudaStream_t))
cudaError_t __wrap_cudaMemcpyAsync(void *dst, const void *src, size_t bytes,
                                   enum cudaMemcpyKind kind, cudaStream_t stream)
{
    BEGIN(cudaMemcpyAsync);
    if (tracing)
        locate_ends(&call, dst, src, bytes);
    call.kind = kind;
    call.stream = stream;
    FINISH(__real_cudaMemcpyAsync(dst, src, bytes, kind, stream));
}

DECLARE_REAL(cudaError_t, cudaMemset, (void *, int, size_t))
cudaError_t __wrap_cudaMemset(void *dst, int value, size_t bytes)
{
    BEGIN(cudaMemset);
    if (tracing)
        locate_ends(&call, dst, NULL, bytes);
    FINISH(__real_cudaMemset(dst, value, bytes));
}

DECLARE_REAL(cudaError_t, cudaEventCreate, (cudaEvent_t *))
cudaError_t __wrap_cudaEventCreate(cudaEvent_t *event)
{
    BEGIN(cudaEventCreate);
    if (!fail) {
        error = __real_cudaEventCreate(event);
        call.event = error == cudaSuccess && event ? *event : NULL;
    }
    FINISH(error);
}

DECLARE_REAL(cudaError_t, cudaEventRecord, (cudaEvent_t, cudaStream_t))
cudaError_t __wrap_cudaEventRecord(cudaEvent_t event, cudaStream_t stream)
{
    BEGIN(cudaEventRecord);
    call.event = event;
    call.stream = stream;
    FINISH(__real_cudaEventRecord(event, stream));
}

DECLARE_REAL(cudaError_t, cudaEventSynchronize, (cudaEvent_t))
cudaError_t __wrap_cudaEventSynchronize(cudaEvent_t event)
{
    BEGIN(cudaEventSynchronize);
    call.event = event;
    FINISH(__real_cudaEventSynchronize(event));
}

DECLARE_REAL(cudaError_t, cudaEventElapsedTime, (float *, cudaEvent_t, cudaEvent_t))
cudaError_t __wrap_cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end)
{
    BEGIN(cudaEventElapsedTime);
    call.event = start;
    call.end_event = end;
    FINISH(__real_cudaEventElapsedTime(ms, start, end));
}

DECLARE_REAL(cudaError_t, cudaEventDestroy, (cudaEvent_t))
cudaError_t __wrap_cudaEventDestroy(cudaEvent_t event)
{
    BEGIN(cudaEventDestroy);
    call.event = event;
    FINISH(__real_cudaEventDestroy(event));
}

DECLARE_REAL(cudaError_t, cudaDeviceSynchronize, (void))
cudaError_t __wrap_cudaDeviceSynchronize(void)
{
    BEGIN(cudaDeviceSynchronize);
    FINISH(__real_cudaDeviceSynchronize());
}

DECLARE_REAL(cudaError_t, cudaStreamCreate, (cudaStream_t *))
cudaError_t __wrap_cudaStreamCreate(cudaStream_t *stream)
{
    BEGIN(cudaStreamCreate);
    if (!fail) {
        error = __real_cudaStreamCreate(stream);
        call.stream = error == cudaSuccess && stream ? *stream : NULL;
    }
    FINISH(error);
}

DECLARE_REAL(cudaError_t, cudaStreamSynchronize, (cudaStream_t))
cudaError_t __wrap_cudaStreamSynchronize(cudaStream_t stream)
{
    BEGIN(cudaStreamSynchronize);
    call.stream = stream;
    FINISH(__real_cudaStreamSynchronize(stream));
}

DECLARE_REAL(cudaError_t, cudaStreamDestroy, (cudaStream_t))
cudaError_t __wrap_cudaStreamDestroy(cudaStream_t stream)
{
    BEGIN(cudaStreamDestroy);
    call.stream = stream;
    FINISH(__real_cudaStreamDestroy(stream));
}

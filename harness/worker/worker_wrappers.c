/* worker_wrappers.c - the link-time wrappers for the calls in traced_calls.def, in the worker.
 *
 * The linker sends every reference to cudaX in the learner's module to __wrap_cudaX
 * (-Wl,--wrap=cudaX), and __real_cudaX reaches the runtime. Each wrapper asks
 * whether this call is to fail, fills in what is particular to the call, and
 * otherwise passes it on; FINISH records it (trace and ledger) from the row that
 * describes it. A wrapper says only what the description cannot: which argument
 * is the handle, the size, the pointers.
 */
#include "gpu_work.h"
#include "trace.h"
#include "worker.h"
#include "wrappers.h"

#include <stdint.h>
#include <string.h>

/* What a resource's own release call is, by the description of the resources. */
static const char *release_call_of(trace_resource resource)
{
    switch (resource) {
#define RESOURCE(name, words, release_call)                                                        \
    case RESOURCE_##name:                                                                          \
        return #release_call;
#include "traced_calls.def"
#undef RESOURCE
    default: return "its release call";
    }
}

/* Whether the call uses a handle or memory that the harness gave back at the end of an earlier
 * test, because the learner's code had kept it (in a static variable, say) and never released
 * it: it is gone, and the call would use a dangling handle. The test fails saying so. */
bool kept_past_its_test(const traced_call *call)
{
    /* An acquisition uses no handle (and FINISH sees it once it is made); a registration is of
     * the caller's memory, which stays the caller's to use once it is unregistered. */
    if (traced_function_role(call->function) == ROLE_ACQUIRE)
        return false;
    const void *used[] = {call->handle, call->dst,       call->src,
                          call->event,  call->end_event, call->stream};
    for (size_t i = 0; i < sizeof used / sizeof used[0]; i++) {
        if (used[i] == NULL || used[i] == cudaStreamLegacy || used[i] == cudaStreamPerThread)
            continue;
        const trace_resource kept = ledger_given_back(used[i]);
        if (kept == RESOURCE_NONE || kept == RESOURCE_REGISTRATION)
            continue;
        worker_fail("%s kept %s from one call to the next and never gave it back (%s): the "
                    "harness gave it back after the test that made it, so this call of %s used a "
                    "handle that no longer exists. Make what a call needs in that call, and give "
                    "it back before returning, on every path; nothing may outlive the call in a "
                    "static variable",
                    worker_called_function(), resource_words(kept), release_call_of(kept),
                    traced_function_name(call->function));
        return true;
    }
    return false;
}

/* --- Memory --------------------------------------------------------------------------------- */

DECLARE_REAL(cudaError_t, cudaMalloc, (void **, size_t))
cudaError_t __wrap_cudaMalloc(void **ptr, size_t bytes)
{
    BEGIN(cudaMalloc);
    call.bytes = bytes;
    ACQUIRE(ptr, __real_cudaMalloc(ptr, bytes));
}

DECLARE_REAL(cudaError_t, cudaMallocAsync, (void **, size_t, cudaStream_t))
cudaError_t __wrap_cudaMallocAsync(void **ptr, size_t bytes, cudaStream_t stream)
{
    BEGIN(cudaMallocAsync);
    call.bytes = bytes;
    call.stream = stream;
    ACQUIRE(ptr, __real_cudaMallocAsync(ptr, bytes, stream));
}

DECLARE_REAL(cudaError_t, cudaMallocManaged, (void **, size_t, unsigned int))
cudaError_t __wrap_cudaMallocManaged(void **ptr, size_t bytes, unsigned int flags)
{
    BEGIN(cudaMallocManaged);
    call.bytes = bytes;
    call.flags = flags;
    ACQUIRE(ptr, __real_cudaMallocManaged(ptr, bytes, flags));
}

DECLARE_REAL(cudaError_t, cudaFree, (void *))
cudaError_t __wrap_cudaFree(void *ptr)
{
    BEGIN(cudaFree);
    call.handle = call.dst = ptr;
    FINISH(__real_cudaFree(ptr));
}

DECLARE_REAL(cudaError_t, cudaFreeAsync, (void *, cudaStream_t))
cudaError_t __wrap_cudaFreeAsync(void *ptr, cudaStream_t stream)
{
    BEGIN(cudaFreeAsync);
    call.handle = call.dst = ptr;
    call.stream = stream;
    FINISH(__real_cudaFreeAsync(ptr, stream));
}

/* Pinned memory comes from the shared arena, through the worker's pool (worker_pinned_pool.c),
 * below the record. cudaMallocHost is cudaHostAlloc with the default flags (the runtime's
 * reference says so). */
cudaError_t __wrap_cudaMallocHost(void **ptr, size_t bytes)
{
    BEGIN(cudaMallocHost);
    call.bytes = bytes;
    ACQUIRE(ptr, worker_pinned_alloc(ptr, bytes, cudaHostAllocDefault));
}

cudaError_t __wrap_cudaHostAlloc(void **ptr, size_t bytes, unsigned int flags)
{
    BEGIN(cudaHostAlloc);
    call.bytes = bytes;
    call.flags = flags;
    ACQUIRE(ptr, worker_pinned_alloc(ptr, bytes, flags));
}

DECLARE_REAL(cudaError_t, cudaFreeHost, (void *))
static cudaError_t free_pinned(void *ptr)
{
    cudaError_t err;
    return worker_pinned_free(ptr, &err) ? err : __real_cudaFreeHost(ptr);
}

cudaError_t __wrap_cudaFreeHost(void *ptr)
{
    BEGIN(cudaFreeHost);
    call.handle = call.dst = ptr;
    FINISH(free_pinned(ptr));
}

DECLARE_REAL(cudaError_t, cudaHostRegister, (void *, size_t, unsigned int))
cudaError_t __wrap_cudaHostRegister(void *ptr, size_t bytes, unsigned int flags)
{
    BEGIN(cudaHostRegister);
    call.dst = ptr;
    call.bytes = bytes;
    call.flags = flags;
    if (!fail && ledger_over_limit(call.function, bytes)) {
        fail = call.over_limit = true;
        error = cudaErrorMemoryAllocation;
    }
    if (!fail) {
        error = __real_cudaHostRegister(ptr, bytes, flags);
        call.handle = ptr;
    }
    FINISH(error);
}

DECLARE_REAL(cudaError_t, cudaHostUnregister, (void *))
/* Memory from cudaMallocHost was never registered: the runtime says so, and so does this for
 * the arena's blocks, which the worker registered in the learner's name. */
static cudaError_t unregister(void *ptr)
{
    return worker_pinned_holds(ptr) ? cudaErrorHostMemoryNotRegistered
                                    : __real_cudaHostUnregister(ptr);
}

cudaError_t __wrap_cudaHostUnregister(void *ptr)
{
    BEGIN(cudaHostUnregister);
    call.handle = call.dst = ptr;
    FINISH(unregister(ptr));
}

DECLARE_REAL(cudaError_t, cudaHostGetDevicePointer, (void **, void *, unsigned int))
cudaError_t __wrap_cudaHostGetDevicePointer(void **d_ptr, void *h_ptr, unsigned int flags)
{
    BEGIN(cudaHostGetDevicePointer);
    call.src = h_ptr;
    call.flags = flags;
    if (!fail) {
        error = __real_cudaHostGetDevicePointer(d_ptr, h_ptr, flags);
        call.dst = error == cudaSuccess && d_ptr ? *d_ptr : NULL;
    }
    FINISH(error);
}

/* --- Copies and sets: where both ends live is looked up before the call runs ----------------- */

void locate_ends(traced_call *call, bool tracing, void *dst, const void *src, size_t bytes)
{
    call->dst = dst;
    call->src = src;
    call->bytes = bytes;
    if (!tracing)
        return;
    call->dst_location = worker_locate(dst);
    call->src_location = src ? worker_locate(src) : LOCATION_NULL;
}

DECLARE_REAL(cudaError_t, cudaMemcpy, (void *, const void *, size_t, enum cudaMemcpyKind))
cudaError_t __wrap_cudaMemcpy(void *dst, const void *src, size_t bytes, enum cudaMemcpyKind kind)
{
    BEGIN(cudaMemcpy);
    locate_ends(&call, tracing, dst, src, bytes);
    call.kind = kind;
    FINISH(__real_cudaMemcpy(dst, src, bytes, kind));
}

DECLARE_REAL(cudaError_t, cudaMemcpyAsync,
             (void *, const void *, size_t, enum cudaMemcpyKind, cudaStream_t))
cudaError_t __wrap_cudaMemcpyAsync(void *dst, const void *src, size_t bytes,
                                   enum cudaMemcpyKind kind, cudaStream_t stream)
{
    BEGIN(cudaMemcpyAsync);
    locate_ends(&call, tracing, dst, src, bytes);
    call.kind = kind;
    call.stream = stream;
    if (!fail)
        trace_delay_copy(&call);
    FINISH(__real_cudaMemcpyAsync(dst, src, bytes, kind, stream));
}

DECLARE_REAL(cudaError_t, cudaMemset, (void *, int, size_t))
cudaError_t __wrap_cudaMemset(void *dst, int value, size_t bytes)
{
    BEGIN(cudaMemset);
    locate_ends(&call, tracing, dst, NULL, bytes);
    FINISH(__real_cudaMemset(dst, value, bytes));
}

/* Managed memory: dst is the range moved or advised on, bytes its length. */
DECLARE_REAL(cudaError_t, cudaMemPrefetchAsync,
             (const void *, size_t, struct cudaMemLocation, unsigned int, cudaStream_t))
cudaError_t __wrap_cudaMemPrefetchAsync(const void *ptr, size_t bytes,
                                        struct cudaMemLocation location, unsigned int flags,
                                        cudaStream_t stream)
{
    BEGIN(cudaMemPrefetchAsync);
    locate_ends(&call, tracing, (void *)ptr, NULL, bytes);
    call.location = location;
    call.flags = flags;
    call.stream = stream;
    if (!fail && tracing && trace_delay.prefetches_skipped)
        fail = true; /* error stays cudaSuccess: the call "succeeds", and moves nothing */
    FINISH(__real_cudaMemPrefetchAsync(ptr, bytes, location, flags, stream));
}

DECLARE_REAL(cudaError_t, cudaMemAdvise,
             (const void *, size_t, enum cudaMemoryAdvise, struct cudaMemLocation))
cudaError_t __wrap_cudaMemAdvise(const void *ptr, size_t bytes, enum cudaMemoryAdvise advice,
                                 struct cudaMemLocation location)
{
    BEGIN(cudaMemAdvise);
    locate_ends(&call, tracing, (void *)ptr, NULL, bytes);
    call.advice = advice;
    call.location = location;
    FINISH(__real_cudaMemAdvise(ptr, bytes, advice, location));
}

/* --- Events ------------------------------------------------------------------------------ */

DECLARE_REAL(cudaError_t, cudaEventCreate, (cudaEvent_t *))
cudaError_t __wrap_cudaEventCreate(cudaEvent_t *event)
{
    BEGIN(cudaEventCreate);
    if (!fail && (error = __real_cudaEventCreate(event)) == cudaSuccess && event)
        call.handle = call.event = *event;
    FINISH(error);
}

DECLARE_REAL(cudaError_t, cudaEventCreateWithFlags, (cudaEvent_t *, unsigned int))
cudaError_t __wrap_cudaEventCreateWithFlags(cudaEvent_t *event, unsigned int flags)
{
    BEGIN(cudaEventCreateWithFlags);
    call.flags = flags;
    if (!fail && (error = __real_cudaEventCreateWithFlags(event, flags)) == cudaSuccess && event)
        call.handle = call.event = *event;
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

DECLARE_REAL(cudaError_t, cudaEventQuery, (cudaEvent_t))
cudaError_t __wrap_cudaEventQuery(cudaEvent_t event)
{
    BEGIN(cudaEventQuery);
    call.event = event;
    FINISH(__real_cudaEventQuery(event));
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
    call.handle = call.event = event;
    FINISH(__real_cudaEventDestroy(event));
}

/* --- Device and streams ------------------------------------------------------------------ */

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
    if (!fail && (error = __real_cudaStreamCreate(stream)) == cudaSuccess && stream)
        call.handle = call.stream = *stream;
    FINISH(error);
}

DECLARE_REAL(cudaError_t, cudaStreamCreateWithFlags, (cudaStream_t *, unsigned int))
cudaError_t __wrap_cudaStreamCreateWithFlags(cudaStream_t *stream, unsigned int flags)
{
    BEGIN(cudaStreamCreateWithFlags);
    call.flags = flags;
    if (!fail && (error = __real_cudaStreamCreateWithFlags(stream, flags)) == cudaSuccess && stream)
        call.handle = call.stream = *stream;
    FINISH(error);
}

DECLARE_REAL(cudaError_t, cudaStreamSynchronize, (cudaStream_t))
cudaError_t __wrap_cudaStreamSynchronize(cudaStream_t stream)
{
    BEGIN(cudaStreamSynchronize);
    call.stream = stream;
    FINISH(__real_cudaStreamSynchronize(stream));
}

DECLARE_REAL(cudaError_t, cudaStreamWaitEvent, (cudaStream_t, cudaEvent_t, unsigned int))
cudaError_t __wrap_cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int flags)
{
    BEGIN(cudaStreamWaitEvent);
    call.stream = stream;
    call.event = event;
    call.flags = flags;
    FINISH(__real_cudaStreamWaitEvent(stream, event, flags));
}

DECLARE_REAL(cudaError_t, cudaStreamQuery, (cudaStream_t))
cudaError_t __wrap_cudaStreamQuery(cudaStream_t stream)
{
    BEGIN(cudaStreamQuery);
    call.stream = stream;
    FINISH(__real_cudaStreamQuery(stream));
}

DECLARE_REAL(cudaError_t, cudaStreamDestroy, (cudaStream_t))
cudaError_t __wrap_cudaStreamDestroy(cudaStream_t stream)
{
    BEGIN(cudaStreamDestroy);
    call.handle = call.stream = stream;
    FINISH(__real_cudaStreamDestroy(stream));
}

/* --- common/'s kernels: a pipeline runs them between its copies, chapter 4 on managed memory - */

DECLARE_REAL(cudaError_t, gpu_work_scale_add,
             (cudaStream_t, float *, const float *, size_t, float, float))
cudaError_t __wrap_gpu_work_scale_add(cudaStream_t stream, float *d_y, const float *d_x, size_t n,
                                      float a, float b)
{
    BEGIN(gpu_work_scale_add);
    locate_ends(&call, tracing, d_y, d_x, n <= SIZE_MAX / sizeof(float) ? n * sizeof(float) : 0);
    call.stream = stream;
    if (!fail)
        trace_delay_kernel(&call);
    FINISH(__real_gpu_work_scale_add(stream, d_y, d_x, n, a, b));
}

/* dst is the sum it writes, src the data it reads. */
DECLARE_REAL(cudaError_t, gpu_work_checksum,
             (cudaStream_t, const void *, size_t, unsigned, unsigned long long *))
cudaError_t __wrap_gpu_work_checksum(cudaStream_t stream, const void *d_data, size_t bytes,
                                     unsigned passes, unsigned long long *d_sum)
{
    BEGIN(gpu_work_checksum);
    locate_ends(&call, tracing, d_sum, d_data, bytes);
    call.stream = stream;
    if (!fail)
        trace_delay_kernel(&call);
    FINISH(__real_gpu_work_checksum(stream, d_data, bytes, passes, d_sum));
}

/* dst is the floats it writes, src the bytes it reads; bytes counts what it reads, one a float. */
DECLARE_REAL(cudaError_t, gpu_work_bytes_to_floats,
             (cudaStream_t, float *, const unsigned char *, size_t, float, float))
cudaError_t __wrap_gpu_work_bytes_to_floats(cudaStream_t stream, float *d_out,
                                            const unsigned char *d_in, size_t n, float scale,
                                            float offset)
{
    BEGIN(gpu_work_bytes_to_floats);
    locate_ends(&call, tracing, d_out, d_in, n);
    call.stream = stream;
    if (!fail)
        trace_delay_kernel(&call);
    FINISH(__real_gpu_work_bytes_to_floats(stream, d_out, d_in, n, scale, offset));
}

/* --- free(), which is no CUDA call, but the learner's code may give it CUDA's memory ------- */

/* free() of memory the ledger holds, in an exercise function: it fails the running test, in
 * words, and the memory is not freed, so the C library does not crash on it first. */
void __real_free(void *ptr);
void __wrap_free(void *ptr)
{
    trace_resource resource = ptr != NULL ? ledger_resource_of(ptr) : RESOURCE_NONE;
    if (resource == RESOURCE_NONE || resource == RESOURCE_EVENT || resource == RESOURCE_STREAM ||
        !worker_in_call()) {
        if (!worker_heap_free(ptr))
            __real_free(ptr);
        return;
    }
    if (resource == RESOURCE_REGISTRATION)
        worker_fail("free() was given host memory that is still registered with the CUDA runtime "
                    "(cudaHostRegister): call cudaHostUnregister on it first, then free it");
    else
        worker_fail("free() was given %s, which malloc never returned: memory from cudaMalloc is "
                    "given back with cudaFree, pinned memory from cudaMallocHost or cudaHostAlloc "
                    "with cudaFreeHost; free() takes only what malloc returned",
                    resource_words(resource));
}

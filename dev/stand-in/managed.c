/* managed.c - what chapter 4 needs of the stand-in runtime and the shared one lacks (built in by
 * build.sh): cudaMemPrefetchAsync and cudaMemAdvise with CUDA 13's signatures. A prefetch is a
 * copy of the range onto itself on the stream, paced by the link model of the device it goes to
 * (or, to the host, of the current device); advice is checked, not acted on (the stand-in has
 * one memory, so where a page lives does not change what is read). */
#include "fakecuda.h"

/* A device this process sees; the host is any host location. */
static bool location_known(struct cudaMemLocation location)
{
    return (location.type == cudaMemLocationTypeDevice && location.id >= 0 &&
            location.id < fc_device_count()) ||
           location.type == cudaMemLocationTypeHost;
}

/* The range must lie within one managed allocation, as the real runtime asks. Under fc_lock. */
static cudaError_t managed_range(const void *devPtr, size_t count)
{
    allocation *a = fc_find_range(devPtr, count);
    return a == NULL || a->kind != MEM_MANAGED ? cudaErrorInvalidValue : cudaSuccess;
}

API cudaError_t cudaMemPrefetchAsync(const void *devPtr, size_t count,
                                     struct cudaMemLocation location, unsigned int flags,
                                     cudaStream_t stream)
{
    cudaError_t err = fc_enter();
    if (err != cudaSuccess)
        return fc_ret(err);
    if (devPtr == NULL || count == 0 || flags != 0)
        return fc_ret(cudaErrorInvalidValue);
    if (!location_known(location))
        return fc_ret(cudaErrorInvalidDevice);
    pthread_mutex_lock(&fc_lock);
    fc_stream *s = fc_stream_of(stream, false);
    if (s == NULL)
        err = cudaErrorInvalidResourceHandle;
    else if ((err = managed_range(devPtr, count)) == cudaSuccess) {
        fc_op op = {.kind = OP_COPY};
        op.u.copy.dst = (void *)devPtr;
        op.u.copy.src = devPtr;
        op.u.copy.bytes = count;
        const bool to_host = location.type == cudaMemLocationTypeHost;
        op.u.copy.engine = to_host ? ENGINE_D2H : ENGINE_H2D;
        op.u.copy.device = to_host ? fc_current_device() : location.id;
        op.u.copy.model_ms = fc_link_ms(count, false);
        if (fc_enqueue(s, &op) == 0)
            err = cudaErrorMemoryAllocation;
    }
    pthread_mutex_unlock(&fc_lock);
    return fc_ret(err);
}

/* Read duplication names no location (the runtime ignores it); the other advice does. */
API cudaError_t cudaMemAdvise(const void *devPtr, size_t count, enum cudaMemoryAdvise advice,
                              struct cudaMemLocation location)
{
    cudaError_t err = fc_enter();
    if (err != cudaSuccess)
        return fc_ret(err);
    if (devPtr == NULL || count == 0 || advice < cudaMemAdviseSetReadMostly ||
        advice > cudaMemAdviseUnsetAccessedBy)
        return fc_ret(cudaErrorInvalidValue);
    const bool names_a_location =
        advice != cudaMemAdviseSetReadMostly && advice != cudaMemAdviseUnsetReadMostly;
    if (names_a_location && !location_known(location))
        return fc_ret(cudaErrorInvalidDevice);
    pthread_mutex_lock(&fc_lock);
    err = managed_range(devPtr, count);
    pthread_mutex_unlock(&fc_lock);
    return fc_ret(err);
}

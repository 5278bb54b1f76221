/* both_directions--registered.c - a correct solution written another way: the host memory is
 * allocated page-aligned (sysconf, posix_memalign) and registered with cudaHostRegister,
 * which the header admits ("host memory that copies can run from and into asynchronously");
 * the streams do not block on the legacy default stream, and the copies wait on events.
 *
 * An alternative, not a mistake: it must earn every point from make check and make grade
 * alike (selftest/sections/64-agreement.sh).
 */
#include "both_directions.h"

#include <stdlib.h>
#include <unistd.h>

cudaError_t both_directions_host_alloc(void **h_buffer, size_t bytes)
{
    long page = sysconf(_SC_PAGESIZE);
    if (page <= 0)
        page = 4096;
    const size_t rounded = (bytes + (size_t)page - 1) / (size_t)page * (size_t)page;
    void *memory = NULL;
    if (posix_memalign(&memory, (size_t)page, rounded ? rounded : (size_t)page) != 0)
        return cudaErrorMemoryAllocation;
    cudaError_t err = cudaHostRegister(memory, rounded ? rounded : (size_t)page,
                                       cudaHostRegisterDefault);
    if (err != cudaSuccess) {
        free(memory);
        return err;
    }
    *h_buffer = memory;
    return cudaSuccess;
}

cudaError_t both_directions_host_free(void *h_buffer)
{
    cudaError_t err = cudaHostUnregister(h_buffer);
    free(h_buffer);
    return err;
}

cudaError_t copy_both_directions(void *d_up_dst, const void *h_up_src, size_t up_bytes,
                                 void *h_down_dst, const void *d_down_src, size_t down_bytes)
{
    cudaStream_t streams[2] = {NULL, NULL};
    cudaEvent_t landed[2] = {NULL, NULL};
    cudaError_t err = cudaSuccess;
    for (int i = 0; i < 2 && err == cudaSuccess; i++) {
        err = cudaStreamCreateWithFlags(&streams[i], cudaStreamNonBlocking);
        if (err == cudaSuccess)
            err = cudaEventCreateWithFlags(&landed[i], cudaEventDisableTiming);
    }
    int queued = 0;
    if (err == cudaSuccess) {
        err = cudaMemcpyAsync(d_up_dst, h_up_src, up_bytes, cudaMemcpyHostToDevice, streams[0]);
        if (err == cudaSuccess)
            err = cudaEventRecord(landed[0], streams[0]);
        queued = 1;
    }
    if (err == cudaSuccess) {
        err = cudaMemcpyAsync(h_down_dst, d_down_src, down_bytes, cudaMemcpyDeviceToHost,
                              streams[1]);
        if (err == cudaSuccess)
            err = cudaEventRecord(landed[1], streams[1]);
        queued = 2;
    }
    (void)queued;
    for (int i = 0; i < 2; i++) {
        cudaError_t e = cudaSuccess;
        if (streams[i] != NULL)
            e = cudaStreamSynchronize(streams[i]); /* what was queued, even after an error */
        if (err == cudaSuccess)
            err = e;
        if (landed[i] != NULL && (e = cudaEventDestroy(landed[i])) != cudaSuccess && !err)
            err = e;
        if (streams[i] != NULL && (e = cudaStreamDestroy(streams[i])) != cudaSuccess && !err)
            err = e;
    }
    return err;
}

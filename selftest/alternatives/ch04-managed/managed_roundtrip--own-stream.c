/* managed_roundtrip--own-stream.c - a correct solution written another way: the kernel on a
 * non-blocking stream of its own, waited for with cudaStreamSynchronize, goto cleanup, and
 * loops where the solution uses memcpy.
 *
 * An alternative, not a mistake: it must earn every point from make check and make grade
 * alike (selftest/sections/64-agreement.sh).
 */
#include "managed_roundtrip.h"

#include "gpu_work.h"

cudaError_t managed_roundtrip(const float *h_in, float *h_out, size_t n, float a, float b)
{
    float *data = NULL;
    cudaStream_t stream = NULL;
    cudaError_t err = cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
    if (err != cudaSuccess)
        return err;
    err = cudaMallocManaged((void **)&data, sizeof *data * n, cudaMemAttachGlobal);
    if (err != cudaSuccess)
        goto destroy;

    for (size_t i = 0; i < n; i++)
        data[i] = h_in[i];
    if ((err = gpu_work_scale_add(stream, data, data, n, a, b)) != cudaSuccess)
        goto release;
    if ((err = cudaStreamSynchronize(stream)) != cudaSuccess)
        goto release;
    for (size_t i = 0; i < n; i++)
        h_out[i] = data[i];

release:;
    cudaError_t freed = cudaFree(data);
    if (err == cudaSuccess)
        err = freed;
destroy:;
    cudaError_t destroyed = cudaStreamDestroy(stream);
    return err != cudaSuccess ? err : destroyed;
}

/* read_mostly.c - one managed input, read over and over by the GPU and by the host. */
#include "gpu_work.h"
#include "read_mostly.h"

#include <string.h>

cudaError_t read_mostly_sums(const unsigned *h_data, size_t n, unsigned rounds,
                             unsigned long long *d_sums, unsigned long long *h_sums)
{
    const size_t bytes = n * sizeof(unsigned);
    int device;
    cudaError_t err = cudaGetDevice(&device);
    if (err != cudaSuccess)
        return err;
    unsigned *data;
    err = cudaMallocManaged((void **)&data, bytes, cudaMemAttachGlobal);
    if (err != cudaSuccess)
        return err;
    memcpy(data, h_data, bytes); /* the one write: from now on both sides only read */

    /* Each processor that reads a page from now on keeps a read-only copy of its own, so the
     * GPU's reads and the host's stop pulling the pages to and fro. */
    const struct cudaMemLocation gpu = {.type = cudaMemLocationTypeDevice, .id = device};
    err = cudaMemAdvise(data, bytes, cudaMemAdviseSetReadMostly, gpu);
    for (unsigned r = 0; r < rounds && err == cudaSuccess; r++) {
        err = gpu_work_checksum(0, data, bytes, 1, &d_sums[r]);
        if (err == cudaSuccess) /* the host reads while the kernel does */
            h_sums[r] = gpu_work_checksum_host(data, bytes, 1);
    }

    /* The kernels only queued: wait for them, after an error too, before the buffer goes. */
    cudaError_t waited = cudaDeviceSynchronize();
    if (err == cudaSuccess)
        err = waited;
    cudaError_t freed = cudaFree(data);
    return err != cudaSuccess ? err : freed;
}

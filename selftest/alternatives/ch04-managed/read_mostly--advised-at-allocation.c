/* read_mostly--advised-at-allocation.c - a correct solution written another way: the buffer is
 * advised read-mostly as soon as it is allocated, before the host writes it (the advice is
 * about how the memory will be used, and holds from then on); the kernels go to a stream of
 * its own, created cudaStreamNonBlocking; the host sums the words in a loop of its own; one
 * cleanup path.
 *
 * An alternative, not a mistake: it must earn every point from make check and make grade
 * alike (selftest/sections/64-agreement.sh).
 */
#include "gpu_work.h"
#include "read_mostly.h"

cudaError_t read_mostly_sums(const unsigned *h_data, size_t n, unsigned rounds,
                             unsigned long long *d_sums, unsigned long long *h_sums)
{
    unsigned *data = NULL;
    cudaStream_t stream = NULL;
    int device = 0;
    cudaError_t err = cudaGetDevice(&device);
    if (err == cudaSuccess)
        err = cudaMallocManaged((void **)&data, n * sizeof *data, cudaMemAttachGlobal);
    if (err == cudaSuccess)
        err = cudaMemAdvise(
            data, n * sizeof *data, cudaMemAdviseSetReadMostly,
            (struct cudaMemLocation){.type = cudaMemLocationTypeDevice, .id = device});
    if (err == cudaSuccess)
        err = cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
    if (err != cudaSuccess)
        goto out;
    for (size_t i = 0; i < n; i++)
        data[i] = h_data[i];

    for (unsigned r = 0; r < rounds; r++) {
        if ((err = gpu_work_checksum(stream, data, n * sizeof *data, 1, d_sums + r)) != cudaSuccess)
            goto out;
        unsigned long long sum = 0;
        for (size_t i = 0; i < n; i++)
            sum += data[i];
        h_sums[r] = sum;
    }

out:
    if (stream != NULL) {
        cudaError_t waited = cudaStreamSynchronize(stream);
        cudaError_t destroyed = cudaStreamDestroy(stream);
        if (err == cudaSuccess)
            err = waited != cudaSuccess ? waited : destroyed;
    }
    if (data != NULL) {
        cudaError_t freed = cudaFree(data);
        if (err == cudaSuccess)
            err = freed;
    }
    return err;
}

/* loader_ring.c - loader threads fill a ring of pinned batches while the GPU steps.
 *
 * The loop sends batches in order; the loaders, several at once, read and convert the batches
 * ahead of it into the ring's slots. Each slot is shared by the two sides: who may touch it
 * when? Run
 *     make check EX=ch05-training-loop/loader_ring
 * to see how you are doing.
 */
#include "loader_ring.h"

#include "gpu_work.h"

cudaError_t loader_ring_train(cudaStream_t stream, const unsigned char *h_file, ring_shape shape,
                              unsigned long long *d_sums)
{
    (void)stream;
    (void)h_file;
    (void)shape;
    (void)d_sums;
    /* TODO: cudaMallocHost the slots, cudaMalloc the device batch, an event per slot; start
     * shape.loaders threads that take the next batch under a mutex, wait until its slot is
     * free, sleep read_ms and convert it; in this thread, for each batch in order, wait until
     * its slot holds it, cudaMemcpyAsync it, record the slot's event, step, checksum into
     * d_sums + b, and free the slot for batch b + slots once that event has completed. Then
     * synchronise, stop and join the loaders and free everything, on the error paths too. */
    return cudaErrorNotYetImplemented;
}

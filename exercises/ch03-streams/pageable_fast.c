/* pageable_fast.c - copy pageable memory to the device faster than a plain cudaMemcpy.
 *
 * Read the header first: it says what each function must do. Run
 *     make check EX=ch03-streams/pageable_fast
 * to see how you are doing.
 */
#include "pageable_fast.h"

/* TODO: what a copier holds: pinned staging buffers, a stream, events that say when a buffer
 * may be refilled, the host threads that fill the buffers and what they share. */
struct staged_copier {
    int unused;
};

cudaError_t staged_copier_create(staged_copier **copier)
{
    (void)copier;
    /* TODO: allocate the pinned buffers (cudaMallocHost), the stream and the events, and start
     * the threads; on a failure give back what was made and return the error. */
    return cudaErrorNotYetImplemented;
}

cudaError_t staged_copy_to_device(staged_copier *copier, void *d_dst, const void *h_src,
                                  size_t bytes)
{
    (void)copier;
    (void)d_dst;
    (void)h_src;
    (void)bytes;
    /* TODO: chunk by chunk: wait until the buffer's previous copy has finished, memcpy the
     * chunk into it with several threads, cudaMemcpyAsync it to the device; then wait for the
     * last copies before returning. */
    return cudaErrorNotYetImplemented;
}

cudaError_t staged_copier_destroy(staged_copier *copier)
{
    (void)copier;
    /* TODO: end and join the threads, then give back everything the copier holds. */
    return cudaErrorNotYetImplemented;
}

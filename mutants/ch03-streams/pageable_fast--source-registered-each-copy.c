/* pageable_fast--source-registered-each-copy.c - known mistake: the whole source is pinned with
 * cudaHostRegister on every copy.
 *
 * Correct, and the copy itself then runs at the pinned speed; but registering
 * costs about as much as sending (on an H200, 1 GiB: about 50 ms to register,
 * 18 ms to unregister, against 20 ms to send and 125 ms for the plain copy),
 * so it comes to under twice the plain copy's speed, not three times.
 * expect-on-gpu: The trace shows cudaHostRegister
 */
#include "pageable_fast.h"

#include <stdlib.h>

struct staged_copier {
    int copies; /* nothing to hold: the source is pinned where it lies */
};

cudaError_t staged_copier_create(staged_copier **copier)
{
    *copier = calloc(1, sizeof **copier);
    return *copier != NULL ? cudaSuccess : cudaErrorMemoryAllocation;
}

cudaError_t staged_copy_to_device(staged_copier *c, void *d_dst, const void *h_src, size_t bytes)
{
    if (bytes == 0)
        return cudaSuccess;
    cudaError_t err = cudaHostRegister((void *)h_src, bytes, cudaHostRegisterDefault);
    if (err != cudaSuccess)
        return err;
    err = cudaMemcpy(d_dst, h_src, bytes, cudaMemcpyHostToDevice);
    cudaError_t unregistered = cudaHostUnregister((void *)h_src);
    c->copies++;
    return err != cudaSuccess ? err : unregistered;
}

cudaError_t staged_copier_destroy(staged_copier *c)
{
    free(c);
    return cudaSuccess;
}

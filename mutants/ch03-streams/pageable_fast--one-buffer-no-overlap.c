/* pageable_fast--one-buffer-no-overlap.c - known mistake: one pinned buffer, filled and sent in
 * turn.
 *
 * Correct, but the host's memcpy and the GPU's copy take turns, one thread
 * fills the buffer, and cudaMemcpy waits for each chunk: about as slow as the
 * plain pageable cudaMemcpy it was meant to beat.
 * expect-on-gpu: The copier has one pinned buffer
 */
#include "pageable_fast.h"

#include <stdlib.h>
#include <string.h>

#define CHUNK_BYTES ((size_t)32 << 20)

struct staged_copier {
    void *h_staging;
};

cudaError_t staged_copier_create(staged_copier **copier)
{
    staged_copier *c = malloc(sizeof *c);
    if (c == NULL)
        return cudaErrorMemoryAllocation;
    cudaError_t err = cudaMallocHost(&c->h_staging, CHUNK_BYTES);
    if (err != cudaSuccess) {
        free(c);
        return err;
    }
    *copier = c;
    return cudaSuccess;
}

cudaError_t staged_copy_to_device(staged_copier *c, void *d_dst, const void *h_src, size_t bytes)
{
    for (size_t offset = 0; offset < bytes; offset += CHUNK_BYTES) {
        const size_t n = bytes - offset < CHUNK_BYTES ? bytes - offset : CHUNK_BYTES;
        memcpy(c->h_staging, (const unsigned char *)h_src + offset, n);
        cudaError_t err =
            cudaMemcpy((unsigned char *)d_dst + offset, c->h_staging, n, cudaMemcpyHostToDevice);
        if (err != cudaSuccess)
            return err;
    }
    return cudaSuccess;
}

cudaError_t staged_copier_destroy(staged_copier *c)
{
    cudaError_t err = cudaFreeHost(c->h_staging);
    free(c);
    return err;
}

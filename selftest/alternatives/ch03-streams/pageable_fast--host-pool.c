/* pageable_fast--host-pool.c - a correct staged copier written another way: the course's own
 * thread pool (common/host_pool.h, which chapter 3 shows) fills each pinned buffer, two
 * streams send them in turn, and each buffer waits for its stream before it is refilled.
 *
 * An alternative, not a mistake: it must earn every point from make check and make grade
 * alike (selftest/sections/64-agreement.sh).
 */
#include "pageable_fast.h"

#include "host_pool.h"

#include <stdlib.h>
#include <string.h>

#define RING 3
#define PIECE ((size_t)8 << 20)

struct staged_copier {
    host_pool *pool;
    void *h_ring[RING];
    cudaStream_t streams[RING]; /* one per buffer: its stream done, the buffer is free */
};

typedef struct fill_job {
    unsigned char *dst;
    const unsigned char *src;
    size_t bytes;
} fill_job;

static void fill_part(void *arg, unsigned part, unsigned parts)
{
    const fill_job *job = arg;
    size_t begin, end;
    host_share(job->bytes, 64, part, parts, &begin, &end);
    if (end > begin)
        memcpy(job->dst + begin, job->src + begin, end - begin);
}

cudaError_t staged_copier_destroy(staged_copier *copier)
{
    if (!copier)
        return cudaSuccess;
    cudaError_t first = cudaSuccess, err;
    for (int i = 0; i < RING; i++) {
        if (copier->streams[i]) {
            err = cudaStreamSynchronize(copier->streams[i]);
            first = first ? first : err;
            err = cudaStreamDestroy(copier->streams[i]);
            first = first ? first : err;
        }
        if (copier->h_ring[i]) {
            err = cudaFreeHost(copier->h_ring[i]);
            first = first ? first : err;
        }
    }
    host_pool_destroy(copier->pool);
    free(copier);
    return first;
}

cudaError_t staged_copier_create(staged_copier **copier)
{
    if (!copier)
        return cudaErrorInvalidValue;
    staged_copier *made = calloc(1, sizeof *made);
    if (!made)
        return cudaErrorMemoryAllocation;
    made->pool = host_pool_create(8);
    cudaError_t err = made->pool ? cudaSuccess : cudaErrorMemoryAllocation;
    for (int i = 0; i < RING && !err; i++) {
        err = cudaHostAlloc(&made->h_ring[i], PIECE, cudaHostAllocDefault);
        if (!err)
            err = cudaStreamCreateWithFlags(&made->streams[i], cudaStreamNonBlocking);
    }
    if (err) {
        staged_copier_destroy(made);
        return err;
    }
    *copier = made;
    return cudaSuccess;
}

cudaError_t staged_copy_to_device(staged_copier *copier, void *d_dst, const void *h_src,
                                  size_t bytes)
{
    if (!copier || (bytes && (!d_dst || !h_src)))
        return cudaErrorInvalidValue;
    cudaError_t err = cudaSuccess;
    size_t piece = 0;
    for (size_t done = 0; done < bytes && !err; piece++, done += PIECE) {
        const int slot = (int)(piece % RING);
        const size_t n = bytes - done < PIECE ? bytes - done : PIECE;
        err = cudaStreamSynchronize(copier->streams[slot]); /* its last piece has gone */
        if (err)
            break;
        fill_job job = {copier->h_ring[slot], (const unsigned char *)h_src + done, n};
        host_pool_run(copier->pool, fill_part, &job);
        err = cudaMemcpyAsync((char *)d_dst + done, copier->h_ring[slot], n,
                              cudaMemcpyHostToDevice, copier->streams[slot]);
    }
    for (int i = 0; i < RING; i++) { /* everything queued has landed, on every path */
        cudaError_t waited = cudaStreamSynchronize(copier->streams[i]);
        err = err ? err : waited;
    }
    return err;
}

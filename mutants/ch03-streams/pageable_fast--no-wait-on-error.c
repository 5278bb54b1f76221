/* pageable_fast--no-wait-on-error.c - known mistake: a failed copy returns at once, leaving
 * the chunks it had queued running.
 *
 * The header says that on an error it still waits for what it queued: the caller may reuse
 * d_dst, or destroy the copier and its pinned buffers, the moment it returns.
 * expect: returned while its first copy was still running
 */
#include "pageable_fast.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* With the calling thread, 12 fill each chunk: 12 threads and 4 buffers of 16 MiB were the
 * fastest pool of chapter 3's sweep (make measure) on the H200. */
enum { WORKERS = 11, BUFFERS = 4 };
#define CHUNK_BYTES ((size_t)16 << 20)

typedef struct worker {
    staged_copier *copier;
    int part; /* which part of each job is this thread's: 1 to WORKERS (0 is the caller's) */
} worker;

struct staged_copier {
    void *h_staging[BUFFERS];  /* pinned */
    cudaEvent_t sent[BUFFERS]; /* recorded after each buffer's copy: when it may be refilled */
    bool in_flight[BUFFERS];
    cudaStream_t stream;

    /* The pool, and the job it works on: one memcpy cut into WORKERS + 1 parts. */
    pthread_t threads[WORKERS];
    worker workers[WORKERS];
    int started;
    pthread_mutex_t lock;
    pthread_cond_t job_posted, job_done;
    unsigned long job_number; /* counts jobs, so that each thread takes each job once */
    int parts_left;
    bool quitting;
    unsigned char *job_dst;
    const unsigned char *job_src;
    size_t job_bytes;
};

/* Part `part` of the job, of WORKERS + 1 nearly equal parts. */
static void copy_part(const staged_copier *c, int part)
{
    const size_t share = (c->job_bytes + WORKERS) / (WORKERS + 1);
    const size_t begin = share * (size_t)part;
    if (begin >= c->job_bytes)
        return;
    const size_t end = begin + share < c->job_bytes ? begin + share : c->job_bytes;
    memcpy(c->job_dst + begin, c->job_src + begin, end - begin);
}

static void *work(void *argument)
{
    worker *self = argument;
    staged_copier *c = self->copier;
    unsigned long done = 0;
    pthread_mutex_lock(&c->lock);
    for (;;) {
        while (!c->quitting && c->job_number == done)
            pthread_cond_wait(&c->job_posted, &c->lock);
        if (c->quitting)
            break;
        done = c->job_number;
        pthread_mutex_unlock(&c->lock);
        copy_part(c, self->part);
        pthread_mutex_lock(&c->lock);
        if (--c->parts_left == 0)
            pthread_cond_signal(&c->job_done);
    }
    pthread_mutex_unlock(&c->lock);
    return NULL;
}

/* memcpy by every thread of the pool and the caller, each a part; returns when all are done. */
static void parallel_memcpy(staged_copier *c, void *dst, const void *src, size_t bytes)
{
    pthread_mutex_lock(&c->lock);
    c->job_dst = dst;
    c->job_src = src;
    c->job_bytes = bytes;
    c->parts_left = WORKERS;
    c->job_number++;
    pthread_cond_broadcast(&c->job_posted);
    pthread_mutex_unlock(&c->lock);

    copy_part(c, 0);

    pthread_mutex_lock(&c->lock);
    while (c->parts_left > 0)
        pthread_cond_wait(&c->job_done, &c->lock);
    pthread_mutex_unlock(&c->lock);
}

/* Keeps the first error of several. */
static cudaError_t first_error(cudaError_t err, cudaError_t next)
{
    return err != cudaSuccess ? err : next;
}

cudaError_t staged_copier_destroy(staged_copier *c)
{
    if (c == NULL)
        return cudaSuccess;
    pthread_mutex_lock(&c->lock);
    c->quitting = true;
    pthread_cond_broadcast(&c->job_posted);
    pthread_mutex_unlock(&c->lock);
    for (int t = 0; t < c->started; t++)
        pthread_join(c->threads[t], NULL);

    cudaError_t err = cudaSuccess;
    if (c->stream != NULL)
        err = first_error(err, cudaStreamSynchronize(c->stream));
    for (int b = 0; b < BUFFERS; b++) {
        if (c->sent[b] != NULL)
            err = first_error(err, cudaEventDestroy(c->sent[b]));
        if (c->h_staging[b] != NULL)
            err = first_error(err, cudaFreeHost(c->h_staging[b]));
    }
    if (c->stream != NULL)
        err = first_error(err, cudaStreamDestroy(c->stream));
    pthread_cond_destroy(&c->job_done);
    pthread_cond_destroy(&c->job_posted);
    pthread_mutex_destroy(&c->lock);
    free(c);
    return err;
}

cudaError_t staged_copier_create(staged_copier **copier)
{
    if (copier == NULL)
        return cudaErrorInvalidValue;
    staged_copier *c = calloc(1, sizeof *c);
    if (c == NULL)
        return cudaErrorMemoryAllocation;
    pthread_mutex_init(&c->lock, NULL);
    pthread_cond_init(&c->job_posted, NULL);
    pthread_cond_init(&c->job_done, NULL);

    /* calloc left every handle NULL, so destroy gives back exactly what was made. */
    cudaError_t err = cudaStreamCreate(&c->stream);
    for (int b = 0; b < BUFFERS && err == cudaSuccess; b++) {
        err = cudaMallocHost(&c->h_staging[b], CHUNK_BYTES);
        if (err == cudaSuccess)
            err = cudaEventCreateWithFlags(&c->sent[b], cudaEventDisableTiming);
    }
    while (err == cudaSuccess && c->started < WORKERS) {
        worker *w = &c->workers[c->started];
        *w = (worker){c, c->started + 1};
        if (pthread_create(&c->threads[c->started], NULL, work, w) != 0)
            err = cudaErrorMemoryAllocation;
        else
            c->started++;
    }
    if (err != cudaSuccess) {
        staged_copier_destroy(c);
        return err;
    }
    *copier = c;
    return cudaSuccess;
}

cudaError_t staged_copy_to_device(staged_copier *c, void *d_dst, const void *h_src, size_t bytes)
{
    if (c == NULL || (bytes > 0 && (d_dst == NULL || h_src == NULL)))
        return cudaErrorInvalidValue;
    cudaError_t err = cudaSuccess;
    for (size_t offset = 0, chunk = 0; offset < bytes && err == cudaSuccess; chunk++) {
        const int b = (int)(chunk % BUFFERS);
        const size_t n = bytes - offset < CHUNK_BYTES ? bytes - offset : CHUNK_BYTES;
        /* The GPU may still be reading this buffer's previous chunk: wait before refilling. */
        if (c->in_flight[b]) {
            err = cudaEventSynchronize(c->sent[b]);
            c->in_flight[b] = false;
            if (err != cudaSuccess)
                break;
        }
        parallel_memcpy(c, c->h_staging[b], (const unsigned char *)h_src + offset, n);
        err = cudaMemcpyAsync((unsigned char *)d_dst + offset, c->h_staging[b], n,
                              cudaMemcpyHostToDevice, c->stream);
        if (err != cudaSuccess)
            return err; /* the mistake: what was queued before is still running */
        err = cudaEventRecord(c->sent[b], c->stream);
        c->in_flight[b] = err == cudaSuccess;
        offset += n;
    }
    /* Every copy queued has finished before the caller may use d_dst, or the buffers again. */
    err = first_error(err, cudaStreamSynchronize(c->stream));
    for (int b = 0; b < BUFFERS; b++)
        c->in_flight[b] = false;
    return err;
}

/* pageable_fast--semaphores.c - a correct staged copier written another way: a pool of its
 * own, started and stopped with POSIX semaphores (one per thread), each thread filling one
 * slice of each chunk; one stream, and an event per pinned buffer that says when it may be refilled.
 *
 * An alternative, not a mistake: it must earn every point from make check and make grade
 * alike (selftest/sections/64-agreement.sh).
 */
#include "pageable_fast.h"

#include <pthread.h>
#include <semaphore.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define THREADS 8
#define BUFFERS 2
#define CHUNK ((size_t)32 << 20)

typedef struct slice_thread {
    struct staged_copier *owner;
    unsigned index;
    pthread_t thread;
    sem_t go; /* its own: a shared one lets a quick thread take two slices, and skip one */
    bool running;
} slice_thread;

struct staged_copier {
    cudaStream_t stream;
    void *pinned[BUFFERS];
    cudaEvent_t freed[BUFFERS];
    bool pending[BUFFERS];
    slice_thread threads[THREADS];
    sem_t finished;
    bool stop;
    unsigned char *to;
    const unsigned char *from;
    size_t length;
};

static void *slice_loop(void *arg)
{
    slice_thread *self = arg;
    struct staged_copier *c = self->owner;
    for (;;) {
        sem_wait(&self->go);
        if (c->stop)
            return NULL;
        const size_t slice = (c->length + THREADS - 1) / THREADS;
        const size_t at = slice * self->index;
        if (at < c->length)
            memcpy(c->to + at, c->from + at, c->length - at < slice ? c->length - at : slice);
        sem_post(&c->finished);
    }
}

cudaError_t staged_copier_destroy(staged_copier *c)
{
    if (c == NULL)
        return cudaSuccess;
    c->stop = true;
    for (int t = 0; t < THREADS; t++)
        if (c->threads[t].running) {
            sem_post(&c->threads[t].go);
            pthread_join(c->threads[t].thread, NULL);
            sem_destroy(&c->threads[t].go);
        }
    cudaError_t err = c->stream ? cudaStreamSynchronize(c->stream) : cudaSuccess;
    for (int b = 0; b < BUFFERS; b++) {
        cudaError_t e = c->freed[b] ? cudaEventDestroy(c->freed[b]) : cudaSuccess;
        err = err != cudaSuccess ? err : e;
        e = c->pinned[b] ? cudaFreeHost(c->pinned[b]) : cudaSuccess;
        err = err != cudaSuccess ? err : e;
    }
    if (c->stream) {
        cudaError_t e = cudaStreamDestroy(c->stream);
        err = err != cudaSuccess ? err : e;
    }
    sem_destroy(&c->finished);
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
    sem_init(&c->finished, 0, 0);
    cudaError_t err = cudaStreamCreate(&c->stream);
    for (int b = 0; b < BUFFERS && err == cudaSuccess; b++) {
        err = cudaMallocHost(&c->pinned[b], CHUNK);
        if (err == cudaSuccess)
            err = cudaEventCreate(&c->freed[b]);
    }
    for (unsigned t = 0; t < THREADS && err == cudaSuccess; t++) {
        slice_thread *s = &c->threads[t];
        s->owner = c;
        s->index = t;
        sem_init(&s->go, 0, 0);
        if (pthread_create(&s->thread, NULL, slice_loop, s) != 0) {
            sem_destroy(&s->go);
            err = cudaErrorMemoryAllocation;
        } else {
            s->running = true;
        }
    }
    if (err != cudaSuccess) {
        staged_copier_destroy(c);
        return err;
    }
    *copier = c;
    return cudaSuccess;
}

/* Every thread copies its slice of [from, from + length) to `to`; returns when all have. */
static void fill(staged_copier *c, void *to, const void *from, size_t length)
{
    c->to = to;
    c->from = from;
    c->length = length;
    for (int t = 0; t < THREADS; t++)
        sem_post(&c->threads[t].go);
    for (int t = 0; t < THREADS; t++)
        sem_wait(&c->finished);
}

cudaError_t staged_copy_to_device(staged_copier *c, void *d_dst, const void *h_src, size_t bytes)
{
    if (c == NULL || (bytes != 0 && (d_dst == NULL || h_src == NULL)))
        return cudaErrorInvalidValue;
    cudaError_t err = cudaSuccess;
    int b = 0;
    for (size_t at = 0; at < bytes; at += CHUNK, b = (b + 1) % BUFFERS) {
        const size_t n = bytes - at < CHUNK ? bytes - at : CHUNK;
        if (c->pending[b]) {
            c->pending[b] = false;
            err = cudaEventSynchronize(c->freed[b]);
            if (err != cudaSuccess)
                goto wait_for_the_rest;
        }
        fill(c, c->pinned[b], (const char *)h_src + at, n);
        err = cudaMemcpyAsync((char *)d_dst + at, c->pinned[b], n, cudaMemcpyHostToDevice,
                              c->stream);
        if (err == cudaSuccess)
            err = cudaEventRecord(c->freed[b], c->stream);
        if (err != cudaSuccess)
            goto wait_for_the_rest;
        c->pending[b] = true;
    }
wait_for_the_rest:;
    cudaError_t waited = cudaStreamSynchronize(c->stream);
    for (int i = 0; i < BUFFERS; i++)
        c->pending[i] = false;
    return err != cudaSuccess ? err : waited;
}

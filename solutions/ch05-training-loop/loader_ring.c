/* loader_ring.c - loader threads fill a ring of pinned batches while the GPU steps.
 *
 * One mutex and one condition variable guard the ring: the loaders claim batches in order from
 * a counter, and each waits until its slot is free for its batch; the loop waits until the slot
 * of the next batch holds it. A slot is handed to its next batch only once the GPU has copied
 * the batch it held (its event): until then the copy engine may still be reading it.
 */
#include "loader_ring.h"

#include "gpu_work.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#define NO_BATCH SIZE_MAX

typedef struct ring {
    ring_shape shape;
    const unsigned char *file;
    float **slot;         /* shape.slots pinned buffers of n floats */
    cudaEvent_t *copied;  /* recorded after each slot's last copy */
    size_t *holds;        /* the batch each slot holds, loaded; NO_BATCH: none yet */
    size_t *free_for;     /* the batch each slot may take next */
    size_t next_to_claim; /* the loaders' counter */
    bool quitting;
    pthread_mutex_t lock;
    pthread_cond_t changed; /* broadcast on every change of the above */
} ring;

static void sleep_ms(double ms)
{
    const long ns = (long)(ms * 1e6);
    struct timespec left = {ns / 1000000000L, ns % 1000000000L};
    while (nanosleep(&left, &left) != 0) {
    }
}

static void convert(float *out, const unsigned char *in, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        /* Two statements: rounded after the multiply and again after the add, as the GPU's
         * conversion does, so that the bits agree. */
        const float product = (float)in[i] * PIXEL_SCALE;
        out[i] = product + PIXEL_OFFSET;
    }
}

static void *load(void *argument)
{
    ring *r = argument;
    const ring_shape *shape = &r->shape;
    pthread_mutex_lock(&r->lock);
    while (!r->quitting && r->next_to_claim < shape->batches) {
        const size_t b = r->next_to_claim++;
        const size_t s = b % (size_t)shape->slots;
        while (!r->quitting && r->free_for[s] != b)
            pthread_cond_wait(&r->changed, &r->lock);
        if (r->quitting)
            break;
        /* The slot is this loader's until it says it holds the batch: read without the lock,
         * so that the other loaders read beside it. */
        pthread_mutex_unlock(&r->lock);
        sleep_ms(shape->read_ms);
        convert(r->slot[s], r->file + b * shape->n, shape->n);
        pthread_mutex_lock(&r->lock);
        r->holds[s] = b;
        pthread_cond_broadcast(&r->changed);
    }
    pthread_mutex_unlock(&r->lock);
    return NULL;
}

/* Sends batch b from its slot and steps on it; hands the slot on once its copy is done. */
static cudaError_t train_on(ring *r, cudaStream_t stream, float *d_batch, size_t b,
                            unsigned long long *d_sums)
{
    const size_t s = b % (size_t)r->shape.slots, bytes = r->shape.n * sizeof(float);
    pthread_mutex_lock(&r->lock);
    while (r->holds[s] != b)
        pthread_cond_wait(&r->changed, &r->lock);
    pthread_mutex_unlock(&r->lock);

    cudaError_t err = cudaMemcpyAsync(d_batch, r->slot[s], bytes, cudaMemcpyHostToDevice, stream);
    if (err == cudaSuccess)
        err = cudaEventRecord(r->copied[s], stream);
    if (err == cudaSuccess)
        err = gpu_work_keep_busy(stream, r->shape.step_ms);
    if (err == cudaSuccess)
        err = gpu_work_checksum(stream, d_batch, bytes, 1, d_sums + b);
    /* The copy starts once the step before has ended: waiting for it keeps this thread one
     * batch ahead of the GPU, which is all the GPU needs. */
    if (err == cudaSuccess)
        err = cudaEventSynchronize(r->copied[s]);
    if (err == cudaSuccess) {
        pthread_mutex_lock(&r->lock);
        r->free_for[s] = b + (size_t)r->shape.slots;
        pthread_cond_broadcast(&r->changed);
        pthread_mutex_unlock(&r->lock);
    }
    return err;
}

/* Starts the loaders, runs the loop, stops and joins them: the first error. */
static cudaError_t run_ring(ring *r, cudaStream_t stream, float *d_batch,
                            unsigned long long *d_sums)
{
    pthread_t *threads = calloc((size_t)r->shape.loaders, sizeof *threads);
    if (threads == NULL)
        return cudaErrorMemoryAllocation;
    cudaError_t err = cudaSuccess;
    int started = 0;
    for (; started < r->shape.loaders; started++)
        if (pthread_create(&threads[started], NULL, load, r) != 0) {
            err = cudaErrorMemoryAllocation;
            break;
        }
    for (size_t b = 0; b < r->shape.batches && err == cudaSuccess; b++)
        err = train_on(r, stream, d_batch, b, d_sums);

    pthread_mutex_lock(&r->lock);
    r->quitting = true; /* loaders still waiting for a slot end there */
    pthread_cond_broadcast(&r->changed);
    pthread_mutex_unlock(&r->lock);
    for (int t = 0; t < started; t++)
        pthread_join(threads[t], NULL);
    free(threads);
    cudaError_t waited = cudaStreamSynchronize(stream);
    return err != cudaSuccess ? err : waited;
}

/* Gives back what loader_ring_train made, the ring itself last; the first error. */
static cudaError_t free_ring(ring *r, float *d_batch, cudaError_t err)
{
    cudaError_t freed = d_batch != NULL ? cudaFree(d_batch) : cudaSuccess;
    err = err != cudaSuccess ? err : freed;
    for (int s = 0; r->slot != NULL && r->copied != NULL && s < r->shape.slots; s++) {
        if (r->copied[s] != NULL && (freed = cudaEventDestroy(r->copied[s])) != cudaSuccess)
            err = err != cudaSuccess ? err : freed;
        if (r->slot[s] != NULL && (freed = cudaFreeHost(r->slot[s])) != cudaSuccess)
            err = err != cudaSuccess ? err : freed;
    }
    free(r->slot);
    free(r->copied);
    free(r->holds);
    free(r->free_for);
    pthread_cond_destroy(&r->changed);
    pthread_mutex_destroy(&r->lock);
    free(r);
    return err;
}

cudaError_t loader_ring_train(cudaStream_t stream, const unsigned char *h_file, ring_shape shape,
                              unsigned long long *d_sums)
{
    const size_t slots = (size_t)shape.slots;
    /* On the heap, where a loader that outlived the call would find it unchanged. */
    ring *r = calloc(1, sizeof *r);
    if (r == NULL)
        return cudaErrorMemoryAllocation;
    *r = (ring){.shape = shape, .file = h_file};
    pthread_mutex_init(&r->lock, NULL);
    pthread_cond_init(&r->changed, NULL);
    r->slot = calloc(slots, sizeof *r->slot);
    r->copied = calloc(slots, sizeof *r->copied);
    r->holds = calloc(slots, sizeof *r->holds);
    r->free_for = calloc(slots, sizeof *r->free_for);
    float *d_batch = NULL;
    cudaError_t err = cudaSuccess;
    if (r->slot == NULL || r->copied == NULL || r->holds == NULL || r->free_for == NULL)
        err = cudaErrorMemoryAllocation;
    for (size_t s = 0; s < slots && err == cudaSuccess; s++) {
        r->holds[s] = NO_BATCH;
        r->free_for[s] = s;
        err = cudaMallocHost((void **)&r->slot[s], shape.n * sizeof(float));
        if (err == cudaSuccess)
            err = cudaEventCreateWithFlags(&r->copied[s], cudaEventDisableTiming);
    }
    if (err == cudaSuccess)
        err = cudaMalloc((void **)&d_batch, shape.n * sizeof(float));
    if (err == cudaSuccess)
        err = run_ring(r, stream, d_batch, d_sums);
    return free_ring(r, d_batch, err);
}

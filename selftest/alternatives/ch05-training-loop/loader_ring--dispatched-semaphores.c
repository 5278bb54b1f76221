/* loader_ring.c - another way: the loop hands out the loads, with semaphores and no mutex.
 *
 * A semaphore counts the loads the loaders may start: the loop posts one for each batch whose
 * slot is free (the first `slots` at once, then batch b + slots once batch b's copy is done),
 * and a loader that gets one takes the next batch number with an atomic add. A semaphore per
 * slot says when it holds its batch. To stop, the loop raises a flag and posts one more load
 * for each loader.
 */
#include "loader_ring.h"

#include "gpu_work.h"

#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdlib.h>
#include <time.h>

typedef struct ring {
    ring_shape shape;
    const unsigned char *file;
    float **slot;
    cudaEvent_t *copied;
    sem_t loads;   /* loads the loaders may start */
    sem_t *loaded; /* per slot: it holds its batch */
    size_t next;   /* the next batch to load, taken atomically */
    int quitting;  /* read and written atomically */
} ring;

static void wait_on(sem_t *semaphore)
{
    while (sem_wait(semaphore) != 0 && errno == EINTR) {
    }
}

static void *loader(void *argument)
{
    ring *r = argument;
    const size_t n = r->shape.n;
    for (;;) {
        wait_on(&r->loads);
        if (__atomic_load_n(&r->quitting, __ATOMIC_ACQUIRE))
            return NULL;
        const size_t b = __atomic_fetch_add(&r->next, 1, __ATOMIC_ACQ_REL);
        const size_t s = b % (size_t)r->shape.slots;
        const long ns = (long)(r->shape.read_ms * 1e6);
        struct timespec left = {ns / 1000000000L, ns % 1000000000L};
        while (nanosleep(&left, &left) != 0) {
        }
        float *out = r->slot[s];
        const unsigned char *in = r->file + b * n;
        for (size_t i = 0; i < n; i++) {
            float x = (float)in[i];
            x *= PIXEL_SCALE;  /* rounded here, */
            x += PIXEL_OFFSET; /* and here */
            out[i] = x;
        }
        sem_post(&r->loaded[s]);
    }
}

static cudaError_t loop(ring *r, cudaStream_t stream, float *d_batch, unsigned long long *d_sums)
{
    const size_t slots = (size_t)r->shape.slots, bytes = r->shape.n * sizeof(float);
    for (size_t b = 0; b < slots && b < r->shape.batches; b++)
        sem_post(&r->loads);
    cudaError_t err = cudaSuccess;
    for (size_t b = 0; b < r->shape.batches; b++) {
        const size_t s = b % slots;
        wait_on(&r->loaded[s]);
        if ((err = cudaMemcpyAsync(d_batch, r->slot[s], bytes, cudaMemcpyHostToDevice, stream)) !=
                cudaSuccess ||
            (err = cudaEventRecord(r->copied[s], stream)) != cudaSuccess ||
            (err = gpu_work_keep_busy(stream, r->shape.step_ms)) != cudaSuccess ||
            (err = gpu_work_checksum(stream, d_batch, bytes, 1, d_sums + b)) != cudaSuccess)
            return err;
        if (b + slots < r->shape.batches) {
            /* Until its copy has run, the copy engine may still read the slot. */
            if ((err = cudaEventSynchronize(r->copied[s])) != cudaSuccess)
                return err;
            sem_post(&r->loads);
        }
    }
    return err;
}

static cudaError_t run(ring *r, cudaStream_t stream, float *d_batch, unsigned long long *d_sums)
{
    pthread_t *threads = malloc((size_t)r->shape.loaders * sizeof *threads);
    if (threads == NULL)
        return cudaErrorMemoryAllocation;
    int started = 0;
    while (started < r->shape.loaders && pthread_create(&threads[started], NULL, loader, r) == 0)
        started++;
    cudaError_t err =
        started == r->shape.loaders ? loop(r, stream, d_batch, d_sums) : cudaErrorMemoryAllocation;
    __atomic_store_n(&r->quitting, 1, __ATOMIC_RELEASE);
    for (int t = 0; t < started; t++)
        sem_post(&r->loads);
    for (int t = 0; t < started; t++)
        pthread_join(threads[t], NULL);
    free(threads);
    cudaError_t synced = cudaStreamSynchronize(stream);
    return err != cudaSuccess ? err : synced;
}

cudaError_t loader_ring_train(cudaStream_t stream, const unsigned char *h_file, ring_shape shape,
                              unsigned long long *d_sums)
{
    ring r = {.shape = shape, .file = h_file};
    const int slots = shape.slots;
    int made = 0, semaphores = 0;
    float *d_batch = NULL;
    cudaError_t err = cudaErrorMemoryAllocation;
    r.slot = calloc((size_t)slots, sizeof *r.slot);
    r.copied = calloc((size_t)slots, sizeof *r.copied);
    r.loaded = calloc((size_t)slots, sizeof *r.loaded);
    if (r.slot == NULL || r.copied == NULL || r.loaded == NULL || sem_init(&r.loads, 0, 0) != 0)
        goto out;
    for (; semaphores < slots; semaphores++)
        if (sem_init(&r.loaded[semaphores], 0, 0) != 0)
            goto out;
    for (err = cudaSuccess; made < slots && err == cudaSuccess; made++)
        if ((err = cudaMallocHost((void **)&r.slot[made], shape.n * sizeof(float))) == cudaSuccess)
            err = cudaEventCreate(&r.copied[made]);
    if (err == cudaSuccess)
        err = cudaMalloc((void **)&d_batch, shape.n * sizeof(float));
    if (err == cudaSuccess)
        err = run(&r, stream, d_batch, d_sums);
out:
    if (d_batch != NULL && cudaFree(d_batch) != cudaSuccess && err == cudaSuccess)
        err = cudaErrorInvalidValue;
    for (int s = 0; s < made; s++) {
        if (r.copied[s] != NULL)
            cudaEventDestroy(r.copied[s]);
        if (r.slot[s] != NULL)
            cudaFreeHost(r.slot[s]);
    }
    for (int s = 0; s < semaphores; s++)
        sem_destroy(&r.loaded[s]);
    if (r.loaded != NULL && r.slot != NULL && r.copied != NULL)
        sem_destroy(&r.loads);
    free(r.slot);
    free(r.copied);
    free(r.loaded);
    return err;
}

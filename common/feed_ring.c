/* feed_ring.c - loader threads that fill a ring of pinned buffers ahead of a training loop.
 *
 * Batch b always goes into slot b % slot_count, so the loop finds its batches in order however
 * the loaders' reads interleave. The loaders never touch CUDA: whether a slot's copy is done is
 * for the loop's thread to ask (cudaEventQuery), and it hands the slot back only then. The
 * loaders only read (pread) and convert, and say when a read fails; the loop then stops them.
 */
#include "feed.h"

#include "chapter.h"
#include "cuda_check.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void feed_ring_init(feed_ring *ring, unsigned slot_count, unsigned loader_count,
                    size_t max_batch_samples, bool floats)
{
    memset(ring, 0, sizeof *ring);
    pthread_mutex_init(&ring->lock, NULL);
    pthread_cond_init(&ring->changed, NULL);
    const size_t batch_bytes = max_batch_samples * FEED_SAMPLE_BYTES;
    ring->slot_count = slot_count;
    ring->slots = host_alloc(slot_count * sizeof *ring->slots);
    for (unsigned s = 0; s < slot_count; s++) {
        feed_slot *slot = &ring->slots[s];
        CUDA_CHECK(cudaMallocHost(&slot->h_buffer, floats ? batch_bytes * sizeof(float)
                                                          : batch_bytes));
        CUDA_CHECK(cudaEventCreateWithFlags(&slot->copied, cudaEventDisableTiming));
        slot->state = SLOT_FREE;
    }
    ring->convert = floats;
    ring->loader_count = loader_count;
    ring->loaders = host_alloc(loader_count * sizeof *ring->loaders);
    for (unsigned l = 0; l < loader_count; l++) {
        ring->loaders[l].ring = ring;
        ring->loaders[l].scratch = floats ? host_alloc(batch_bytes) : NULL;
        if (floats)
            memset(ring->loaders[l].scratch, 0, batch_bytes); /* its pages, made now */
    }
}

void feed_ring_destroy(feed_ring *ring)
{
    if (ring->slots == NULL)
        return;
    for (unsigned l = 0; l < ring->loader_count; l++)
        free(ring->loaders[l].scratch);
    free(ring->loaders);
    for (unsigned s = 0; s < ring->slot_count; s++) {
        CUDA_CHECK(cudaEventDestroy(ring->slots[s].copied));
        CUDA_CHECK(cudaFreeHost(ring->slots[s].h_buffer));
    }
    free(ring->slots);
    pthread_cond_destroy(&ring->changed);
    pthread_mutex_destroy(&ring->lock);
    memset(ring, 0, sizeof *ring);
}

/* listing: loader */
/* A loader: claims the next batch once its slot is free, reads it (and converts it) outside the
 * lock, marks it ready. Stops at the last batch, when told to, or at a read that fails. */
static void *loader_main(void *argument)
{
    feed_loader *self = argument;
    feed_ring *ring = self->ring;
    pthread_mutex_lock(&ring->lock);
    for (;;) {
        while (!ring->stopping && ring->next_batch < ring->batches &&
               ring->slots[ring->next_batch % ring->slot_count].state != SLOT_FREE)
            pthread_cond_wait(&ring->changed, &ring->lock);
        if (ring->stopping || ring->next_batch == ring->batches)
            break;
        const size_t batch = ring->next_batch++;
        feed_slot *slot = &ring->slots[batch % ring->slot_count];
        slot->state = SLOT_FILLING;
        slot->batch = batch;
        pthread_mutex_unlock(&ring->lock);

        unsigned char *bytes = ring->convert ? self->scratch : slot->h_buffer;
        const bool read = feed_read_batch(ring->data, ring->batch_samples, batch, bytes);
        const int read_errno = errno;
        if (read && ring->convert)
            feed_convert(slot->h_buffer, bytes, ring->batch_samples * FEED_SAMPLE_BYTES);

        pthread_mutex_lock(&ring->lock);
        if (read) {
            slot->state = SLOT_READY;
        } else if (!ring->failed) {
            ring->failed = true;
            ring->failed_batch = batch;
            ring->read_errno = read_errno;
        }
        pthread_cond_broadcast(&ring->changed);
        if (!read)
            break;
    }
    pthread_mutex_unlock(&ring->lock);
    return NULL;
}
/* end listing: loader */

/* The ring whose loaders run, for the CUDA failure handler, and the handler it replaced. */
static feed_ring *running_ring;
static cuda_failure_handler replaced_handler;

/* A CUDA call failed on the loop's thread while the loaders run: they are stopped and joined
 * before the program exits, so that none is reading into memory the exit tears down. */
static void stop_loaders_and_exit(cudaError_t err, const char *expr, const char *file, int line)
{
    (void)err, (void)expr, (void)file, (void)line; /* CUDA_CHECK has reported them */
    if (running_ring != NULL)
        feed_ring_stop(running_ring);
    exit(EXIT_FAILURE);
}

bool feed_ring_start(feed_ring *ring, const feed_data *data, size_t batch_samples,
                     size_t batches)
{
    ring->data = data;
    ring->batch_samples = batch_samples;
    ring->batches = batches;
    ring->next_batch = ring->released = 0;
    ring->stopping = ring->failed = false;
    ring->read_errno = 0;
    for (unsigned s = 0; s < ring->slot_count; s++)
        ring->slots[s].state = SLOT_FREE;
    running_ring = ring;
    replaced_handler = cuda_check_set_handler(stop_loaders_and_exit);
    for (ring->started = 0; ring->started < ring->loader_count; ring->started++) {
        feed_loader *loader = &ring->loaders[ring->started];
        if (pthread_create(&loader->thread, NULL, loader_main, loader) != 0) {
            feed_ring_stop(ring);
            return false;
        }
    }
    return true;
}

/* Hands back the slots of the batches before `batch` whose copies are done, oldest first (one
 * copy stream: they finish in order). The slot `batch` goes into is waited for if need be. */
static void release_copied(feed_ring *ring, size_t batch)
{
    while (ring->released < batch) {
        feed_slot *slot = &ring->slots[ring->released % ring->slot_count];
        if (ring->released + ring->slot_count <= batch) {
            CUDA_CHECK(cudaEventSynchronize(slot->copied)); /* `batch` needs this slot */
        } else {
            const cudaError_t done = cudaEventQuery(slot->copied);
            if (done == cudaErrorNotReady)
                return;
            CUDA_CHECK(done);
        }
        pthread_mutex_lock(&ring->lock);
        slot->state = SLOT_FREE;
        ring->released++;
        pthread_cond_broadcast(&ring->changed);
        pthread_mutex_unlock(&ring->lock);
    }
}

/* listing: ring-take */
feed_slot *feed_ring_take(feed_ring *ring, size_t batch)
{
    release_copied(ring, batch);
    feed_slot *slot = &ring->slots[batch % ring->slot_count];
    pthread_mutex_lock(&ring->lock);
    while (!ring->failed && !(slot->state == SLOT_READY && slot->batch == batch))
        pthread_cond_wait(&ring->changed, &ring->lock);
    const bool failed = ring->failed;
    pthread_mutex_unlock(&ring->lock);
    return failed ? NULL : slot;
}
/* end listing: ring-take */

void feed_ring_sent(feed_ring *ring, feed_slot *slot)
{
    pthread_mutex_lock(&ring->lock);
    slot->state = SLOT_SENT;
    pthread_mutex_unlock(&ring->lock);
}

void feed_ring_stop(feed_ring *ring)
{
    pthread_mutex_lock(&ring->lock);
    ring->stopping = true;
    pthread_cond_broadcast(&ring->changed);
    pthread_mutex_unlock(&ring->lock);
    for (unsigned l = 0; l < ring->started; l++)
        pthread_join(ring->loaders[l].thread, NULL);
    ring->started = 0;
    if (running_ring == ring) {
        running_ring = NULL;
        cuda_check_set_handler(replaced_handler);
    }
}

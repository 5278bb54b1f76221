/* loader_ring.h - Exercise: loader threads that keep a ring of pinned batches ahead of the GPU.
 *
 * A training loop that reads and converts each batch itself leaves the GPU idle meanwhile
 * (loop_utilisation measured it). The cure: loader threads read and convert batches ahead of
 * the loop, into a ring of pinned buffers (slots), while the loop sends the ones ready and the
 * GPU steps on them. loader_ring_train runs such a loop over the batches of a "file":
 *
 *   The file, h_file, is pageable host memory of shape.batches * shape.n bytes (8-bit pixels);
 *   batch b is the n bytes from h_file + b * n.
 *
 *   The ring: shape.slots pinned buffers of n floats each (cudaMallocHost), batch b going to
 *   slot b % slots; and device memory for the batch the GPU works on (one buffer of n floats is
 *   enough: the stream runs its work in order).
 *
 *   shape.loaders loader threads (pthread_create) load every batch exactly once between them,
 *   several at a time: loading batch b is reading it, which takes shape.read_ms (the file's
 *   latency: the loader sleeps that long, nanosleep, holding no lock), then converting each of
 *   its bytes into slot b % slots, in two statements, never fused (no fmaf):
 *       float product = (float)byte * PIXEL_SCALE;
 *       slot[i] = product + PIXEL_OFFSET;
 *   A slot may take batch b only once the GPU has finished copying batch b - slots out of it:
 *   the event recorded after that copy has completed (cudaEventSynchronize or cudaEventQuery).
 *
 *   The loop, in the calling thread, for b = 0, 1, ..., batches - 1 in order: wait until slot
 *   b % slots holds batch b; then, all on `stream`:
 *       cudaMemcpyAsync(d_batch, slot, n * sizeof(float), cudaMemcpyHostToDevice, stream)
 *       cudaEventRecord(the slot's event, stream)
 *       gpu_work_keep_busy(stream, shape.step_ms)                      the training step
 *       gpu_work_checksum(stream, d_batch, n * sizeof(float), 1, d_sums + b)
 *   and, after the last batch, cudaStreamSynchronize(stream).
 *
 * d_sums is the caller's device memory of `batches` unsigned long longs: d_sums[b] ends up
 * holding the checksum of batch b's floats, which proves what reached the GPU.
 *
 * When every loader thread has joined and everything is given back, the function returns
 * cudaSuccess; or, on the first error a call returned (a failure to start a thread is
 * cudaErrorMemoryAllocation), it queues nothing more, tells the loaders to stop, joins every
 * one it started, waits for what it queued (cudaStreamSynchronize), frees and destroys
 * everything it made, and returns that error. No thread it started is running when it returns.
 *
 * The shape is valid: batches, n, loaders and slots at least 1, read_ms and step_ms at least 0.
 */
#ifndef LOADER_RING_H
#define LOADER_RING_H

#include <cuda_runtime_api.h>
#include <stddef.h>

/* A pixel x in 0..255 becomes (x / 255 - 0.5) / 0.25: a normalised input, as a network wants. */
#define PIXEL_SCALE ((float)(1.0 / (255.0 * 0.25)))
#define PIXEL_OFFSET ((float)(-0.5 / 0.25))

typedef struct ring_shape {
    size_t batches; /* in the file */
    size_t n;       /* bytes in a batch of the file; floats in a slot */
    int loaders;    /* loader threads */
    int slots;      /* pinned buffers in the ring */
    double read_ms; /* reading one batch from the file, before converting it */
    double step_ms; /* one training step on the GPU */
} ring_shape;

cudaError_t loader_ring_train(cudaStream_t stream, const unsigned char *h_file, ring_shape shape,
                              unsigned long long *d_sums);

#endif

/* pageable_fast.h - Exercise: copy pageable memory to the device faster than cudaMemcpy does.
 *
 * A plain cudaMemcpy from pageable (malloc'd) memory runs at a fraction of the
 * link's speed: the driver copies the data with the CPU into pinned staging
 * buffers of its own and sends it from there, and is no faster than that
 * staging (how many threads and how large the buffers is the driver's choice).
 * Staged by hand, with host threads filling a ring of pinned buffers while the
 * GPU sends the ones already filled, the same copy runs several times faster.
 *
 * A staged_copier holds what the staging needs (pinned buffers, streams or
 * events, host threads), set up once and used for many copies: pinning memory
 * costs far more than copying it, so it must not happen on every copy. Its
 * fields are yours: define struct staged_copier in pageable_fast.c.
 *
 * staged_copier_create makes one and stores it in *copier. On failure it gives
 * back whatever it had acquired (and joins any thread it had started) and
 * returns the error.
 *
 * staged_copy_to_device copies `bytes` bytes (any count, 0 included) from the
 * pageable host memory at h_src to the device memory at d_dst, and returns
 * once they have all arrived. On an error it still waits for what it queued
 * and for its threads' work, and returns the first error; the copier can still
 * be destroyed.
 *
 * staged_copier_destroy gives back everything the copier holds, and ends and
 * joins its threads: when it returns, no thread it started is still running.
 *
 * Each returns cudaSuccess, or the first error a runtime call returned (a
 * failure to start a thread is cudaErrorMemoryAllocation).
 *
 * NULL: staged_copier_create(NULL), and staged_copy_to_device with a NULL copier,
 * or a NULL d_dst or h_src when bytes is not 0, return cudaErrorInvalidValue and
 * do nothing else; staged_copier_destroy(NULL) does nothing and returns
 * cudaSuccess, as free(NULL) does.
 */
#ifndef PAGEABLE_FAST_H
#define PAGEABLE_FAST_H

#include <cuda_runtime_api.h>
#include <stddef.h>

typedef struct staged_copier staged_copier;

cudaError_t staged_copier_create(staged_copier **copier);
cudaError_t staged_copy_to_device(staged_copier *copier, void *d_dst, const void *h_src,
                                  size_t bytes);
cudaError_t staged_copier_destroy(staged_copier *copier);

#endif

/* loop_utilisation.h - Exercise: how much of a naive training loop the GPU spends working.
 *
 * A training loop that loads each batch on the host and only then runs its step leaves the GPU
 * idle while the host works. loop_utilisation runs such a loop and measures, with CUDA events,
 * the share of the loop's time the GPU spent on the steps:
 *
 *     record loop_start                                   cudaEventRecord(loop_start, stream)
 *     for each of `steps` steps:
 *         the host's work for the batch: host_ms of it    a sleep (nanosleep) or a busy wait
 *         record step_start                               cudaEventRecord(step_start, stream)
 *         the step                                        gpu_work_keep_busy(stream, step_ms)
 *         record step_stop                                cudaEventRecord(step_stop, stream)
 *         wait until the GPU reaches step_stop            cudaEventSynchronize(step_stop)
 *         add the step's time                             cudaEventElapsedTime(&ms, step_start,
 *                                                                              step_stop)
 *     record loop_stop, wait for it, read the loop's time the same way
 *     *utilisation = (the sum of the steps' times) / (the loop's time)
 *
 * Every event goes on `stream`, the caller's. The host's work comes before each step's start
 * event and lies inside the loop's: it is the time the GPU waits. The result lies between 0 and
 * 1: about step_ms / (step_ms + host_ms) for this loop.
 *
 * Returns cudaSuccess or the first error a call returned (gpu_work_keep_busy's included); it
 * stops at that error, leaves *utilisation as it was, and destroys every event it created, on
 * every path. steps is at least 1; host_ms and step_ms are at least 0.
 */
#ifndef LOOP_UTILISATION_H
#define LOOP_UTILISATION_H

#include <cuda_runtime_api.h>

cudaError_t loop_utilisation(cudaStream_t stream, int steps, double host_ms, double step_ms,
                             double *utilisation);

#endif

/* timing.h - measuring how long copies take: CUDA events and the host clock.
 *
 * Events are recorded into a stream and timestamped by the GPU when the stream
 * reaches them, so the time between two events is the device's own view of
 * the work between them. The host clock measures what the calling thread
 * waited, which for a blocking cudaMemcpy also includes the call's overhead.
 */
#ifndef COURSE_TIMING_H
#define COURSE_TIMING_H

#include <cuda_runtime_api.h>

typedef struct event_timer {
    cudaEvent_t start;
    cudaEvent_t stop;
} event_timer;

/* Each returns the first runtime error (and reports it through CUDA_CHECK). */
cudaError_t event_timer_create(event_timer *timer);
cudaError_t event_timer_start(event_timer *timer, cudaStream_t stream);
/* Records the stop event, waits for it, and stores the elapsed milliseconds. */
cudaError_t event_timer_stop(event_timer *timer, cudaStream_t stream, float *elapsed_ms);
cudaError_t event_timer_destroy(event_timer *timer);

/* Milliseconds on CLOCK_MONOTONIC, for host-side timing. */
double host_clock_ms(void);

#endif

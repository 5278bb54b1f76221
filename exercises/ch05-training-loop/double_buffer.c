/* double_buffer.c - copy batch b + 1 up while the GPU steps on batch b.
 *
 * The naive loop copies a batch, steps on it, copies the next: the link and the GPU take
 * turns. Two device buffers, a stream for the copies and one for the steps, and events that
 * say when a copy has landed and when a step has let go of its buffer, let both run at once.
 * Run
 *     make check EX=ch05-training-loop/double_buffer
 * to see how you are doing.
 */
#include "double_buffer.h"
#include "gpu_work.h"

cudaError_t double_buffer_train(const float *h_batches, size_t batches, size_t n, double step_ms,
                                unsigned long long *d_sums)
{
    (void)h_batches;
    (void)batches;
    (void)n;
    (void)step_ms;
    (void)d_sums;
    /* TODO: cudaMalloc two buffers of n floats; create a stream for the copies, one for the
     * steps, and an event per buffer for "copied" and one for "stepped". For batch b, buffer
     * b % 2: the copies' stream waits for that buffer's "stepped" event, copies the batch up
     * and records "copied"; the steps' stream waits for "copied", runs gpu_work_keep_busy and
     * gpu_work_checksum into d_sums + b, and records "stepped". Then wait for both streams and
     * give everything back, on the error paths too. */
    return cudaErrorNotYetImplemented;
}

/* worker_delays.c - in the worker: the holds a test asks for (trace_delay_async_copies and
 * friends), a keep-busy kernel queued before the learner's copies and kernels on their own
 * streams, so that what the learner's code reads or reuses too early shows every time. Apart
 * from worker_trace.c, whose record the harness's unit tests use without the wrappers: this
 * part makes runtime calls past them (__real_cudaSetDevice). */
#include "gpu_work.h"
#include "trace.h"
#include "worker.h"

#include <stdatomic.h>
#include <stdbool.h>

/* The copies held up so far in this call of the learner's (its threads may queue at once). */
static atomic_size_t copies_delayed;

/* An event after each hold: whether the held work was still queued when the learner's code
 * returned is then a question for the GPU (cudaEventQuery), not the time a wait for every GPU
 * takes. That time also holds the driver's own delays: in a make test on an H100, with other
 * programs making contexts beside it, an error path that waits for both its streams (the known
 * mistake double_buffer--count-in-elements, whose error path is the solution's) measured 10 ms
 * where the bar was 10. */
#define HOLDS_MARKED 64
static cudaEvent_t holds[HOLDS_MARKED]; /* NULL where none is kept */
static atomic_size_t holds_marked;       /* the next slot; may pass HOLDS_MARKED */
static atomic_bool marks_incomplete;     /* a hold without its mark: the marks do not say all */

void trace_delay_count_again(void)
{
    atomic_store(&copies_delayed, 0);
    (void)worker_holds_still_running();
}

int worker_holds_still_running(void)
{
    atomic_store(&holds_marked, 0);
    const bool incomplete = atomic_exchange(&marks_incomplete, false);
    int running = 0;
    for (size_t i = 0; i < HOLDS_MARKED; i++)
        if (holds[i] != NULL) {
            running += __real_cudaEventQuery(holds[i]) == cudaErrorNotReady;
            (void)__real_cudaEventDestroy(holds[i]);
            holds[i] = NULL;
        }
    (void)cudaGetLastError();
    /* Holds asked for and none made: the code queued nothing the test holds up, and what a
     * wait takes then is the driver's (the solution of compact_batches, whose error path made
     * nothing but one cudaMalloc before its first cudaStreamCreate failed, measured 11 ms). */
    const bool asked = trace_delay.milliseconds > 0 || trace_delay.kernel_milliseconds > 0;
    return asked && !incomplete ? running : -1;
}

/* An event recorded after the hold on `stream`; where there is no room, or it cannot be made,
 * the marks no longer say all. */
static void mark_hold(cudaStream_t stream)
{
    const size_t slot = atomic_fetch_add(&holds_marked, 1);
    cudaEvent_t event = NULL;
    if (slot >= HOLDS_MARKED ||
        __real_cudaEventCreateWithFlags(&event, cudaEventDisableTiming) != cudaSuccess ||
        __real_cudaEventRecord(event, stream) != cudaSuccess) {
        if (event != NULL)
            (void)__real_cudaEventDestroy(event);
        (void)cudaGetLastError();
        atomic_store(&marks_incomplete, true);
        return;
    }
    holds[slot] = event;
}

/* gpu_work_keep_busy on `stream`, launched with the stream's own GPU current: a kernel on a
 * stream of another GPU is refused, and the learner's code may queue a copy on one GPU's stream
 * while another is current (peer copies may). The learner's current GPU is put back. */
static cudaError_t keep_stream_busy(cudaStream_t stream, double milliseconds)
{
    int current = 0, stream_device = -1;
    (void)cudaGetDevice(&current);
    if (stream != NULL && stream != cudaStreamLegacy && stream != cudaStreamPerThread &&
        cudaStreamGetDevice(stream, &stream_device) != cudaSuccess) {
        cudaGetLastError();
        stream_device = -1;
    }
    const bool elsewhere = stream_device >= 0 && stream_device != current;
    if (elsewhere && __real_cudaSetDevice(stream_device) != cudaSuccess)
        return cudaErrorInvalidDevice;
    cudaError_t err = gpu_work_keep_busy(stream, milliseconds);
    if (err == cudaSuccess)
        mark_hold(stream);
    if (elsewhere)
        (void)__real_cudaSetDevice(current);
    return err;
}

void trace_delay_copy(const traced_call *call)
{
    if (!trace_is_on() || trace_delay.milliseconds <= 0)
        return;
    if (trace_delay.direction != cudaMemcpyDefault &&
        trace_delay.direction != memcpy_kind_for(call->dst_location, call->src_location))
        return;
    if (trace_delay.copies > 0 && atomic_fetch_add(&copies_delayed, 1) >= trace_delay.copies)
        return;
    /* Best effort: where it cannot run (no kernels in a stand-in runtime) the copy is simply not
     * delayed, and the failed launch must not look like the learner's error. */
    if (keep_stream_busy(call->stream, trace_delay.milliseconds) != cudaSuccess) {
        cudaGetLastError();
        atomic_store(&marks_incomplete, true); /* a copy not held: the marks do not say all */
    }
}

void trace_delay_kernel(const traced_call *call)
{
    if (trace_is_on() && trace_delay.kernel_milliseconds > 0 &&
        keep_stream_busy(call->stream, trace_delay.kernel_milliseconds) != cudaSuccess) {
        cudaGetLastError(); /* best effort, as for the copies */
        atomic_store(&marks_incomplete, true);
    }
}

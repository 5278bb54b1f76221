/* peer_copy.c - tests for exercises/ch06-two-gpus/peer_copy.c (timed_peer_copy).
 *
 * They run only where the machine has two GPUs or more (COURSE_EXERCISE_NEEDS_GPUS): with one,
 * the exercise is reported as skipped. The results the checker judges itself are the bytes that
 * arrived, each way between the first two GPUs, read back from a destination it poisoned, and
 * the time the code reports: the test holds the copy up on its own stream (a keep-busy kernel
 * queued before it, trace_delay_async_copies), so the copy ends at least that long after the
 * start event is passed, and no part of the call can take longer than the whole call took on the
 * host's clock. A time read before the stop event completed, taken on the host's clock before
 * the copy ended, in other units or between events that do not enclose the copy then fails every
 * time. Which GPU was current when each stream and event was made, which stream each call went
 * to, and which GPU is current afterwards are the worker's word (the trace,
 * harness_current_device). Each test starts with the first GPU current.
 */
#include "harness.h"
#include "peer_copy.h"
#include "timing.h"

#include <math.h>
#include <stdio.h>

COURSE_EXERCISE(
    "A peer copy on the sending GPU's stream, timed by its events",
    "A stream and an event belong to the GPU that was current when they were made, and an event "
    "can only be recorded on a stream of its own GPU (section 6.3). Make the sending GPU current "
    "before making them, time the copy between two events on its stream, and put the caller's "
    "device back.\n\n"
    "int caller; cudaGetDevice(&caller); cudaSetDevice(src_device); cudaStreamCreate(&stream); "
    "cudaEventCreate(&start); cudaEventCreate(&stop); cudaEventRecord(start, stream); "
    "cudaMemcpyPeerAsync(dst, dst_device, src, src_device, bytes, stream); "
    "cudaEventRecord(stop, stream); cudaEventSynchronize(stop); "
    "cudaEventElapsedTime(ms, start, stop); then, whatever happened, destroy the events and the "
    "stream and cudaSetDevice(caller), and return the first error.");
COURSE_EXERCISE_NEEDS_GPUS(2);

#define UNSET_MS -1.0f /* the test's poison for *ms */
#define DELAY_MS 20.0  /* how long the timing test holds the copy up on its stream */
/* Counts of bytes that are no multiple of anything a copy might round to. */
#define LARGE_BYTES (((size_t)3 << 20) + 13)
#define SMALL_BYTES (((size_t)1 << 20) + 7)

/* One copy the test has the code make: src holds a pattern, dst the test's poison. */
typedef struct peer_case {
    int src_device, dst_device;
    size_t bytes;
    void *src, *dst;
    unsigned char *want; /* what src holds, in the checker's own memory */
    float *ms;           /* where the code writes its time: shared with it */
} peer_case;

static peer_case make_case(int src_device, size_t bytes)
{
    peer_case c = {src_device, 1 - src_device, bytes, NULL, NULL, NULL, NULL};
    c.want = harness_private_alloc(bytes);
    fill_bytes(c.want, bytes);
    c.src = harness_device_alloc_on(c.src_device, bytes);
    harness_copy(c.src, c.want, bytes, cudaMemcpyHostToDevice);
    c.dst = harness_device_alloc_on(c.dst_device, bytes); /* poisoned */
    c.ms = harness_host_alloc(sizeof *c.ms);
    *c.ms = UNSET_MS;
    return c;
}

static cudaError_t copy_case(void *context)
{
    peer_case *c = context;
    return timed_peer_copy(c->dst, c->dst_device, c->src, c->src_device, c->bytes, c->ms);
}

/* One call under a fresh trace, `caller` current as the caller's own code would have made it. */
static cudaError_t run_case(peer_case *c, int caller)
{
    harness_set_device(caller);
    trace_start();
    trace_stop();
    cudaError_t err;
    TRACED_RUN(err = copy_case(c));
    return err;
}

/* The first stream or event the call made with another GPU than the sender current; NULL if
 * every one was the sender's. */
static const traced_call *made_off_the_sender(int src_device)
{
    for (size_t i = 0; i < trace_count(); i++) {
        const traced_call *call = trace_get(i);
        const trace_resource made = traced_function_resource(call->function);
        if ((made == RESOURCE_STREAM || made == RESOURCE_EVENT) &&
            traced_function_role(call->function) == ROLE_ACQUIRE && call->result == cudaSuccess &&
            call->current_device != src_device)
            return call;
    }
    return NULL;
}

/* What is wrong with a stream or event made with another GPU current; "" for NULL. */
static const char *off_the_sender_words(const traced_call *made, int src_device)
{
    static char words[768];
    if (made == NULL)
        return "";
    snprintf(words, sizeof words,
             " Call %zu, %s, made %s with GPU %d current, so it belongs to GPU %d for the whole "
             "of its life; the copy sends from GPU %d. The stream the copy goes on and the events "
             "that time it must all be the sending GPU's: its copy engine pushes the bytes, and "
             "an event can be recorded only on a stream of its own GPU (on another GPU's stream "
             "that fails with cudaErrorInvalidResourceHandle). Make the sending GPU current, "
             "cudaSetDevice(src_device), before creating any of them.",
             trace_position(made) + 1, traced_function_name(made->function),
             traced_function_resource(made->function) == RESOURCE_STREAM ? "a stream" : "an event",
             made->current_device, made->current_device, src_device);
    return words;
}

static const char *not_ready_words(cudaError_t err)
{
    return err == cudaErrorNotReady
               ? " cudaEventElapsedTime says cudaErrorNotReady while the stop event has not "
                 "completed: recording only queues it, so wait for it with "
                 "cudaEventSynchronize(stop) before reading the time."
               : "";
}

/* Why a time is shorter than the delay the test put before the copy. */
static const char *too_short_words(float ms)
{
    if (ms == UNSET_MS)
        return " *ms still holds the test's -1: no time was stored. Pass ms to "
               "cudaEventElapsedTime.";
    if (ms < 0)
        return " The events are the wrong way round: cudaEventElapsedTime(ms, start, stop) takes "
               "the earlier event first.";
    if (ms * 1000 >= 0.9 * DELAY_MS)
        return " That is about a thousandth of it: cudaEventElapsedTime already gives "
               "milliseconds, store them as they are.";
    return " The two events do not enclose the copy on its own stream, or the time was taken "
           "before the copy had ended (on the host's clock, say, around the call that only "
           "queues it).";
}

/* Fails the test unless the call succeeded, naming a stream or event of the wrong GPU if any. */
static void expect_success(cudaError_t err, const peer_case *c, int caller)
{
    ck_assert_msg(err == cudaSuccess,
                  "timed_peer_copy from GPU %d to GPU %d, with GPU %d current, returned %s.%s%s "
                  "The calls:%s",
                  c->src_device, c->dst_device, caller, error_text(err), not_ready_words(err),
                  off_the_sender_words(made_off_the_sender(c->src_device), c->src_device),
                  trace_summary());
}

COURSE_TEST(the_bytes_arrive_each_way_and_a_time_comes_back, 3)
{
    const size_t sizes[2] = {LARGE_BYTES, SMALL_BYTES}; /* from GPU 0, from GPU 1 */
    for (int from = 0; from < 2; from++) {
        peer_case c = make_case(from, sizes[from]);
        expect_success(run_case(&c, 0), &c, 0);
        const float ms = *c.ms;
        unsigned char *back = harness_private_alloc(c.bytes);
        harness_copy(back, c.dst, c.bytes, cudaMemcpyDeviceToHost);
        char what[96];
        snprintf(what, sizeof what, "the copy from GPU %d to GPU %d (read back by the test)",
                 c.src_device, c.dst_device);
        expect_bytes_arrived(back, c.want, c.bytes, 1, what);
        ck_assert_msg(isfinite(ms) && ms > 0,
                      "timed_peer_copy returned cudaSuccess and stored %g ms for %s: a copy takes "
                      "some time, so its time is positive.%s",
                      (double)ms, what, ms == UNSET_MS || ms < 0 ? too_short_words(ms) : "");
    }
}

COURSE_TEST(the_stream_and_events_are_made_with_the_sending_gpu_current, 3)
{
    /* Each way with the receiving GPU current: code that makes them on whichever GPU it found
     * current, or on the receiver, shows either way. */
    for (int from = 1; from >= 0; from--) {
        peer_case c = make_case(from, SMALL_BYTES);
        const cudaError_t err = run_case(&c, c.dst_device);
        const traced_call *made = made_off_the_sender(from);
        ck_assert_msg(made == NULL,
                      "copying from GPU %d to GPU %d with GPU %d current:%s The calls:%s",
                      c.src_device, c.dst_device, c.dst_device, off_the_sender_words(made, from),
                      trace_summary());
        expect_success(err, &c, c.dst_device);
    }
}

/* --- Which stream each call went to ------------------------------------------------------- */

static bool is_default_stream(cudaStream_t stream)
{
    return stream == NULL || stream == cudaStreamLegacy || stream == cudaStreamPerThread;
}

/* Whether two calls went to one stream: a default stream is the current GPU's own. */
static bool same_stream(const traced_call *a, const traced_call *b)
{
    return a->stream == b->stream &&
           (!is_default_stream(a->stream) || a->current_device == b->current_device);
}

/* "the stream made in call 2", "the default stream of GPU 0": the stream `call` went to. */
static const char *stream_words(const traced_call *call)
{
    static char words[2][64];
    static int turn;
    char *text = words[turn++ % 2]; /* two of them in one message */
    if (is_default_stream(call->stream)) {
        snprintf(text, sizeof words[0], "the default stream of GPU %d", call->current_device);
        return text;
    }
    snprintf(text, sizeof words[0], "a stream the code did not make");
    for (size_t i = 0; i < trace_position(call); i++) {
        const traced_call *made = trace_get(i);
        if (traced_function_resource(made->function) == RESOURCE_STREAM &&
            traced_function_role(made->function) == ROLE_ACQUIRE && made->handle == call->stream)
            snprintf(text, sizeof words[0], "the stream made in call %zu", i + 1);
    }
    return text;
}

/* The one copy of the trace queued from one GPU to the other (cudaMemcpyPeerAsync, or
 * cudaMemcpyAsync between the two device pointers), failing the test, in the learner's terms,
 * if there is none. */
static const traced_call *the_peer_copy(void)
{
    const size_t copies = trace_count_of_gpu_copies();
    ck_assert_msg(copies > 0 || (trace_count_of(TRACED_cudaMemcpyPeer) == 0 &&
                                 trace_count_of(TRACED_cudaMemcpy) == 0),
                  "timed_peer_copy copied with %s, which takes no stream and makes the host "
                  "wait: the events recorded on a stream cannot enclose it. Queue the copy with "
                  "cudaMemcpyPeerAsync on the stream the events are recorded on. The calls:%s",
                  trace_count_of(TRACED_cudaMemcpyPeer) > 0 ? "cudaMemcpyPeer" : "cudaMemcpy",
                  trace_summary());
    ck_assert_msg(copies == 1,
                  "timed_peer_copy queued %zu copies from one GPU to the other "
                  "(cudaMemcpyPeerAsync); it times exactly one copy. The calls:%s",
                  copies, trace_summary());
    return trace_nth_gpu_copy(1);
}

COURSE_TEST(the_copy_is_queued_between_two_events_recorded_on_its_stream, 2)
{
    peer_case c = make_case(1, SMALL_BYTES);
    const cudaError_t err = run_case(&c, 0);
    const traced_call *copy = the_peer_copy();
    const traced_call *elapsed = trace_nth(TRACED_cudaEventElapsedTime, 1);
    ck_assert_msg(elapsed != NULL,
                  "timed_peer_copy never called cudaEventElapsedTime: it timed the copy some "
                  "other way, probably with the host's clock, which measures how long the CPU "
                  "queued the copy or waited for it, not what the GPU did. Record an event just "
                  "before the copy and one just after it, on the copy's stream, and take the time "
                  "between them with cudaEventElapsedTime. The calls:%s",
                  trace_summary());
    const size_t at = trace_position(elapsed), copy_at = trace_position(copy);
    const traced_call *start = trace_last_on_event(TRACED_cudaEventRecord, elapsed->event, at);
    const traced_call *stop = trace_last_on_event(TRACED_cudaEventRecord, elapsed->end_event, at);
    ck_assert_msg(start != NULL && stop != NULL,
                  "the %s event given to cudaEventElapsedTime was never recorded before it: "
                  "record both with cudaEventRecord. The calls:%s",
                  start == NULL ? "start" : "stop", trace_summary());
    ck_assert_msg(trace_position(start) < copy_at && trace_position(stop) > copy_at,
                  "the copy (call %zu) does not lie between the events given to "
                  "cudaEventElapsedTime, recorded in calls %zu and %zu: record start just before "
                  "queuing the copy and stop just after it, so that the two marks enclose it, and "
                  "pass them in that order. The calls:%s",
                  copy_at + 1, trace_position(start) + 1, trace_position(stop) + 1,
                  trace_summary());
    const traced_call *elsewhere = !same_stream(start, copy) ? start : stop;
    ck_assert_msg(same_stream(start, copy) && same_stream(stop, copy),
                  "the copy went to %s, and the %s event was recorded on %s: two events time what "
                  "their own stream did between them, and the copy was not on it. (A default "
                  "stream waits for the other blocking streams of its GPU, so the time may look "
                  "right, but only by that: with a non-blocking stream it times nothing.) Queue "
                  "the copy and record both events on the one stream of the sending GPU. The "
                  "calls:%s",
                  stream_words(copy), elsewhere == start ? "start" : "stop",
                  stream_words(elsewhere), trace_summary());
    expect_success(err, &c, 0);
}

COURSE_TEST(the_time_is_measured_by_the_gpu_from_start_to_stop, 3)
{
    peer_case c = make_case(0, SMALL_BYTES);
    trace_start();
    trace_stop();
    trace_delay_async_copies(cudaMemcpyDefault, DELAY_MS); /* the copies of the next run */
    const double called = host_clock_ms();
    cudaError_t err;
    TRACED_RUN(err = copy_case(&c));
    const double call_ms = host_clock_ms() - called;
    const float ms = *c.ms;
    harness_results_compared(); /* the time, against the delay and the whole call's time */
    ck_assert_msg(err == cudaSuccess,
                  "timed_peer_copy returned %s (the test held the copy up %g ms on its stream "
                  "before it started, as a busy link would).%s The calls:%s",
                  error_text(err), DELAY_MS, not_ready_words(err), trace_summary());
    ck_assert_msg(ms >= 0.9 * DELAY_MS,
                  "timed_peer_copy reported %.4g ms, but the test held the copy up %g ms on its "
                  "stream before it started, as a busy link would: the copy ended at least that "
                  "long after the stream passed the start event.%s The calls:%s",
                  (double)ms, DELAY_MS, too_short_words(ms), trace_summary());
    ck_assert_msg(ms <= call_ms,
                  "timed_peer_copy reported %.4g ms, longer than the whole call took on the "
                  "host's clock (%.4g ms, from the call to its return): no part of it can take "
                  "longer than the whole.%s The calls:%s",
                  (double)ms, call_ms,
                  ms / 1000 <= call_ms ? " That is about a thousand times too long: "
                                         "cudaEventElapsedTime already gives milliseconds, store "
                                         "them as they are."
                                       : " Store what cudaEventElapsedTime gives, as it is.",
                  trace_summary());
}

COURSE_TEST(the_device_that_was_current_is_current_again, 2)
{
    /* Each way with the receiving GPU current: code that leaves the sender current shows. */
    for (int from = 0; from < 2; from++) {
        peer_case c = make_case(from, SMALL_BYTES);
        const cudaError_t err = run_case(&c, c.dst_device);
        const int after = harness_current_device();
        ck_assert_msg(after == c.dst_device,
                      "GPU %d was current when timed_peer_copy was called to copy from GPU %d, "
                      "and GPU %d when it returned%s: the caller's next cudaMalloc or kernel "
                      "would go to the wrong GPU. Remember the current device (cudaGetDevice) at "
                      "the start and make it current again (cudaSetDevice) before returning. The "
                      "calls:%s",
                      c.dst_device, c.src_device, after,
                      err == cudaSuccess ? "" : " (with an error)", trace_summary());
        expect_success(err, &c, c.dst_device);
    }
}

COURSE_TEST(the_stream_and_the_events_are_destroyed, 1)
{
    peer_case c = make_case(1, SMALL_BYTES);
    const cudaError_t err = run_case(&c, 0);
    expect_everything_released("timed_peer_copy");
    expect_success(err, &c, 0);
}

COURSE_TEST(errors_are_returned_and_the_device_that_was_current_restored, 3)
{
    /* Each run from the receiving GPU: a path that returns with the sender current shows. */
    peer_case c = make_case(0, SMALL_BYTES);
    expect_every_failure_handled_on_device("timed_peer_copy", copy_case, &c, c.dst_device, false);
}

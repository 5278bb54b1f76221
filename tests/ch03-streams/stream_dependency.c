/* stream_dependency.c - tests for exercises/ch03-streams/stream_dependency.c
 * (copy_through_two_streams).
 *
 * The test's two streams are non-blocking, so nothing but the learner's code orders them. It
 * holds the producer up before its copy (trace_delay_async_copies), so that a consumer that
 * does not wait copies d_buffer back while it still holds the test's poison, every time. The
 * trace shows the rest, on any runtime: which event the consumer waited for, where it was
 * recorded, and whether the host waited instead.
 */
#include "harness.h"
#include "stream_dependency.h"

#include <string.h>

COURSE_EXERCISE(
    "A dependency without the host",
    "The consumer's copy must not start before the producer's is done, and the host must wait "
    "for neither (section 3.5). An event recorded on one stream can be waited for by another "
    "stream, on the GPU.\n\n"
    "cudaEvent_t copied; cudaEventCreate(&copied); cudaMemcpyAsync(d_buffer, h_in, bytes, "
    "cudaMemcpyHostToDevice, producer); cudaEventRecord(copied, producer) marks the point after "
    "the copy; cudaStreamWaitEvent(consumer, copied, 0) holds the consumer there, on the GPU; "
    "then cudaMemcpyAsync(h_out, d_buffer, bytes, cudaMemcpyDeviceToHost, consumer); "
    "cudaEventDestroy(copied). No cudaDeviceSynchronize or cudaStreamSynchronize: the host "
    "never waits.");
COURSE_EXERCISE_WORK_QUEUES(2); /* the producer's stream and the consumer's */

enum { N = 1 << 20 }; /* 4 MiB */
#define BYTES ((size_t)N * sizeof(float))
#define DELAY_MS 30.0 /* how long the test holds the producer up before its copy */

typedef struct two_streams {
    float *h_in, *h_out, *d_buffer;
    cudaStream_t producer, consumer;
} two_streams;

static two_streams make_two_streams(void)
{
    two_streams s;
    s.h_in = harness_pinned_alloc(BYTES);
    fill_floats(s.h_in, N);
    s.h_out = harness_pinned_alloc(BYTES);
    s.d_buffer =
        harness_device_alloc(BYTES); /* poisoned: what a consumer that did not wait reads */
    /* The worker's streams, as the caller's; given back when the test ends. */
    s.producer = harness_stream_create(cudaStreamNonBlocking);
    s.consumer = harness_stream_create(cudaStreamNonBlocking);
    return s;
}

static cudaError_t run_copy(void *context)
{
    two_streams *s = context;
    cudaError_t err =
        copy_through_two_streams(s->h_in, s->d_buffer, s->h_out, N, s->producer, s->consumer);
    harness_synchronize_untraced(); /* the caller's wait, before it reads h_out */
    return err;
}

/* Runs it under the trace, the producer held up before its copy, and waits for both streams. */
static void run_delayed(two_streams *s)
{
    trace_start();
    trace_stop();
    trace_delay_async_copies(cudaMemcpyHostToDevice, DELAY_MS);
    cudaError_t err;
    TRACED_RUN(err = run_copy(s));
    ck_assert_msg(err == cudaSuccess,
                  "copy_through_two_streams returned %s. The calls it made were:%s",
                  error_text(err), trace_summary());
}

COURSE_TEST(the_consumer_copies_back_what_the_producer_copied_up, 3)
{
    two_streams s = make_two_streams();
    run_delayed(&s);
    if (holds_only_poison(s.h_out, BYTES) && trace_count_of(TRACED_cudaMemcpyAsync) >= 2)
        ck_abort_msg("h_out holds the test's poison, which d_buffer held before the producer's "
                     "copy landed: the consumer copied d_buffer back before the producer had "
                     "filled it (the test held the producer up %g ms, as a busy GPU would). "
                     "Record an event on the producer after its copy and make the consumer wait "
                     "for it with cudaStreamWaitEvent. The calls:%s",
                     DELAY_MS, trace_summary());
    expect_floats_arrived(s.h_out, s.h_in, N, "h_out, after the consumer's copy");
}

/* The positions of the producer's copy up and of the consumer's copy back in the trace. */
typedef struct copies {
    size_t up, back;
} copies;

static copies find_copies(const two_streams *s)
{
    copies c = {SIZE_MAX, SIZE_MAX};
    for (size_t i = 0; i < trace_count(); i++) {
        const traced_call *call = trace_get(i);
        if (call->function != TRACED_cudaMemcpyAsync)
            continue;
        if (call->dst == s->d_buffer && c.up == SIZE_MAX)
            c.up = i;
        else if (call->src == s->d_buffer && c.back == SIZE_MAX)
            c.back = i;
    }
    ck_assert_msg(c.up != SIZE_MAX && c.back != SIZE_MAX,
                  "copy_through_two_streams made no cudaMemcpyAsync %s d_buffer. The calls:%s",
                  c.up == SIZE_MAX ? "into" : "out of", trace_summary());
    ck_assert_msg(trace_get(c.up)->stream == s->producer,
                  "the copy up went to %s, not to the producer stream. The calls:%s",
                  trace_get(c.up)->stream == s->consumer ? "the consumer" : "another stream",
                  trace_summary());
    ck_assert_msg(trace_get(c.back)->stream == s->consumer,
                  "the copy back went to %s, not to the consumer stream. The calls:%s",
                  trace_get(c.back)->stream == s->producer ? "the producer" : "another stream",
                  trace_summary());
    ck_assert_msg(c.up < c.back, "the copy back was queued before the copy up. The calls:%s",
                  trace_summary());
    return c;
}

COURSE_TEST(the_consumer_waits_for_an_event_recorded_after_the_producers_copy, 3)
{
    two_streams s = make_two_streams();
    run_delayed(&s);
    copies c = find_copies(&s);
    const traced_call *record_too_early = NULL;
    for (size_t i = c.up + 1; i < c.back; i++) {
        const traced_call *wait = trace_get(i);
        if (wait->function != TRACED_cudaStreamWaitEvent || wait->stream != s.consumer ||
            wait->result != cudaSuccess)
            continue;
        const traced_call *record = trace_last_on_event(TRACED_cudaEventRecord, wait->event, i);
        if (record != NULL && record->stream == s.producer && trace_position(record) > c.up)
            return;
        if (record != NULL && record->stream == s.producer)
            record_too_early = record;
    }
    ck_assert_msg(record_too_early == NULL,
                  "the consumer waits for an event recorded on the producer (call %zu) before "
                  "the producer's copy (call %zu) was queued: the event marks the point before "
                  "the copy, so the consumer can go on while the copy still runs. Record the "
                  "event after queuing the copy. The calls:%s",
                  trace_position(record_too_early) + 1, c.up + 1, trace_summary());
    const traced_call *host_wait = trace_host_wait_between(c.up, c.back);
    ck_abort_msg("between the producer's copy (call %zu) and the consumer's (call %zu), nothing "
                 "makes the consumer stream wait for the producer: no cudaStreamWaitEvent on "
                 "the consumer for an event recorded on the producer after its copy.%s The "
                 "calls:%s",
                 c.up + 1, c.back + 1,
                 host_wait != NULL ? " The host waited instead, which orders the copies but "
                                     "stops the CPU (see the test on the host not waiting)."
                                   : "",
                 trace_summary());
}

COURSE_TEST(the_host_does_not_wait_between_the_two_copies, 2)
{
    two_streams s = make_two_streams();
    run_delayed(&s);
    copies c = find_copies(&s);
    const traced_call *host_wait = trace_host_wait_between(c.up, c.back);
    ck_assert_msg(host_wait == NULL,
                  "the host waited for the GPU (%s, call %zu) between the producer's copy "
                  "(call %zu) and the consumer's (call %zu): it orders the two copies, but the "
                  "CPU sits idle until the copy up is done, and cannot queue anything else "
                  "meanwhile. cudaStreamWaitEvent(consumer, event, 0) makes the consumer wait "
                  "on the GPU and returns at once. The calls:%s",
                  traced_function_name(host_wait->function), trace_position(host_wait) + 1,
                  c.up + 1, c.back + 1, trace_summary());
}

COURSE_TEST(the_event_is_destroyed, 1)
{
    two_streams s = make_two_streams();
    run_delayed(&s);
    expect_everything_released("copy_through_two_streams");
}

COURSE_TEST(errors_are_returned_and_the_event_still_destroyed, 2)
{
    two_streams s = make_two_streams();
    expect_every_failure_handled("copy_through_two_streams", run_copy, &s);
}

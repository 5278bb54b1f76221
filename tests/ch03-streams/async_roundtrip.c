/* async_roundtrip.c - tests for exercises/ch03-streams/async_roundtrip.c (async_roundtrip).
 *
 * On a GPU the copies really are asynchronous, and the test holds the learner's stream up
 * (trace_delay_async_copies) so that code that returns before waiting for it leaves h_out
 * holding the test's poison, every time, instead of winning the race by luck. A runtime whose
 * streams run in call order cannot show that, so the trace is read as well: it shows which
 * stream each copy went to and whether anything waited for that stream.
 */
#include "async_roundtrip.h"
#include "harness.h"

#include <stdlib.h>
#include <string.h>

COURSE_EXERCISE(
    "Async round trip on a stream of one's own",
    "The round trip of chapter 1 again, with asynchronous copies on a stream of your own "
    "(section 3.1). The calls return before the copies are done: when may the host read h_out? "
    "And what becomes of the stream at the end, on every path?\n\n"
    "cudaStream_t stream; cudaStreamCreate(&stream); then cudaMemcpyAsync(d_buffer, h_in, bytes, "
    "cudaMemcpyHostToDevice, stream) and cudaMemcpyAsync(h_out, d_buffer, bytes, "
    "cudaMemcpyDeviceToHost, stream): both only queue the copy and return. "
    "cudaStreamSynchronize(stream) waits until the stream has done them; only then does h_out "
    "hold the floats. cudaStreamDestroy(stream) at the end, on the error paths too.");
COURSE_EXERCISE_WORK_QUEUES(1);

enum { N = 1 << 20 }; /* 4 MiB */
#define BYTES ((size_t)N * sizeof(float))
#define DELAY_MS 20.0 /* how long the test holds the stream up before each copy */

typedef struct roundtrip {
    float *h_in, *h_out, *d_buffer;
} roundtrip;

static roundtrip make_roundtrip(void)
{
    roundtrip r;
    r.h_in = harness_pinned_alloc(BYTES);
    fill_floats(r.h_in, N);
    r.h_out = harness_pinned_alloc(BYTES);
    r.d_buffer = harness_device_alloc(BYTES);
    return r;
}

static cudaError_t run_async_roundtrip(void *context)
{
    roundtrip *r = context;
    return async_roundtrip(r->h_in, r->h_out, r->d_buffer, N);
}

/* Runs async_roundtrip under the trace, its stream held up before each copy. What h_out held
 * the moment it returned goes to *h_seen; the test then waits for whatever it left queued. */
static cudaError_t run_delayed(roundtrip *r, float **h_seen)
{
    trace_start();
    trace_stop();
    trace_delay_async_copies(cudaMemcpyDefault, DELAY_MS);
    cudaError_t err;
    TRACED_RUN(err = run_async_roundtrip(r));
    *h_seen = harness_private_alloc(BYTES);
    memcpy(*h_seen, r->h_out, BYTES);
    harness_synchronize_untraced(); /* nothing may still write into the test's buffers */
    return err;
}

static void expect_success(cudaError_t err)
{
    ck_assert_msg(err == cudaSuccess, "async_roundtrip returned %s. The calls it made were:%s",
                  error_text(err), trace_summary());
}

COURSE_TEST(the_floats_are_back_when_it_returns, 3)
{
    roundtrip r = make_roundtrip();
    float *h_seen;
    expect_success(run_delayed(&r, &h_seen));
    if (holds_only_poison(h_seen, BYTES) && !holds_only_poison(r.h_out, BYTES))
        ck_abort_msg("when async_roundtrip returned, h_out still held the test's poison; the "
                     "floats arrived later. cudaMemcpyAsync only queues a copy (the test held "
                     "your stream up %g ms before each one, as a busy GPU would): wait for the "
                     "stream with cudaStreamSynchronize(stream) before returning. The calls:%s",
                     DELAY_MS, trace_summary());
    expect_floats_arrived(h_seen, r.h_in, N, "h_out, when async_roundtrip returned");
}

/* The two copies: both cudaMemcpyAsync, up then back, n floats each, on one stream of its own. */
COURSE_TEST(both_copies_go_to_a_stream_it_created, 2)
{
    roundtrip r = make_roundtrip();
    float *h_seen;
    expect_success(run_delayed(&r, &h_seen));
    ck_assert_msg(trace_count_of(TRACED_cudaMemcpy) == 0,
                  "async_roundtrip called cudaMemcpy, which waits for the copy and takes no "
                  "stream: queue both copies with cudaMemcpyAsync on your stream. The calls:%s",
                  trace_summary());
    ck_assert_msg(trace_count_of(TRACED_cudaMemcpyAsync) == 2,
                  "async_roundtrip made %zu cudaMemcpyAsync calls; one up and one back are "
                  "enough. The calls:%s",
                  trace_count_of(TRACED_cudaMemcpyAsync), trace_summary());
    const traced_call *up = trace_nth(TRACED_cudaMemcpyAsync, 1);
    const traced_call *back = trace_nth(TRACED_cudaMemcpyAsync, 2);
    ck_assert_msg(up->dst == r.d_buffer && up->src == r.h_in && back->dst == r.h_out &&
                      back->src == r.d_buffer,
                  "the first copy goes from h_in to d_buffer, the second from d_buffer to h_out. "
                  "The calls:%s",
                  trace_summary());
    ck_assert_msg(up->bytes == BYTES && back->bytes == BYTES,
                  "the copies moved %zu and %zu bytes for %d floats; each moves n * sizeof(float) "
                  "= %zu bytes",
                  up->bytes, back->bytes, N, BYTES);
    ck_assert_msg(trace_count_acquired(RESOURCE_STREAM) >= 1,
                  "async_roundtrip created no stream; create one with cudaStreamCreate and queue "
                  "the copies on it. The calls:%s",
                  trace_summary());
    ck_assert_msg(up->stream != NULL && back->stream != NULL,
                  "the %s went to the legacy default stream (0), not to the stream "
                  "async_roundtrip created: pass your stream as cudaMemcpyAsync's last argument. "
                  "The calls:%s",
                  up->stream == NULL ? "copy up" : "copy back", trace_summary());
    ck_assert_msg(up->stream == back->stream,
                  "the two copies went to different streams, so nothing orders them: the copy "
                  "back could read d_buffer before the copy up has filled it. Queue both on one "
                  "stream. The calls:%s",
                  trace_summary());
    bool created_here = false;
    for (size_t i = 0; i < trace_position(up); i++)
        created_here |= traced_function_resource(trace_get(i)->function) == RESOURCE_STREAM &&
                        traced_function_role(trace_get(i)->function) == ROLE_ACQUIRE &&
                        trace_get(i)->result == cudaSuccess && trace_get(i)->stream == up->stream;
    ck_assert_msg(created_here,
                  "the copies went to a stream that async_roundtrip did not create before them "
                  "(cudaStreamPerThread, say): create one of its own. The calls:%s",
                  trace_summary());
}

COURSE_TEST(it_waits_for_its_stream_before_returning, 2)
{
    roundtrip r = make_roundtrip();
    float *h_seen;
    expect_success(run_delayed(&r, &h_seen));
    const traced_call *back = trace_nth(TRACED_cudaMemcpyAsync, 2);
    ck_assert_msg(back != NULL,
                  "async_roundtrip made fewer than two cudaMemcpyAsync calls. The "
                  "calls:%s",
                  trace_summary());
    if (trace_wait_for_stream(back->stream, trace_position(back)) != NULL)
        return;
    for (size_t i = trace_position(back) + 1; i < trace_count(); i++) {
        const traced_call *call = trace_get(i);
        if (call->function != TRACED_cudaStreamSynchronize || call->stream == back->stream)
            continue;
        if (call->stream == NULL && trace_stream_is_non_blocking(back->stream))
            ck_abort_msg("async_roundtrip synchronised the legacy default stream (0), but its "
                         "copies were on a stream created with cudaStreamNonBlocking, which the "
                         "default stream does not wait for: h_out may still be empty. Synchronise "
                         "the stream the copies are on. The calls:%s",
                         trace_summary());
        ck_abort_msg("async_roundtrip synchronised another stream than the one its copies are "
                     "on, which does not wait for them. Synchronise the stream the copies are "
                     "on. The calls:%s",
                     trace_summary());
    }
    ck_abort_msg("async_roundtrip returned without waiting for its stream after the copy back: "
                 "cudaMemcpyAsync only queues the copy, so h_out may not hold the floats yet. "
                 "Call cudaStreamSynchronize(stream) before returning (or before destroying the "
                 "stream: cudaStreamDestroy does not wait either). The calls:%s",
                 trace_summary());
}

COURSE_TEST(the_stream_is_destroyed, 1)
{
    roundtrip r = make_roundtrip();
    float *h_seen;
    expect_success(run_delayed(&r, &h_seen));
    expect_everything_released("async_roundtrip");
}

COURSE_TEST(errors_are_returned_and_the_stream_still_destroyed, 2)
{
    roundtrip r = make_roundtrip();
    expect_every_failure_handled_and_waited_for("async_roundtrip", run_async_roundtrip, &r);
    harness_synchronize_untraced();
}

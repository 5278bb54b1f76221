/* time_copy.c - tests for exercises/ch01-memory/time_copy.c (time_copy_ms). */
#include "harness.h"
#include "time_copy.h"
#include "units.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

COURSE_EXERCISE(
    "Time a copy with CUDA events",
    "Two CUDA events around the copy, on the stream the copy goes to (section 1.5). Recording "
    "an event only queues it: what must happen before the time between the two can be read? And "
    "when a step fails, which events must still be destroyed?\n\n"
    "cudaEvent_t start, stop; cudaEventCreate(&start); cudaEventCreate(&stop); "
    "cudaEventRecord(start, 0); cudaMemcpy(dst, src, bytes, kind); cudaEventRecord(stop, 0); "
    "cudaEventSynchronize(stop); cudaEventElapsedTime(elapsed_ms, start, stop); then "
    "cudaEventDestroy both. Recording only queues an event: the GPU stamps it when it gets "
    "there, so wait for stop before reading the time. Keep the first error, skip the steps "
    "after it, and destroy the events you created on every path.");
COURSE_EXERCISE_WORK_QUEUES(1);

enum { SMALL_FLOATS = 1 << 18 }; /* 1 MiB */
#define SMALL_BYTES ((size_t)SMALL_FLOATS * sizeof(float))
#define UNSET_MS -1.0f /* the test's poison for *elapsed_ms */

typedef struct small_copy {
    float *h_src, *d_dst;
    float *elapsed_ms; /* where the learner's code stores its time: shared with it */
} small_copy;

static small_copy make_small_copy(void)
{
    small_copy s;
    s.h_src = harness_host_alloc(SMALL_BYTES);
    fill_floats(s.h_src, SMALL_FLOATS);
    s.d_dst = harness_device_alloc(SMALL_BYTES);
    s.elapsed_ms = harness_host_alloc(sizeof *s.elapsed_ms);
    *s.elapsed_ms = UNSET_MS;
    return s;
}

static cudaError_t time_small_copy(void *context)
{
    small_copy *s = context;
    return time_copy_ms(s->d_dst, s->h_src, SMALL_BYTES, cudaMemcpyHostToDevice, s->elapsed_ms);
}

static cudaError_t run_small_copy(small_copy *s)
{
    cudaError_t err;
    trace_start();
    trace_stop();
    TRACED_RUN(err = time_small_copy(s));
    return err;
}

static const char *not_ready_note(cudaError_t err)
{
    return err == cudaErrorNotReady
               ? " cudaEventElapsedTime says cudaErrorNotReady when the stop event has not "
                 "completed yet: wait for it with cudaEventSynchronize(stop) first."
               : "";
}

static void expect_success(cudaError_t err, bool traced)
{
    ck_assert_msg(err == cudaSuccess, "time_copy_ms returned %s.%s%s%s", error_text(err),
                  not_ready_note(err), traced ? " The calls it made were:" : "",
                  traced ? trace_summary() : "");
}

COURSE_TEST(the_copy_arrives_and_its_time_is_positive, 2)
{
    small_copy s = make_small_copy();
    expect_success(run_small_copy(&s), true);
    const float elapsed_ms = *s.elapsed_ms;
    float *h_back = harness_private_alloc(SMALL_BYTES);
    harness_copy(h_back, s.d_dst, SMALL_BYTES, cudaMemcpyDeviceToHost);
    expect_floats_arrived(h_back, s.h_src, SMALL_FLOATS, "the copy (read back by the test)");
    ck_assert_msg(elapsed_ms != UNSET_MS,
                  "time_copy_ms returned cudaSuccess but stored no time: *elapsed_ms still "
                  "holds the test's %g. Pass elapsed_ms to cudaEventElapsedTime",
                  (double)UNSET_MS);
    ck_assert_msg(isfinite(elapsed_ms) && elapsed_ms > 0,
                  "time_copy_ms stored %g ms for copying 1 MiB; a copy takes some time, so its "
                  "time is positive",
                  (double)elapsed_ms);
}

/* Where the parts of the measurement sit in the trace. */
typedef struct timing_trace {
    size_t copy, start_record, stop_record, elapsed; /* 0-based positions */
    cudaEvent_t stop;
} timing_trace;

static timing_trace read_timing_trace(void)
{
    timing_trace t;
    ck_assert_msg(trace_count_of(TRACED_cudaEventRecord) > 0 ||
                      trace_count_of(TRACED_cudaEventElapsedTime) > 0,
                  "time_copy_ms recorded no CUDA events: it timed the copy some other way, "
                  "probably with the host clock, which measures how long the CPU waited rather "
                  "than what the GPU did. Time it with CUDA events: cudaEventRecord(start, 0) "
                  "before the copy, cudaEventRecord(stop, 0) after it. The calls:%s",
                  trace_summary());
    ck_assert_msg(trace_count_of(TRACED_cudaMemcpy) == 1,
                  "time_copy_ms made %zu cudaMemcpy calls; it times exactly one copy. The "
                  "calls:%s",
                  trace_count_of(TRACED_cudaMemcpy), trace_summary());
    t.copy = trace_position(trace_nth(TRACED_cudaMemcpy, 1));

    const traced_call *elapsed = trace_nth(TRACED_cudaEventElapsedTime, 1);
    ck_assert_msg(elapsed != NULL,
                  "time_copy_ms never called cudaEventElapsedTime, which turns two recorded "
                  "events into milliseconds. The calls:%s",
                  trace_summary());
    t.elapsed = trace_position(elapsed);
    t.stop = elapsed->end_event;
    ck_assert_msg(elapsed->event != elapsed->end_event,
                  "time_copy_ms passed the same event to cudaEventElapsedTime as start and as "
                  "stop: use two events, one recorded before the copy and one after it");

    const traced_call *start_record =
        trace_last_on_event(TRACED_cudaEventRecord, elapsed->event, t.elapsed);
    const traced_call *stop_record =
        trace_last_on_event(TRACED_cudaEventRecord, elapsed->end_event, t.elapsed);
    ck_assert_msg(start_record != NULL && stop_record != NULL,
                  "the %s event given to cudaEventElapsedTime was never recorded before it: "
                  "record both events with cudaEventRecord. The calls:%s",
                  start_record == NULL ? "start" : "stop", trace_summary());
    t.start_record = trace_position(start_record);
    t.stop_record = trace_position(stop_record);

    ck_assert_msg(!(t.start_record > t.copy && t.stop_record < t.copy),
                  "the events are passed to cudaEventElapsedTime the wrong way round: it takes "
                  "the earlier one, start, first: cudaEventElapsedTime(elapsed_ms, start, stop)");
    ck_assert_msg(t.stop_record > t.copy,
                  "the stop event was recorded before the copy (call %zu, the copy is call "
                  "%zu): record it after cudaMemcpy, so that the copy lies between the two "
                  "events; as it is they time nothing. The calls:%s",
                  t.stop_record + 1, t.copy + 1, trace_summary());
    ck_assert_msg(t.start_record < t.copy,
                  "the start event was recorded after the copy (call %zu, the copy is call "
                  "%zu): record it just before cudaMemcpy, so that the copy lies between the "
                  "two events. The calls:%s",
                  t.start_record + 1, t.copy + 1, trace_summary());
    return t;
}

COURSE_TEST(the_copy_is_timed_between_two_recorded_events, 4)
{
    small_copy s = make_small_copy();
    run_small_copy(&s);
    read_timing_trace();
}

COURSE_TEST(the_stop_event_is_waited_for_before_the_elapsed_time_is_read, 3)
{
    small_copy s = make_small_copy();
    run_small_copy(&s);
    timing_trace t = read_timing_trace();
    bool waited = false, waited_for_start = false;
    for (size_t i = t.stop_record + 1; i < t.elapsed; i++) {
        const traced_call *call = trace_get(i);
        if (call->function == TRACED_cudaEventSynchronize && call->event == t.stop)
            waited = true;
        else if (call->function == TRACED_cudaEventSynchronize)
            waited_for_start = true;
        else if (call->function == TRACED_cudaDeviceSynchronize ||
                 call->function == TRACED_cudaStreamSynchronize)
            waited = true; /* waits for everything queued, the stop event included */
    }
    ck_assert_msg(waited || !waited_for_start,
                  "time_copy_ms waited for the start event, which the GPU passed before the "
                  "copy: wait for the stop event, cudaEventSynchronize(stop). The calls:%s",
                  trace_summary());
    ck_assert_msg(waited,
                  "time_copy_ms read the elapsed time without waiting for the stop event: "
                  "cudaEventRecord only queues the event, and until the GPU reaches it there "
                  "is no time to read. cudaEventElapsedTime then returns cudaErrorNotReady, or "
                  "a time if the copy happened to finish first, so the code works by luck. "
                  "Call cudaEventSynchronize(stop) before cudaEventElapsedTime. The calls:%s",
                  trace_summary());
}

COURSE_TEST(both_events_are_destroyed, 2)
{
    small_copy s = make_small_copy();
    run_small_copy(&s);
    size_t created = trace_count_acquired(RESOURCE_EVENT); /* with or without flags */
    ck_assert_msg(created >= 2,
                  "time_copy_ms created %zu event%s; it needs two, start and stop. The calls:%s",
                  created, created == 1 ? "" : "s", trace_summary());
    expect_everything_released("time_copy_ms");
}

/* What a learner's time, as a multiple of the test's, suggests. */
static const char *ratio_note(double ratio)
{
    if (ratio > 0.0005 && ratio < 0.002)
        return " That is about a thousandth: cudaEventElapsedTime already gives milliseconds, "
               "store them as they are.";
    if (ratio < 0.1)
        return " That is hardly any time: the copy does not lie between the two events. "
               "Record start just before cudaMemcpy and stop just after it.";
    if (ratio > 500 && ratio < 2000)
        return " That is about a thousand times: cudaEventElapsedTime already gives "
               "milliseconds, store them as they are.";
    if (ratio > 2)
        return " Something besides the copy lies between the two events.";
    return "";
}

COURSE_TIMED_TEST(the_time_agrees_with_the_tests_own_event_measurement, 5)
{
    /* 64 MiB: about a millisecond on PCIe 5, a thousand times the events' resolution, and
     * cheap to pin, since this test has the GPU to itself while it runs. */
    const size_t bytes = (size_t)64 << 20;
    void *h_src = harness_pinned_alloc(bytes);
    fill_bytes(h_src, bytes);
    void *d_dst = harness_device_alloc(bytes);
    float *ms = harness_host_alloc(sizeof *ms);
    harness_copy(d_dst, h_src, bytes, cudaMemcpyHostToDevice); /* warm-up */

    /* Interleaved, so a burst of noise on a shared machine hits both sides alike; every copy
     * the learner's code times is checked. */
    enum { ROUNDS = 3 };
    double test_ms[ROUNDS], learner_ms[ROUNDS];
    harness_gpu_alone_begin();
    for (int r = 0; r < ROUNDS; r++) {
        test_ms[r] = harness_time_copy_ms(d_dst, h_src, bytes, cudaMemcpyHostToDevice);
        harness_spots spots;
        harness_spots_poison(&spots, d_dst, bytes);
        *ms = UNSET_MS;
        expect_success(time_copy_ms(d_dst, h_src, bytes, cudaMemcpyHostToDevice, ms), false);
        learner_ms[r] = *ms;
        harness_spots_expect(&spots, h_src, "time_copy_ms(64 MiB)");
    }
    harness_gpu_alone_end();
    const double theirs = median_of(learner_ms, ROUNDS), ours = median_of(test_ms, ROUNDS);
    ck_assert_msg(ours > 0, "the test's own measurement gave %g ms: the test needs fixing", ours);
    const double ratio = theirs / ours;
    ck_assert_msg(ratio >= 0.5 && ratio <= 2.0,
                  "time_copy_ms measured %.4g ms (the median of %d runs) for a 64 MiB copy from "
                  "pinned host memory to the device, where the test's own CUDA events measured "
                  "%.4g ms: %.3g times as long.%s",
                  theirs, ROUNDS, ours, ratio, ratio_note(ratio));
}

COURSE_TEST(an_error_from_any_call_is_returned_and_the_events_still_destroyed, 4)
{
    small_copy s = make_small_copy();
    expect_every_failure_handled("time_copy_ms", time_small_copy, &s);
}

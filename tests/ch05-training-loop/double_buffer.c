/* double_buffer.c - tests for exercises/ch05-training-loop/double_buffer.c (double_buffer_train).
 *
 * Each batch's sum is compared with the host's checksum of that batch's floats, and where it is
 * wrong, with every other batch's: a sum of a later batch means a copy overwrote the buffer
 * before its step had read it, a sum of an earlier one (or of nothing the test sent) that the
 * step read the buffer before its copy had ended. So that a missing wait shows every time, not
 * when the GPU happens to be slow, the tests hold the copies up (trace_delay_async_copies) or
 * the steps' checksums (trace_delay_kernels). Whether the copies overlap the steps is timed
 * against the test's own copies and steps of the same batches, in the same run.
 */
#include "double_buffer.h"
#include "gpu_work.h"
#include "harness.h"
#include "timing.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

COURSE_EXERCISE(
    "Double buffering",
    "While the GPU steps on batch b, the link is free to bring batch b + 1 up: into a second "
    "device buffer, on a second stream (section 5.4.1). Once copies and steps are on different "
    "streams, what stops a step from reading a buffer that has not arrived, and a copy from "
    "overwriting one that a step still reads?\n\n"
    "cudaMalloc two buffers of n floats; cudaStreamCreate a stream for copies and one for "
    "steps; cudaEventCreate a \"copied\" and a \"stepped\" event per buffer. Batch b uses buffer "
    "b % 2: cudaStreamWaitEvent(copies, stepped[b % 2], 0); cudaMemcpyAsync(buffer, h_batches + "
    "b * n, n * sizeof(float), cudaMemcpyHostToDevice, copies); cudaEventRecord(copied[b % 2], "
    "copies); cudaStreamWaitEvent(steps, copied[b % 2], 0); gpu_work_keep_busy(steps, step_ms); "
    "gpu_work_checksum(steps, buffer, n * sizeof(float), 1, d_sums + b); "
    "cudaEventRecord(stepped[b % 2], steps). No host wait inside the loop; at the end "
    "cudaStreamSynchronize both streams, then destroy and free everything, on the error paths "
    "too.");
COURSE_EXERCISE_WORK_QUEUES(2); /* the copies' stream and the steps' */
COURSE_EXERCISE_TIMED_WITH_ALL_QUEUES;

#define STEP_MS 0.1 /* the untimed tests' steps: short, so that the held-up work decides */
#define HOLD_MS 3.0 /* how long a test holds each copy, or each step's checksum, up */

typedef struct job {
    float *h_batches;
    const float *x; /* what h_batches holds: the test's own copy */
    unsigned long long *d_sums;
    unsigned long long *want; /* each batch's checksum, the test's */
    size_t batches, n;
    double step_ms;
} job;

static job make_job(size_t batches, size_t n, double step_ms)
{
    job r;
    r.batches = batches;
    r.n = n;
    r.step_ms = step_ms;
    r.h_batches = harness_pinned_alloc(batches * n * sizeof(float));
    fill_floats(r.h_batches, batches * n);
    r.x = harness_expected(r.h_batches, batches * n * sizeof(float));
    r.d_sums = harness_device_alloc(batches * sizeof *r.d_sums);
    r.want = harness_private_alloc(batches * sizeof *r.want);
    for (size_t b = 0; b < batches; b++)
        r.want[b] = gpu_work_checksum_host(r.x + b * n, n * sizeof(float), 1);
    return r;
}

static cudaError_t run_train(void *context)
{
    job *r = context;
    return double_buffer_train(r->h_batches, r->batches, r->n, r->step_ms, r->d_sums);
}

/* Runs the loop under the trace, d_sums poisoned, the copies or the steps held up; expects
 * success. */
static void run_held(job *r, harness_hold what)
{
    poison_device(r->d_sums, r->batches * sizeof *r->d_sums);
    harness_hold_next_run(what, HOLD_MS);
    cudaError_t err;
    TRACED_RUN(err = run_train(r));
    harness_synchronize_untraced(); /* what it left queued may not change the sums any more */
    ck_assert_msg(err == cudaSuccess,
                  "double_buffer_train returned %s. What it did, when and where:%s",
                  error_text(err), trace_timeline());
}

/* --- The sums, and what a wrong one says -------------------------------------------------- */

/* The first copy up or checksum whose count is not one batch's bytes; NULL if none. */
static const traced_call *call_of_another_size(const job *r)
{
    for (size_t i = 0; i < trace_count(); i++) {
        const traced_call *call = trace_get(i);
        const bool copy_up =
            call->function == TRACED_cudaMemcpyAsync && call->dst_location == LOCATION_DEVICE;
        if ((copy_up || call->function == TRACED_gpu_work_checksum) &&
            call->bytes != r->n * sizeof(float))
            return call;
    }
    return NULL;
}

/* The batch other than b whose floats give `got`; SIZE_MAX if none. */
static size_t batch_summed(const job *r, size_t b, unsigned long long got)
{
    for (size_t c = 0; c < r->batches; c++)
        if (c != b && r->want[c] == got)
            return c;
    return SIZE_MAX;
}

static void expect_sums(const job *r, harness_hold what, const char *when)
{
    harness_results_compared();
    unsigned long long *got = harness_private_alloc(r->batches * sizeof *got);
    harness_copy(got, r->d_sums, r->batches * sizeof *got, cudaMemcpyDeviceToHost);
    size_t b = 0;
    while (b < r->batches && got[b] == r->want[b])
        b++;
    if (b == r->batches)
        return;
    char where[256];
    snprintf(where, sizeof where,
             "%s (%zu batches of %zu floats), batch %zu's sum is %#llx where the checksum of its "
             "floats is %#llx",
             when, r->batches, r->n, b, got[b], r->want[b]);
    if (holds_only_poison(&got[b], sizeof got[b]))
        ck_abort_msg("%s: it still holds the test's poison, so no step wrote it. Step b writes "
                     "its sum into d_sums + b. What it did, when and where:%s",
                     where, trace_timeline());
    const traced_call *odd = call_of_another_size(r);
    if (odd != NULL)
        ck_abort_msg("%s: %s (call %zu) was given %zu bytes, where a batch is %zu%s. %s's count "
                     "is in bytes: pass n * sizeof(float). What it did, when and where:%s",
                     where, traced_function_name(odd->function), trace_position(odd) + 1,
                     odd->bytes, r->n * sizeof(float),
                     odd->bytes == r->n ? ", n: a quarter of it" : "",
                     traced_function_name(odd->function), trace_timeline());
    const size_t other = batch_summed(r, b, got[b]);
    if (other != SIZE_MAX && other > b)
        ck_abort_msg("%s: it is batch %zu's%s. Batch %zu's copy overwrote the buffer before "
                     "step %zu had read it: a copy into a buffer must wait for the step that "
                     "last read it, with two buffers used in turn (an event recorded after that "
                     "step, cudaStreamWaitEvent on the copies' stream). What it did, when and "
                     "where:%s",
                     where, other, harness_held_words(what, HOLD_MS, "step's checksum"), other, b,
                     trace_timeline());
    ck_abort_msg("%s: it is %s%s. Step %zu read its buffer before its copy had ended: the step "
                 "must wait for that batch's copy (an event recorded after the copy, "
                 "cudaStreamWaitEvent on the steps' stream before the step). What it did, when "
                 "and where:%s",
                 where,
                 other != SIZE_MAX ? "an earlier batch's sum, still in the buffer"
                                   : "no batch's sum, the buffer not yet holding it",
                 harness_held_words(what, HOLD_MS, "step's checksum"), b, trace_timeline());
}

enum { SMALL_N = (1 << 16) + 5, SMALL_BATCHES = 6 }; /* 256 KiB a batch */

COURSE_TEST(every_batch_is_summed_from_its_own_floats, 3)
{
    job r = make_job(SMALL_BATCHES, SMALL_N, STEP_MS);
    run_held(&r, HOLD_NOTHING);
    expect_sums(&r, HOLD_NOTHING, "d_sums");
}

COURSE_TEST(no_step_reads_a_buffer_before_its_copy_has_ended, 2)
{
    job r = make_job(SMALL_BATCHES, SMALL_N, STEP_MS);
    run_held(&r, HOLD_COPIES);
    expect_sums(&r, HOLD_COPIES, "with every copy held up, d_sums");
}

COURSE_TEST(no_copy_overwrites_a_buffer_that_a_step_still_reads, 2)
{
    job r = make_job(SMALL_BATCHES, SMALL_N, STEP_MS);
    run_held(&r, HOLD_KERNELS);
    expect_sums(&r, HOLD_KERNELS, "with every step held up, d_sums");
}

COURSE_TEST(one_batch_or_two_give_the_same_sums, 1)
{
    job one = make_job(1, SMALL_N, STEP_MS);
    run_held(&one, HOLD_KERNELS);
    expect_sums(&one, HOLD_KERNELS, "with 1 batch, d_sums");
    job two = make_job(2, 1, STEP_MS);
    run_held(&two, HOLD_COPIES);
    expect_sums(&two, HOLD_COPIES, "with 2 batches of 1 float, d_sums");
}

COURSE_TEST(every_buffer_stream_and_event_is_given_back, 1)
{
    job r = make_job(SMALL_BATCHES, SMALL_N, STEP_MS);
    run_held(&r, HOLD_NOTHING);
    expect_everything_released("double_buffer_train");
}

COURSE_TEST(errors_are_returned_and_everything_still_given_back, 2)
{
    job r = make_job(3, 1024, STEP_MS);
    expect_every_failure_handled_and_waited_for("double_buffer_train", run_train, &r);
}

/* --- Time ---------------------------------------------------------------------------------
 *
 * 12 batches of 16 MiB. On an H200 a copy of 16 MiB takes about 305 us (55 GB/s); the test
 * makes each step as long (gpu_work_keep_busy for what the checksum, a few microseconds,
 * leaves of the test's own copy time), so that neither stage hides the other. Serial, copy
 * then step, batch after batch, takes their sum: 12 x 2 x 305 us = 7.3 ms. Overlapped, the
 * loop takes its longer stage, 3.7 ms, plus one copy to fill it, the allocations and the
 * host's time to queue the first calls, about 0.6 ms: 1.17 times its longer stage, 1.7 times
 * faster than serial. The targets, 1.4 and 1.3, leave room for a busy host that queues late
 * (as the pipeline's do, chapter 3); a host wait after each batch is serial, 1.0 of it. Each
 * attempt takes about 20 ms of the GPU; a correct loop that misses once gets up to five. */
enum { TIMED_N = 1 << 21, TIMED_BATCHES = 24, ATTEMPTS = 5 };
#define MAX_OF_LONGER_STAGE 1.4
#define MIN_SPEEDUP 1.3

typedef struct timings {
    double copies, steps, serial, theirs;
} timings;

/* The test's own copies, steps, or both in turn, on one stream of its own; tracing is off. */
static double time_own(const job *r, bool copy, bool step, float *d_buffer,
                       unsigned long long *d_sums, cudaStream_t stream)
{
    event_timer timer;
    CUDA_CHECK(event_timer_create(&timer));
    CUDA_CHECK(event_timer_start(&timer, stream));
    for (size_t b = 0; b < r->batches; b++) {
        if (copy)
            CUDA_CHECK(cudaMemcpyAsync(d_buffer, r->h_batches + b * r->n, r->n * sizeof(float),
                                       cudaMemcpyHostToDevice, stream));
        if (step) {
            CUDA_CHECK(gpu_work_keep_busy(stream, r->step_ms));
            CUDA_CHECK(gpu_work_checksum(stream, d_buffer, r->n * sizeof(float), 1, d_sums + b));
        }
    }
    float ms = 0;
    CUDA_CHECK(event_timer_stop(&timer, stream, &ms));
    CUDA_CHECK(event_timer_destroy(&timer));
    return ms;
}

/* Each stage alone, the steps made as long as the copies, then both in turn (serial). */
static void measure_stages(job *r, timings *t, float *d_buffer)
{
    cudaStream_t stream;
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    unsigned long long *d_sums = harness_view(r->d_sums, r->batches * sizeof *d_sums);
    t->copies = time_own(r, true, false, d_buffer, d_sums, stream);
    /* Each step's keep_busy makes up what its checksum leaves of one copy's time, so that the
     * two stages are as long: where one hides the other, overlap saves less. */
    r->step_ms = 0;
    const double checksums = time_own(r, false, true, d_buffer, d_sums, stream);
    r->step_ms = fmin(fmax(t->copies - checksums, 0.0) / (double)r->batches, 50.0);
    t->steps = time_own(r, false, true, d_buffer, d_sums, stream);
    t->serial = time_own(r, true, true, d_buffer, d_sums, stream);
    CUDA_CHECK(cudaStreamDestroy(stream));
}

/* The learner's loop under the trace, timed on the host clock from the call until it returned
 * with every sum in d_sums (they are checked after each timed call), less the time its
 * allocations and releases took (harness_time_traced_run_ms). */
static double time_theirs(job *r)
{
    poison_device(r->d_sums, r->batches * sizeof *r->d_sums);
    cudaError_t err;
    const double ms = harness_time_traced_run_ms(run_train, r, &err);
    unsigned long long *got = harness_private_alloc(r->batches * sizeof *got);
    harness_copy(got, r->d_sums, r->batches * sizeof *got, cudaMemcpyDeviceToHost);
    harness_synchronize_untraced();
    ck_assert_msg(err == cudaSuccess,
                  "double_buffer_train returned %s. What it did, when and where:%s",
                  error_text(err), trace_timeline());
    harness_results_compared();
    for (size_t b = 0; b < r->batches; b++)
        ck_assert_msg(got[b] == r->want[b],
                      "when the timed double_buffer_train returned, batch %zu's sum was %#llx "
                      "where the checksum of its floats is %#llx: every sum must be in d_sums "
                      "when it returns",
                      b, got[b], r->want[b]);
    return ms;
}

static bool fast_enough(const timings *t)
{
    return t->theirs <= MAX_OF_LONGER_STAGE * fmax(t->copies, t->steps) &&
           t->serial >= MIN_SPEEDUP * t->theirs;
}

/* What the trace shows that keeps the copies from overlapping the steps, as a sentence. */
static const char *cause_from_trace(void)
{
    static char cause[400];
    cudaStream_t copies = NULL, steps = NULL;
    size_t waits = 0;
    for (size_t i = 0; i < trace_count(); i++) {
        const traced_call *call = trace_get(i);
        if (call->function == TRACED_cudaMemcpyAsync && copies == NULL)
            copies = call->stream;
        if (call->function == TRACED_gpu_work_checksum && steps == NULL)
            steps = call->stream;
        waits += traced_call_waits_for_the_gpu(call);
    }
    if (trace_count_of(TRACED_cudaMemcpy) > 0)
        return "it copies with cudaMemcpy, which waits for the GPU and takes no stream: queue "
               "the copies with cudaMemcpyAsync";
    if (trace_count_of(TRACED_cudaMemcpyAsync) > 0 && copies == steps &&
        trace_count_of(TRACED_cudaStreamCreate) + trace_count_of(TRACED_cudaStreamCreateWithFlags) <
            2)
        return "its first copy and its first step went to the same stream, and it made fewer "
               "than two streams: one stream runs its copies and steps one after another";
    if (waits > 2) {
        snprintf(cause, sizeof cause,
                 "the host waited for the GPU %zu times (cudaStreamSynchronize, "
                 "cudaEventSynchronize or cudaDeviceSynchronize): a wait for the batch just "
                 "queued lets nothing run beside it. Let events order the streams and wait once, "
                 "at the end",
                 waits);
        return cause;
    }
    return "the calls show none of the usual causes (one stream, a wait after each batch, "
           "cudaMemcpy): see when each was made";
}

COURSE_TIMED_TEST(the_copies_overlap_the_steps_so_the_loop_takes_about_its_longer_stage, 4)
{
    job r = make_job(TIMED_BATCHES, TIMED_N, 0.1);
    float *d_buffer =
        harness_view(harness_device_alloc(TIMED_N * sizeof(float)), TIMED_N * sizeof(float));
    (void)time_theirs(&r); /* warm-up: the first launches load the kernels */
    timings t = {0};
    harness_gpu_alone_begin();
    for (int attempt = 0; attempt < ATTEMPTS; attempt++) {
        measure_stages(&r, &t, d_buffer);
        t.theirs = time_theirs(&r);
        if (fast_enough(&t))
            break;
    }
    harness_gpu_alone_end();
    const double longer = fmax(t.copies, t.steps);
    /* No loop is shorter than its steps' busy time: the steps the test timed, or what they
     * asked for where the GPU ran the test's own longer than asked (by 1.6 times once, on the
     * H200 in make test). */
    const double least = 0.8 * fmin(t.steps, TIMED_BATCHES * r.step_ms);
    ck_assert_msg(t.theirs >= least,
                  "the loop took %.2f ms, less than its %d steps alone (%.2f ms, the test's own; "
                  "%.2f ms of gpu_work_keep_busy asked for): each step is "
                  "gpu_work_keep_busy(steps, step_ms) and then the checksum; leave neither out",
                  t.theirs, TIMED_BATCHES, t.steps, TIMED_BATCHES * r.step_ms);
    if (fast_enough(&t)) {
        harness_note("Your loop took %.2f ms: %.2f times its longer stage (the test's own copies "
                     "alone %.2f ms, steps alone %.2f) and %.2f times faster than serial (%.2f "
                     "ms).",
                     t.theirs, t.theirs / longer, t.copies, t.steps, t.serial / t.theirs, t.serial);
        return;
    }
    ck_abort_msg("%d batches of 8 MiB took %.2f ms in the last of %d attempts: %.2f times the "
                 "longer stage (the test's own copies alone %.2f ms, steps alone %.2f), and "
                 "%.2f times faster than serial (%.2f ms, each batch copied then stepped before "
                 "the next). It should be at most %.1f times the longer stage and at least %.1f "
                 "times faster than serial: the copies did not overlap the steps. What keeps "
                 "them apart: %s. Your calls, as they returned on the host clock:%s",
                 TIMED_BATCHES, t.theirs, ATTEMPTS, t.theirs / longer, t.copies, t.steps,
                 t.serial / t.theirs, t.serial, MAX_OF_LONGER_STAGE, MIN_SPEEDUP,
                 cause_from_trace(), trace_timeline());
}

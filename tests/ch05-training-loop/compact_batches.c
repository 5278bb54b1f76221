/* compact_batches.c - tests for exercises/ch05-training-loop/compact_batches.c (compact_batches).
 *
 * The floats are compared bit for bit with the host's own conversion, in two roundings; a
 * wrong one is compared with the usual wrong ones (scale and offset swapped, one rounding,
 * another batch's bytes). What crossed the link is read from the trace: the bytes, once, not
 * four times as many as floats. So that a conversion that does not wait for its copy, or a
 * copy that overwrites bytes still being converted, shows every time, the tests hold the copies
 * up (trace_delay_async_copies) or the conversions (trace_delay_kernels). Whether sending bytes
 * beats sending floats is timed against the test's own copy of the floats, in the same run.
 */
#include "compact_batches.h"
#include "gpu_work.h"
#include "harness.h"
#include "timing.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

COURSE_EXERCISE(
    "Send the compact form",
    "A pixel is one byte and its float four: convert on the host, and four times the bytes "
    "cross the link. Send the bytes and convert them where they land (section 5.4.3). Which "
    "buffer do the bytes land in, and what keeps its conversion from reading it too early, or "
    "the next copy from overwriting it too soon?\n\n"
    "cudaMalloc(&staging, n) and cudaStreamCreate(&stream). For batch b, on that one stream: "
    "cudaMemcpyAsync(staging, h_bytes + b * n, n, cudaMemcpyHostToDevice, stream), then "
    "gpu_work_bytes_to_floats(stream, d_floats + b * n, staging, n, PIXEL_SCALE, "
    "PIXEL_OFFSET): n counts bytes and floats alike, one float per byte. Stream order keeps "
    "each conversion after its copy and the next copy after it. Then cudaStreamSynchronize, "
    "cudaStreamDestroy and cudaFree, on the error paths too.");
COURSE_EXERCISE_WORK_QUEUES(1);

#define HOLD_MS 3.0 /* how long a test holds each copy, or each conversion, up */

typedef struct job {
    unsigned char *h_bytes;
    const unsigned char *x; /* what h_bytes holds: the test's own copy */
    float *d_floats;
    size_t batches, n;
} job;

static job make_job(size_t batches, size_t n)
{
    job j;
    j.batches = batches;
    j.n = n;
    j.h_bytes = harness_pinned_alloc(batches * n);
    fill_bytes(j.h_bytes, batches * n);
    j.x = harness_expected(j.h_bytes, batches * n);
    j.d_floats = harness_device_alloc(batches * n * sizeof(float));
    return j;
}

static cudaError_t run_compact(void *context)
{
    job *j = context;
    return compact_batches(j->h_bytes, j->batches, j->n, j->d_floats);
}

/* The host's conversion, as the header gives it: two statements, two roundings. */
static float converted(unsigned char pixel)
{
    const float product = (float)pixel * PIXEL_SCALE;
    return product + PIXEL_OFFSET;
}

static bool same_float(float x, float y)
{
    return memcmp(&x, &y, sizeof x) == 0;
}

/* Runs compact_batches under the trace, d_floats poisoned, copies or conversions held up;
 * expects success. */
static void run_held(job *j, harness_hold what)
{
    poison_device(j->d_floats, j->batches * j->n * sizeof(float));
    harness_hold_next_run(what, HOLD_MS);
    cudaError_t err;
    TRACED_RUN(err = run_compact(j));
    harness_synchronize_untraced(); /* what it left queued may not change the floats any more */
    ck_assert_msg(err == cudaSuccess, "compact_batches returned %s. What it did, when and where:%s",
                  error_text(err), trace_timeline());
}

/* --- The floats, and what a wrong one says ------------------------------------------------ */

/* The batch other than b whose bytes, converted, give `got` at the same place; SIZE_MAX if
 * none. */
static size_t batch_converted(const job *j, size_t b, size_t k, float got)
{
    for (size_t c = 0; c < j->batches; c++)
        if (c != b && same_float(got, converted(j->x[c * j->n + k])))
            return c;
    return SIZE_MAX;
}

/* What the wrong float at element k of batch b says, when it is one of the known mistakes. */
static void diagnose(const job *j, const float *got, size_t b, size_t k, harness_hold what,
                     const char *where)
{
    const size_t i = b * j->n + k;
    const float x = (float)j->x[i];
    const float *batch = got + b * j->n;
    if (holds_only_poison(batch + k, (j->n - k) * sizeof(float)))
        ck_abort_msg("%s: from there to the batch's end the floats still hold the test's poison%s. "
                     "gpu_work_bytes_to_floats's n counts elements, one float for each byte: "
                     "pass n, and d_floats + b * n. What it did, when and where:%s",
                     where, k == 0 ? ", so nothing was converted into it" : "", trace_timeline());
    const float swapped_product = x * PIXEL_OFFSET;
    if (same_float(got[i], swapped_product + PIXEL_SCALE))
        ck_abort_msg("%s: that is pixel * PIXEL_OFFSET + PIXEL_SCALE, the scale and offset "
                     "swapped: the scale multiplies, the offset is added. What it did, when and "
                     "where:%s",
                     where, trace_timeline());
    if (same_float(got[i], fmaf(x, PIXEL_SCALE, PIXEL_OFFSET)))
        ck_abort_msg("%s: that is fmaf(pixel, PIXEL_SCALE, PIXEL_OFFSET), rounded once. The "
                     "conversion rounds after the multiply and again after the add, as "
                     "gpu_work_bytes_to_floats does: convert on the GPU, where the bytes land. "
                     "What it did, when and where:%s",
                     where, trace_timeline());
    const size_t other = batch_converted(j, b, k, got[i]);
    if (other != SIZE_MAX && other > b)
        ck_abort_msg("%s: it is batch %zu's pixel, converted. Batch %zu's copy overwrote the "
                     "staging buffer before batch %zu's conversion had read it%s: a copy into a "
                     "buffer must come after the conversion that reads it, on the same stream or "
                     "after an event recorded behind that conversion. What it did, when and "
                     "where:%s",
                     where, other, other, b, harness_held_words(what, HOLD_MS, "conversion"),
                     trace_timeline());
    ck_abort_msg("%s: it is %s%s. The conversion read the staging buffer before batch %zu's "
                 "copy had ended: it must come after its copy, on the same stream or after an "
                 "event recorded behind the copy (cudaStreamWaitEvent). What it did, when and "
                 "where:%s",
                 where,
                 other != SIZE_MAX ? "an earlier batch's pixel, still in the staging buffer"
                                   : "no pixel of this place, the bytes not yet there",
                 harness_held_words(what, HOLD_MS, "conversion"), b, trace_timeline());
}

static void expect_floats(const job *j, harness_hold what, const char *when)
{
    harness_results_compared();
    const size_t count = j->batches * j->n;
    float *got = harness_private_alloc(count * sizeof(float));
    harness_copy(got, j->d_floats, count * sizeof(float), cudaMemcpyDeviceToHost);
    size_t i = 0;
    while (i < count && same_float(got[i], converted(j->x[i])))
        i++;
    if (i == count)
        return;
    char where[320];
    snprintf(where, sizeof where,
             "%s (%zu batches of %zu pixels), float %zu of batch %zu is %.9g where pixel %u "
             "converted is %.9g",
             when, j->batches, j->n, i % j->n, i / j->n, (double)got[i], (unsigned)j->x[i],
             (double)converted(j->x[i]));
    diagnose(j, got, i / j->n, i % j->n, what, where);
}

/* 3 images of 256 x 256 RGB pixels and a few bytes more: n is odd, and no multiple of the
 * pattern's period, so every batch's bytes differ from every other's. */
enum { SMALL_N = 256 * 256 * 3 + 5, SMALL_BATCHES = 5 };

COURSE_TEST(every_float_has_the_bits_of_the_hosts_conversion, 3)
{
    job j = make_job(SMALL_BATCHES, SMALL_N);
    run_held(&j, HOLD_NOTHING);
    expect_floats(&j, HOLD_NOTHING, "d_floats");
}

/* --- What crossed the link, from the trace --------------------------------------------- */

/* What crossed the link to the device: the copies from host memory, and the host memory that a
 * conversion read in place (mapped pinned memory, which the kernel reads over the link). */
static size_t bytes_sent_to_the_device(void)
{
    size_t sent = 0;
    for (size_t i = 0; i < trace_count(); i++) {
        const traced_call *call = trace_get(i);
        const bool from_host = call->src_location == LOCATION_PINNED_HOST ||
                               call->src_location == LOCATION_PAGEABLE_HOST;
        const bool copied =
            (call->function == TRACED_cudaMemcpy || call->function == TRACED_cudaMemcpyAsync) &&
            call->dst_location == LOCATION_DEVICE;
        if (call->result == cudaSuccess && from_host &&
            (copied || call->function == TRACED_gpu_work_bytes_to_floats))
            sent += call->bytes;
    }
    return sent;
}

COURSE_TEST(only_the_bytes_cross_the_link_not_the_floats, 2)
{
    job j = make_job(SMALL_BATCHES, SMALL_N);
    run_held(&j, HOLD_NOTHING);
    expect_floats(&j, HOLD_NOTHING, "d_floats");
    const size_t sent = bytes_sent_to_the_device(), due = j.batches * j.n;
    ck_assert_msg(sent != 4 * due,
                  "the floats are right, but %zu bytes went from the host to the device, four "
                  "times the %zu bytes of pixels: you sent floats. Send the bytes "
                  "(cudaMemcpyAsync of n bytes a batch) and convert them on the GPU with "
                  "gpu_work_bytes_to_floats. What it did, when and where:%s",
                  sent, due, trace_timeline());
    ck_assert_msg(sent == due,
                  "%zu bytes went from the host to the device where the batches hold %zu "
                  "(%.2f times as many): send each batch's n bytes once. What it did, when and "
                  "where:%s",
                  sent, due, (double)sent / (double)due, trace_timeline());
    ck_assert_msg(trace_count_of(TRACED_gpu_work_bytes_to_floats) > 0,
                  "the floats are right and the bytes went up, but gpu_work_bytes_to_floats was "
                  "never called: convert on the GPU with it. The calls:%s",
                  trace_summary());
}

COURSE_TEST(no_batch_is_converted_before_its_copy_has_ended, 2)
{
    job j = make_job(SMALL_BATCHES, SMALL_N);
    run_held(&j, HOLD_COPIES);
    expect_floats(&j, HOLD_COPIES, "with every copy held up, d_floats");
}

COURSE_TEST(no_copy_overwrites_bytes_that_are_still_being_converted, 2)
{
    job j = make_job(SMALL_BATCHES, SMALL_N);
    run_held(&j, HOLD_KERNELS);
    expect_floats(&j, HOLD_KERNELS, "with every conversion held up, d_floats");
}

COURSE_TEST(one_batch_or_batches_of_one_pixel_convert_as_well, 1)
{
    job one = make_job(1, SMALL_N);
    run_held(&one, HOLD_KERNELS);
    expect_floats(&one, HOLD_KERNELS, "with 1 batch, d_floats");
    job tiny = make_job(3, 1);
    run_held(&tiny, HOLD_COPIES);
    expect_floats(&tiny, HOLD_COPIES, "with 3 batches of 1 pixel, d_floats");
}

COURSE_TEST(the_staging_buffer_and_every_stream_are_given_back, 1)
{
    job j = make_job(SMALL_BATCHES, SMALL_N);
    run_held(&j, HOLD_NOTHING);
    expect_everything_released("compact_batches");
}

COURSE_TEST(errors_are_returned_and_everything_still_given_back, 2)
{
    job j = make_job(3, 4096);
    expect_every_failure_handled_and_waited_for("compact_batches", run_compact, &j);
}

/* --- Time ---------------------------------------------------------------------------------
 *
 * 8 batches of 4 MiB of pixels, 32 MiB, whose floats are 128 MiB. On an H200 the test's own
 * copy of the floats takes about 2.4 ms (55 GB/s); the bytes take 0.6 ms, and converting 32
 * million of them, 32 MiB read and 128 MiB written in device memory at a few TB/s, about 0.06
 * ms more: 0.3 of the floats' copy. With the staging buffer's allocation, the stream and the
 * calls, a loop that sends bytes takes about 0.8 ms, where one that sends floats takes the
 * floats' copy and the host's conversion besides, more than 1. The target, 0.7, leaves room
 * for a busy host. Each attempt takes about 4 ms of the GPU. */
enum { TIMED_N = 4 << 20, TIMED_BATCHES = 8, ATTEMPTS = 3 };
#define MAX_OF_FLOATS 0.7

/* The learner's call on the host clock, until it returned with every float in d_floats; a
 * few of them checked after each timed call. */
static double time_theirs(job *j)
{
    const size_t count = j->batches * j->n;
    poison_device(j->d_floats, count * sizeof(float));
    harness_spots spots;
    harness_spots_poison(&spots, j->d_floats, count * sizeof(float));
    cudaError_t err;
    /* Its work's time, without what allocating and freeing waited for the driver. */
    const double ms = harness_time_traced_run_ms(run_compact, j, &err);
    float got[HARNESS_SPOTS][HARNESS_SPOT_BYTES / sizeof(float)]; /* as it returned */
    for (int k = 0; k < spots.count; k++)
        harness_spot_read(&spots, k, got[k]);
    harness_synchronize_untraced();
    ck_assert_msg(err == cudaSuccess, "compact_batches returned %s. What it did, when and where:%s",
                  error_text(err), trace_timeline());
    harness_results_compared();
    for (int k = 0; k < spots.count; k++) {
        const size_t i = spots.offset[k] / sizeof(float);
        ck_assert_msg(same_float(got[k][0], converted(j->x[i])),
                      "when the timed compact_batches returned, float %zu of d_floats was %.9g "
                      "where pixel %u converted is %.9g: every float must be there when it "
                      "returns (the test checks a few places, chosen afresh, after each call)",
                      i, (double)got[k][0], (unsigned)j->x[i], (double)converted(j->x[i]));
    }
    return ms;
}

/* The test's own bytes up and converted, in one copy and one conversion on a stream of its own,
 * timed with events; tracing is off. */
static double time_own_bytes(const job *j, unsigned char *d_staging, cudaStream_t stream)
{
    const size_t count = j->batches * j->n;
    float *d_floats = harness_view(j->d_floats, count * sizeof(float));
    event_timer timer;
    CUDA_CHECK(event_timer_create(&timer));
    CUDA_CHECK(event_timer_start(&timer, stream));
    CUDA_CHECK(cudaMemcpyAsync(d_staging, j->h_bytes, count, cudaMemcpyHostToDevice, stream));
    CUDA_CHECK(
        gpu_work_bytes_to_floats(stream, d_floats, d_staging, count, PIXEL_SCALE, PIXEL_OFFSET));
    float ms = 0;
    CUDA_CHECK(event_timer_stop(&timer, stream, &ms));
    CUDA_CHECK(event_timer_destroy(&timer));
    return ms;
}

typedef struct timings {
    double floats, own, theirs;
} timings;

/* Where even the test's own bytes and conversion do not beat the floats' copy (a stand-in
 * runtime that converts on the host's CPU), no loop can, and the test cannot judge. */
static bool can_show(const timings *t)
{
    return t->own <= MAX_OF_FLOATS * t->floats;
}

static bool fast_enough(const timings *t)
{
    return t->theirs <= MAX_OF_FLOATS * t->floats;
}

COURSE_TIMED_TEST(sending_the_bytes_and_converting_on_the_gpu_beats_sending_the_floats, 2)
{
    job j = make_job(TIMED_BATCHES, TIMED_N);
    const size_t count = j.batches * j.n;
    float *h_floats = harness_pinned_alloc(count * sizeof(float));
    /* The pixels repeat every 251 bytes (fill_bytes), so their floats every 251 floats. */
    enum { PERIOD = 251 };
    for (size_t i = 0; i < PERIOD; i++)
        h_floats[i] = converted(j.x[i]);
    repeat_period(h_floats, PERIOD * sizeof(float), count * sizeof(float));
    unsigned char *d_staging = harness_view(harness_device_alloc(count), count);
    cudaStream_t stream;
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    (void)time_theirs(&j); /* warm-up: the first launch loads the kernel */
    (void)time_own_bytes(&j, d_staging, stream);
    timings t = {0};
    harness_gpu_alone_begin();
    for (int attempt = 0; attempt < ATTEMPTS; attempt++) {
        t.floats = harness_time_copy_ms(j.d_floats, h_floats, count * sizeof(float),
                                        cudaMemcpyHostToDevice);
        t.own = time_own_bytes(&j, d_staging, stream);
        t.theirs = time_theirs(&j);
        if (!can_show(&t) || fast_enough(&t))
            break;
    }
    harness_gpu_alone_end();
    CUDA_CHECK(cudaStreamDestroy(stream));
    if (!can_show(&t)) {
        harness_note("On this device the test's own bytes and their conversion took %.2f ms, no "
                     "faster than its copy of the floats, %.2f ms (a stand-in runtime that "
                     "converts on the host?), so the test cannot judge what sending bytes saves "
                     "here; yours took %.2f ms.",
                     t.own, t.floats, t.theirs);
        return;
    }
    if (fast_enough(&t)) {
        harness_note("Your batches took %.2f ms: %.2f of the %.2f ms the test's own copy of "
                     "their floats took (its own bytes and conversion: %.2f ms).",
                     t.theirs, t.theirs / t.floats, t.floats, t.own);
        return;
    }
    ck_abort_msg("%d batches of 4 MiB of pixels took %.2f ms in the last of %d attempts, %.2f "
                 "times the %.2f ms the test's own copy of their floats (128 MiB, pinned) took, "
                 "where its own bytes and conversion took %.2f ms: sending the bytes and "
                 "converting them on the GPU should take at most %.1f of the floats' time. %zu "
                 "bytes went from the host to the device. Your calls, as they returned on the "
                 "host clock:%s",
                 TIMED_BATCHES, t.theirs, ATTEMPTS, t.theirs / t.floats, t.floats, t.own,
                 MAX_OF_FLOATS, bytes_sent_to_the_device(), trace_timeline());
}

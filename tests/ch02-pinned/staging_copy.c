/* staging_copy.c - tests for exercises/ch02-pinned/staging_copy.c (staged_copy_to_device).
 *
 * Every buffer the code under test is given is longer than the header says, by a guard that
 * holds the poison: the bytes past the source's end hold another pattern, so that a copy that
 * runs past the data, or past the staging buffer, shows up in the guard instead of crashing.
 */
#include "harness.h"
#include "staging_copy.h"
#include "timing.h"
#include "units.h"

#include <stdio.h>
#include <string.h>

COURSE_EXERCISE(
    "A staging copy of your own: pageable to device through one pinned buffer",
    "A loop over the data, a chunk at a time: the chunk into the staging buffer on the host, "
    "then from the staging buffer to the device, as section 2.1 shows the driver doing for "
    "every pageable copy. Which pointers move on with each chunk, and which stays where it is? "
    "How big is the last chunk?\n\n"
    "for (size_t offset = 0; offset < bytes; offset += chunk_bytes) { size_t n = the smaller of "
    "chunk_bytes and bytes - offset; memcpy(h_staging, (const char *)h_src + offset, n); err = "
    "cudaMemcpy((char *)d_dst + offset, h_staging, n, cudaMemcpyHostToDevice); stop at the "
    "first error }. The source and the destination move on by a chunk each time; the staging "
    "buffer does not, it is reused from its start. The last chunk is what is left, which also "
    "covers a chunk larger than the data. Before the loop: bytes == 0 is success, and a NULL "
    "pointer or a chunk_bytes of 0 is cudaErrorInvalidValue.");
COURSE_EXERCISE_WORK_QUEUES(1);

#define MIB ((size_t)1 << 20)
#define BEYOND_THE_SOURCE 0xA5 /* what h_src holds past its `bytes`: neither data nor poison */

typedef struct staging_run {
    unsigned char *h_src, *h_staging, *d_dst;
    size_t bytes, chunk, staging_guard, dst_guard;
} staging_run;

/* The buffers of one call: h_src filled and followed by a stretch of another pattern, h_staging
 * pinned and followed by a poisoned guard as long as the data, d_dst poisoned with a guard of a
 * chunk, which is as far as a last chunk copied whole can reach. */
static staging_run make_run(size_t bytes, size_t chunk)
{
    staging_run r = {NULL, NULL, NULL, bytes, chunk, bytes, chunk};
    r.h_src = harness_host_alloc(bytes + chunk);
    fill_bytes(r.h_src, bytes);
    memset(r.h_src + bytes, BEYOND_THE_SOURCE, chunk);
    r.h_staging = harness_pinned_alloc(chunk + r.staging_guard);
    r.d_dst = harness_device_alloc(bytes + r.dst_guard);
    return r;
}

static cudaError_t staged_copy(void *context)
{
    const staging_run *r = context;
    return staged_copy_to_device(r->d_dst, r->h_src, r->bytes, r->h_staging, r->chunk);
}

static cudaError_t run_traced(staging_run *r)
{
    cudaError_t err;
    trace_start();
    trace_stop();
    TRACED_RUN(err = staged_copy(r));
    return err;
}

static const char *call_text(const staging_run *r)
{
    static char text[160];
    snprintf(text, sizeof text, "staged_copy_to_device(d_dst, h_src, %zu, h_staging, %zu)",
             r->bytes, r->chunk);
    return text;
}

/* What d_dst holds afterwards, guard included, in a host buffer of the test's. */
static unsigned char *read_back(const staging_run *r)
{
    unsigned char *h_got = harness_private_alloc(r->bytes + r->dst_guard);
    harness_copy(h_got, r->d_dst, r->bytes + r->dst_guard, cudaMemcpyDeviceToHost);
    return h_got;
}

/* The known ways a chunked copy goes wrong, named from what d_dst holds; NULL if none fits. */
static const char *named_mistake(const staging_run *r, const unsigned char *got, size_t first_wrong)
{
    static char text[512];
    const size_t whole = r->bytes - r->bytes % r->chunk, tail = r->bytes % r->chunk;
    const bool rest_poison = holds_only_poison(got + first_wrong, r->bytes - first_wrong);
    if (rest_poison && r->chunk > r->bytes && first_wrong == 0) {
        snprintf(text, sizeof text,
                 "none of the %zu bytes arrived: the chunk (%zu bytes) is larger than the data, "
                 "so there is no whole chunk to copy, and one copy of all %zu bytes is the whole "
                 "job",
                 r->bytes, r->chunk, r->bytes);
        return text;
    }
    if (rest_poison && tail != 0 && first_wrong == whole) {
        snprintf(text, sizeof text,
                 "the first %zu bytes arrived, %zu whole chunks of %zu, but the last %zu bytes "
                 "still hold the test's poison: %zu is not a multiple of %zu, and what is left "
                 "after the whole chunks needs one more, shorter, copy",
                 whole, whole / r->chunk, r->chunk, tail, r->bytes, r->chunk);
        return text;
    }
    if (r->chunk < r->bytes && first_wrong == r->chunk &&
        memcmp(got + r->chunk, harness_expected(r->h_src, r->chunk),
               r->bytes - r->chunk < r->chunk ? r->bytes - r->chunk : r->chunk) == 0) {
        snprintf(text, sizeof text,
                 "the first chunk (%zu byte%s) arrived, but the second holds the first chunk's "
                 "bytes again: every chunk was read from the start of h_src. Read chunk k from "
                 "h_src + k * chunk_bytes",
                 r->chunk, r->chunk == 1 ? "" : "s");
        return text;
    }
    const size_t last_offset = (r->bytes - 1) / r->chunk * r->chunk;
    if (r->chunk < r->bytes && holds_only_poison(got + r->chunk, r->bytes - r->chunk) &&
        memcmp(got, harness_expected(r->h_src + last_offset, r->bytes - last_offset),
               r->bytes - last_offset) == 0) {
        snprintf(text, sizeof text,
                 "d_dst begins with the last chunk's bytes and holds only poison after its first "
                 "chunk: every chunk was copied to the start of d_dst, each over the one before. "
                 "Copy chunk k to d_dst + k * chunk_bytes");
        return text;
    }
    return NULL;
}

/* Fails the test unless d_dst holds h_src's bytes and nothing was written past them. */
static void expect_arrived(const staging_run *r, cudaError_t err)
{
    ck_assert_msg(err == cudaSuccess, "%s returned %s.%s The calls it made were:%s", call_text(r),
                  error_text(err), kind_mismatch_note(), trace_summary());
    const unsigned char *got = read_back(r);
    const size_t first_wrong = first_differing_byte(got, r->h_src, r->bytes);
    if (first_wrong < r->bytes) {
        const char *mistake = named_mistake(r, got, first_wrong);
        if (mistake != NULL)
            ck_abort_msg("after %s, %s. The calls:%s", call_text(r), mistake, trace_summary());
        expect_bytes_arrived(got, r->h_src, r->bytes, 1, "d_dst");
    }
}

/* Fails the test if anything was written past the data in d_dst or past h_staging's chunk. */
static void expect_nothing_written_past_the_ends(const staging_run *r)
{
    const unsigned char *got = read_back(r);
    size_t written = 0;
    for (size_t i = 0; i < r->dst_guard; i++)
        written += got[r->bytes + i] != POISON_BYTE;
    ck_assert_msg(written == 0,
                  "%s wrote %zu bytes into d_dst past the %zu bytes of data: the last chunk is "
                  "what is left, bytes - offset, not a whole chunk_bytes%s. The calls:%s",
                  call_text(r), written, r->bytes,
                  r->chunk > r->bytes ? " (here the chunk is larger than all the data)" : "",
                  trace_summary());
    written = 0;
    for (size_t i = 0; i < r->staging_guard; i++)
        written += r->h_staging[r->chunk + i] != POISON_BYTE;
    ck_assert_msg(written == 0,
                  "%s wrote %zu bytes past the end of h_staging, whose size is chunk_bytes (%zu): "
                  "each chunk goes to the start of the staging buffer, whatever its offset in "
                  "h_src, and is never longer than chunk_bytes",
                  call_text(r), written, r->chunk);
}

static size_t chunk_count(const staging_run *r)
{
    return r->bytes / r->chunk + (r->bytes % r->chunk != 0);
}

/* Fails the test unless the trace shows ceil(bytes / chunk) copies, chunk k of min(chunk, what
 * is left) bytes from the start of h_staging to d_dst + k * chunk, host to device. */
static void expect_chunked_copies(const staging_run *r)
{
    const size_t want = chunk_count(r), made = trace_count_of(TRACED_cudaMemcpy);
    ck_assert_msg(!(made == r->bytes / r->chunk && made < want),
                  "%s made %zu cudaMemcpy calls, one per whole chunk of %zu bytes; the %zu "
                  "bytes left after them need one more, shorter, copy: %zu in all. The calls:%s",
                  call_text(r), made, r->chunk, r->bytes % r->chunk, want, trace_summary());
    ck_assert_msg(made == want,
                  "%s made %zu cudaMemcpy calls; %zu bytes in chunks of %zu take %zu. The "
                  "calls:%s",
                  call_text(r), made, r->bytes, r->chunk, want, trace_summary());
    for (size_t n = 1; n <= made; n++) {
        const traced_call *copy = trace_nth(TRACED_cudaMemcpy, n);
        const size_t offset = (n - 1) * r->chunk;
        const size_t size = r->bytes - offset < r->chunk ? r->bytes - offset : r->chunk;
        const unsigned char *src = copy->src, *dst = copy->dst;
        ck_assert_msg(!(src >= r->h_src && src < r->h_src + r->bytes + r->chunk),
                      "cudaMemcpy number %zu copies straight from h_src + %td, which is pageable "
                      "memory, so the driver stages it through its own buffer after all: memcpy "
                      "each chunk into h_staging, pinned, and cudaMemcpy from there",
                      n, src - r->h_src);
        ck_assert_msg(src >= r->h_staging && src < r->h_staging + r->chunk + r->staging_guard,
                      "cudaMemcpy number %zu copies from %s that is neither h_src nor h_staging: "
                      "each chunk goes from h_staging",
                      n, memory_location_name(copy->src_location));
        ck_assert_msg(src + copy->bytes <= r->h_staging + r->chunk,
                      "cudaMemcpy number %zu copies %zu bytes from h_staging + %td, past the end "
                      "of h_staging, which holds chunk_bytes (%zu): the staging buffer is reused "
                      "from its start for every chunk, whatever the chunk's offset in h_src",
                      n, copy->bytes, src - r->h_staging, r->chunk);
        ck_assert_msg(dst == r->d_dst + offset,
                      "cudaMemcpy number %zu copies to d_dst + %td; chunk %zu belongs at d_dst + "
                      "%zu: move the destination on by a chunk each time, as the source",
                      n, dst - r->d_dst, n - 1, offset);
        ck_assert_msg(copy->bytes == size,
                      "cudaMemcpy number %zu (the chunk at offset %zu) was asked for %zu bytes; "
                      "that chunk is %zu bytes long: every chunk is chunk_bytes except the last, "
                      "which is what is left, bytes - offset%s",
                      n, offset, copy->bytes, size,
                      r->chunk > r->bytes ? " (here the chunk is larger than all the data)" : "");
        ck_assert_msg(copy->kind == cudaMemcpyHostToDevice || copy->kind == cudaMemcpyDefault, "%s",
                      describe_kind_mismatch(n, "h_staging to d_dst", copy));
    }
}

COURSE_TEST(a_size_that_is_not_a_multiple_of_the_chunk_arrives_whole, 3)
{
    /* 3 MiB and 12345 bytes in chunks of 1 MiB; 100000 bytes in chunks of 4103 (24 and 1528). */
    const size_t cases[][2] = {{3 * MIB + 12345, MIB}, {100000, 4103}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        staging_run r = make_run(cases[c][0], cases[c][1]);
        expect_arrived(&r, run_traced(&r));
    }
}

COURSE_TEST(a_chunk_larger_than_the_data_makes_one_copy_of_the_data, 2)
{
    staging_run r = make_run(1000, MIB);
    expect_arrived(&r, run_traced(&r));
    expect_chunked_copies(&r);
}

COURSE_TEST(a_1_byte_chunk_moves_a_small_buffer_one_byte_at_a_time, 1)
{
    staging_run r = make_run(37, 1);
    expect_arrived(&r, run_traced(&r));
    expect_chunked_copies(&r);
}

COURSE_TEST(every_copy_goes_from_the_start_of_the_pinned_staging_buffer_to_its_place, 3)
{
    staging_run r = make_run(3 * MIB + 12345, MIB);
    cudaError_t err = run_traced(&r);
    ck_assert_msg(err == cudaSuccess, "%s returned %s. The calls it made were:%s", call_text(&r),
                  error_text(err), trace_summary());
    expect_chunked_copies(&r);
}

COURSE_TEST(nothing_is_written_past_the_staging_buffer_or_past_the_data, 2)
{
    const size_t cases[][2] = {{3 * MIB + 12345, MIB}, {1000, 64 * 1024}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        staging_run r = make_run(cases[c][0], cases[c][1]);
        cudaError_t err = run_traced(&r);
        ck_assert_msg(err == cudaSuccess, "%s returned %s. The calls it made were:%s",
                      call_text(&r), error_text(err), trace_summary());
        expect_nothing_written_past_the_ends(&r);
    }
}

COURSE_TEST(a_failed_copy_is_returned_and_no_copy_follows_it, 2)
{
    staging_run r = make_run(100000, 4103);
    trace_start();
    trace_stop();
    trace_inject_failure(TRACED_cudaMemcpy, 2, cudaErrorLaunchFailure);
    cudaError_t err;
    TRACED_RUN(err = staged_copy(&r));
    ck_assert_msg(err == cudaErrorLaunchFailure,
                  "the test made the second cudaMemcpy fail with cudaErrorLaunchFailure, but %s "
                  "returned %s: return the first error a copy returns. The calls:%s",
                  call_text(&r), error_text(err), trace_summary());
    ck_assert_msg(trace_count_of(TRACED_cudaMemcpy) == 2,
                  "%s made %zu more cudaMemcpy calls after the test made the second one fail: "
                  "stop at the first error, since the copies after it build on a copy that did "
                  "not happen. The calls:%s",
                  call_text(&r), trace_count_of(TRACED_cudaMemcpy) - 2, trace_summary());
    expect_every_failure_handled(call_text(&r), staged_copy, &r);
}

/* In the next test nothing should reach cudaMemcpy; a call that does is answered with this
 * error without running, so that a loop that never advances still ends. */
#define STOPPED_ERROR cudaErrorNotPermitted

COURSE_TEST(zero_bytes_succeed_and_a_NULL_pointer_or_a_0_chunk_is_refused, 1)
{
    staging_run r = make_run(64, 16);
    const struct {
        void *d_dst;
        const void *h_src;
        size_t bytes;
        void *h_staging;
        size_t chunk;
        cudaError_t want;
        const char *call, *why;
    } cases[] = {
        {NULL, NULL, 0, NULL, 0, cudaSuccess, "staged_copy_to_device(NULL, NULL, 0, NULL, 0)",
         "copying 0 bytes is an empty copy, whatever the pointers: return cudaSuccess"},
        {r.d_dst, r.h_src, 64, r.h_staging, 0, cudaErrorInvalidValue,
         "staged_copy_to_device(d_dst, h_src, 64, h_staging, 0)",
         "a chunk_bytes of 0 never gets through the data: return cudaErrorInvalidValue"},
        {NULL, r.h_src, 64, r.h_staging, 16, cudaErrorInvalidValue,
         "staged_copy_to_device(NULL, h_src, 64, h_staging, 16)",
         "there is nowhere to copy to: return cudaErrorInvalidValue"},
        {r.d_dst, r.h_src, 64, NULL, 16, cudaErrorInvalidValue,
         "staged_copy_to_device(d_dst, h_src, 64, NULL, 16)",
         "there is no staging buffer: return cudaErrorInvalidValue"},
        {r.d_dst, NULL, 64, r.h_staging, 16, cudaErrorInvalidValue,
         "staged_copy_to_device(d_dst, NULL, 64, h_staging, 16)",
         "there is nothing to copy from: return cudaErrorInvalidValue"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        trace_start();
        trace_stop();
        trace_inject_failure(TRACED_cudaMemcpy, 1, STOPPED_ERROR);
        cudaError_t err;
        TRACED_RUN(err = staged_copy_to_device(cases[c].d_dst, cases[c].h_src, cases[c].bytes,
                                               cases[c].h_staging, cases[c].chunk));
        ck_assert_msg(trace_count() == 0,
                      "%s called cudaMemcpy: %s, before any copy (the test stopped that "
                      "cudaMemcpy before it ran)",
                      cases[c].call, cases[c].why);
        ck_assert_msg(err == cases[c].want, "%s returned %s: %s", cases[c].call, error_text(err),
                      cases[c].why);
    }
}

/* How fast the learner's staging is beside the driver's own, measured here in the same run: a
 * note, not a grade (the exercise asks for the chunks, not for speed; chapter 3 makes it fast).
 * Timed on the host's clock, both, since both calls return when the data has arrived. 64 MiB,
 * eight chunks: every other program sharing the GPU waits while this measures, for a note. */
enum { SPEED_RUNS = 3 };
#define SPEED_BYTES (64 * MIB)
#define SPEED_CHUNK (8 * MIB)

COURSE_TIMED_TEST(a_64_MiB_copy_in_8_MiB_chunks_arrives_and_is_timed_beside_cudaMemcpy, 1)
{
    unsigned char *h_src = harness_host_alloc(SPEED_BYTES);
    fill_bytes(h_src, SPEED_BYTES);
    unsigned char *h_staging = harness_pinned_alloc(SPEED_CHUNK);
    unsigned char *d_dst = harness_device_alloc(SPEED_BYTES);
    double staged_ms[SPEED_RUNS], plain_ms[SPEED_RUNS];
    harness_gpu_alone_begin();
    for (int run = 0; run < SPEED_RUNS; run++) {
        poison_device(d_dst, SPEED_BYTES);
        double started = host_clock_ms();
        harness_copy(d_dst, h_src, SPEED_BYTES, cudaMemcpyHostToDevice);
        plain_ms[run] = host_clock_ms() - started;

        poison_device(d_dst, SPEED_BYTES);
        harness_spots spots;
        harness_spots_poison(&spots, d_dst, SPEED_BYTES);
        cudaError_t err;
        started = host_clock_ms();
        TRACED_RUN(err = staged_copy_to_device(d_dst, h_src, SPEED_BYTES, h_staging, SPEED_CHUNK));
        staged_ms[run] = host_clock_ms() - started;
        ck_assert_msg(err == cudaSuccess,
                      "staged_copy_to_device(d_dst, h_src, 64 MiB, h_staging, 8 MiB) returned %s",
                      error_text(err));
        harness_spots_expect(&spots, h_src, "staged_copy_to_device(64 MiB)");
    }
    harness_gpu_alone_end();
    unsigned char *h_got = harness_private_alloc(SPEED_BYTES);
    harness_copy(h_got, d_dst, SPEED_BYTES, cudaMemcpyDeviceToHost);
    expect_bytes_arrived(h_got, h_src, SPEED_BYTES, 1, "d_dst (64 MiB in 8 MiB chunks)");

    double staged = bandwidth_gb_per_s(SPEED_BYTES, median_of(staged_ms, SPEED_RUNS));
    double plain = bandwidth_gb_per_s(SPEED_BYTES, median_of(plain_ms, SPEED_RUNS));
    harness_note(
        "Your staged copy moved 64 MiB at %.1f GB/s; a plain cudaMemcpy of the same "
        "pageable buffer, measured just before it, at %.1f GB/s (%.2f times as fast). Both "
        "stage through pinned memory; in yours the CPU's memcpy and the copy engine "
        "take turns, each idle while the other works. Chapter 3 overlaps them: two "
        "staging buffers, cudaMemcpyAsync, and host threads for the memcpy.",
        staged, plain, plain / staged);
}

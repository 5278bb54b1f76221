/* loader_ring.c - tests for exercises/ch05-training-loop/loader_ring.c (loader_ring_train).
 *
 * What reached the GPU is judged by the sums: d_sums[b] must be the checksum of batch b's bytes
 * converted as the header says, which the test computes itself; a sum that is another batch's
 * names the batch sent in its place. The test holds each copy up (trace_delay_async_copies), so
 * that a slot refilled before its copy ran sends the later batch every time. Threads are
 * counted by the worker; leaks and error paths come from the ledger. Timed, the loop must keep
 * the GPU busy when the loaders together read faster than the GPU steps: within a margin of the
 * test's own run of the same steps, plus the first batch's read.
 */
#include "gpu_work.h"
#include "harness.h"
#include "loader_ring.h"
#include "timing.h"

#include <math.h>
#include <stdio.h>

COURSE_EXERCISE(
    "Loader threads and a ring of pinned batches",
    "The loop only sends and steps; loader threads read and convert the batches ahead of it into "
    "a ring of pinned slots (section 5.4.2). Each slot passes from a loader to the copy engine and "
    "back: when may a loader write into it again? What must every thread see under a lock, and "
    "what may it do outside one? And when a call fails, who tells the loaders to stop?\n\n"
    "cudaMallocHost shape.slots buffers of n floats, cudaMalloc one device batch, and an event "
    "per slot. Guard a counter of the next batch to load, and for each slot the batch it holds "
    "and the batch it may take next, with one pthread_mutex and a pthread_cond. Each loader: "
    "take b = next++ under the lock, pthread_cond_wait until slot b % slots is free for b, "
    "unlock, nanosleep read_ms, convert (product = (float)byte * PIXEL_SCALE; out = product + "
    "PIXEL_OFFSET), lock, mark the slot as holding b, broadcast. The loop: wait until the slot "
    "holds b, cudaMemcpyAsync it, cudaEventRecord its event, gpu_work_keep_busy, "
    "gpu_work_checksum into d_sums + b, cudaEventSynchronize the event, then mark the slot free "
    "for b + slots and broadcast. At the end, or on an error: set a quit flag, broadcast, "
    "pthread_join every loader, cudaStreamSynchronize, free everything.");
COURSE_EXERCISE_WORK_QUEUES(1);

typedef struct ring_run {
    cudaStream_t stream;
    const unsigned char *h_file;
    ring_shape shape;
    unsigned long long *d_sums; /* poisoned by the harness: every byte 0xFF */
} ring_run;

/* A batch of 48 KiB of pixels (192 KiB of floats): big enough that a slot half overwritten
 * shows, small enough that a test moves a few MiB. */
#define N_SMALL ((size_t)49152)
#define POISONED_SUM (~0ULL)

static ring_run make_ring_run(ring_shape shape)
{
    ring_run r = {harness_stream_create(cudaStreamNonBlocking), NULL, shape, NULL};
    unsigned char *file = harness_host_alloc(shape.batches * shape.n);
    fill_bytes(file, shape.batches * shape.n);
    r.h_file = file;
    r.d_sums = harness_device_alloc(shape.batches * sizeof *r.d_sums);
    return r;
}

static cudaError_t run_ring(void *context)
{
    ring_run *r = context;
    return loader_ring_train(r->stream, r->h_file, r->shape, r->d_sums);
}

static void expect_success(cudaError_t err, const ring_run *r)
{
    ck_assert_msg(err == cudaSuccess,
                  "loader_ring_train(%zu batches, %d loaders, %d slots) "
                  "returned %s",
                  r->shape.batches, r->shape.loaders, r->shape.slots, error_text(err));
}

/* What batch b's checksum must be (two roundings) and what it is when fused (fmaf). */
static void batch_sums(const ring_run *r, size_t b, float *floats, unsigned long long *two,
                       unsigned long long *fused)
{
    const size_t n = r->shape.n;
    const unsigned char *file =
        (const unsigned char *)harness_expected(r->h_file, r->shape.batches * n) + b * n;
    for (size_t i = 0; i < n; i++) {
        const float product = (float)file[i] * PIXEL_SCALE;
        floats[i] = product + PIXEL_OFFSET;
    }
    *two = gpu_work_checksum_host(floats, n * sizeof(float), 1);
    for (size_t i = 0; i < n; i++)
        floats[i] = fmaf((float)file[i], PIXEL_SCALE, PIXEL_OFFSET);
    *fused = gpu_work_checksum_host(floats, n * sizeof(float), 1);
}

/* The batch whose sum this is, or SIZE_MAX. */
static size_t batch_of(unsigned long long sum, const unsigned long long *want, size_t batches)
{
    for (size_t k = 0; k < batches; k++)
        if (want[k] == sum)
            return k;
    return SIZE_MAX;
}

static const char HELD_NOTE[] =
    " The test held each copy up for a few milliseconds before it ran: a slot refilled with a "
    "later batch before its copy had run sends that batch instead. cudaMemcpyAsync only queues "
    "the copy: a loader may write into a slot again only once the event recorded after its copy "
    "has completed.";

static void diagnose_sum(const ring_run *r, size_t b, unsigned long long got,
                         const unsigned long long *want, const unsigned long long *fused, bool held)
{
    const size_t batches = r->shape.batches, k = batch_of(got, want, batches);
    if (got == POISONED_SUM)
        ck_abort_msg("d_sums[%zu] still holds the test's poison: no checksum of batch %zu "
                     "reached it. Every batch is stepped once, in order: "
                     "gpu_work_checksum(stream, d_batch, n * sizeof(float), 1, d_sums + b)",
                     b, b);
    if (got == fused[b])
        ck_abort_msg("batch %zu arrived with the bits of a fused multiply-add: the floats were "
                     "computed with fmaf (or as one expression a compiler fused), rounded once, "
                     "where the GPU's conversion rounds after the multiply and again after the "
                     "add. Write it as two statements: product = (float)byte * PIXEL_SCALE; "
                     "out = product + PIXEL_OFFSET",
                     b);
    if (k != SIZE_MAX)
        ck_abort_msg("d_sums[%zu] holds the checksum of batch %zu: batch %zu reached the GPU "
                     "in batch %zu's place.%s",
                     b, k, k, b,
                     k > b ? (held ? HELD_NOTE
                                   : " Its slot was refilled before its copy had run: wait "
                                     "for the slot's event before a loader writes into it.")
                           : " Batches go in order, each exactly once: is the counter of the "
                             "next batch read and advanced under the lock?");
    ck_abort_msg("d_sums[%zu] matches no batch's checksum: the floats that reached the GPU for "
                 "batch %zu were not one whole batch converted as the header says (part of one "
                 "batch and part of another, or a slot sent while a loader was still filling "
                 "it).%s",
                 b, b, held ? HELD_NOTE : "");
}

/* Fails unless every d_sums[b] is batch b's checksum. */
static void expect_sums(const ring_run *r, bool held)
{
    const size_t batches = r->shape.batches;
    unsigned long long *got = harness_private_alloc(batches * sizeof *got);
    unsigned long long *want = harness_private_alloc(batches * sizeof *want);
    unsigned long long *fused = harness_private_alloc(batches * sizeof *fused);
    float *floats = harness_private_alloc(r->shape.n * sizeof(float));
    harness_copy(got, r->d_sums, batches * sizeof *got, cudaMemcpyDeviceToHost);
    harness_results_compared(); /* against the test's own conversion and checksum */
    for (size_t b = 0; b < batches; b++)
        batch_sums(r, b, floats, &want[b], &fused[b]);
    for (size_t b = 0; b < batches; b++)
        if (got[b] != want[b])
            diagnose_sum(r, b, got[b], want, fused, held);
    harness_host_free(floats);
}

/* Every copy of the trace: one a batch, n floats, from pinned memory to the device. */
static void expect_copies(const ring_run *r)
{
    const size_t copies = trace_count_of(TRACED_cudaMemcpyAsync);
    const size_t bytes = r->shape.n * sizeof(float);
    ck_assert_msg(copies == r->shape.batches,
                  "loader_ring_train(%zu batches) made %zu cudaMemcpyAsync calls: one a batch, "
                  "from its slot to the device. The calls:%s",
                  r->shape.batches, copies, trace_summary());
    for (size_t k = 1; k <= copies; k++) {
        const traced_call *copy = trace_nth(TRACED_cudaMemcpyAsync, k);
        ck_assert_msg(copy->bytes == bytes,
                      "%s moved %zu bytes, where a batch of %zu floats is %zu bytes: the count "
                      "is in bytes, n * sizeof(float)",
                      nth_call_name(TRACED_cudaMemcpyAsync, k), copy->bytes, r->shape.n, bytes);
        ck_assert_msg(copy->src_location == LOCATION_PINNED_HOST && copy->stream == r->stream,
                      "%s copies from %s on %s: each batch goes from its pinned slot "
                      "(cudaMallocHost), on the stream loader_ring_train was given",
                      nth_call_name(TRACED_cudaMemcpyAsync, k),
                      memory_location_name(copy->src_location),
                      copy->stream == r->stream ? "the given stream" : "another stream");
    }
}

COURSE_TEST(every_batch_reaches_the_gpu_once_in_order_converted_bit_for_bit, 5)
{
    ring_run r = make_ring_run((ring_shape){12, N_SMALL, 3, 4, 0.3, 0.3});
    cudaError_t err;
    trace_start();
    trace_stop();
    TRACED_RUN(err = run_ring(&r));
    expect_success(err, &r);
    expect_copies(&r);
    expect_sums(&r, false);
}

COURSE_TEST(no_slot_is_refilled_while_its_copy_is_still_to_run, 4)
{
    /* Each copy held up 4 ms, longer than a loader takes to read and convert a batch. */
    ring_run r = make_ring_run((ring_shape){10, N_SMALL / 4, 2, 3, 0.1, 0.2});
    cudaError_t err;
    trace_start();
    trace_delay_async_copies(cudaMemcpyHostToDevice, 4.0);
    trace_stop();
    TRACED_RUN(err = run_ring(&r));
    expect_success(err, &r);
    expect_sums(&r, true);
}

/* The run, and no loader left running after it, whatever it returned. */
static cudaError_t run_and_count_threads(void *context)
{
    const size_t before = harness_thread_count();
    cudaError_t err = run_ring(context);
    const size_t left = harness_threads_left_after(before);
    ck_assert_msg(left == 0,
                  "%zu loader thread%s still running a second after loader_ring_train "
                  "returned %s. Every loader is joined before the function returns, on an "
                  "error too: tell them to stop (a flag under the lock, and a broadcast to "
                  "those waiting for a slot), then pthread_join each. A loader left behind "
                  "writes into slots that are freed",
                  left, left == 1 ? " is" : "s are", error_text(err));
    return err;
}

COURSE_TEST(every_loader_is_joined_and_everything_given_back, 2)
{
    ring_run r = make_ring_run((ring_shape){6, N_SMALL / 4, 3, 2, 0.1, 0.1});
    cudaError_t err;
    trace_start();
    trace_stop();
    TRACED_RUN(err = run_and_count_threads(&r));
    expect_success(err, &r);
    expect_everything_released("loader_ring_train");
}

COURSE_TEST(an_error_is_returned_with_the_loaders_joined_and_nothing_left_behind, 4)
{
    ring_run r = make_ring_run((ring_shape){4, N_SMALL / 4, 2, 2, 0.1, 0.1});
    expect_every_failure_handled_and_waited_for("loader_ring_train", run_and_count_threads, &r);
}

/* --- The GPU kept busy ------------------------------------------------------------------- */

/* How many slots the copies of a short traced run came from: a ring of one shows there. */
static size_t slots_used(void)
{
    ring_run r = make_ring_run((ring_shape){8, N_SMALL / 4, 4, 6, 0.5, 0.5});
    trace_start();
    trace_stop();
    TRACED_RUN((void)run_ring(&r));
    const void *seen[8];
    size_t used = 0;
    for (size_t k = 1; k <= trace_count_of(TRACED_cudaMemcpyAsync); k++) {
        const void *src = trace_nth(TRACED_cudaMemcpyAsync, k)->src;
        size_t i = 0;
        while (i < used && seen[i] != src)
            i++;
        if (i == used && used < 8)
            seen[used++] = src;
    }
    return used;
}

static const char *slowness_note(const ring_run *r, double wall_ms)
{
    static char note[512];
    const size_t used = slots_used();
    const double one_at_a_time = (double)r->shape.batches * r->shape.read_ms;
    if (used == 1)
        snprintf(note, sizeof note,
                 " In a short run of the test's with 6 slots, every copy came from 1 pinned "
                 "buffer: with one slot, one batch is read at a time, however many loaders "
                 "there are. Make shape.slots of them.");
    else if (wall_ms > 0.8 * one_at_a_time)
        snprintf(note, sizeof note,
                 " That is about %zu batches x %g ms: the batches were read one at a time. Are "
                 "there shape.loaders loaders, and does each read (sleep) and convert outside "
                 "the lock, so that the others read beside it?",
                 r->shape.batches, r->shape.read_ms);
    else
        snprintf(note, sizeof note,
                 " Does the loop wait for anything besides its next batch's slot, and for each "
                 "copy only after queuing the step behind it?");
    return note;
}

/* The test's own run of the same steps' time, as one step of it all: one call, so that no
 * round trip to the worker between steps adds to it. */
static double steps_alone_ms(const ring_run *r)
{
    const double start = host_clock_ms();
    cudaError_t err = harness_keep_busy(r->stream, (double)r->shape.batches * r->shape.step_ms);
    ck_assert_msg(err == cudaSuccess, "the test's own steps failed: %s (the course's fault)",
                  error_text(err));
    harness_synchronize_stream(r->stream);
    return host_clock_ms() - start;
}

/* The learner's loop on the host clock, less the time its allocations and releases waited for
 * the driver (harness_time_traced_run_ms: a shared GPU's other programs hold it while they make
 * their contexts, tens of milliseconds at a time). */
static double timed_run(ring_run *r)
{
    cudaError_t err;
    const double wall_ms = harness_time_traced_run_ms(run_ring, r, &err);
    expect_success(err, r);
    return wall_ms;
}

enum { ATTEMPTS = 3 };
#define DUE_TIMES 1.6

COURSE_TIMED_TEST(the_ring_keeps_the_gpu_busy_when_the_loaders_keep_up, 6)
{
    /* 6 loaders reading a batch in 6 ms each deliver one a millisecond, twice as fast as the
     * 2 ms step: the GPU should never wait once the first batch is in. 32 ms of steps. */
    ring_run r = make_ring_run((ring_shape){16, N_SMALL, 6, 8, 6.0, 2.0});
    /* And a loop the loaders hold back: 2 of them, 4 ms a batch, 6 batches take 12 ms. */
    ring_run slow = make_ring_run((ring_shape){6, N_SMALL / 4, 2, 3, 4.0, 0.5});
    harness_gpu_alone_begin();
    const double slow_ms = timed_run(&slow);
    double alone_ms = 0, wall_ms = 0;
    for (int attempt = 0; attempt < ATTEMPTS; attempt++) { /* a busy host may miss once */
        alone_ms = steps_alone_ms(&r);
        wall_ms = timed_run(&r);
        if (wall_ms <= DUE_TIMES * (alone_ms + r.shape.read_ms))
            break;
    }
    harness_gpu_alone_end();
    expect_sums(&slow, false);
    expect_sums(&r, false);

    const double reading_ms = slow.shape.batches * slow.shape.read_ms / slow.shape.loaders;
    ck_assert_msg(slow_ms >= 0.9 * reading_ms,
                  "loader_ring_train(6 batches, 2 loaders, %g ms to read a batch) took %.1f ms, "
                  "less than the %.1f ms that reading them takes two at a time: each loader "
                  "sleeps read_ms for each batch it reads, standing in for the file's latency "
                  "(the header says so), and the test's figures count on it",
                  slow.shape.read_ms, slow_ms, reading_ms);
    /* Busy from the first batch's arrival on: the test's own steps plus one read, and a wide
     * margin for the copies, the checksums, the launches and a shared machine. Loading one
     * batch at a time takes 16 x 6 = 96 ms at least, 2.5 times the steps. */
    const double due_ms = DUE_TIMES * (alone_ms + r.shape.read_ms);
    ck_assert_msg(
        wall_ms <= due_ms,
        "loader_ring_train(16 batches of %g ms steps, %d loaders reading a batch in %g ms "
        "each, %d slots) took %.1f ms, where the same steps alone took the test %.1f "
        "ms: with the first batch read (%g ms), at most %.1f ms is due. The loaders "
        "read a batch every %.1f ms between them, faster than a step, so the GPU need "
        "never wait.%s",
        r.shape.step_ms, r.shape.loaders, r.shape.read_ms, r.shape.slots, wall_ms, alone_ms,
        r.shape.read_ms, due_ms, r.shape.read_ms / r.shape.loaders, slowness_note(&r, wall_ms));
    harness_note("16 steps of %g ms took %.1f ms through the ring; the same steps, back to back "
                 "with nothing to load, took the test %.1f ms.",
                 r.shape.step_ms, wall_ms, alone_ms);
}

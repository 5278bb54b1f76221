/* both_directions.c - tests for exercises/ch03-streams/both_directions.c.
 *
 * What makes two copies overlap cannot be seen in their result: a copy up and a
 * copy down that run one after the other deliver the same bytes. So besides the
 * bytes, the tests read the trace (which stream each copy was queued on, from
 * what memory, and whether the host waited for each stream before returning)
 * to name the cause, and one timed test measures the total bandwidth against
 * the machine's own one-way figure, measured in the same run.
 */
#include "harness.h"
#include "both_directions.h"
#include "timing.h"
#include "units.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

COURSE_EXERCISE(
    "Copy both directions at once",
    "Two copies at once need two streams that do not wait for each other, and host memory from "
    "which a copy really is asynchronous (section 3.3). Which stream must you avoid, and why? "
    "Before the function returns, what must the host wait for, and what must it give back?\n\n"
    "Allocate the host memory with cudaMallocHost (free it with cudaFreeHost): a copy from "
    "pageable memory is not asynchronous. In copy_both_directions: cudaStreamCreate two "
    "streams, cudaMemcpyAsync the copy up on one and the copy down on the other, then "
    "cudaStreamSynchronize each, then cudaStreamDestroy each. Not stream 0: the legacy default "
    "stream waits for every other stream and they wait for it. Keep the first error, and wait "
    "for and destroy the streams on every path.");
COURSE_EXERCISE_WORK_QUEUES(2); /* a stream each way */
COURSE_EXERCISE_TIMED_WITH_ALL_QUEUES;

/* --- Buffers ---------------------------------------------------------------------------- */

/* What goes down: another pattern than fill_bytes's, which goes up, and never the poison. */
static void fill_down_pattern(unsigned char *h_bytes, size_t bytes)
{
    for (size_t i = 0; i < bytes; i++)
        h_bytes[i] = (unsigned char)(250 - i % 241);
}

typedef struct both_copies {
    size_t up_bytes, down_bytes;
    void *h_up_src, *d_up_dst, *h_down_dst, *d_down_src;
    unsigned char *want_down; /* what d_down_src holds: the test's own copy */
} both_copies;

/* Given the two host buffers: the device buffers, the sources filled, the destinations
 * poisoned. */
static void prepare_copies(both_copies *c)
{
    fill_bytes(c->h_up_src, c->up_bytes);
    poison_host(c->h_down_dst, c->down_bytes);
    c->d_up_dst = harness_device_alloc(c->up_bytes);
    c->want_down = harness_private_alloc(c->down_bytes);
    fill_down_pattern(c->want_down, c->down_bytes);
    c->d_down_src = harness_device_alloc(c->down_bytes);
    harness_copy(c->d_down_src, c->want_down, c->down_bytes, cudaMemcpyHostToDevice);
}

/* On the test's own pinned buffers. */
static both_copies make_copies(size_t up_bytes, size_t down_bytes)
{
    both_copies c = {up_bytes, down_bytes, NULL, NULL, NULL, NULL, NULL};
    c.h_up_src = harness_pinned_alloc(up_bytes);
    c.h_down_dst = harness_pinned_alloc(down_bytes);
    prepare_copies(&c);
    return c;
}

static cudaError_t copy_them(void *context)
{
    both_copies *c = context;
    return copy_both_directions(c->d_up_dst, c->h_up_src, c->up_bytes, c->h_down_dst, c->d_down_src,
                                c->down_bytes);
}

/* Sizes that differ, so that swapped counts show, and that are no multiple of anything. */
#define UP_BYTES (((size_t)1 << 20) + 3)
#define DOWN_BYTES (((size_t)3 << 20) + 1)

/* A traced call of copy_both_directions on small buffers, which must succeed. */
static both_copies traced_copies(void)
{
    both_copies c = make_copies(UP_BYTES, DOWN_BYTES);
    trace_start();
    trace_stop();
    cudaError_t err;
    TRACED_RUN(err = copy_them(&c));
    ck_assert_msg(err == cudaSuccess, "copy_both_directions returned %s. The calls it made were:%s",
                  error_text(err), trace_summary());
    return c;
}

/* Both destinations hold what was sent; the copy up is read back by the test. */
static void expect_both_arrived(const both_copies *c)
{
    expect_bytes_arrived(c->h_down_dst, c->want_down, c->down_bytes, 1,
                         "the copy down (h_down_dst, read as soon as copy_both_directions "
                         "returned)");
    void *h_back = harness_private_alloc(c->up_bytes);
    harness_copy(h_back, c->d_up_dst, c->up_bytes, cudaMemcpyDeviceToHost);
    expect_bytes_arrived(h_back, c->h_up_src, c->up_bytes, 1, "the copy up (d_up_dst)");
}

/* --- What the trace says about the streams ------------------------------------------------ */

/* The legacy default stream: 0, or cudaStreamLegacy named outright. */
static bool is_legacy(cudaStream_t stream)
{
    return stream == 0 || stream == cudaStreamLegacy;
}

static bool is_copy_up(const traced_call *call)
{
    return call->dst_location == LOCATION_DEVICE;
}

static const char *stream_name(cudaStream_t stream)
{
    static char names[2][64];
    static int next;
    char *name = names[next++ % 2];
    if (is_legacy(stream))
        snprintf(name, sizeof names[0], "the legacy default stream (0)");
    else if (stream == cudaStreamPerThread)
        snprintf(name, sizeof names[0], "the per-thread default stream");
    else
        snprintf(name, sizeof names[0], "stream %p", (void *)stream);
    return name;
}

/* What in the trace keeps the two copies from overlapping, in a sentence; NULL if nothing. */
static const char *overlap_problem(void)
{
    static char problem[1024];
    if (trace_count_of(TRACED_cudaMemcpy) > 0) {
        snprintf(problem, sizeof problem,
                 "copy_both_directions used cudaMemcpy, which returns only once its copy has "
                 "finished, so the second copy starts after the first one ended. Queue both with "
                 "cudaMemcpyAsync, each on its own stream, and only then wait for them");
        return problem;
    }
    const traced_call *up = NULL, *down = NULL;
    for (size_t i = 0; i < trace_count(); i++) {
        const traced_call *call = trace_get(i);
        if (call->function != TRACED_cudaMemcpyAsync || call->result != cudaSuccess)
            continue;
        const bool up_copy = is_copy_up(call);
        if ((up_copy ? up : down) == NULL) {
            if (up_copy)
                up = call;
            else
                down = call;
        }
        const memory_location host = up_copy ? call->src_location : call->dst_location;
        if (host == LOCATION_PAGEABLE_HOST) {
            snprintf(problem, sizeof problem,
                     "the copy %s runs %s pageable host memory. A copy from or to pageable memory "
                     "is not asynchronous: the driver stages it through a pinned buffer of its "
                     "own, and cudaMemcpyAsync returns only once that is done, so the two copies "
                     "take turns. Copy from and into pinned memory (cudaMallocHost)",
                     up_copy ? "up" : "down", up_copy ? "from" : "into");
            return problem;
        }
    }
    if (up == NULL || down == NULL) {
        snprintf(problem, sizeof problem,
                 "copy_both_directions made no cudaMemcpyAsync %s. The calls:%s",
                 up == NULL ? "to the device (the copy up)" : "to the host (the copy down)",
                 trace_summary());
        return problem;
    }
    /* Every pair of copies in opposite directions must be free to run together. */
    for (size_t i = 0; i < trace_count(); i++) {
        const traced_call *a = trace_get(i);
        if (a->function != TRACED_cudaMemcpyAsync || a->result != cudaSuccess || !is_copy_up(a))
            continue;
        for (size_t j = 0; j < trace_count(); j++) {
            const traced_call *b = trace_get(j);
            if (b->function != TRACED_cudaMemcpyAsync || b->result != cudaSuccess || is_copy_up(b))
                continue;
            if (a->stream == b->stream || (is_legacy(a->stream) && is_legacy(b->stream))) {
                snprintf(problem, sizeof problem,
                         "the copy up and the copy down were both queued on %s: a stream runs "
                         "what is queued on it in order, one thing after the other, so the copy "
                         "down waited for the copy up to finish. Queue each on a stream of its "
                         "own",
                         stream_name(a->stream));
                return problem;
            }
            const traced_call *legacy = is_legacy(a->stream) ? a : is_legacy(b->stream) ? b : NULL;
            const traced_call *other = legacy == a ? b : a;
            if (legacy != NULL && !trace_stream_is_non_blocking(other->stream)) {
                snprintf(problem, sizeof problem,
                         "the copy %s was queued on the legacy default stream (0). That stream "
                         "waits for the work of every other blocking stream before it starts "
                         "anything, and they wait for it, so the copy %s (on %s) and it ran one "
                         "after the other. Queue both copies on streams you create",
                         legacy == a ? "up" : "down", legacy == a ? "down" : "up",
                         stream_name(other->stream));
                return problem;
            }
        }
    }
    return NULL;
}

/* A sentence naming the first copy the host did not wait for; NULL if it waited for all. */
static const char *wait_problem(void)
{
    static char problem[768];
    for (size_t i = 0; i < trace_count(); i++) {
        const traced_call *copy = trace_get(i);
        if (copy->function != TRACED_cudaMemcpyAsync || copy->result != cudaSuccess)
            continue;
        if (trace_wait_for_stream(copy->stream, i) == NULL) {
            snprintf(problem, sizeof problem,
                     "copy_both_directions returned without waiting for the copy %s (call %zu, "
                     "on %s): cudaMemcpyAsync only queues a copy, so when the function returns "
                     "the data may not have arrived yet, and the caller reads the buffer too "
                     "soon. Call cudaStreamSynchronize on each stream before returning (and "
                     "before destroying it: cudaStreamDestroy does not wait). The calls:%s",
                     is_copy_up(copy) ? "up" : "down", i + 1, stream_name(copy->stream),
                     trace_summary());
            return problem;
        }
    }
    return NULL;
}

/* --- The tests ---------------------------------------------------------------------------- */

/* How long the results test holds each stream up before its copy: a function that returns
 * before its copies have landed then shows it every time, not only when it loses a race. Long
 * enough for a machine as busy as make test makes it, where the checker may read the buffer tens
 * of milliseconds after the code returned. */
#define DELAY_MS 200.0

COURSE_TEST(both_copies_arrive_whole, 3)
{
    both_copies c = make_copies(UP_BYTES, DOWN_BYTES);
    trace_start();
    trace_stop();
    trace_delay_async_copies(cudaMemcpyDefault, DELAY_MS);
    cudaError_t err;
    TRACED_RUN(err = copy_them(&c));
    /* Both destinations as they were the moment it returned; then nothing it queued may still
     * write into the test's buffers. */
    unsigned char *down_seen = harness_private_alloc(c.down_bytes);
    memcpy(down_seen, c.h_down_dst, c.down_bytes);
    unsigned char *up_seen = harness_private_alloc(c.up_bytes);
    harness_copy(up_seen, c.d_up_dst, c.up_bytes, cudaMemcpyDeviceToHost);
    harness_synchronize_untraced();
    ck_assert_msg(err == cudaSuccess, "copy_both_directions returned %s. The calls it made were:%s",
                  error_text(err), trace_summary());
    char what[192];
    snprintf(what, sizeof what,
             "the copy down (h_down_dst, read as soon as copy_both_directions returned, the "
             "test having held each stream up for %.0f ms before its copy)",
             DELAY_MS);
    expect_bytes_arrived(down_seen, c.want_down, c.down_bytes, 1, what);
    expect_bytes_arrived(up_seen, c.h_up_src, c.up_bytes, 1,
                         "the copy up (d_up_dst, read as soon as copy_both_directions returned)");
}

static cudaError_t allocate_and_free(void *context)
{
    void **h_buffer = context;
    *h_buffer = NULL;
    cudaError_t err = both_directions_host_alloc(h_buffer, (size_t)1 << 20);
    if (err != cudaSuccess)
        return err;
    return both_directions_host_free(*h_buffer);
}

/* Where both_directions_host_alloc stores its pointer: memory its code can reach. */
static void **pointer_slot(void)
{
    void **slot = harness_host_alloc(sizeof *slot);
    *slot = NULL;
    return slot;
}

COURSE_TEST(the_host_memory_is_pinned_so_that_copies_from_it_are_asynchronous, 2)
{
    void **slot = pointer_slot();
    trace_start();
    trace_stop();
    cudaError_t err;
    TRACED_RUN(err = both_directions_host_alloc(slot, (size_t)1 << 20));
    void *h_buffer = *slot;
    ck_assert_msg(err == cudaSuccess && h_buffer != NULL,
                  "both_directions_host_alloc(&h_buffer, 1 MiB) returned %s and stored %p",
                  error_text(err), h_buffer);
    const memory_location location = trace_locate(h_buffer);
    if (location == LOCATION_PAGEABLE_HOST) {
        TRACED_RUN(both_directions_host_free(h_buffer));
        ck_abort_msg("both_directions_host_alloc gave pageable host memory (from malloc, say). "
                     "A copy from or to pageable memory is not asynchronous: the driver stages it "
                     "through a pinned buffer of its own, and cudaMemcpyAsync returns only once "
                     "that is done, so copies from it cannot overlap. Allocate it with "
                     "cudaMallocHost (and give it back with cudaFreeHost)");
    }
    ck_assert_msg(location == LOCATION_PINNED_HOST,
                  "both_directions_host_alloc gave %s; the copies need pinned host memory, from "
                  "cudaMallocHost",
                  memory_location_name(location));
    memset(harness_learner_buffer(h_buffer, (size_t)1 << 20,
                                  "the buffer both_directions_host_alloc gave"),
           0x5A, (size_t)1 << 20); /* the whole of it is the caller's */
    TRACED_RUN(err = both_directions_host_free(h_buffer));
    ck_assert_msg(err == cudaSuccess, "both_directions_host_free returned %s", error_text(err));
    expect_everything_released("both_directions_host_alloc and both_directions_host_free");
    expect_every_failure_handled("both_directions_host_alloc", allocate_and_free, slot);
}

COURSE_TEST(the_two_copies_are_queued_on_two_streams_that_do_not_wait_for_each_other, 3)
{
    traced_copies();
    const char *problem = overlap_problem();
    ck_assert_msg(problem == NULL, "%s", problem);
}

COURSE_TEST(the_host_waits_for_both_streams_before_the_function_returns, 3)
{
    traced_copies();
    const char *problem = wait_problem();
    ck_assert_msg(problem == NULL, "%s", problem);
}

COURSE_TEST(every_stream_is_destroyed, 1)
{
    traced_copies();
    expect_everything_released("copy_both_directions");
}

COURSE_TEST(errors_are_returned_and_every_stream_still_destroyed, 2)
{
    both_copies c = make_copies(UP_BYTES, DOWN_BYTES);
    expect_every_failure_handled_and_waited_for("copy_both_directions", copy_them, &c);
}

/* --- The bandwidth ------------------------------------------------------------------------ */

/* The test's own copy in both directions, on its own buffers (pinned here too): two
 * non-blocking streams of its own. */
static double own_both_ms(const both_copies *c)
{
    cudaStream_t up, down;
    CUDA_CHECK(cudaStreamCreateWithFlags(&up, cudaStreamNonBlocking));
    CUDA_CHECK(cudaStreamCreateWithFlags(&down, cudaStreamNonBlocking));
    void *d_up_dst = harness_view(c->d_up_dst, c->up_bytes);
    const void *d_down_src = harness_view(c->d_down_src, c->down_bytes);
    const double start = host_clock_ms();
    CUDA_CHECK(cudaMemcpyAsync(d_up_dst, c->h_up_src, c->up_bytes, cudaMemcpyHostToDevice, up));
    CUDA_CHECK(
        cudaMemcpyAsync(c->h_down_dst, d_down_src, c->down_bytes, cudaMemcpyDeviceToHost, down));
    CUDA_CHECK(cudaStreamSynchronize(up));
    CUDA_CHECK(cudaStreamSynchronize(down));
    const double ms = host_clock_ms() - start;
    CUDA_CHECK(cudaStreamDestroy(up));
    CUDA_CHECK(cudaStreamDestroy(down));
    return ms;
}

static double learner_both_ms(both_copies *c)
{
    const double start = host_clock_ms();
    cudaError_t err = copy_them(c);
    const double ms = host_clock_ms() - start;
    ck_assert_msg(err == cudaSuccess, "copy_both_directions(256 MiB each way) returned %s",
                  error_text(err));
    return ms;
}

/* A timed call of copy_both_directions, both of whose copies are checked at a few places. */
static double checked_learner_both_ms(both_copies *c)
{
    harness_spots up, down;
    harness_spots_poison(&up, c->d_up_dst, c->up_bytes);
    harness_spots_poison(&down, c->h_down_dst, c->down_bytes);
    const double ms = learner_both_ms(c);
    harness_spots_expect(&up, c->h_up_src, "copy_both_directions' copy up (256 MiB)");
    harness_spots_expect(&down, c->want_down, "copy_both_directions' copy down (256 MiB)");
    return ms;
}

/* What the machine does: one way (the faster direction) and both ways on the test's own
 * streams, and what copy_both_directions did, each the median of a few runs, interleaved so
 * that a burst of noise hits all alike. */
typedef struct rates {
    double one_way, own_both, learner_both; /* GB/s */
} rates;

/* The machine's figures come from the test's own buffers (ref), the learner's from theirs (c). */
static rates measure_rates(both_copies *c, const both_copies *ref)
{
    enum { ROUNDS = 3 };
    double up_ms[ROUNDS], down_ms[ROUNDS], own_ms[ROUNDS], learner_ms[ROUNDS];
    for (int r = 0; r < ROUNDS; r++) {
        up_ms[r] = harness_time_copy_ms(ref->d_up_dst, ref->h_up_src, ref->up_bytes,
                                        cudaMemcpyHostToDevice);
        down_ms[r] = harness_time_copy_ms(ref->h_down_dst, ref->d_down_src, ref->down_bytes,
                                          cudaMemcpyDeviceToHost);
        own_ms[r] = own_both_ms(ref);
        learner_ms[r] = checked_learner_both_ms(c);
    }
    const size_t both = c->up_bytes + c->down_bytes;
    rates r = {fmax(bandwidth_gb_per_s(c->up_bytes, median_of(up_ms, ROUNDS)),
                    bandwidth_gb_per_s(c->down_bytes, median_of(down_ms, ROUNDS))),
               bandwidth_gb_per_s(both, median_of(own_ms, ROUNDS)),
               bandwidth_gb_per_s(both, median_of(learner_ms, ROUNDS))};
    return r;
}

/* 1.3 times one way; or, on a machine whose own two streams do not get there (one copy
 * engine, a link that is not full duplex), 85% of what they reach. What two streams reach varies
 * from one run to the next (docs/performance.md has the H200's): a bar near it fails correct code
 * on a busy moment, while copies that take turns move at most one way's rate, well below 1.3
 * times. */
#define TIMES_ONE_WAY 1.3
#define SHARE_OF_OWN 0.85

COURSE_TIMED_TEST(together_the_two_copies_move_well_ahead_of_one_way, 6)
{
    /* 256 MiB each way: about 5 ms on PCIe 5, long enough that a launch's microseconds and the
     * host clock's resolution do not matter. */
    const size_t bytes = (size_t)256 << 20;

    /* What may keep the copies apart, from a small traced call, to name it if they are. */
    traced_copies();
    const char *problem = overlap_problem();
    char note[1024];
    snprintf(note, sizeof note, "%s%s", problem ? " " : "", problem ? problem : "");

    both_copies c = {bytes, bytes, NULL, NULL, NULL, NULL, NULL};
    void **slot = pointer_slot();
    cudaError_t err = both_directions_host_alloc(slot, bytes);
    c.h_up_src = *slot;
    ck_assert_msg(err == cudaSuccess, "both_directions_host_alloc(256 MiB) returned %s",
                  error_text(err));
    err = both_directions_host_alloc(slot, bytes);
    c.h_down_dst = *slot;
    if (err != cudaSuccess) {
        both_directions_host_free(c.h_up_src);
        ck_abort_msg("both_directions_host_alloc(256 MiB) returned %s the second time",
                     error_text(err));
    }
    const bool pinned = trace_locate(c.h_up_src) == LOCATION_PINNED_HOST &&
                        trace_locate(c.h_down_dst) == LOCATION_PINNED_HOST;
    both_copies ref = {0, 0, NULL, NULL, NULL, NULL, NULL};
    if (pinned) {
        harness_learner_buffer(c.h_up_src, bytes, "the buffer both_directions_host_alloc gave");
        harness_learner_buffer(c.h_down_dst, bytes, "the buffer both_directions_host_alloc gave");
        ref = make_copies(bytes, bytes);
        prepare_copies(&c);
        (void)learner_both_ms(&c); /* the first call, checked and not timed */
        expect_both_arrived(&c);
    }

    /* Up to three tries: a shared machine can be busy for a moment, slow code is slow every
     * time. */
    enum { TRIES = 3 };
    rates r = {0, 0, 0};
    double due = 0;
    harness_gpu_alone_begin();
    for (int t = 0; pinned && t < TRIES; t++) {
        r = measure_rates(&c, &ref);
        due = fmin(TIMES_ONE_WAY * r.one_way, SHARE_OF_OWN * r.own_both);
        if (r.learner_both >= due)
            break;
    }
    harness_gpu_alone_end();
    both_directions_host_free(c.h_up_src);
    both_directions_host_free(c.h_down_dst);
    ck_assert_msg(pinned,
                  "both_directions_host_alloc gave pageable host memory: a copy from or to it is "
                  "not asynchronous (the driver stages it, and cudaMemcpyAsync waits for that), "
                  "so the two copies cannot overlap. Allocate it with cudaMallocHost");
    ck_assert_msg(r.learner_both >= due,
                  "copy_both_directions moved %.1f GB/s in total (256 MiB each way), short in "
                  "each of %d tries. One way alone moves %.1f GB/s here, and the test's own two "
                  "streams moved %.1f GB/s together, so at least %.1f GB/s is due (%.1f times "
                  "one way, or %.0f%% of the test's own where that is less): the two copies "
                  "did not run at the same time.%s",
                  r.learner_both, TRIES, r.one_way, r.own_both, due, TIMES_ONE_WAY,
                  100 * SHARE_OF_OWN, note);
    harness_note("Your two copies moved %.1f GB/s together: %.2f times one way alone (%.1f GB/s), "
                 "measured in the same run; the test's own two streams moved %.1f GB/s.",
                 r.learner_both, r.learner_both / r.one_way, r.one_way, r.own_both);
}

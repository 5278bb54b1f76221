/* split_copy.c - tests for exercises/ch06-two-gpus/split_copy.c (split_peer_copy).
 *
 * They run only where the machine has two GPUs or more (COURSE_EXERCISE_NEEDS_GPUS): with one,
 * the exercise is reported as skipped. The results the checker judges itself are the bytes that
 * arrived, each way between the first two GPUs, odd counts and a single byte included, read back
 * from a destination it poisoned, and whether the GPUs still had the copies' work to do when the
 * call returned (each half held up on its stream by a keep-busy kernel, trace_delay_async_copies:
 * a half nobody waited for then still runs). Which GPU was current when each stream was made,
 * which stream each half went to, where the host waited and which GPU is current afterwards are
 * the worker's word (the trace, harness_current_device). Each test starts with the first GPU
 * current.
 *
 * No test times the split copy. What it is for is speed: two copy engines, one on each GPU,
 * moving half the bytes each at the same time, where one cudaMemcpyPeer keeps one engine busy.
 * But a speed bar has to be set on a machine with two GPUs, which the course has not been lent,
 * and how much a second engine adds depends on the link (NVLink, a PCIe switch, the host bridge).
 * Once one is lent, a COURSE_TIMED_TEST should compare, in one window of the GPUs alone and
 * interleaved, split_peer_copy of some hundreds of MiB against one cudaMemcpyPeer of the same
 * bytes by the test itself, with peer access enabled both ways in the worker's context and
 * without, and set its bar from what the reference solution reaches there.
 */
#include "harness.h"
#include "split_copy.h"

#include <stdio.h>
#include <string.h>

COURSE_EXERCISE(
    "One copy between two GPUs, on both GPUs' copy engines",
    "Each GPU has copy engines of its own, and a copy queued on a stream is the work of the GPU "
    "the stream belongs to: the one current when it was made (section 6.3). Let the sender push "
    "half from a stream of its own while the receiver pulls the rest from one of its own, queue "
    "both before waiting for either, and put the caller's device back.\n\n"
    "size_t half = bytes / 2; int caller; cudaGetDevice(&caller); cudaSetDevice(src_device); "
    "cudaStreamCreate(&push); cudaMemcpyPeerAsync(dst, dst_device, src, src_device, half, push); "
    "cudaSetDevice(dst_device); cudaStreamCreate(&pull); cudaMemcpyPeerAsync((char *)dst + "
    "half, dst_device, (const char *)src + half, src_device, bytes - half, pull); then, on an "
    "error too, cudaStreamSynchronize each stream you made, cudaStreamDestroy it, "
    "cudaSetDevice(caller), and return the first error.");
COURSE_EXERCISE_NEEDS_GPUS(2);

#define COPY_BYTES (((size_t)2 << 20) + 3) /* odd: the halves differ by a byte */
#define DELAY_MS 20.0                      /* how long a test holds each half up on its stream */

/* One copy from GPU `from` to the other: src holds a pattern, dst the test's poison. */
typedef struct split_case {
    int from, to;
    size_t bytes;
    const void *src;
    void *dst;
    unsigned char *pattern; /* what src holds, in the checker's own memory */
} split_case;

static split_case prepare(int from, size_t bytes)
{
    split_case s = {.from = from, .to = 1 - from, .bytes = bytes};
    s.pattern = harness_private_alloc(bytes);
    fill_bytes(s.pattern, bytes);
    void *src = harness_device_alloc_on(from, bytes);
    harness_copy(src, s.pattern, bytes, cudaMemcpyHostToDevice);
    s.src = src;
    s.dst = harness_device_alloc_on(s.to, bytes); /* poisoned */
    return s;
}

static cudaError_t split_it(void *context)
{
    const split_case *s = context;
    return split_peer_copy(s->dst, s->to, s->src, s->from, s->bytes);
}

/* One call under a fresh trace, made with `caller` current; every half held up `held_ms`. */
static cudaError_t run_split(split_case *s, int caller, double held_ms)
{
    harness_set_device(caller);
    trace_start();
    trace_stop();
    trace_delay_async_copies(cudaMemcpyDefault, held_ms);
    cudaError_t err;
    TRACED_RUN(err = split_it(s));
    return err;
}

/* run_split from GPU 0, each half held up DELAY_MS, for harness_busy_after. */
typedef struct held_split {
    split_case *s;
    cudaError_t result;
} held_split;

static void split_held_up(void *argument)
{
    held_split *held = argument;
    held->result = run_split(held->s, 0, DELAY_MS);
}

static void expect_success(cudaError_t err, const split_case *s)
{
    ck_assert_msg(err == cudaSuccess,
                  "split_peer_copy of %zu bytes from GPU %d to GPU %d returned %s. The calls:%s",
                  s->bytes, s->from, s->to, error_text(err), trace_summary());
}

/* The mistake of splitting that a wrong result shows, if it is one; "" otherwise. */
static const char *split_mistake(const unsigned char *got, const split_case *s)
{
    const size_t half = s->bytes / 2, rest = s->bytes - half;
    if (s->bytes > 1 && first_differing_byte(got, s->pattern, s->bytes) == s->bytes - 1 &&
        holds_only_poison(got + s->bytes - 1, 1))
        return " Only the last byte is missing: for an odd count the two halves differ by one "
               "byte, the odd byte. The second half is bytes - bytes / 2 long, not bytes / 2.";
    if (memcmp(got + half, s->pattern, rest) == 0)
        return " The second half holds the bytes from the start of src: copy it from offset "
               "bytes / 2 of src as well as of dst.";
    if (holds_only_poison(got + half, rest))
        return " None of the second half arrived: it goes to dst + bytes / 2, from src + bytes "
               "/ 2, on the receiving GPU's stream, and must be waited for too.";
    return "";
}

COURSE_TEST(every_byte_arrives_each_way_odd_counts_and_a_single_byte_too, 4)
{
    const struct {
        int from;
        size_t bytes;
    } copies[] = {{0, COPY_BYTES}, {1, ((size_t)1 << 20) + 1}, {1, 1}};
    for (size_t k = 0; k < sizeof copies / sizeof copies[0]; k++) {
        split_case s = prepare(copies[k].from, copies[k].bytes);
        expect_success(run_split(&s, 0, 0), &s);
        unsigned char *got = harness_private_alloc(s.bytes);
        harness_copy(got, s.dst, s.bytes, cudaMemcpyDeviceToHost);
        char what[96], message[1024];
        snprintf(what, sizeof what, "the copy from GPU %d to GPU %d (read back by the test)",
                 s.from, s.to);
        if (describe_byte_mismatch(got, s.pattern, s.bytes, 1, what, message, sizeof message))
            ck_abort_msg("%s.%s The calls:%s", message, split_mistake(got, &s), trace_summary());
    }
}

COURSE_TEST(both_halves_are_queued_before_the_host_waits_for_either, 3)
{
    split_case s = prepare(0, COPY_BYTES);
    expect_success(run_split(&s, 0, 0), &s);
    ck_assert_msg(trace_count_of(TRACED_cudaMemcpyPeer) == 0,
                  "split_peer_copy copied with cudaMemcpyPeer, which returns only once its copy "
                  "has crossed: the other half cannot start meanwhile. Queue each half with "
                  "cudaMemcpyPeerAsync on its stream, then wait for both. The calls:%s",
                  trace_summary());
    const size_t halves = trace_count_of_gpu_copies();
    ck_assert_msg(halves >= 2,
                  "split_peer_copy queued %zu cop%s from one GPU to the other "
                  "(cudaMemcpyPeerAsync): it queues two halves, one on a stream of each GPU. The "
                  "calls:%s",
                  halves, halves == 1 ? "y" : "ies", trace_summary());
    const size_t first = trace_position(trace_nth_gpu_copy(1));
    const size_t last = trace_position(trace_nth_gpu_copy(halves));
    const traced_call *wait = trace_host_wait_between(first, last);
    ck_assert_msg(wait == NULL,
                  "the host waited for the GPU (%s, call %zu) between the first half's copy "
                  "(call %zu) and the second's (call %zu): the second copy engine sat idle until "
                  "the first half had crossed, so the halves took turns, as one copy would. "
                  "Queue both halves first, then wait for both streams. The calls:%s",
                  traced_function_name(wait->function), trace_position(wait) + 1, first + 1,
                  last + 1, trace_summary());
}

/* The bytes the copies between the GPUs carried on streams of each of the first two: a stream
 * is the GPU's that was current when the trace saw it made, a default stream the GPU current
 * at the copy (trace_stream_gpu). */
static void bytes_by_gpu(size_t carried[2])
{
    carried[0] = carried[1] = 0;
    for (size_t n = 1; n <= trace_count_of_gpu_copies(); n++) {
        const traced_call *copy = trace_nth_gpu_copy(n);
        const int gpu = trace_stream_gpu(copy->stream, copy);
        if (copy->result == cudaSuccess && (gpu == 0 || gpu == 1))
            carried[gpu] += copy->bytes;
    }
}

COURSE_TEST(each_half_goes_on_a_stream_of_its_own_gpu, 3)
{
    /* Each way with the receiver current: a stream made on whichever GPU is current shows. */
    for (int from = 1; from >= 0; from--) {
        split_case s = prepare(from, COPY_BYTES);
        expect_success(run_split(&s, s.to, 0), &s);
        size_t carried[2];
        bytes_by_gpu(carried);
        const size_t pushed = carried[s.from], pulled = carried[s.to];
        ck_assert_msg(pulled > 0,
                      "copying from GPU %d to GPU %d, every byte went on streams of GPU %d, the "
                      "sender: the receiver's copy engine sat idle. A stream belongs to the GPU "
                      "that was current when it was made: make the receiving GPU current "
                      "(cudaSetDevice(dst_device)) before creating the second stream, and queue "
                      "the second half on it, so that the receiver pulls while the sender "
                      "pushes. The calls:%s",
                      s.from, s.to, s.from, trace_summary());
        ck_assert_msg(pushed > 0,
                      "copying from GPU %d to GPU %d, every byte went on streams of GPU %d, the "
                      "receiver: the sender's copy engine sat idle. A stream belongs to the GPU "
                      "that was current when it was made: make the sending GPU current "
                      "(cudaSetDevice(src_device)) before creating the first stream, and queue "
                      "the first half on it. The calls:%s",
                      s.from, s.to, s.to, trace_summary());
        ck_assert_msg(pushed == s.bytes / 2 || pulled == s.bytes / 2,
                      "of the %zu bytes, the sender's streams carried %zu and the receiver's "
                      "%zu: split them in halves, bytes / 2 pushed by the sender and the rest "
                      "pulled by the receiver, so that both engines finish together. The calls:%s",
                      s.bytes, pushed, pulled, trace_summary());
    }
}

COURSE_TEST(the_device_that_was_current_is_current_again, 2)
{
    /* With the first GPU current, copying each way: code that leaves the last GPU it made current,
     * in whichever order it takes them, shows one way or the other. */
    for (int from = 0; from < 2; from++) {
        split_case s = prepare(from, COPY_BYTES);
        const cudaError_t err = run_split(&s, 0, 0);
        const int now = harness_current_device();
        ck_assert_msg(now == 0,
                      "GPU 0 was current when split_peer_copy was called to copy from GPU %d to "
                      "GPU %d, and GPU %d when it returned%s: the caller's next cudaMalloc or "
                      "kernel would go to the wrong GPU. Remember the current device "
                      "(cudaGetDevice) first and make it current again (cudaSetDevice) last. The "
                      "calls:%s",
                      s.from, s.to, now, err == cudaSuccess ? "" : " (with an error)",
                      trace_summary());
        expect_success(err, &s);
    }
}

COURSE_TEST(both_streams_are_destroyed, 1)
{
    split_case s = prepare(1, COPY_BYTES);
    const cudaError_t err = run_split(&s, 0, 0);
    expect_everything_released("split_peer_copy");
    expect_success(err, &s);
}

/* Whether the host waited, after the copy `half`, for what its stream held: for the stream
 * itself, or for another stream that waited (cudaStreamWaitEvent) for an event recorded on it
 * after the copy. */
static bool waited_for(const traced_call *half)
{
    const size_t at = trace_position(half);
    if (trace_wait_for_stream(half->stream, at) != NULL)
        return true;
    for (size_t i = at + 1; i < trace_count(); i++) {
        const traced_call *wait = trace_get(i);
        if (wait->function != TRACED_cudaStreamWaitEvent || wait->result != cudaSuccess)
            continue;
        const traced_call *record = trace_last_on_event(TRACED_cudaEventRecord, wait->event, i);
        if (record != NULL && record->result == cudaSuccess && record->stream == half->stream &&
            trace_position(record) > at && trace_wait_for_stream(wait->stream, i) != NULL)
            return true;
    }
    return false;
}

/* " Nothing waited for the stream of call 5, ..." for each half no call waited for; "" if none. */
static const char *unwaited_words(void)
{
    static char words[512];
    size_t used = 0;
    words[0] = '\0';
    for (size_t n = 1; n <= trace_count_of_gpu_copies(); n++) {
        const traced_call *half = trace_nth_gpu_copy(n);
        if (half->result == cudaSuccess && half->bytes > 0 && !waited_for(half))
            harness_append_text(words, sizeof words, &used,
                                " Nothing waited for the stream of call %zu, which copied %zu "
                                "bytes.",
                                trace_position(half) + 1, half->bytes);
    }
    return words;
}

COURSE_TEST(it_returns_only_once_both_halves_have_crossed, 2)
{
    split_case s = prepare(0, COPY_BYTES);
    held_split held = {&s, cudaSuccess};
    const double busy_ms = harness_busy_after(split_held_up, &held);
    const cudaError_t err = held.result;
    harness_results_compared(); /* what the GPUs still had to do, measured by the test */
    expect_success(err, &s);
    ck_assert_msg(busy_ms < DELAY_MS / 2,
                  "split_peer_copy returned while its copies still ran: the GPUs went on with "
                  "them for %.0f ms after the return (the test held each half up %g ms on its "
                  "stream, as a busy link would).%s cudaMemcpyPeerAsync only queues a copy, and "
                  "cudaStreamDestroy does not wait for it: synchronize both streams before "
                  "destroying them, or the caller reads dst before every byte is there. The "
                  "calls:%s",
                  busy_ms, DELAY_MS, unwaited_words(), trace_summary());
    /* Both halves run side by side, each held up alike: waiting for one of them also covers
     * most of the other, so what the GPUs had left cannot show a half nobody waited for. */
    const char *unwaited = unwaited_words();
    ck_assert_msg(unwaited[0] == '\0',
                  "split_peer_copy returned before it knew both halves had crossed:%s Its copy may "
                  "still be running when the caller reads dst (here it happened to be done, "
                  "since the other half, which was waited for, took as long). "
                  "cudaStreamDestroy does not wait: cudaStreamSynchronize each stream with a "
                  "half on it before destroying it. The calls:%s",
                  unwaited, trace_summary());
}

COURSE_TEST(errors_are_returned_after_waiting_and_the_device_that_was_current_restored, 3)
{
    /* Each run with the sender current: a path that returns with the receiver current shows. */
    split_case s = prepare(0, COPY_BYTES);
    expect_every_failure_handled_on_device("split_peer_copy", split_it, &s, s.from, true);
}

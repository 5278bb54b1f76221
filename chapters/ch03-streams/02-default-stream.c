/* 02-default-stream.c - the legacy default stream waits for everyone; other streams need not.
 *
 * Stream A is held busy by a kernel for a while (gpu_work_keep_busy). Then the host queues a
 * small copy on stream B, and in some scenarios another copy on a default stream in between.
 * The GPU's own timestamps (events, in milliseconds after A's kernel started) show which copy
 * waited for A's kernel:
 *
 *   1. A and B made by cudaStreamCreate, nothing on a default stream: B does not wait.
 *   2. The same with a copy on the legacy default stream (stream 0) in between: that copy waits
 *      for all the work queued before it in every blocking stream, so for A's kernel, and B's
 *      copy waits for it in turn. The legacy default stream synchronises implicitly.
 *   3. A and B made with cudaStreamNonBlocking: the legacy default stream leaves them alone.
 *   4. cudaStreamPerThread, the per-thread default stream, instead of stream 0: an ordinary
 *      stream of the calling thread, which waits for no other stream.
 *
 * Scenario 4 names cudaStreamPerThread explicitly, which needs nothing special at build time. A
 * program can also make stream 0 itself mean the per-thread stream: compile with nvcc
 * --default-stream per-thread, or define CUDA_API_PER_THREAD_DEFAULT_STREAM before including
 * the CUDA runtime's header, which then maps each call that takes a stream to its _ptsz
 * ("per-thread, stream zero") variant, cudaMemcpyAsync to cudaMemcpyAsync_ptsz and so on.
 *
 *     02-default-stream [--busy MS] [--size SIZE]
 *
 * The verdict is on the copies' data; the timestamps are printed and compared with what the
 * rules predict, and a runtime that runs everything at once (the course's stand-in) says so.
 */
#include "chapter.h"
#include "cuda_check.h"
#include "gpu_work.h"
#include "units.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define POISON 0xFF

static const char usage[] =
    "[--busy MS] [--size SIZE]\n"
    "       --busy  how long stream A's kernel runs, in milliseconds, 10 to 5000 (default 100)\n"
    "       --size  bytes per copy; K, M, G multiply by 1024 (default 4M)";

typedef struct options {
    int busy_ms;
    size_t bytes;
} options;

static options parse_options(int argc, char **argv)
{
    options opt = {.busy_ms = 100, .bytes = (size_t)4 << 20};
    const option_spec specs[] = {
        {"--busy", OPTION_COUNT, &opt.busy_ms, 10, 5000},
        {"--size", OPTION_SIZE, &opt.bytes, 0, 0},
    };
    options_parse(argc, argv, usage, specs, sizeof specs / sizeof specs[0]);
    if (opt.bytes > ((size_t)1 << 30))
        usage_error(argv[0], usage, "--size: %zu bytes is more than 1G", opt.bytes);
    return opt;
}

typedef struct scenario {
    const char *title;
    unsigned stream_flags;    /* for A and B */
    bool copy_in_between;     /* a copy on `between` after A's kernel, before B's copy */
    cudaStream_t between;     /* 0: the legacy default stream; or cudaStreamPerThread */
    bool between_waits_for_a; /* what the rules predict */
    bool b_waits_for_a;
} scenario;

typedef struct buffers {
    unsigned char *d_src, *h_expected;
    unsigned char *h_between_dst, *h_b_dst; /* pinned, so that the copies are asynchronous */
    size_t bytes;
} buffers;

typedef struct timestamps {
    float a_done, between_done, b_done; /* ms after A's kernel started; between: -1 if none */
} timestamps;

/* listing: scenario */
static timestamps run_scenario(const scenario *s, const buffers *b, double busy_ms)
{
    cudaStream_t a, other;
    cudaEvent_t started, a_done, between_done, b_done;
    CUDA_CHECK(cudaStreamCreateWithFlags(&a, s->stream_flags));
    CUDA_CHECK(cudaStreamCreateWithFlags(&other, s->stream_flags)); /* stream B */
    CUDA_CHECK(cudaEventCreate(&started));
    CUDA_CHECK(cudaEventCreate(&a_done));
    CUDA_CHECK(cudaEventCreate(&between_done));
    CUDA_CHECK(cudaEventCreate(&b_done));
    CUDA_CHECK(cudaDeviceSynchronize()); /* nothing left over from before */

    CUDA_CHECK(cudaEventRecord(started, a));
    CUDA_CHECK(gpu_work_keep_busy(a, busy_ms)); /* A is busy for busy_ms */
    CUDA_CHECK(cudaEventRecord(a_done, a));
    if (s->copy_in_between) {
        CUDA_CHECK(cudaMemcpyAsync(b->h_between_dst, b->d_src, b->bytes, cudaMemcpyDeviceToHost,
                                   s->between));
        CUDA_CHECK(cudaEventRecord(between_done, s->between));
    }
    CUDA_CHECK(cudaMemcpyAsync(b->h_b_dst, b->d_src, b->bytes, cudaMemcpyDeviceToHost, other));
    CUDA_CHECK(cudaEventRecord(b_done, other));
    CUDA_CHECK(cudaDeviceSynchronize());

    timestamps t = {.between_done = -1};
    CUDA_CHECK(cudaEventElapsedTime(&t.a_done, started, a_done));
    CUDA_CHECK(cudaEventElapsedTime(&t.b_done, started, b_done));
    if (s->copy_in_between)
        CUDA_CHECK(cudaEventElapsedTime(&t.between_done, started, between_done));
    /* end listing: scenario */
    CUDA_CHECK(cudaEventDestroy(started));
    CUDA_CHECK(cudaEventDestroy(a_done));
    CUDA_CHECK(cudaEventDestroy(between_done));
    CUDA_CHECK(cudaEventDestroy(b_done));
    CUDA_CHECK(cudaStreamDestroy(a));
    CUDA_CHECK(cudaStreamDestroy(other));
    return t;
}

/* Whether a copy that finished at done_ms waited for A's kernel of busy_ms. */
static bool waited(float done_ms, double busy_ms)
{
    return done_ms >= 0.9 * busy_ms;
}

int main(int argc, char **argv)
{
    options opt = parse_options(argc, argv);
    const char *failure = NULL;
    char size[32];
    buffers b = {.bytes = opt.bytes};
    b.h_expected = host_alloc(b.bytes);
    fill_pattern(b.h_expected, b.bytes);
    CUDA_CHECK(cudaMalloc((void **)&b.d_src, b.bytes));
    CUDA_CHECK(cudaMallocHost((void **)&b.h_between_dst, b.bytes));
    CUDA_CHECK(cudaMallocHost((void **)&b.h_b_dst, b.bytes));
    CUDA_CHECK(cudaMemcpy(b.d_src, b.h_expected, b.bytes, cudaMemcpyHostToDevice));
    gpu_work_require("to hold stream A busy");
    CUDA_CHECK(gpu_work_keep_busy(0, 0)); /* loads the kernel into the context, untimed */

    const scenario scenarios[] = {
        {"1. streams A and B (cudaStreamCreate), nothing on a default stream", cudaStreamDefault,
         false, 0, false, false},
        {"2. the same, with a copy on the legacy default stream (0) in between", cudaStreamDefault,
         true, 0, true, true},
        {"3. A and B made with cudaStreamNonBlocking, the copy on stream 0 in between",
         cudaStreamNonBlocking, true, 0, false, false},
        {"4. A and B (cudaStreamCreate), the copy on cudaStreamPerThread in between",
         cudaStreamDefault, true, cudaStreamPerThread, false, false},
    };
    printf("Stream A runs a %d ms kernel; then %s copies to the host are queued.\n"
           "Each time is when the GPU finished that work, in ms after A's kernel started.\n\n",
           opt.busy_ms, format_bytes(b.bytes, size, sizeof size));
    int as_predicted = 0, count = (int)(sizeof scenarios / sizeof scenarios[0]);
    for (int i = 0; i < count; i++) {
        const scenario *s = &scenarios[i];
        memset(b.h_between_dst, POISON, b.bytes);
        memset(b.h_b_dst, POISON, b.bytes);
        timestamps t = run_scenario(s, &b, opt.busy_ms);
        printf("%s\n   A's kernel done %8.2f ms", s->title, t.a_done);
        if (s->copy_in_between)
            printf(", the copy in between %8.2f ms", t.between_done);
        printf(", B's copy %8.2f ms\n", t.b_done);
        bool predicted =
            waited(t.b_done, opt.busy_ms) == s->b_waits_for_a &&
            (!s->copy_in_between || waited(t.between_done, opt.busy_ms) == s->between_waits_for_a);
        as_predicted += predicted;
        printf("   %s%s\n",
               s->b_waits_for_a ? "predicted: B's copy waits for A's kernel, through the copy on "
                                  "stream 0"
                                : "predicted: B's copy does not wait for A's kernel",
               predicted ? "; so it went" : "; NOT SO HERE");
        if (memcmp(b.h_b_dst, b.h_expected, b.bytes) != 0 ||
            (s->copy_in_between && memcmp(b.h_between_dst, b.h_expected, b.bytes) != 0))
            failure = "a copy to the host did not deliver its data";
    }
    if (as_predicted == count)
        printf("\nEvery timestamp is as the rules predict: only the legacy default stream made B "
               "wait.\n");
    else
        printf("\n%d of %d scenarios went as the rules predict. A runtime that runs each call at "
               "once,\nas the course's stand-in for machines without a GPU does, cannot show "
               "streams at all.\n",
               as_predicted, count);

    CUDA_CHECK(cudaFreeHost(b.h_b_dst));
    CUDA_CHECK(cudaFreeHost(b.h_between_dst));
    CUDA_CHECK(cudaFree(b.d_src));
    free(b.h_expected);
    if (failure == NULL)
        printf("verified: every copy delivered its %s\n", size);
    return verdict(failure);
}

/* read_mostly.c - tests for exercises/ch04-managed/read_mostly.c (read_mostly_sums).
 *
 * The managed buffer is the learner's, in the worker, out of the checker's reach: the results
 * are judged where the test gave them room, the GPU's sums in its device memory (read through
 * IPC the moment the function returned, while the test holds each of the learner's kernels up
 * with trace_delay_kernels, so that a return before the kernels are done leaves poison), the
 * host's sums in its shared host memory. The advice is read from the trace: which advice, on
 * what range, before which kernel, and whether anything undid it. Advice changes where pages
 * live, not what is read, so no result can show it; on the stand-in runtime it is only checked.
 */
#include "gpu_work.h"
#include "harness.h"
#include "read_mostly.h"

#include <stdio.h>
#include <string.h>

COURSE_EXERCISE(
    "Read-mostly managed memory",
    "One managed buffer, written once by the host, then read round after round by a kernel and "
    "by the host at the same time. A managed page lives on one side at a time, so each side's "
    "reads pull it back from the other. What can the driver be told about this buffer, so that "
    "each side keeps a copy to read? And when must it be told?\n\n"
    "cudaMallocManaged(&data, bytes, cudaMemAttachGlobal), bytes = n * sizeof(unsigned); "
    "memcpy h_data into it; cudaMemAdvise(data, bytes, cudaMemAdviseSetReadMostly, (struct "
    "cudaMemLocation){.type = cudaMemLocationTypeDevice, .id = device}) before the first "
    "kernel (device from cudaGetDevice; read-mostly ignores it). Then for each round r: "
    "gpu_work_checksum(0, data, bytes, 1, &d_sums[r]) and h_sums[r] = "
    "gpu_work_checksum_host(data, bytes, 1). cudaDeviceSynchronize, cudaFree, on the error "
    "paths too.");
COURSE_EXERCISE_WORK_QUEUES(1);

enum { N = (1 << 20) + 5, ROUNDS = 3 }; /* 4 MiB and a few words */
#define BYTES ((size_t)N * sizeof(unsigned))
#define DELAY_MS 20.0 /* how long the test holds each of the learner's kernels up */

typedef struct job {
    unsigned *h_data;
    const unsigned *data; /* what h_data holds: the test's own copy */
    size_t n;
    unsigned rounds;
    unsigned long long *d_sums, *h_sums;
} job;

static job make_job(size_t n, unsigned rounds)
{
    job j;
    j.n = n;
    j.rounds = rounds;
    j.h_data = harness_host_alloc(n * sizeof(unsigned));
    fill_bytes(j.h_data, n * sizeof(unsigned));
    j.data = harness_expected(j.h_data, n * sizeof(unsigned));
    j.d_sums = harness_device_alloc(rounds * sizeof(unsigned long long));
    j.h_sums = harness_host_alloc(rounds * sizeof(unsigned long long));
    return j;
}

static cudaError_t run_read_mostly(void *context)
{
    job *j = context;
    return read_mostly_sums(j->h_data, j->n, j->rounds, j->d_sums, j->h_sums);
}

/* The advice that named anything but the managed buffer, if any. */
static const traced_call *advice_elsewhere(const void *buffer)
{
    for (size_t i = 1; i <= trace_count_of(TRACED_cudaMemAdvise); i++)
        if (trace_nth(TRACED_cudaMemAdvise, i)->dst != buffer)
            return trace_nth(TRACED_cudaMemAdvise, i);
    return NULL;
}

static const void *managed_buffer(void)
{
    const traced_call *allocated = trace_nth(TRACED_cudaMallocManaged, 1);
    return allocated != NULL && allocated->result == cudaSuccess ? allocated->handle : NULL;
}

static void expect_success(cudaError_t err)
{
    const traced_call *elsewhere = advice_elsewhere(managed_buffer());
    if (err != cudaSuccess && elsewhere != NULL)
        ck_abort_msg("read_mostly_sums returned %s, after it advised %s at %p, not the managed "
                     "buffer: advice is for managed memory, the buffer cudaMallocManaged gave, "
                     "which both sides read. The calls:%s",
                     error_text(err), memory_location_name(elsewhere->dst_location), elsewhere->dst,
                     trace_timeline());
    ck_assert_msg(err == cudaSuccess,
                  "read_mostly_sums returned %s. What it did, when and where:%s", error_text(err),
                  trace_timeline());
}

/* The GPU's sums, read by the test: as they were when read_mostly_sums returned, and once
 * nothing of the worker's was left running. */
typedef struct gpu_sums {
    unsigned long long *at_return, *at_the_end;
} gpu_sums;

static unsigned long long *read_gpu_sums(const job *j)
{
    unsigned long long *sums = harness_private_alloc(j->rounds * sizeof(unsigned long long));
    harness_copy(sums, j->d_sums, j->rounds * sizeof(unsigned long long), cudaMemcpyDeviceToHost);
    return sums;
}

/* Runs read_mostly_sums under the trace, each kernel held up, and expects success. */
static gpu_sums run_delayed(job *j)
{
    trace_start();
    trace_stop();
    trace_delay_kernels(DELAY_MS);
    cudaError_t err;
    TRACED_RUN(err = run_read_mostly(j));
    gpu_sums seen;
    seen.at_return = read_gpu_sums(j);
    harness_synchronize_untraced(); /* what it left queued: nothing may still run */
    seen.at_the_end = read_gpu_sums(j);
    expect_success(err);
    return seen;
}

/* Fails unless every sum in got is want, saying which side's sum was wrong, and how; `later`,
 * for the GPU's, is what the sums became once nothing was left running. */
static void expect_sums(const unsigned long long *got, const unsigned long long *later,
                        const job *j, const char *side)
{
    const size_t bytes = j->n * sizeof(unsigned);
    const unsigned long long want = gpu_work_checksum_host(j->data, bytes, 1);
    for (unsigned r = 0; r < j->rounds; r++) {
        if (got[r] == want)
            continue;
        if (holds_only_poison(&got[r], sizeof got[r]) && later != NULL && later[r] == want)
            ck_abort_msg("%s[%u] still held the test's poison when read_mostly_sums returned, "
                         "and the right sum only later: its kernel had not run yet (the test "
                         "held each kernel up %.0f ms, as a busy GPU would). A launch only "
                         "queues the kernel: wait for the kernels before returning. The calls:%s",
                         side, r, DELAY_MS, trace_timeline());
        if (holds_only_poison(&got[r], sizeof got[r]))
            ck_abort_msg("%s[%u] still holds the test's poison: nothing was written there. Round "
                         "r's sums go to d_sums[r] and h_sums[r]. The calls:%s",
                         side, r, trace_timeline());
        if (j->n % sizeof(unsigned) == 0 && got[r] == gpu_work_checksum_host(j->data, j->n, 1))
            ck_abort_msg("%s[%u] is the sum of the first n bytes, a quarter of the buffer: the "
                         "size is in bytes, n * sizeof(unsigned) = %zu. The calls:%s",
                         side, r, bytes, trace_timeline());
        for (unsigned passes = 2; passes <= 4; passes++)
            if (got[r] == gpu_work_checksum_host(j->data, bytes, passes))
                ck_abort_msg("%s[%u] is %u times the sum: one pass over the buffer per round. "
                             "The calls:%s",
                             side, r, passes, trace_timeline());
        ck_abort_msg("%s[%u] is %llu where the sum of the %zu words is %llu. The calls:%s", side, r,
                     got[r], j->n, want, trace_timeline());
    }
}

COURSE_TEST(every_round_sums_the_buffer_right_on_the_gpu_and_on_the_host, 3)
{
    const struct {
        size_t n;
        unsigned rounds;
    } sizes[] = {{N, ROUNDS}, {1, 1}, {4099, 5}};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        job j = make_job(sizes[s].n, sizes[s].rounds);
        const gpu_sums seen = run_delayed(&j);
        harness_results_compared();
        expect_sums(seen.at_return, seen.at_the_end, &j, "d_sums");
        expect_sums(j.h_sums, NULL, &j, "h_sums");
    }
}

/* --- The advice, from the trace ------------------------------------------------------------ */

static bool undoes_read_mostly(const traced_call *call)
{
    return call->function == TRACED_cudaMemAdvise && call->advice == cudaMemAdviseUnsetReadMostly;
}

/* The kernels: one per round, each the whole buffer into its own sum. */
static void expect_kernels(const void *buffer, const job *j)
{
    ck_assert_msg(trace_count_of(TRACED_gpu_work_checksum) == j->rounds,
                  "read_mostly_sums launched %zu gpu_work_checksum kernels for %u rounds: one a "
                  "round. The calls:%s",
                  trace_count_of(TRACED_gpu_work_checksum), j->rounds, trace_summary());
    for (unsigned r = 0; r < j->rounds; r++) {
        const traced_call *kernel = trace_nth(TRACED_gpu_work_checksum, r + 1);
        ck_assert_msg(kernel->src == buffer && kernel->bytes == BYTES &&
                          kernel->dst == (void *)&j->d_sums[r],
                      "kernel %u summed %zu bytes of %s memory into %p: each round's kernel sums "
                      "the whole managed buffer, n * sizeof(unsigned) = %zu bytes, into "
                      "&d_sums[r]. The calls:%s",
                      r + 1, kernel->bytes, memory_location_name(kernel->src_location), kernel->dst,
                      BYTES, trace_summary());
    }
}

/* The first read-mostly advice, wherever it went; NULL if none. */
static const traced_call *first_read_mostly(void)
{
    for (size_t i = 1; i <= trace_count_of(TRACED_cudaMemAdvise); i++)
        if (trace_nth(TRACED_cudaMemAdvise, i)->advice == cudaMemAdviseSetReadMostly)
            return trace_nth(TRACED_cudaMemAdvise, i);
    return NULL;
}

static void expect_read_mostly_advice(const void *buffer)
{
    const traced_call *advice = first_read_mostly();
    const traced_call *other = trace_nth(TRACED_cudaMemAdvise, 1);
    if (advice == NULL && other != NULL)
        ck_abort_msg("read_mostly_sums advised %s%s%s, not cudaMemAdviseSetReadMostly. That "
                     "advice keeps one copy of each page, on the side it names, and the other "
                     "side's reads still fault or cross the link, round after round; "
                     "read-mostly lets every side that reads a page keep a read-only copy of "
                     "its own. The calls:%s",
                     mem_advice_name(other->advice),
                     other->advice == cudaMemAdviseSetPreferredLocation ? " for " : "",
                     other->advice == cudaMemAdviseSetPreferredLocation
                         ? mem_location_words(other->location)
                         : "",
                     trace_summary());
    ck_assert_msg(advice != NULL,
                  "read_mostly_sums gave no advice: without it, the kernel's reads pull each page "
                  "to the GPU and the host's pull it back, every round. Advise the buffer "
                  "cudaMemAdviseSetReadMostly with cudaMemAdvise before the first kernel. The "
                  "calls:%s",
                  trace_summary());
    ck_assert_msg(advice->dst == buffer,
                  "the read-mostly advice named %s at %p, not the managed buffer at %p. The "
                  "calls:%s",
                  memory_location_name(advice->dst_location), advice->dst, buffer, trace_summary());
    if (advice->bytes == (size_t)N)
        ck_abort_msg("the read-mostly advice covered %zu bytes, which is n, the number of words: "
                     "only the first quarter of the buffer is read-mostly, and the rest of its "
                     "pages still travel to and fro. The size is in bytes: n * sizeof(unsigned) "
                     "= %zu. The calls:%s",
                     advice->bytes, BYTES, trace_summary());
    ck_assert_msg(advice->bytes == BYTES,
                  "the read-mostly advice covered %zu bytes of the %zu-byte buffer: advise all of "
                  "it, n * sizeof(unsigned) bytes. The calls:%s",
                  advice->bytes, BYTES, trace_summary());
    const traced_call *first_kernel = trace_nth(TRACED_gpu_work_checksum, 1);
    ck_assert_msg(trace_position(advice) < trace_position(first_kernel),
                  "the read-mostly advice came after the first kernel: that kernel's reads moved "
                  "the pages to the GPU, and the host's sum moved them back, before the driver "
                  "was told. Advise the buffer once the host has written it, before any kernel "
                  "reads it. The calls:%s",
                  trace_summary());
    const traced_call *last_kernel =
        trace_nth(TRACED_gpu_work_checksum, trace_count_of(TRACED_gpu_work_checksum));
    for (size_t i = trace_position(advice) + 1; i < trace_position(last_kernel); i++)
        ck_assert_msg(!undoes_read_mostly(trace_get(i)),
                      "read_mostly_sums undid its advice with cudaMemAdviseUnsetReadMostly "
                      "(call %zu) while kernels were still to read the buffer: the copies go, and "
                      "the pages travel again. Advise once and leave it: the host's reads are "
                      "reads, which read-mostly is for. The calls:%s",
                      i + 1, trace_summary());
}

COURSE_TEST(the_whole_buffer_is_advised_read_mostly_before_the_first_kernel, 3)
{
    job j = make_job(N, ROUNDS);
    (void)run_delayed(&j);
    const void *buffer = managed_buffer();
    ck_assert_msg(buffer != NULL,
                  "read_mostly_sums allocated no managed memory: the buffer both sides read "
                  "comes from cudaMallocManaged. The calls:%s",
                  trace_summary());
    expect_kernels(buffer, &j);
    expect_read_mostly_advice(buffer);
}

COURSE_TEST(the_buffer_is_freed, 1)
{
    job j = make_job(N, ROUNDS);
    (void)run_delayed(&j);
    expect_everything_released("read_mostly_sums");
}

COURSE_TEST(errors_are_returned_and_the_buffer_still_freed, 2)
{
    job j = make_job(4096, 2);
    expect_every_failure_handled("read_mostly_sums", run_read_mostly, &j);
    harness_synchronize_untraced();
}

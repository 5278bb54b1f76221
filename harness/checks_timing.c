/* checks_timing.c - the harness's own measurements, to compare a learner's figures with.
 *
 * Timing tests never compare with a fixed number: the test measures the same
 * thing itself, in the same process, just before or after the learner's code,
 * with CUDA events, and accepts a ratio. Tracing is off here, so none of
 * these calls shows up in the learner's trace.
 */
#include "harness.h"
#include "timing.h"
#include "units.h"

#include <stdlib.h>

/* Whether the running test was declared with COURSE_TIMED_TEST (runner.c). */
bool course_test_is_timed(void);

static void expect_timed_test(void)
{
    ck_assert_msg(course_test_is_timed() && harness_gpu_is_alone(),
                  "the course's test times the GPU outside harness_gpu_alone_begin() and _end() "
                  "of a COURSE_TIMED_TEST, so it may share the GPU with other tests while it "
                  "measures (a bug in the course)");
}

double harness_time_copy_ms(void *dst, const void *src, size_t bytes, enum cudaMemcpyKind kind)
{
    expect_timed_test();
    /* event_timer reports through CUDA_CHECK, whose handler fails the test. */
    event_timer timer;
    float ms = 0;
    (void)event_timer_create(&timer);
    (void)event_timer_start(&timer, 0);
    harness_copy(dst, src, bytes, kind);
    (void)event_timer_stop(&timer, 0, &ms);
    (void)event_timer_destroy(&timer);
    return ms;
}

double harness_bandwidth_gb_per_s(size_t bytes, enum cudaMemcpyKind kind, int runs)
{
    expect_timed_test();
    void *h_buffer = NULL, *d_buffer = NULL;
    /* The harness's own pinned buffer: pinning it is not what is timed, so the worker's pool may
     * serve it and keep it, even while the GPU is alone (pinned_pool.c). */
    pinned_pool_set_measuring(false);
    CUDA_CHECK(cudaMallocHost(&h_buffer, bytes));
    pinned_pool_set_measuring(true);
    CUDA_CHECK(cudaMalloc(&d_buffer, bytes));
    const bool up = kind == cudaMemcpyHostToDevice;
    void *dst = up ? d_buffer : h_buffer;
    const void *src = up ? h_buffer : d_buffer;

    double *ms = calloc((size_t)runs, sizeof *ms);
    ck_assert_msg(ms != NULL, "the test could not allocate %d doubles", runs);
    harness_copy(dst, src, bytes, kind); /* warm-up, not timed */
    for (int r = 0; r < runs; r++)
        ms[r] = harness_time_copy_ms(dst, src, bytes, kind);
    double gb_per_s = bandwidth_gb_per_s(bytes, median_of(ms, (size_t)runs));

    free(ms);
    CUDA_CHECK(cudaFree(d_buffer));
    pinned_pool_set_measuring(false);
    CUDA_CHECK(cudaFreeHost(h_buffer));
    pinned_pool_set_measuring(true);
    return gb_per_s;
}

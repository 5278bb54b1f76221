/* roundtrip.c - tests for exercises/ch01-memory/roundtrip.c (roundtrip_floats). */
#include "harness.h"
#include "roundtrip.h"

#include <stdlib.h>

COURSE_EXERCISE(
    "Allocate, copy up, copy back, free",
    "Four steps, each a runtime call that returns a cudaError_t: make a device buffer, copy the "
    "floats up, copy them back, give the buffer back. Sizes are in bytes, not floats (section "
    "1.3). Decide what happens when a step fails: which steps still run, and which error the "
    "function returns.\n\n"
    "Four calls: cudaMalloc(&d_buffer, bytes); cudaMemcpy(d_buffer, h_in, bytes, "
    "cudaMemcpyHostToDevice); cudaMemcpy(h_out, d_buffer, bytes, cudaMemcpyDeviceToHost); "
    "cudaFree(d_buffer). bytes is n * sizeof(float): the runtime counts bytes. Each call "
    "returns a cudaError_t; keep the first one that is not cudaSuccess, skip the copies after "
    "it, free the buffer anyway, and return it.");
COURSE_EXERCISE_WORK_QUEUES(1);

/* Runs roundtrip_floats on n recognisable floats into a poisoned output; the
 * trace holds its calls afterwards. */
static cudaError_t run_roundtrip(size_t n, float **h_in, float **h_out)
{
    *h_in = harness_host_alloc(n * sizeof(float));
    *h_out = harness_host_alloc(n * sizeof(float));
    fill_floats(*h_in, n);
    cudaError_t err;
    TRACED_RUN(err = roundtrip_floats(*h_in, *h_out, n));
    return err;
}

static void expect_success(cudaError_t err)
{
    ck_assert_msg(err == cudaSuccess, "roundtrip_floats returned %s. The calls it made were:%s",
                  error_text(err), trace_summary());
}

COURSE_TEST(the_floats_come_back_unchanged, 3)
{
    float *h_in, *h_out;
    cudaError_t err = run_roundtrip(1024, &h_in, &h_out);
    expect_success(err);
    expect_floats_arrived(h_out, h_in, 1024, "the copy back");
}

COURSE_TEST(each_copy_moves_4_bytes_per_float_in_the_right_direction, 2)
{
    float *h_in, *h_out;
    run_roundtrip(1024, &h_in, &h_out);
    expect_memcpy(1, 1024 * sizeof(float), sizeof(float), cudaMemcpyHostToDevice,
                  "the copy up, h_in to the device");
    expect_memcpy(2, 1024 * sizeof(float), sizeof(float), cudaMemcpyDeviceToHost,
                  "the copy back, the device to h_out");
    ck_assert_msg(trace_count_of(TRACED_cudaMemcpy) == 2,
                  "roundtrip_floats made %zu cudaMemcpy calls; two are enough. The calls:%s",
                  trace_count_of(TRACED_cudaMemcpy), trace_summary());
}

COURSE_TEST(the_device_buffer_is_allocated_once_and_freed, 1)
{
    float *h_in, *h_out;
    run_roundtrip(1024, &h_in, &h_out);
    const traced_call *allocation = trace_nth(TRACED_cudaMalloc, 1);
    ck_assert_msg(allocation != NULL, "roundtrip_floats never called cudaMalloc%s. The calls:%s",
                  trace_count_of(TRACED_cudaMallocManaged)
                      ? ": it took managed memory (cudaMallocManaged), which the runtime moves "
                        "between host and GPU by itself; the device buffer this exercise asks for "
                        "comes from cudaMalloc, and only the GPU can reach it"
                      : "",
                  trace_summary());
    ck_assert_msg(allocation->bytes == 1024 * sizeof(float),
                  "cudaMalloc was asked for %zu bytes for 1024 floats; it needs %zu "
                  "(n * sizeof(float))",
                  allocation->bytes, 1024 * sizeof(float));
    ck_assert_msg(trace_count_of(TRACED_cudaMalloc) == 1,
                  "roundtrip_floats called cudaMalloc %zu times; one buffer is enough",
                  trace_count_of(TRACED_cudaMalloc));
    expect_everything_released("roundtrip_floats");
}

COURSE_TEST(a_failed_cudaMalloc_is_returned_and_nothing_is_copied, 1)
{
    trace_inject_failure(TRACED_cudaMalloc, 1, cudaErrorMemoryAllocation);
    float *h_in, *h_out;
    cudaError_t err = run_roundtrip(1024, &h_in, &h_out);
    ck_assert_msg(err == cudaErrorMemoryAllocation,
                  "the test made cudaMalloc fail with cudaErrorMemoryAllocation, but "
                  "roundtrip_floats returned %s: check cudaMalloc's result and return it",
                  error_text(err));
    ck_assert_msg(trace_count_of(TRACED_cudaMemcpy) == 0,
                  "cudaMalloc failed, yet roundtrip_floats went on to copy: there is no buffer "
                  "to copy into. The calls:%s",
                  trace_summary());
}

COURSE_TEST(a_failed_copy_up_is_returned_and_the_buffer_still_freed, 1)
{
    trace_inject_failure(TRACED_cudaMemcpy, 1, cudaErrorInvalidValue);
    float *h_in, *h_out;
    cudaError_t err = run_roundtrip(1024, &h_in, &h_out);
    ck_assert_msg(err == cudaErrorInvalidValue,
                  "the test made the copy up fail with cudaErrorInvalidValue, but "
                  "roundtrip_floats returned %s: check every return value and pass the error "
                  "on. The calls:%s",
                  error_text(err), trace_summary());
    ck_assert_msg(trace_count_of(TRACED_cudaMemcpy) == 1,
                  "the copy up failed, yet roundtrip_floats copied again: stop at the first "
                  "error. The calls:%s",
                  trace_summary());
    expect_everything_released("roundtrip_floats, after the copy up failed,");
}

COURSE_TEST(a_failed_copy_back_is_returned_and_the_buffer_still_freed, 1)
{
    trace_inject_failure(TRACED_cudaMemcpy, 2, cudaErrorLaunchFailure);
    float *h_in, *h_out;
    cudaError_t err = run_roundtrip(1024, &h_in, &h_out);
    ck_assert_msg(err == cudaErrorLaunchFailure,
                  "the test made the copy back fail with cudaErrorLaunchFailure, but "
                  "roundtrip_floats returned %s: check every return value and pass the error "
                  "on. The calls:%s",
                  error_text(err), trace_summary());
    expect_everything_released("roundtrip_floats, after the copy back failed,");
}

COURSE_TEST(a_256_MiB_buffer_survives_the_round_trip, 1)
{
    const size_t n = (size_t)64 << 20; /* 64 Mi floats, 256 MiB */
    float *h_in, *h_out;
    cudaError_t err = run_roundtrip(n, &h_in, &h_out);
    expect_success(err);
    expect_floats_arrived(h_out, h_in, n, "the copy back");
    harness_host_free(h_in);
    harness_host_free(h_out);
}

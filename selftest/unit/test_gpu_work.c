/* test_gpu_work.c - unit tests of the kernels' C interface that need no GPU.
 *
 * Every bad argument must be refused before the CUDA runtime is touched: the
 * refusal is then cudaErrorInvalidValue on any machine, where a call that
 * reached the runtime would say there is no device (or, on a GPU, launch a
 * kernel on a NULL pointer). The host checksum is the GPU's reference.
 */
#include "gpu_work.h"
#include "unit_main.h"

#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

static float d_floats[64];           /* never dereferenced: the calls are all refused */
static unsigned long long d_sums[2]; /* 8-byte aligned */
static const cudaStream_t stream = NULL;

START_TEST(keep_busy_refuses_negative_nan_and_too_long_times)
{
    ck_assert_int_eq(gpu_work_keep_busy(stream, -1.0), cudaErrorInvalidValue);
    ck_assert_int_eq(gpu_work_keep_busy(stream, -0.001), cudaErrorInvalidValue);
    ck_assert_int_eq(gpu_work_keep_busy(stream, NAN), cudaErrorInvalidValue);
    ck_assert_int_eq(gpu_work_keep_busy(stream, INFINITY), cudaErrorInvalidValue);
    ck_assert_int_eq(gpu_work_keep_busy(stream, GPU_WORK_MAX_BUSY_MS + 1), cudaErrorInvalidValue);
}
END_TEST

START_TEST(scale_add_refuses_null_pointers_no_elements_and_partial_overlap)
{
    float *y = d_floats, *x = d_floats + 32;
    ck_assert_int_eq(gpu_work_scale_add(stream, NULL, x, 8, 2, 1), cudaErrorInvalidValue);
    ck_assert_int_eq(gpu_work_scale_add(stream, y, NULL, 8, 2, 1), cudaErrorInvalidValue);
    ck_assert_int_eq(gpu_work_scale_add(stream, y, x, 0, 2, 1), cudaErrorInvalidValue);
    /* y[1..8] would be written while x[0..7] is read: the result would depend on the order. */
    ck_assert_int_eq(gpu_work_scale_add(stream, y + 1, y, 8, 2, 1), cudaErrorInvalidValue);
    ck_assert_int_eq(gpu_work_scale_add(stream, y, y + 7, 8, 2, 1), cudaErrorInvalidValue);
    ck_assert_int_eq(gpu_work_scale_add(stream, y, x, SIZE_MAX / 2, 2, 1), cudaErrorInvalidValue);
}
END_TEST

START_TEST(checksum_refuses_null_pointers_empty_or_ragged_data_and_no_passes)
{
    const void *data = d_floats;
    unsigned long long *sum = d_sums;
    ck_assert_int_eq(gpu_work_checksum(stream, NULL, 64, 1, sum), cudaErrorInvalidValue);
    ck_assert_int_eq(gpu_work_checksum(stream, data, 64, 1, NULL), cudaErrorInvalidValue);
    ck_assert_int_eq(gpu_work_checksum(stream, data, 0, 1, sum), cudaErrorInvalidValue);
    ck_assert_int_eq(gpu_work_checksum(stream, data, 63, 1, sum), cudaErrorInvalidValue);
    ck_assert_int_eq(gpu_work_checksum(stream, data, 64, 0, sum), cudaErrorInvalidValue);
}
END_TEST

START_TEST(checksum_refuses_misaligned_pointers_and_a_sum_inside_the_data)
{
    const char *data = (const char *)d_floats;
    unsigned long long *sum = d_sums;
    unsigned long long *misaligned_sum = (unsigned long long *)((char *)d_sums + 4);
    ck_assert_int_eq(gpu_work_checksum(stream, data + 1, 64, 1, sum), cudaErrorInvalidValue);
    ck_assert_int_eq(gpu_work_checksum(stream, data, 64, 1, misaligned_sum), cudaErrorInvalidValue);
    ck_assert_int_eq(gpu_work_checksum(stream, d_sums, sizeof d_sums, 1, d_sums + 1),
                     cudaErrorInvalidValue);
}
END_TEST

START_TEST(bytes_to_floats_refuses_null_pointers_no_bytes_misaligned_floats_and_overlap)
{
    static unsigned char d_bytes[64];
    ck_assert_int_eq(gpu_work_bytes_to_floats(stream, NULL, d_bytes, 8, 2, 1),
                     cudaErrorInvalidValue);
    ck_assert_int_eq(gpu_work_bytes_to_floats(stream, d_floats, NULL, 8, 2, 1),
                     cudaErrorInvalidValue);
    ck_assert_int_eq(gpu_work_bytes_to_floats(stream, d_floats, d_bytes, 0, 2, 1),
                     cudaErrorInvalidValue);
    ck_assert_int_eq(
        gpu_work_bytes_to_floats(stream, (float *)(d_bytes + 1), d_bytes + 40, 4, 2, 1),
        cudaErrorInvalidValue);
    ck_assert_int_eq(
        gpu_work_bytes_to_floats(stream, d_floats, (unsigned char *)d_floats + 4, 8, 2, 1),
        cudaErrorInvalidValue);
    ck_assert_int_eq(gpu_work_bytes_to_floats(stream, d_floats, d_bytes, SIZE_MAX / 2, 2, 1),
                     cudaErrorInvalidValue);
}
END_TEST

START_TEST(the_host_checksum_adds_32_bit_words_once_per_pass_modulo_2_to_the_64)
{
    const uint32_t words[] = {1, 2, 3, 0xFFFFFFFFu};
    const unsigned long long once = 6ull + 0xFFFFFFFFull;
    ck_assert_uint_eq(gpu_work_checksum_host(words, sizeof words, 1), once);
    ck_assert_uint_eq(gpu_work_checksum_host(words, sizeof words, 3), 3 * once);
    ck_assert_uint_eq(gpu_work_checksum_host(words, sizeof words - 1, 1), 6); /* whole words only */
    ck_assert_uint_eq(gpu_work_checksum_host(words, 0, 5), 0);
}
END_TEST

int main(void)
{
    Suite *suite = suite_create("common");
    TCase *tc = tcase_create("gpu_work");
    tcase_add_test(tc, keep_busy_refuses_negative_nan_and_too_long_times);
    tcase_add_test(tc, scale_add_refuses_null_pointers_no_elements_and_partial_overlap);
    tcase_add_test(tc, checksum_refuses_null_pointers_empty_or_ragged_data_and_no_passes);
    tcase_add_test(tc, checksum_refuses_misaligned_pointers_and_a_sum_inside_the_data);
    tcase_add_test(tc,
                   bytes_to_floats_refuses_null_pointers_no_bytes_misaligned_floats_and_overlap);
    tcase_add_test(tc, the_host_checksum_adds_32_bit_words_once_per_pass_modulo_2_to_the_64);
    suite_add_tcase(suite, tc);
    return run_unit_suite(suite);
}

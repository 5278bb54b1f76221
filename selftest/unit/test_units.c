/* test_units.c - unit tests of common/: bandwidth, sizes, medians, PCIe arithmetic. */
#include "chapter.h"
#include "pcie.h"
#include "units.h"
#include "unit_main.h"

#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

START_TEST(a_gigabyte_in_a_second_is_one_gb_per_s)
{
    ck_assert_double_eq_tol(bandwidth_gb_per_s(1000000000u, 1000.0), 1.0, 1e-12);
    ck_assert_double_eq_tol(bandwidth_gb_per_s((size_t)1 << 30, 1000.0), 1.073741824, 1e-12);
    ck_assert_double_eq(bandwidth_gb_per_s(4096, 0.0), 0.0);
}
END_TEST

START_TEST(sizes_parse_with_binary_suffixes)
{
    size_t bytes = 0;
    ck_assert(parse_size("4096", &bytes) && bytes == 4096);
    ck_assert(parse_size("64K", &bytes) && bytes == 65536);
    ck_assert(parse_size("16MiB", &bytes) && bytes == 16u << 20);
    ck_assert(parse_size("1G", &bytes) && bytes == (size_t)1 << 30);
    ck_assert(parse_size("1gb", &bytes) && bytes == (size_t)1 << 30);
    ck_assert(parse_size("12B", &bytes) && bytes == 12);
}
END_TEST

START_TEST(bad_sizes_are_refused)
{
    size_t bytes = 7;
    const char *bad[] = {
        "", "0", "-4", "K", "12Q", "1.5G", "4 K", "99999999999999999999", "17179869184G"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        ck_assert_msg(!parse_size(bad[i], &bytes), "\"%s\" was accepted", bad[i]);
    ck_assert(!parse_size(NULL, &bytes));
    ck_assert_uint_eq(bytes, 7);
}
END_TEST

START_TEST(sizes_format_in_binary_units)
{
    char text[32];
    ck_assert_str_eq(format_bytes(4, text, sizeof text), "4 B");
    ck_assert_str_eq(format_bytes(4096, text, sizeof text), "4 KiB");
    ck_assert_str_eq(format_bytes(3u << 19, text, sizeof text), "1.5 MiB");
    ck_assert_str_eq(format_bytes((size_t)1 << 30, text, sizeof text), "1 GiB");
}
END_TEST

START_TEST(the_median_is_the_middle_value)
{
    double odd[] = {5, 1, 3};
    double even[] = {4, 1, 3, 2};
    ck_assert_double_eq(median_of(odd, 3), 3);
    ck_assert_double_eq(median_of(even, 4), 2.5);
    ck_assert_double_eq(median_of(NULL, 0), 0);
}
END_TEST

START_TEST(pcie_gen5_x16_carries_63_gb_per_s_each_way)
{
    /* 32 GT/s x 16 lanes x 128/130 / 8 bits = 63.015 GB/s */
    ck_assert_double_eq_tol(pcie_gb_per_s(5, 16), 63.0153846, 1e-6);
    ck_assert_double_eq_tol(pcie_gb_per_s(3, 16), 15.7538462, 1e-6);
    ck_assert_double_eq_tol(pcie_gb_per_s(1, 1), 0.25, 1e-12); /* 8b/10b */
    ck_assert_double_eq(pcie_gb_per_s(6, 16), 0);
    ck_assert_double_eq(pcie_gb_per_s(4, 0), 0);
    ck_assert_ptr_null(pcie_generation_info(0));
}
END_TEST

START_TEST(counts_refuse_a_product_that_does_not_fit)
{
    size_t n = 0;
    ck_assert(parse_count("1M", sizeof(float), &n) && n == (size_t)1 << 20);
    ck_assert(!parse_count("0", sizeof(float), &n));
    ck_assert(!parse_count("x", sizeof(float), &n));
    /* 2^62 floats are 2^64 bytes: one more than a size_t holds. */
    ck_assert(!parse_count("4611686018427387904", sizeof(float), &n));
    ck_assert(parse_count("4611686018427387903", 1, &n));
}
END_TEST

int main(void)
{
    Suite *suite = suite_create("common");
    TCase *tc = tcase_create("units");
    tcase_add_test(tc, a_gigabyte_in_a_second_is_one_gb_per_s);
    tcase_add_test(tc, sizes_parse_with_binary_suffixes);
    tcase_add_test(tc, bad_sizes_are_refused);
    tcase_add_test(tc, sizes_format_in_binary_units);
    tcase_add_test(tc, the_median_is_the_middle_value);
    tcase_add_test(tc, pcie_gen5_x16_carries_63_gb_per_s_each_way);
    tcase_add_test(tc, counts_refuse_a_product_that_does_not_fit);
    suite_add_tcase(suite, tc);
    return run_unit_suite(suite);
}

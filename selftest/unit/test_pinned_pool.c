/* test_pinned_pool.c - unit tests of the worker's pool of pinned blocks (harness/pinned_pool.c),
 * through the wrapped runtime calls that learners' code makes. */
#include "harness.h"
#include "unit_main.h"

#include <check.h>
#include <stdint.h>

#define MiB ((size_t)1 << 20)

START_TEST(a_block_given_back_is_given_again_poisoned)
{
    unsigned char *first = NULL, *again = NULL;
    ck_assert_int_eq(cudaMallocHost((void **)&first, 2 * MiB), cudaSuccess);
    first[0] = 7;
    first[MiB] = 7;
    ck_assert_int_eq(cudaFreeHost(first), cudaSuccess);
    ck_assert_int_eq(cudaMallocHost((void **)&again, 2 * MiB - 4096), cudaSuccess);
    ck_assert_ptr_eq(again, first);
    ck_assert(holds_only_poison(again, 2 * MiB - 4096));
    ck_assert_int_eq(cudaFreeHost(again), cudaSuccess);
}
END_TEST

START_TEST(a_block_given_back_twice_is_an_invalid_value)
{
    void *block = NULL;
    ck_assert_int_eq(cudaMallocHost(&block, 2 * MiB), cudaSuccess);
    ck_assert_int_eq(cudaFreeHost(block), cudaSuccess);
    ck_assert_int_eq(cudaFreeHost(block), cudaErrorInvalidValue);
}
END_TEST

START_TEST(flags_sizes_and_small_blocks_are_kept_apart)
{
    void *mapped = NULL, *plain = NULL, *small = NULL, *other = NULL;
    ck_assert_int_eq(cudaHostAlloc(&mapped, 3 * MiB, cudaHostAllocMapped), cudaSuccess);
    ck_assert_int_eq(cudaFreeHost(mapped), cudaSuccess);
    /* Other flags, or more than twice the size asked for: not that block. */
    ck_assert_int_eq(cudaMallocHost(&plain, 3 * MiB), cudaSuccess);
    ck_assert_ptr_ne(plain, mapped);
    ck_assert_int_eq(cudaHostAlloc(&other, MiB + 1, cudaHostAllocMapped), cudaSuccess);
    ck_assert_ptr_ne(other, mapped);
    ck_assert_int_eq(cudaFreeHost(other), cudaSuccess);
    /* A block under a MiB is not kept: freed, it is the runtime's again. */
    ck_assert_int_eq(cudaMallocHost(&small, 4096), cudaSuccess);
    ck_assert_int_eq(cudaFreeHost(small), cudaSuccess);
    ck_assert(!pinned_pool_take(&small, 4096, cudaHostAllocDefault));
    ck_assert_int_eq(cudaFreeHost(plain), cudaSuccess);
}
END_TEST

START_TEST(nothing_is_kept_or_given_while_a_timed_test_measures)
{
    void *block = NULL, *again = NULL;
    ck_assert_int_eq(cudaMallocHost(&block, 2 * MiB), cudaSuccess);
    ck_assert_int_eq(cudaFreeHost(block), cudaSuccess); /* kept */
    pinned_pool_set_measuring(true);
    ck_assert(!pinned_pool_take(&again, 2 * MiB, cudaHostAllocDefault));
    ck_assert_int_eq(cudaMallocHost(&again, 2 * MiB), cudaSuccess);
    ck_assert_ptr_ne(again, block);
    ck_assert_int_eq(cudaFreeHost(again), cudaSuccess); /* freed for real */
    pinned_pool_set_measuring(false);
    ck_assert(pinned_pool_take(&again, 2 * MiB, cudaHostAllocDefault)); /* the first block */
    ck_assert_ptr_eq(again, block);
    ck_assert(!pinned_pool_take(&again, 2 * MiB, cudaHostAllocDefault));
}
END_TEST

int main(void)
{
    Suite *suite = suite_create("harness");
    TCase *tc = tcase_create("pinned pool");
    tcase_add_test(tc, a_block_given_back_is_given_again_poisoned);
    tcase_add_test(tc, a_block_given_back_twice_is_an_invalid_value);
    tcase_add_test(tc, flags_sizes_and_small_blocks_are_kept_apart);
    tcase_add_test(tc, nothing_is_kept_or_given_while_a_timed_test_measures);
    suite_add_tcase(suite, tc);
    return run_unit_suite(suite);
}

/* test_pinned_pool.c - unit tests of the worker's pool of pinned blocks
 * (harness/worker/worker_pinned_pool.c).
 *
 * The pool keeps what the wrappers of cudaFreeHost hand it and gives it to the wrappers of
 * cudaMallocHost and cudaHostAlloc; it never calls the runtime itself, so host memory stands
 * in for pinned blocks here and the tests run without a GPU. The wrappers around it run in
 * every test of an exercise that pins memory (section 30).
 */
#include "harness.h"
#include "unit_main.h"
#include "worker.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

#define MiB ((size_t)1 << 20)

/* A block as the runtime would have given it: noted by the pool, written by its owner. */
static void *allocated(size_t bytes, unsigned int flags)
{
    void *block = malloc(bytes);
    ck_assert_ptr_nonnull(block);
    memset(block, 7, bytes < 4 * MiB ? bytes : MiB); /* its owner's data, where it is read */
    pinned_pool_note(block, bytes, flags);
    return block;
}

START_TEST(a_block_given_back_is_given_again_poisoned)
{
    void *first = allocated(2 * MiB, cudaHostAllocDefault), *again = NULL;
    ck_assert_int_eq(pinned_pool_give(first), PINNED_POOL_KEPT);
    ck_assert(pinned_pool_take(&again, 2 * MiB - 4096, cudaHostAllocDefault));
    ck_assert_ptr_eq(again, first);
    ck_assert(holds_only_poison(again, 2 * MiB - 4096));
    ck_assert(!pinned_pool_take(&again, 2 * MiB, cudaHostAllocDefault)); /* it is in use */
}
END_TEST

START_TEST(a_block_given_back_twice_is_said_so)
{
    void *block = allocated(2 * MiB, cudaHostAllocDefault);
    ck_assert_int_eq(pinned_pool_give(block), PINNED_POOL_KEPT);
    ck_assert_int_eq(pinned_pool_give(block), PINNED_POOL_ALREADY_KEPT);
}
END_TEST

START_TEST(flags_sizes_and_small_blocks_are_kept_apart)
{
    void *mapped = allocated(3 * MiB, cudaHostAllocMapped), *got = NULL;
    ck_assert_int_eq(pinned_pool_give(mapped), PINNED_POOL_KEPT);
    ck_assert(!pinned_pool_take(&got, 3 * MiB, cudaHostAllocDefault)); /* other flags */
    ck_assert(!pinned_pool_take(&got, MiB + 1, cudaHostAllocMapped));  /* under half its size */
    ck_assert(!pinned_pool_take(&got, 4 * MiB, cudaHostAllocMapped));  /* too small */
    ck_assert(pinned_pool_take(&got, 2 * MiB, cudaHostAllocMapped));
    ck_assert_ptr_eq(got, mapped);
    /* A block under a MiB is not the pool's: given back, the runtime frees it. */
    void *small = allocated(4096, cudaHostAllocDefault);
    ck_assert_int_eq(pinned_pool_give(small), PINNED_POOL_NOT_KEPT);
    free(small);
    ck_assert(!pinned_pool_take(&got, 4096, cudaHostAllocDefault));
    /* Nor is a pointer it never saw. */
    char unknown[16];
    ck_assert_int_eq(pinned_pool_give(unknown), PINNED_POOL_NOT_KEPT);
}
END_TEST

START_TEST(nothing_is_kept_or_given_while_a_timed_test_measures)
{
    void *kept = allocated(2 * MiB, cudaHostAllocDefault);
    void *during = allocated(2 * MiB, cudaHostAllocDefault), *got = NULL;
    ck_assert_int_eq(pinned_pool_give(kept), PINNED_POOL_KEPT);
    pinned_pool_set_measuring(true);
    ck_assert(!pinned_pool_take(&got, 2 * MiB, cudaHostAllocDefault));
    ck_assert_int_eq(pinned_pool_give(during), PINNED_POOL_NOT_KEPT); /* freed for real */
    free(during);
    pinned_pool_set_measuring(false);
    ck_assert(pinned_pool_take(&got, 2 * MiB, cudaHostAllocDefault));
    ck_assert_ptr_eq(got, kept);
    ck_assert(!pinned_pool_take(&got, 2 * MiB, cudaHostAllocDefault));
}
END_TEST

START_TEST(the_pool_keeps_768_MiB_at_most)
{
    enum { BLOCKS = 4 };
    void *blocks[BLOCKS];
    for (int b = 0; b < BLOCKS; b++)
        blocks[b] = allocated(256 * MiB, cudaHostAllocDefault);
    for (int b = 0; b < BLOCKS - 1; b++)
        ck_assert_int_eq(pinned_pool_give(blocks[b]), PINNED_POOL_KEPT);
    ck_assert_int_eq(pinned_pool_give(blocks[BLOCKS - 1]), PINNED_POOL_NOT_KEPT);
    free(blocks[BLOCKS - 1]);
}
END_TEST

int main(void)
{
    Suite *suite = suite_create("harness");
    TCase *tc = tcase_create("pinned pool");
    tcase_add_test(tc, a_block_given_back_is_given_again_poisoned);
    tcase_add_test(tc, a_block_given_back_twice_is_said_so);
    tcase_add_test(tc, flags_sizes_and_small_blocks_are_kept_apart);
    tcase_add_test(tc, nothing_is_kept_or_given_while_a_timed_test_measures);
    tcase_add_test(tc, the_pool_keeps_768_MiB_at_most);
    suite_add_tcase(suite, tc);
    return run_unit_suite(suite);
}

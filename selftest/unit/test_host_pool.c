/* test_host_pool.c - unit tests of common/host_pool: every part runs once, each round. */
#include "host_pool.h"
#include "unit_main.h"

#include <check.h>
#include <stdatomic.h>
#include <string.h>

enum { MAX_PARTS = 64 };

typedef struct tally {
    atomic_uint runs[MAX_PARTS];
    atomic_uint wrong_parts; /* a call whose `parts` was not the thread count */
    unsigned expected_parts;
} tally;

static void count_part(void *arg, unsigned part, unsigned parts)
{
    tally *t = arg;
    if (parts != t->expected_parts || part >= MAX_PARTS)
        atomic_fetch_add(&t->wrong_parts, 1);
    else
        atomic_fetch_add(&t->runs[part], 1);
}

START_TEST(a_pool_runs_each_part_once_per_round)
{
    const unsigned threads[] = {1, 3, 8};
    for (size_t i = 0; i < sizeof threads / sizeof threads[0]; i++) {
        tally t = {.expected_parts = threads[i]};
        host_pool *pool = host_pool_create(threads[i]);
        ck_assert_ptr_nonnull(pool);
        ck_assert_uint_eq(host_pool_threads(pool), threads[i]);
        for (int round = 0; round < 200; round++)
            host_pool_run(pool, count_part, &t);
        host_pool_destroy(pool);
        ck_assert_uint_eq(atomic_load(&t.wrong_parts), 0);
        for (unsigned p = 0; p < MAX_PARTS; p++)
            ck_assert_uint_eq(atomic_load(&t.runs[p]), p < threads[i] ? 200 : 0);
    }
}
END_TEST

START_TEST(threads_per_call_run_each_part_once)
{
    tally t = {.expected_parts = 5};
    for (int round = 0; round < 20; round++)
        ck_assert(host_threads_run(5, count_part, &t));
    for (unsigned p = 0; p < MAX_PARTS; p++)
        ck_assert_uint_eq(atomic_load(&t.runs[p]), p < 5 ? 20 : 0);
    ck_assert(!host_threads_run(0, count_part, &t));
    ck_assert(!host_threads_run(HOST_POOL_MAX_THREADS + 1, count_part, &t));
}
END_TEST

START_TEST(a_pool_of_no_threads_or_too_many_is_refused)
{
    ck_assert_ptr_null(host_pool_create(0));
    ck_assert_ptr_null(host_pool_create(HOST_POOL_MAX_THREADS + 1));
    host_pool_destroy(NULL);
}
END_TEST

/* Copies its share of src into dst, as the staged copy's threads do. */
typedef struct copy_job {
    const unsigned char *src;
    unsigned char *dst;
    size_t bytes;
} copy_job;

static void copy_share(void *arg, unsigned part, unsigned parts)
{
    copy_job *job = arg;
    size_t begin, end;
    host_share(job->bytes, 64, part, parts, &begin, &end);
    memcpy(job->dst + begin, job->src + begin, end - begin);
}

START_TEST(shares_cover_the_range_once_aligned)
{
    const size_t totals[] = {0, 1, 63, 64, 1000, 4096, 1234567};
    const unsigned parts_list[] = {1, 2, 3, 7, 16};
    for (size_t i = 0; i < sizeof totals / sizeof totals[0]; i++)
        for (size_t j = 0; j < sizeof parts_list / sizeof parts_list[0]; j++) {
            size_t expected_begin = 0;
            for (unsigned part = 0; part < parts_list[j]; part++) {
                size_t begin, end;
                host_share(totals[i], 64, part, parts_list[j], &begin, &end);
                ck_assert_uint_eq(begin, expected_begin);
                ck_assert_uint_le(begin, end);
                if (part + 1 < parts_list[j])
                    ck_assert_uint_eq(end % 64, 0);
                expected_begin = end;
            }
            ck_assert_uint_eq(expected_begin, totals[i]);
        }
}
END_TEST

START_TEST(a_pool_copies_a_buffer_exactly)
{
    static unsigned char src[100003], dst[100003];
    for (size_t i = 0; i < sizeof src; i++)
        src[i] = (unsigned char)(i * 131 + 7);
    memset(dst, 0xA5, sizeof dst);
    copy_job job = {src, dst, sizeof src};
    host_pool *pool = host_pool_create(6);
    ck_assert_ptr_nonnull(pool);
    host_pool_run(pool, copy_share, &job);
    host_pool_destroy(pool);
    ck_assert_mem_eq(dst, src, sizeof src);
}
END_TEST

int main(void)
{
    Suite *suite = suite_create("host_pool");
    TCase *tc = tcase_create("host_pool");
    tcase_add_test(tc, a_pool_runs_each_part_once_per_round);
    tcase_add_test(tc, threads_per_call_run_each_part_once);
    tcase_add_test(tc, a_pool_of_no_threads_or_too_many_is_refused);
    tcase_add_test(tc, shares_cover_the_range_once_aligned);
    tcase_add_test(tc, a_pool_copies_a_buffer_exactly);
    suite_add_tcase(suite, tc);
    return run_unit_suite(suite);
}

/* test_trace_threads.c - the trace and the ledger stay whole when several threads call at once.
 *
 * A learner's code may call the CUDA runtime from several host threads (chapter 3's
 * pageable_fast), and every traced call goes through trace_record. Here eight threads record
 * crafted acquisitions and releases of events of their own at the same time, as the wrappers
 * would, with no CUDA call: every call must be in the trace and the ledger must end empty.
 */
#include "harness.h"
#include "unit_main.h"

#include <pthread.h>
#include <stdint.h>
#include <string.h>

enum { THREADS = 8, EVENTS_EACH = 500 }; /* 4000 held at once at most: within the ledger */

static cudaEvent_t event_of(uintptr_t thread, uintptr_t i)
{
    return (cudaEvent_t)((thread + 1) << 20 | (i + 1) << 4);
}

static void record(traced_function function, cudaEvent_t event)
{
    cudaError_t injected;
    (void)trace_should_fail(function, &injected); /* counts the call, as a wrapper's does */
    traced_call call;
    memset(&call, 0, sizeof call);
    call.function = function;
    call.result = cudaSuccess;
    call.handle = event;
    trace_record(&call, true);
}

static void *acquire_all(void *thread)
{
    for (uintptr_t i = 0; i < EVENTS_EACH; i++)
        record(TRACED_cudaEventCreate, event_of((uintptr_t)thread, i));
    return NULL;
}

static void *release_all(void *thread)
{
    for (uintptr_t i = 0; i < EVENTS_EACH; i++)
        record(TRACED_cudaEventDestroy, event_of((uintptr_t)thread, i));
    return NULL;
}

static void run_threads(void *(*body)(void *))
{
    pthread_t threads[THREADS];
    for (uintptr_t t = 0; t < THREADS; t++)
        ck_assert_int_eq(pthread_create(&threads[t], NULL, body, (void *)t), 0);
    for (int t = 0; t < THREADS; t++)
        pthread_join(threads[t], NULL);
}

START_TEST(calls_from_eight_threads_at_once_are_all_recorded_and_all_given_back)
{
    trace_start();
    run_threads(acquire_all);
    ck_assert_uint_eq(trace_count_of(TRACED_cudaEventCreate), THREADS * EVENTS_EACH);
    ck_assert_uint_eq(trace_count(), THREADS * EVENTS_EACH);
    ck_assert_uint_eq(trace_count_acquired(RESOURCE_EVENT), THREADS * EVENTS_EACH);
    size_t held = 0;
    for (uintptr_t t = 0; t < THREADS; t++)
        for (uintptr_t i = 0; i < EVENTS_EACH; i++)
            held += ledger_resource_of(event_of(t, i)) == RESOURCE_EVENT;
    ck_assert_uint_eq(held, THREADS * EVENTS_EACH);

    run_threads(release_all);
    ck_assert_uint_eq(trace_count(), 2 * THREADS * EVENTS_EACH);
    for (uintptr_t t = 0; t < THREADS; t++)
        for (uintptr_t i = 0; i < EVENTS_EACH; i++)
            ck_assert_msg(ledger_resource_of(event_of(t, i)) == RESOURCE_NONE,
                          "event %lu of thread %lu is still in the ledger after its release",
                          (unsigned long)i, (unsigned long)t);
    trace_stop();
}
END_TEST

int main(void)
{
    Suite *suite = suite_create("trace threads");
    TCase *tc = tcase_create("threads");
    tcase_add_test(tc, calls_from_eight_threads_at_once_are_all_recorded_and_all_given_back);
    suite_add_tcase(suite, tc);
    return run_unit_suite(suite);
}

/* test_release_scan.c - unit tests of the release scan (expect_everything_released).
 *
 * These never touch CUDA: each test writes a made-up trace, runs the scan in a suite of its
 * own (Check forks it, so its failure is caught), and reads the message the learner would see.
 */
#include "harness.h"
#include "unit_main.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char pinned_block[64];
#define PINNED ((const void *)pinned_block)

static void record(traced_function function, const void *handle, size_t bytes, cudaError_t result)
{
    traced_call call;
    memset(&call, 0, sizeof call);
    call.function = function;
    call.handle = handle;
    call.dst = (void *)handle;
    call.bytes = bytes;
    call.result = result;
    trace_record(&call, true);
}

/* The trace each scanned test writes before it scans; set by the outer test. */
static void (*write_trace)(void);

START_TEST(scan)
{
    trace_start();
    write_trace();
    trace_stop();
    expect_everything_released("the code");
}
END_TEST

/* Runs the scan over the trace `writer` writes; the failure message, or "" when it passed. */
static const char *scan_message(void (*writer)(void))
{
    static char message[4096];
    write_trace = writer;
    Suite *suite = suite_create("scan");
    TCase *tc = tcase_create("scan");
    tcase_add_test(tc, scan);
    suite_add_tcase(suite, tc);
    SRunner *runner = srunner_create(suite);
    srunner_set_fork_status(runner, CK_FORK);
    srunner_run_all(runner, CK_SILENT);
    message[0] = '\0';
    if (srunner_ntests_failed(runner) > 0) {
        TestResult **failures = srunner_failures(runner);
        snprintf(message, sizeof message, "%s", tr_msg(failures[0]));
        free(failures);
    }
    srunner_free(runner);
    return message;
}

static void pinned_then_cudaFreeHost(void)
{
    record(TRACED_cudaMallocHost, PINNED, 64, cudaSuccess);
    record(TRACED_cudaFreeHost, PINNED, 0, cudaSuccess);
}

static void pinned_then_cudaFree(void)
{
    record(TRACED_cudaMallocHost, PINNED, 64, cudaSuccess);
    record(TRACED_cudaFree, PINNED, 0, cudaErrorInvalidValue);
}

static void registered_then_cudaFreeHost(void)
{
    record(TRACED_cudaHostRegister, PINNED, 64, cudaSuccess);
    record(TRACED_cudaFreeHost, PINNED, 0, cudaErrorInvalidValue);
}

static void pinned_never_released(void)
{
    record(TRACED_cudaMallocHost, PINNED, 64, cudaSuccess);
}

START_TEST(memory_given_back_with_its_partner_passes)
{
    const char *message = scan_message(pinned_then_cudaFreeHost);
    ck_assert_msg(message[0] == '\0', "%s", message);
}
END_TEST

START_TEST(pinned_memory_given_to_cudaFree_names_cudaFreeHost)
{
    const char *message = scan_message(pinned_then_cudaFree);
    ck_assert_msg(strstr(message, "the code gave pinned host memory from cudaMallocHost to "
                                  "cudaFree, which gives back device memory, not pinned host "
                                  "memory: release it with cudaFreeHost") != NULL,
                  "%s", message);
}
END_TEST

START_TEST(a_registration_given_to_cudaFreeHost_names_cudaHostUnregister)
{
    const char *message = scan_message(registered_then_cudaFreeHost);
    ck_assert_msg(strstr(message, "to cudaFreeHost, which gives back pinned host memory") != NULL &&
                      strstr(message, "release it with cudaHostUnregister") != NULL,
                  "%s", message);
}
END_TEST

START_TEST(memory_never_released_is_still_called_a_leak)
{
    const char *message = scan_message(pinned_never_released);
    ck_assert_msg(strstr(message, "allocated 64 bytes with cudaMallocHost and returned without "
                                  "cudaFreeHost") != NULL,
                  "%s", message);
}
END_TEST

int main(void)
{
    Suite *suite = suite_create("harness");
    TCase *tc = tcase_create("release scan");
    tcase_add_test(tc, memory_given_back_with_its_partner_passes);
    tcase_add_test(tc, pinned_memory_given_to_cudaFree_names_cudaFreeHost);
    tcase_add_test(tc, a_registration_given_to_cudaFreeHost_names_cudaHostUnregister);
    tcase_add_test(tc, memory_never_released_is_still_called_a_leak);
    suite_add_tcase(suite, tc);
    return run_unit_suite(suite);
}

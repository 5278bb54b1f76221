/* test_stream_trace.c - unit tests of what the harness reads about streams from the trace.
 *
 * These never touch CUDA: they record crafted calls, as the wrappers would, and check who
 * waited for what (checks_streams.c) and how the timeline names streams and folds.
 */
#include "harness.h"
#include "unit_main.h"

#include <string.h>

#define STREAM_A ((cudaStream_t)0x1000)
#define STREAM_B ((cudaStream_t)0x2000)
#define EVENT ((cudaEvent_t)0x3000)

/* A call as its wrapper would record it; `event` is EVENT or none. */
static traced_call call_on(traced_function function, cudaStream_t stream, bool event)
{
    traced_call call;
    memset(&call, 0, sizeof call);
    call.function = function;
    call.stream = stream;
    call.event = event ? EVENT : NULL;
    return call;
}

static void record(traced_function function, cudaStream_t stream)
{
    traced_call call = call_on(function, stream, false);
    trace_record(&call, true);
}

static void record_on_event(traced_function function, cudaStream_t stream)
{
    traced_call call = call_on(function, stream, true);
    trace_record(&call, true);
}

static void record_create(cudaStream_t stream, unsigned flags)
{
    traced_call call =
        call_on(flags ? TRACED_cudaStreamCreateWithFlags : TRACED_cudaStreamCreate, stream, false);
    call.flags = flags;
    call.handle = stream;
    trace_record(&call, true);
}

static void record_copy(cudaStream_t stream, bool up, size_t bytes)
{
    traced_call call = call_on(TRACED_cudaMemcpyAsync, stream, false);
    call.bytes = bytes;
    call.dst_location = up ? LOCATION_DEVICE : LOCATION_PINNED_HOST;
    call.src_location = up ? LOCATION_PINNED_HOST : LOCATION_DEVICE;
    trace_record(&call, true);
}

START_TEST(a_copy_nothing_waited_for_is_not_waited_for)
{
    trace_start();
    record_create(STREAM_A, 0);
    record_copy(STREAM_A, true, 4096);
    record(TRACED_cudaStreamDestroy, STREAM_A);
    ck_assert(trace_wait_for_stream(STREAM_A, 1) == NULL);
}
END_TEST

START_TEST(the_streams_own_synchronize_or_the_devices_waits_for_it)
{
    trace_start();
    record_create(STREAM_A, 0);
    record_copy(STREAM_A, true, 4096);
    record(TRACED_cudaStreamSynchronize, STREAM_B);
    ck_assert(trace_wait_for_stream(STREAM_A, 1) == NULL);
    record(TRACED_cudaStreamSynchronize, STREAM_A);
    ck_assert(trace_wait_for_stream(STREAM_A, 1) == trace_get(3));
    trace_start();
    record_copy(STREAM_A, true, 4096);
    record(TRACED_cudaDeviceSynchronize, NULL);
    ck_assert(trace_wait_for_stream(STREAM_A, 0) == trace_get(1));
}
END_TEST

START_TEST(the_legacy_default_stream_waits_for_blocking_streams_only)
{
    trace_start();
    record_create(STREAM_A, cudaStreamNonBlocking);
    record_create(STREAM_B, cudaStreamDefault);
    record_copy(STREAM_A, true, 4096);
    record_copy(STREAM_B, true, 4096);
    record(TRACED_cudaStreamSynchronize, NULL);
    ck_assert(trace_stream_is_non_blocking(STREAM_A));
    ck_assert(!trace_stream_is_non_blocking(STREAM_B));
    ck_assert(trace_wait_for_stream(STREAM_A, 3) == NULL);
    ck_assert(trace_wait_for_stream(STREAM_B, 3) == trace_get(4));
}
END_TEST

START_TEST(an_event_waits_for_a_stream_only_when_recorded_there_after_the_point)
{
    trace_start();
    record_on_event(TRACED_cudaEventRecord, STREAM_A); /* before the copy: too early */
    record_copy(STREAM_A, false, 4096);
    record_on_event(TRACED_cudaEventSynchronize, NULL);
    ck_assert(trace_wait_for_stream(STREAM_A, 1) == NULL);
    record_on_event(TRACED_cudaEventRecord, STREAM_A);
    record_on_event(TRACED_cudaEventSynchronize, NULL);
    ck_assert(trace_wait_for_stream(STREAM_A, 1) == trace_get(4));
    ck_assert(trace_wait_for_stream(STREAM_B, 1) == NULL);
}
END_TEST

/* The last call recorded, made again as if with GPU `device` current (BEGIN records it). */
static void made_on(int device)
{
    trace_calls[trace_recorded - 1].current_device = device;
}

/* With two GPUs: a stream is the GPU's that was current when it was made, whichever is current
 * when work is queued on it; cudaDeviceSynchronize waits for the current GPU's work alone, and
 * a legacy default stream for the blocking streams of its own GPU. */
START_TEST(a_wait_counts_only_on_the_streams_own_gpu)
{
    trace_start();
    record_create(STREAM_A, 0);
    made_on(1);
    record_copy(STREAM_A, true, 4096); /* with GPU 0 current: still GPU 1's work */
    record(TRACED_cudaDeviceSynchronize, NULL);
    ck_assert(trace_wait_for_stream(STREAM_A, 1) == NULL);
    record(TRACED_cudaStreamSynchronize, NULL); /* GPU 0's legacy default stream */
    ck_assert(trace_wait_for_stream(STREAM_A, 1) == NULL);
    record(TRACED_cudaStreamSynchronize, NULL);
    made_on(1);
    ck_assert(trace_wait_for_stream(STREAM_A, 1) == trace_get(4));
    record(TRACED_cudaDeviceSynchronize, NULL);
    made_on(1);
    ck_assert(trace_wait_for_stream(STREAM_A, 4) == trace_get(5));
}
END_TEST

START_TEST(a_host_wait_between_two_positions_is_found)
{
    trace_start();
    record_copy(STREAM_A, true, 4096);
    record_on_event(TRACED_cudaEventRecord, STREAM_A);
    record_on_event(TRACED_cudaStreamWaitEvent, STREAM_B);
    record_copy(STREAM_B, false, 4096);
    ck_assert(trace_host_wait_between(0, 3) == NULL);
    trace_start();
    record_copy(STREAM_A, true, 4096);
    record(TRACED_cudaStreamSynchronize, STREAM_A);
    record_copy(STREAM_B, false, 4096);
    ck_assert(trace_host_wait_between(0, 2) == trace_get(1));
    ck_assert(trace_host_wait_between(1, 2) == NULL); /* strictly between */
}
END_TEST

START_TEST(the_timeline_names_streams_in_order_of_first_use)
{
    trace_start();
    record_create(STREAM_B, 0);
    record_copy(STREAM_B, true, (size_t)4 << 20);
    record_copy(STREAM_A, false, 4096);
    record_copy(NULL, true, 100);
    record(TRACED_cudaDeviceSynchronize, NULL);
    const char *timeline = trace_timeline();
    ck_assert_msg(strstr(timeline, "stream A           cudaStreamCreate") != NULL, "%s", timeline);
    ck_assert_msg(strstr(timeline, "stream A           cudaMemcpyAsync host to device 4 MiB") !=
                      NULL,
                  "%s", timeline);
    ck_assert_msg(strstr(timeline, "stream B           cudaMemcpyAsync device to host 4 KiB") !=
                      NULL,
                  "%s", timeline);
    ck_assert_msg(strstr(timeline, "default stream     cudaMemcpyAsync host to device 100 bytes") !=
                      NULL,
                  "%s", timeline);
    ck_assert_msg(strstr(timeline, "host               cudaDeviceSynchronize (the host waits)") !=
                      NULL,
                  "%s", timeline);
    ck_assert_msg(strstr(timeline, "    0.00 ms") != NULL, "%s", timeline);
}
END_TEST

START_TEST(a_long_timeline_is_folded_in_the_middle)
{
    trace_start();
    for (int i = 0; i < 100; i++)
        record_copy(i % 2 ? STREAM_A : STREAM_B, true, 4096);
    record(TRACED_cudaDeviceSynchronize, NULL);
    const char *timeline = trace_timeline();
    ck_assert_msg(strstr(timeline, "... 73 calls more ...") != NULL, "%s", timeline);
    ck_assert_msg(strstr(timeline, "cudaDeviceSynchronize") != NULL, "%s", timeline);
    size_t lines = 0;
    for (const char *c = timeline; *c; c++)
        lines += *c == '\n';
    ck_assert_msg(lines == 29, "%zu lines:%s", lines, timeline);
}
END_TEST

int main(void)
{
    Suite *suite = suite_create("stream trace");
    TCase *tc = tcase_create("streams");
    tcase_add_test(tc, a_copy_nothing_waited_for_is_not_waited_for);
    tcase_add_test(tc, the_streams_own_synchronize_or_the_devices_waits_for_it);
    tcase_add_test(tc, the_legacy_default_stream_waits_for_blocking_streams_only);
    tcase_add_test(tc, an_event_waits_for_a_stream_only_when_recorded_there_after_the_point);
    tcase_add_test(tc, a_wait_counts_only_on_the_streams_own_gpu);
    tcase_add_test(tc, a_host_wait_between_two_positions_is_found);
    tcase_add_test(tc, the_timeline_names_streams_in_order_of_first_use);
    tcase_add_test(tc, a_long_timeline_is_folded_in_the_middle);
    suite_add_tcase(suite, tc);
    return run_unit_suite(suite);
}

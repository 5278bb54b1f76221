/* bandwidth.c - tests for exercises/ch01-memory/bandwidth.c (median_ms, gb_per_s, measure_...). */
#include "harness.h"
#include "bandwidth.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

COURSE_EXERCISE(
    "Measure copy bandwidth in GB/s",
    "Three pieces: a median (the middle of the sorted times), a conversion to GB/s (a GB is "
    "10^9 bytes; the times are in milliseconds), and the measurement, which times repeated "
    "copies with events as time_copy does, after a warm-up copy that is not timed (section "
    "1.9.6; the header says why the median and not the mean).\n\n"
    "median_ms: qsort the times, return the middle one (for an even n, the mean of the two in "
    "the middle). gb_per_s: bytes / 1e9 / (ms / 1e3), since a GB is 10^9 bytes and ms / 1000 "
    "is seconds. The measurement: check the arguments first; cudaMallocHost the host buffer "
    "and cudaMalloc the device one; one cudaMemcpy before any event is recorded (the warm-up); "
    "then for each run cudaEventRecord(start, 0), cudaMemcpy, cudaEventRecord(stop, 0), "
    "cudaEventSynchronize(stop), cudaEventElapsedTime; then the median; and on every path "
    "destroy the events, cudaFree and cudaFreeHost.");
COURSE_EXERCISE_WORK_QUEUES(1);

/* --- median_ms and gb_per_s: pure arithmetic, checked exactly -------------------------- */

/* Without <math.h>'s fabs: the test programs are not linked with -lm. */
static double magnitude(double x)
{
    return x < 0 ? -x : x;
}

static bool close_to(double got, double want)
{
    return magnitude(got - want) <= 1e-9 * magnitude(want);
}

static const char *list_text(const double *values, int n)
{
    static char text[256];
    size_t used = (size_t)snprintf(text, sizeof text, "{");
    for (int i = 0; i < n && used < sizeof text; i++)
        used += (size_t)snprintf(text + used, sizeof text - used, "%s%g", i ? ", " : "", values[i]);
    if (used < sizeof text)
        snprintf(text + used, sizeof text - used, "}");
    return text;
}

/* The times median_ms is given: a copy (it may reorder), in memory its code can reach. */
static double *copy_of(const double *times, int n)
{
    double *copy = harness_host_alloc((size_t)n * sizeof *copy);
    memcpy(copy, times, (size_t)n * sizeof *times);
    return copy;
}

/* Calls median_ms on a copy, and names the usual mistakes. */
static void expect_median(const double *times, int n, double want)
{
    const double got = median_ms(copy_of(times, n), n);
    if (close_to(got, want))
        return;
    double sum = 0, slowest = times[0], fastest = times[0];
    for (int i = 0; i < n; i++) {
        sum += times[i];
        slowest = times[i] > slowest ? times[i] : slowest;
        fastest = times[i] < fastest ? times[i] : fastest;
    }
    const char *list = list_text(times, n);
    if (close_to(got, sum / n))
        ck_abort_msg("median_ms(%s) returned %g: that is the mean, which one slow run (%g ms) "
                     "drags up. The median is %g: sort the times and take the middle one",
                     list, got, slowest, want);
    if (slowest - fastest < 1)
        ck_abort_msg("median_ms(%s) returned %g; the median is %g. These times lie less than "
                     "1 ms apart, as real copy times often do: were they sorted? A comparator "
                     "that returns (int)(a - b) truncates every such difference to 0, so it "
                     "calls them all equal and qsort leaves them as they were; return "
                     "(a > b) - (a < b) instead",
                     list, got, want);
    if (n % 2 == 1 && got == times[n / 2])
        ck_abort_msg("median_ms(%s) returned %g, the middle of the list as it was given; the "
                     "median is the middle once sorted, %g: sort the times first",
                     list, got, want);
    ck_abort_msg("median_ms(%s) returned %g; the median is %g", list, got, want);
}

COURSE_TEST(the_median_is_the_middle_time_not_the_mean, 2)
{
    const double outlier[] = {5, 1, 100, 3, 2};
    expect_median(outlier, 5, 3);
    const double one[] = {2.5};
    expect_median(one, 1, 2.5);
    const double equal[] = {4, 4, 4};
    expect_median(equal, 3, 4);
    const double slow_last[] = {1.25, 1.5, 50};
    expect_median(slow_last, 3, 1.5);
    const double descending[] = {9, 8, 7, 6, 5, 4, 3};
    expect_median(descending, 7, 6);
    const double close_together[] = {1.27, 1.21, 1.33, 1.19, 1.24}; /* real copies' spread */
    expect_median(close_together, 5, 1.24);
}

COURSE_TEST(the_median_of_an_even_count_is_the_mean_of_the_two_middle_times, 1)
{
    const double four[] = {4, 1, 100, 2};
    const double two[] = {1, 2};
    const double six[] = {10, 1, 3, 7, 5, 100};
    const double close_together[] = {0.52, 0.48, 0.61, 0.45};
    const struct {
        const double *times;
        int n;
        double want, low, high; /* the two middle times */
    } cases[] = {{four, 4, 3, 2, 4},
                 {two, 2, 1.5, 1, 2},
                 {six, 6, 6, 5, 7},
                 {close_together, 4, 0.5, 0.48, 0.52}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const double got = median_ms(copy_of(cases[c].times, cases[c].n), cases[c].n);
        ck_assert_msg(!(got == cases[c].low || got == cases[c].high),
                      "median_ms(%s) returned %g, one of the two middle times: with an even "
                      "count there is no single middle, so the median is the mean of %g and "
                      "%g, %g",
                      list_text(cases[c].times, cases[c].n), got, cases[c].low, cases[c].high,
                      cases[c].want);
        expect_median(cases[c].times, cases[c].n, cases[c].want);
    }
}

static const char *unit_note(double ratio)
{
    if (magnitude(ratio - 1e9 / 1073741824.0) < 1e-6)
        return " That is 7.4% low: it divides by 2^30 (a GiB) instead of 10^9 (a GB). Bandwidth "
               "is counted in GB/s, 10^9 bytes per second, as the PCIe link's 63 GB/s is.";
    if (magnitude(ratio - 1e-3) < 1e-9 || magnitude(ratio - 1e3) < 1e-3)
        return " That is off by a factor of 1000: ms is in milliseconds, so the seconds are "
               "ms / 1000.";
    if (magnitude(ratio - 8) < 1e-6)
        return " That is 8 times too much: gigabits, where GB/s counts bytes.";
    return "";
}

COURSE_TEST(bandwidth_is_counted_in_GB_of_10_to_the_9_bytes, 3)
{
    const struct {
        size_t bytes;
        double ms;
        const char *bytes_text;
    } cases[] = {{(size_t)1 << 30, 20.0, "1 GiB"},
                 {1000000000, 1000.0, "10^9 bytes"},
                 {(size_t)256 << 20, 4.8, "256 MiB"},
                 {4096, 0.006, "4096 bytes"}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const double want = (double)cases[c].bytes / 1e9 / (cases[c].ms / 1e3);
        const double got = gb_per_s(cases[c].bytes, cases[c].ms);
        ck_assert_msg(close_to(got, want),
                      "gb_per_s(%s, %g ms) returned %.10g; it should be %.10g, which is bytes / "
                      "10^9 / (ms / 1000).%s",
                      cases[c].bytes_text, cases[c].ms, got, want, unit_note(got / want));
    }
}

/* --- The measurement ---------------------------------------------------------------------- */

#define SMALL_BYTES ((size_t)1 << 20)

static const char *direction_name(enum cudaMemcpyKind kind)
{
    return kind == cudaMemcpyHostToDevice ? "host to device" : "device to host";
}

/* The learner's figure against the test's own, alternating, up to three tries: a
 * shared machine can be busy for a moment, a wrong measurement is wrong every time. */
static void expect_agreement(enum cudaMemcpyKind kind)
{
    const size_t bytes = (size_t)64 << 20;
    const int runs = 5, tries = 3;
    double ours = 0, theirs = 0, ratio = 0;
    double *result = harness_host_alloc(sizeof *result);
    harness_gpu_alone_begin();
    for (int t = 0; t < tries; t++) {
        ours = harness_bandwidth_gb_per_s(bytes, kind, runs);
        *result = NAN;
        cudaError_t err = measure_bandwidth_gb_per_s(bytes, kind, runs, result);
        theirs = *result;
        ck_assert_msg(err == cudaSuccess,
                      "measure_bandwidth_gb_per_s(64 MiB, %s, %d runs) returned %s",
                      memcpy_kind_name(kind), runs, error_text(err));
        ck_assert_msg(isfinite(theirs) && theirs > 0,
                      "measure_bandwidth_gb_per_s(64 MiB, %s, %d runs) returned cudaSuccess but "
                      "stored %g in *result: store gb_per_s(bytes, median_ms(times, runs))",
                      memcpy_kind_name(kind), runs, theirs);
        ratio = theirs / ours;
        if (ratio >= 0.7 && ratio <= 1.4)
            break;
    }
    harness_gpu_alone_end();
    if (ratio >= 0.7 && ratio <= 1.4)
        return;
    ck_abort_msg("measure_bandwidth_gb_per_s measured %.3g GB/s %s for 64 MiB copies (%d runs), "
                 "where the test's own measurement gave %.3g GB/s: %.2f times as much, in each "
                 "of %d tries.%s",
                 theirs, direction_name(kind), runs, ours, ratio, tries,
                 ratio < 0.7 ? " Too low: is the host buffer pinned (cudaMallocHost)? Does "
                               "anything besides one copy lie between the two events?"
                             : " Too high: does the whole copy lie between the two events, and "
                               "does the code wait for the stop event before reading the time?");
}

COURSE_TIMED_TEST(the_bandwidth_host_to_device_agrees_with_the_tests_own_measurement, 3)
{
    expect_agreement(cudaMemcpyHostToDevice);
}

COURSE_TIMED_TEST(the_bandwidth_device_to_host_agrees_with_the_tests_own_measurement, 1)
{
    expect_agreement(cudaMemcpyDeviceToHost);
}

typedef struct measurement {
    enum cudaMemcpyKind kind;
    int runs;
    double *result; /* shared with the learner's code */
} measurement;

static cudaError_t measure_small(void *context)
{
    measurement *m = context;
    if (m->result == NULL)
        m->result = harness_host_alloc(sizeof *m->result);
    return measure_bandwidth_gb_per_s(SMALL_BYTES, m->kind, m->runs, m->result);
}

/* A traced measurement of 1 MiB that must succeed. */
static void run_small(measurement *m)
{
    trace_start();
    trace_stop();
    cudaError_t err;
    TRACED_RUN(err = measure_small(m));
    ck_assert_msg(err == cudaSuccess,
                  "measure_bandwidth_gb_per_s(1 MiB, %s, %d runs) returned %s. The calls it made "
                  "were:%s",
                  memcpy_kind_name(m->kind), m->runs, error_text(err), trace_summary());
}

COURSE_TEST(one_untimed_warm_up_copy_comes_before_the_timed_copies, 3)
{
    measurement m = {cudaMemcpyHostToDevice, 4, NULL};
    run_small(&m);
    const size_t copies = trace_count_of(TRACED_cudaMemcpy);
    ck_assert_msg(copies > 0, "measure_bandwidth_gb_per_s made no cudaMemcpy. The calls:%s",
                  trace_summary());

    /* Which copies have an event recorded since the copy before them, and after them. */
    size_t previous_copy = 0, records_since = 0;
    size_t copy_number = 0;
    bool after_copy = false;
    for (size_t i = 0; i < trace_count(); i++) {
        const traced_call *call = trace_get(i);
        if (call->function == TRACED_cudaEventRecord) {
            records_since++;
            after_copy = false;
        }
        if (call->function != TRACED_cudaMemcpy)
            continue;
        copy_number++;
        ck_assert_msg(copy_number != 1 || records_since == 0,
                      "the first copy was timed: cudaEventRecord comes before it. The first "
                      "copy pays one-time costs that later ones do not (the driver sets up the "
                      "transfer, the link wakes from power saving), so make one warm-up copy "
                      "before the timed ones and do not time it. The calls:%s",
                      trace_summary());
        ck_assert_msg(copy_number == 1 || records_since > 0,
                      "copy number %zu is not timed: no cudaEventRecord comes between it and "
                      "the copy before it (call %zu). After the warm-up, every copy lies between "
                      "two recorded events. The calls:%s",
                      copy_number, previous_copy + 1, trace_summary());
        ck_assert_msg(!after_copy,
                      "copy number %zu follows copy number %zu with no event recorded after "
                      "the earlier one: each timed copy needs its own stop event. The calls:%s",
                      copy_number, copy_number - 1, trace_summary());
        after_copy = copy_number > 1;
        previous_copy = i;
        records_since = 0;
    }
    ck_assert_msg(!after_copy,
                  "the last copy has no event recorded after it, so its time never ends. The "
                  "calls:%s",
                  trace_summary());
    ck_assert_msg(copies == (size_t)m.runs + 1,
                  "measure_bandwidth_gb_per_s made %zu copies for runs = %d: one warm-up copy "
                  "and %d timed ones make %d. The calls:%s",
                  copies, m.runs, m.runs, m.runs + 1, trace_summary());
    ck_assert_msg(trace_count_of(TRACED_cudaEventElapsedTime) == (size_t)m.runs,
                  "measure_bandwidth_gb_per_s read %zu elapsed times (cudaEventElapsedTime) for "
                  "%d timed copies: one per timed copy. The calls:%s",
                  trace_count_of(TRACED_cudaEventElapsedTime), m.runs, trace_summary());
}

COURSE_TEST(the_copies_run_between_pinned_host_memory_and_the_device, 2)
{
    static const enum cudaMemcpyKind kinds[] = {cudaMemcpyHostToDevice, cudaMemcpyDeviceToHost};
    for (size_t k = 0; k < 2; k++) {
        measurement m = {kinds[k], 2, NULL};
        run_small(&m);
        for (size_t n = 1; n <= trace_count_of(TRACED_cudaMemcpy); n++) {
            const traced_call *copy = trace_nth(TRACED_cudaMemcpy, n);
            const bool up = kinds[k] == cudaMemcpyHostToDevice;
            const memory_location host = up ? copy->src_location : copy->dst_location;
            ck_assert_msg(host != LOCATION_PAGEABLE_HOST,
                          "copy number %zu of a %s measurement %s pageable host memory: allocate "
                          "the host buffer with cudaMallocHost. A copy from or to pageable "
                          "memory goes through a staging buffer at a fraction of the speed, so "
                          "it measures the driver's detour, not the link",
                          n, direction_name(kinds[k]), up ? "reads from" : "writes into");
            char what[96];
            snprintf(what, sizeof what, "copy %zu of a measurement %s", n,
                     direction_name(kinds[k]));
            expect_memcpy(n, SMALL_BYTES, 1, kinds[k], what);
            ck_assert_msg(host == LOCATION_PINNED_HOST,
                          "copy number %zu of a %s measurement has %s on the host side; it "
                          "should be the pinned buffer from cudaMallocHost",
                          n, direction_name(kinds[k]), memory_location_name(host));
        }
    }
}

COURSE_TEST(every_buffer_and_event_is_released, 2)
{
    measurement m = {cudaMemcpyHostToDevice, 3, NULL};
    run_small(&m);
    expect_everything_released("measure_bandwidth_gb_per_s");
}

COURSE_TEST(errors_are_returned_and_everything_still_released, 2)
{
    measurement m = {cudaMemcpyHostToDevice, 2, NULL};
    expect_every_failure_handled("measure_bandwidth_gb_per_s", measure_small, &m);
}

COURSE_TEST(a_bad_direction_zero_bytes_or_no_runs_is_an_invalid_value, 1)
{
    double *result = harness_host_alloc(sizeof *result);
    const struct {
        size_t bytes;
        enum cudaMemcpyKind kind;
        int runs;
        double *result;
        const char *call;
    } cases[] = {
        {SMALL_BYTES, cudaMemcpyHostToHost, 3, result, "(1 MiB, cudaMemcpyHostToHost, 3, &r)"},
        {SMALL_BYTES, cudaMemcpyDeviceToDevice, 3, result,
         "(1 MiB, cudaMemcpyDeviceToDevice, 3, &r)"},
        {SMALL_BYTES, cudaMemcpyDefault, 3, result, "(1 MiB, cudaMemcpyDefault, 3, &r)"},
        {0, cudaMemcpyHostToDevice, 3, result, "(0 bytes, cudaMemcpyHostToDevice, 3, &r)"},
        {SMALL_BYTES, cudaMemcpyHostToDevice, 0, result, "(1 MiB, cudaMemcpyHostToDevice, 0, &r)"},
        {SMALL_BYTES, cudaMemcpyHostToDevice, -2, result,
         "(1 MiB, cudaMemcpyHostToDevice, -2, &r)"},
        {SMALL_BYTES, cudaMemcpyHostToDevice, 3, NULL, "(1 MiB, cudaMemcpyHostToDevice, 3, NULL)"}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        trace_start();
        trace_stop();
        cudaError_t err;
        TRACED_RUN(err = measure_bandwidth_gb_per_s(cases[c].bytes, cases[c].kind, cases[c].runs,
                                                    cases[c].result));
        ck_assert_msg(err == cudaErrorInvalidValue,
                      "measure_bandwidth_gb_per_s%s returned %s: it measures host to device or "
                      "device to host, of at least one byte, at least once, into a result it "
                      "can store; return cudaErrorInvalidValue for anything else",
                      cases[c].call, error_text(err));
        ck_assert_msg(trace_count() == 0,
                      "measure_bandwidth_gb_per_s%s called the runtime before rejecting its "
                      "arguments: check them first, before allocating anything. The calls:%s",
                      cases[c].call, trace_summary());
    }
}

/* checks_trace.c - reading the trace by position, events, and failures injected in turn. */
#include "harness.h"

#include <stdint.h>
#include <stdio.h>

size_t trace_position(const traced_call *call)
{
    const traced_call *first = trace_get(0);
    return first != NULL && call != NULL ? (size_t)(call - first) : SIZE_MAX;
}

const traced_call *trace_last_on_event(traced_function function, cudaEvent_t event, size_t before)
{
    const traced_call *found = NULL;
    for (size_t i = 0; i < trace_count() && i < before; i++) {
        const traced_call *call = trace_get(i);
        if (call->function == function && call->event == event)
            found = call;
    }
    return found;
}

const char *nth_call_name(traced_function function, size_t n)
{
    static const char *const words[] = {"first", "second",  "third",  "fourth", "fifth",
                                        "sixth", "seventh", "eighth", "ninth",  "tenth"};
    static char name[96];
    if (n >= 1 && n <= sizeof words / sizeof words[0])
        snprintf(name, sizeof name, "the %s %s", words[n - 1], traced_function_name(function));
    else
        snprintf(name, sizeof name, "%s number %zu", traced_function_name(function), n);
    return name;
}

#define MAX_FAILURE_POINTS 256

/* How long the first copy a function queues is held up, where the test checks that it waits for
 * it on an error too: a function that returns without waiting leaves the GPU busy for about
 * that long, one that waited leaves it idle. */
#define WAITED_DELAY_MS 20.0

static void check_every_failure(const char *function_name, traced_action action, void *context,
                                bool waits);

void expect_every_failure_handled(const char *function_name, traced_action action, void *context)
{
    check_every_failure(function_name, action, context, false);
}

void expect_every_failure_handled_and_waited_for(const char *function_name, traced_action action,
                                                 void *context)
{
    check_every_failure(function_name, action, context, true);
}

static void check_every_failure(const char *function_name, traced_action action, void *context,
                                bool waits)
{
    trace_start();
    trace_stop();
    cudaError_t err;
    TRACED_RUN(err = action(context));
    ck_assert_msg(err == cudaSuccess,
                  "%s returned %s before the test made anything fail. The calls it made were:%s",
                  function_name, error_text(err), trace_summary());

    /* Each call of the clean run, as "the nth call of its function". */
    struct {
        traced_function function;
        size_t nth;
    } points[MAX_FAILURE_POINTS];
    size_t point_count = 0, seen[TRACED_FUNCTION_COUNT] = {0};
    for (size_t i = 0; i < trace_count() && point_count < MAX_FAILURE_POINTS; i++) {
        traced_function function = trace_get(i)->function;
        seen[function]++;
        if (traced_function_role(function) != ROLE_RELEASE) {
            points[point_count].function = function;
            points[point_count].nth = seen[function];
            point_count++;
        }
    }

    for (size_t p = 0; p < point_count; p++) {
        char failed_call[128], description[256];
        snprintf(failed_call, sizeof failed_call, "%s",
                 nth_call_name(points[p].function, points[p].nth));
        snprintf(description, sizeof description, "%s, after the test made %s fail,", function_name,
                 failed_call);
        const cudaError_t injected = traced_function_error(points[p].function);
        trace_start();
        trace_stop();
        trace_inject_failure(points[p].function, points[p].nth, injected);
        if (waits)
            trace_delay_first_async_copies(1, WAITED_DELAY_MS);
        TRACED_RUN(err = action(context));
        /* A wait the test made fail did not wait: what it was to wait for is still running,
         * and nothing else is the code's to do about it. */
        const bool wait_failed = points[p].function == TRACED_cudaStreamSynchronize ||
                                 points[p].function == TRACED_cudaDeviceSynchronize ||
                                 points[p].function == TRACED_cudaEventSynchronize;
        const double busy_ms = waits ? harness_synchronize_untraced() : 0;
        ck_assert_msg(err == injected,
                      "the test made %s fail with %s, but %s returned %s: check the result of "
                      "every call and return the first error. The calls:%s",
                      failed_call, cudaGetErrorName(injected), function_name, error_text(err),
                      trace_summary());
        ck_assert_msg(wait_failed || busy_ms < WAITED_DELAY_MS / 2,
                      "%s returned while work it had queued was still running: the GPU went on "
                      "with it for %.0f ms after the return (the test held its first copy up for "
                      "%.0f ms). cudaMemcpyAsync only queues a copy, and cudaStreamDestroy does "
                      "not wait for it: on an error too, cudaStreamSynchronize each stream that "
                      "has work queued before returning, or the caller's buffers change after it "
                      "was told the call had ended. The calls:%s",
                      description, busy_ms, WAITED_DELAY_MS, trace_summary());
        expect_everything_released(description);
    }
}

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

void expect_every_failure_handled(const char *function_name, traced_action action, void *context)
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
        TRACED_RUN(err = action(context));
        ck_assert_msg(err == injected,
                      "the test made %s fail with %s, but %s returned %s: check the result of "
                      "every call and return the first error. The calls:%s",
                      failed_call, cudaGetErrorName(injected), function_name, error_text(err),
                      trace_summary());
        expect_everything_released(description);
    }
}

/* checks_trace.c - reading the trace: by position and event, what was released and how, the
 * calls summarised for a diagnostic, the copies' sizes and directions, and failures injected in
 * turn. */
#include "harness.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

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
                                bool waits, int caller_device);

/* One run of the code with the nth call of a function made to fail (and its first copy held
 * up, where the test checks that it waits), under a fresh trace. */
typedef struct failing_run {
    traced_action action;
    void *context;
    traced_function function;
    size_t nth;
    cudaError_t injected;
    bool waits;
    int caller_device; /* made current first; -1: left as it is */
    cudaError_t result;
} failing_run;

static void run_failing(void *argument)
{
    failing_run *run = argument;
    trace_start();
    trace_stop();
    trace_inject_failure(run->function, run->nth, run->injected);
    if (run->waits)
        trace_delay_first_async_copies(1, WAITED_DELAY_MS);
    if (run->caller_device >= 0)
        harness_set_device(run->caller_device);
    TRACED_RUN(run->result = run->action(run->context));
}

void expect_every_failure_handled(const char *function_name, traced_action action, void *context)
{
    check_every_failure(function_name, action, context, false, -1);
}

void expect_every_failure_handled_and_waited_for(const char *function_name, traced_action action,
                                                 void *context)
{
    check_every_failure(function_name, action, context, true, -1);
}

void expect_every_failure_handled_on_device(const char *function_name, traced_action action,
                                            void *context, int caller_device, bool waits)
{
    check_every_failure(function_name, action, context, waits, caller_device);
}

/* Whether the caller's GPU is current again after a run, or could not be: the test made the very
 * cudaSetDevice that would have made it current fail. */
static bool callers_device_back(int caller_device)
{
    for (size_t n = 1; n <= trace_count_of(TRACED_cudaSetDevice); n++) {
        const traced_call *set = trace_nth(TRACED_cudaSetDevice, n);
        if (set->injected && set->devices[0] == caller_device)
            return true;
    }
    return harness_current_device() == caller_device;
}

static void check_every_failure(const char *function_name, traced_action action, void *context,
                                bool waits, int caller_device)
{
    trace_start();
    trace_stop();
    cudaError_t err;
    if (caller_device >= 0)
        harness_set_device(caller_device);
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
        failing_run run = {action,
                           context,
                           points[p].function,
                           points[p].nth,
                           traced_function_error(points[p].function),
                           waits,
                           caller_device,
                           cudaSuccess};
        const cudaError_t injected = run.injected;
        double busy_ms = 0;
        if (waits)
            busy_ms = harness_busy_after(run_failing, &run);
        else
            run_failing(&run);
        err = run.result;
        /* A wait the test made fail did not wait: what it was to wait for is still running,
         * and nothing else is the code's to do about it. */
        const bool wait_failed = points[p].function == TRACED_cudaStreamSynchronize ||
                                 points[p].function == TRACED_cudaDeviceSynchronize ||
                                 points[p].function == TRACED_cudaEventSynchronize;
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
        ck_assert_msg(caller_device < 0 || callers_device_back(caller_device),
                      "%s GPU %d was current, where the caller had made GPU %d current: put the "
                      "caller's device back on the error paths too. The calls:%s",
                      description, harness_current_device(), caller_device, trace_summary());
    }
}

void harness_append_text(char *summary, size_t size, size_t *used, const char *format, ...)
{
    if (*used >= size)
        return;
    va_list arguments;
    va_start(arguments, format);
    int written = vsnprintf(summary + *used, size - *used, format, arguments);
    va_end(arguments);
    *used += written > 0 ? (size_t)written : 0;
}

/* Whether the call at `index` gives back a handle that an earlier call, since its last
 * acquisition, already gave back; that earlier release goes in *first. */
static bool released_before(size_t index, size_t *first)
{
    const traced_call *release = trace_get(index);
    trace_resource resource = traced_function_resource(release->function);
    for (size_t j = index; j-- > 0;) {
        const traced_call *earlier = trace_get(j);
        if (earlier->handle != release->handle || earlier->result != cudaSuccess ||
            traced_function_resource(earlier->function) != resource)
            continue;
        *first = j;
        return traced_function_role(earlier->function) == ROLE_RELEASE;
    }
    return false;
}

/* The first release after the acquisition at `index` that was given its handle but gives back
 * another resource (cudaFree of pinned memory, cudaFreeHost of device memory); NULL if none. */
static const traced_call *other_release_of(size_t index)
{
    const traced_call *acquired = trace_get(index);
    const trace_resource resource = traced_function_resource(acquired->function);
    for (size_t j = index + 1; j < trace_count(); j++) {
        const traced_call *later = trace_get(j);
        if (later->handle == acquired->handle &&
            traced_function_role(later->function) == ROLE_RELEASE &&
            traced_function_resource(later->function) != resource)
            return later;
    }
    return NULL;
}

void expect_everything_released(const char *function_name)
{
    for (size_t i = 0; i < trace_count(); i++) {
        const traced_call *call = trace_get(i);
        trace_resource resource = traced_function_resource(call->function);
        if (resource == RESOURCE_NONE || call->handle == NULL)
            continue;
        const char *acquired_with = traced_function_name(call->function);
        /* A second release is a mistake whether or not the runtime noticed it. */
        if (traced_function_role(call->function) == ROLE_RELEASE && !call->injected) {
            size_t first = 0;
            ck_assert_msg(!released_before(i, &first),
                          "%s gave back the same %s twice: call %zu (%s) released it, then call "
                          "%zu (%s) again%s. After the first release it is no longer yours (the "
                          "runtime may already have handed it to someone else): release each "
                          "thing exactly once, and on an error path only what was acquired. "
                          "The calls:%s",
                          function_name, resource_words(resource), first + 1,
                          traced_function_name(trace_get(first)->function), i + 1, acquired_with,
                          call->result != cudaSuccess ? ", which the runtime refused" : "",
                          trace_summary());
            continue;
        }
        if (call->result != cudaSuccess)
            continue;
        bool released = false;
        for (size_t j = i + 1; j < trace_count() && !released; j++) {
            const traced_call *later = trace_get(j);
            released = later->handle == call->handle && later->result == cudaSuccess &&
                       traced_function_role(later->function) == ROLE_RELEASE &&
                       traced_function_resource(later->function) == resource;
        }
        if (released)
            continue;
        /* Given back, but to the call that releases something else (cudaFree of pinned memory). */
        const traced_call *other = other_release_of(i);
        if (other != NULL)
            ck_abort_msg("%s gave %s from %s to %s, which gives back %s, not %s: release it "
                         "with %s, the partner of %s. The calls:%s",
                         function_name, resource_words(resource), acquired_with,
                         traced_function_name(other->function),
                         resource_words(traced_function_resource(other->function)),
                         resource_words(resource), resource_release_call(resource), acquired_with,
                         trace_summary());
        if (call->bytes)
            ck_abort_msg("%s %s %zu bytes with %s and returned without %s on that pointer: "
                         "every allocation needs its free, on the error paths too",
                         function_name,
                         resource == RESOURCE_REGISTRATION ? "registered" : "allocated",
                         call->bytes, acquired_with, resource_release_call(resource));
        ck_abort_msg("%s created %s with %s and returned without %s on it: it holds driver "
                     "resources until it is given back, so release everything you create, on the "
                     "error paths too. The calls:%s",
                     function_name, resource_words(resource), acquired_with,
                     resource_release_call(resource), trace_summary());
    }
}

/* One call, as the summary shows it: "cudaMemcpy(4096 bytes, ...) -> cudaSuccess". */
static void describe_call(const traced_call *call, char *text, size_t size)
{
    size_t used = 0;
    text[0] = '\0';
    harness_append_text(text, size, &used, "%s", traced_function_name(call->function));
    if (call->function == TRACED_cudaMemcpy || call->function == TRACED_cudaMemcpyAsync)
        harness_append_text(text, size, &used, "(%zu bytes, %s: %s to %s)", call->bytes,
                            memcpy_kind_name(call->kind), memory_location_name(call->src_location),
                            memory_location_name(call->dst_location));
    else if (call->function == TRACED_cudaMemPrefetchAsync)
        harness_append_text(text, size, &used, "(%zu bytes of %s, to %s)", call->bytes,
                            memory_location_name(call->dst_location),
                            mem_location_words(call->location));
    else if (call->function == TRACED_cudaMemAdvise)
        harness_append_text(text, size, &used, "(%zu bytes of %s, %s, %s)", call->bytes,
                            memory_location_name(call->dst_location), mem_advice_name(call->advice),
                            mem_location_words(call->location));
    else if (call->function == TRACED_cudaMemcpyPeer ||
             call->function == TRACED_cudaMemcpyPeerAsync)
        harness_append_text(text, size, &used, "(%zu bytes, GPU %d to GPU %d)", call->bytes,
                            call->devices[1], call->devices[0]);
    else if (call->function == TRACED_cudaSetDevice ||
             call->function == TRACED_cudaDeviceEnablePeerAccess ||
             call->function == TRACED_cudaDeviceDisablePeerAccess)
        harness_append_text(text, size, &used, "(%d)", call->devices[0]);
    else if (call->function == TRACED_cudaDeviceCanAccessPeer)
        harness_append_text(text, size, &used, "(%d, %d)", call->devices[0], call->devices[1]);
    else if (call->bytes)
        harness_append_text(text, size, &used, "(%zu bytes)", call->bytes);
    if (call->flags)
        harness_append_text(text, size, &used, " flags 0x%x", call->flags);
    if (call->stream != NULL && call->function != TRACED_cudaStreamCreate &&
        call->function != TRACED_cudaStreamCreateWithFlags)
        harness_append_text(text, size, &used, " on a stream");
    /* Said where there are several GPUs: for the calls about them, and any other call that was
     * not made on the first. */
    const bool about_gpus = call->function == TRACED_cudaDeviceEnablePeerAccess ||
                            call->function == TRACED_cudaDeviceDisablePeerAccess ||
                            call->function == TRACED_cudaMemcpyPeer ||
                            call->function == TRACED_cudaMemcpyPeerAsync;
    if (call->current_device != 0 || about_gpus)
        harness_append_text(text, size, &used, " with GPU %d current", call->current_device);
    harness_append_text(text, size, &used, " -> %s%s", cudaGetErrorName(call->result),
                        call->injected     ? " (injected by the test)"
                        : call->over_limit ? " (over the memory a test program may hold here)"
                                           : "");
}

const char *trace_summary(void)
{
    static char summary[4096];
    const size_t room = sizeof summary - 160; /* kept for the last line */
    size_t used = 0, shown = 0;
    summary[0] = '\0';
    /* A run of calls that read the same (a copy per element, say) is one line with its count. */
    char line[512], next[512];
    while (shown < trace_count() && used < room) {
        describe_call(trace_get(shown), line, sizeof line);
        size_t same = 1;
        while (shown + same < trace_count()) {
            describe_call(trace_get(shown + same), next, sizeof next);
            if (strcmp(next, line) != 0)
                break;
            same++;
        }
        if (same > 2)
            harness_append_text(summary, room, &used, "\n  %zu-%zu. %s, %zu times", shown + 1,
                                shown + same, line, same);
        else
            for (size_t i = 0; i < same; i++)
                harness_append_text(summary, room, &used, "\n  %zu. %s", shown + i + 1, line);
        shown += same;
    }
    size_t unshown = trace_count() - shown + trace_dropped();
    if (trace_count() == 0 && unshown == 0)
        snprintf(summary, sizeof summary, " none");
    else if (unshown > 0)
        harness_append_text(
            summary, sizeof summary, &used, "\n  ... and %zu more call%s%s", unshown,
            unshown == 1 ? "" : "s",
            trace_dropped() ? " (more than the trace keeps: the code made a great many)" : "");
    return summary;
}

static const char *direction_words(enum cudaMemcpyKind kind)
{
    switch (kind) {
    case cudaMemcpyHostToDevice: return "from host to device";
    case cudaMemcpyDeviceToHost: return "from device to host";
    case cudaMemcpyDeviceToDevice: return "from device to device";
    case cudaMemcpyHostToHost: return "from host to host";
    default: return "in the direction its pointers say";
    }
}

const char *describe_kind_mismatch(size_t nth, const char *what, const traced_call *call)
{
    static char sentence[512];
    snprintf(sentence, sizeof sentence,
             "cudaMemcpy number %zu%s%s%s copies from %s to %s but says %s: the kind must name the "
             "direction the data moves, here %s (or cudaMemcpyDefault, which infers it)",
             nth, what ? " (" : "", what ? what : "", what ? ")" : "",
             memory_location_name(call->src_location), memory_location_name(call->dst_location),
             memcpy_kind_name(call->kind),
             memcpy_kind_name(memcpy_kind_for(call->dst_location, call->src_location)));
    return sentence;
}

void expect_memcpy(size_t nth, size_t expected_bytes, size_t element_size,
                   enum cudaMemcpyKind expected_direction, const char *what)
{
    const traced_call *call = trace_nth(TRACED_cudaMemcpy, nth);
    ck_assert_msg(call != NULL,
                  "expected cudaMemcpy number %zu (%s), but only %zu were made. The calls were:%s",
                  nth, what, trace_count_of(TRACED_cudaMemcpy), trace_summary());
    if (call->bytes != expected_bytes) {
        if (element_size > 1 && call->bytes * element_size == expected_bytes)
            ck_abort_msg("cudaMemcpy number %zu (%s) was asked for %zu bytes, which is the "
                         "number of elements: cudaMemcpy's count is in bytes, so pass "
                         "n * sizeof(element) = %zu",
                         nth, what, call->bytes, expected_bytes);
        if (call->bytes == sizeof(void *))
            ck_abort_msg("cudaMemcpy number %zu (%s) was asked for %zu bytes, the size of a "
                         "pointer: sizeof applied to a pointer gives the pointer's size, not the "
                         "buffer's. It should move %zu bytes, n * sizeof(element)",
                         nth, what, call->bytes, expected_bytes);
        ck_abort_msg("cudaMemcpy number %zu (%s) was asked for %zu bytes; it should move %zu", nth,
                     what, call->bytes, expected_bytes);
    }
    const bool into_managed = call->dst_location == LOCATION_MANAGED;
    ck_assert_msg(!into_managed && call->src_location != LOCATION_MANAGED,
                  "cudaMemcpy number %zu (%s) copies %s managed memory (cudaMallocManaged), which "
                  "the runtime moves between host and GPU by itself: this copy is about device "
                  "memory from cudaMalloc, which only the GPU can reach, so allocate it with "
                  "cudaMalloc",
                  nth, what, into_managed ? "into" : "from");
    enum cudaMemcpyKind actual = memcpy_kind_for(call->dst_location, call->src_location);
    ck_assert_msg(actual == expected_direction,
                  "cudaMemcpy number %zu (%s) copies from %s to %s, but this copy should go %s: "
                  "the destination is the first argument, the source the second",
                  nth, what, memory_location_name(call->src_location),
                  memory_location_name(call->dst_location), direction_words(expected_direction));
    ck_assert_msg(call->kind == actual || call->kind == cudaMemcpyDefault, "%s",
                  describe_kind_mismatch(nth, what, call));
}

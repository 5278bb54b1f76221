/* trace.c - the record of traced calls and the failure-injection schedule, read the same way in
 * both processes.
 *
 * In the worker the wrappers fill it (worker_trace.c); in the checker it is a copy, which each
 * call of an exercise function brings up to date from the worker's reply (remote.c). The
 * checker owns the schedule (which call is to fail, which copies are held up) and sends it with
 * every call. Reading the record in the checker notes that the running test leaned on what the
 * worker says of itself (trace_evidence_read): evidence, never a verdict on its own.
 */
#include "trace.h"

#include <stdio.h>
#include <string.h>

traced_call trace_calls[TRACE_CAPACITY];
size_t trace_recorded;
double trace_span_began_ms, trace_span_ended_ms;
size_t trace_dropped_calls;
size_t trace_made[TRACED_FUNCTION_COUNT]; /* calls made while tracing, by function */
trace_injection trace_injections[TRACED_FUNCTION_COUNT];
trace_provocation trace_delay;
static bool tracing;
bool trace_evidence_read;

/* --- The description of each call ------------------------------------------------------- */

static const struct {
    const char *name;
    trace_resource resource;
    trace_role role;
    cudaError_t error;
} described[TRACED_FUNCTION_COUNT] = {
#define TRACED(name, resource, role, error) {#name, RESOURCE_##resource, ROLE_##role, error},
#include "traced_calls.def"
#undef TRACED
};

static const char *const resource_word[RESOURCE_COUNT] = {
    "nothing",
#define RESOURCE(name, words, release) words,
#include "traced_calls.def"
#undef RESOURCE
};

const char *traced_function_name(traced_function function)
{
    return function < TRACED_FUNCTION_COUNT ? described[function].name : "(unknown call)";
}

trace_resource traced_function_resource(traced_function function)
{
    return function < TRACED_FUNCTION_COUNT ? described[function].resource : RESOURCE_NONE;
}

trace_role traced_function_role(traced_function function)
{
    return function < TRACED_FUNCTION_COUNT ? described[function].role : ROLE_USE;
}

cudaError_t traced_function_error(traced_function function)
{
    return function < TRACED_FUNCTION_COUNT ? described[function].error : cudaErrorUnknown;
}

const char *resource_words(trace_resource resource)
{
    return resource < RESOURCE_COUNT ? resource_word[resource] : "something";
}

static const char *const resource_partner[RESOURCE_COUNT] = {
    "nothing",
#define RESOURCE(name, words, release) #release,
#include "traced_calls.def"
#undef RESOURCE
};

const char *resource_release_call(trace_resource resource)
{
    return resource < RESOURCE_COUNT ? resource_partner[resource] : "its release";
}

/* --- The trace ------------------------------------------------------------------------- */

void trace_start(void)
{
    trace_recorded = 0;
    trace_dropped_calls = 0;
    for (int f = 0; f < TRACED_FUNCTION_COUNT; f++) {
        trace_made[f] = 0;
        trace_injections[f].armed = false;
    }
    trace_delay.milliseconds = 0;
    trace_delay.copies = 0;
    trace_delay.host_milliseconds = 0;
    trace_delay.kernel_milliseconds = 0;
    trace_delay.prefetches_skipped = false;
    trace_delay.peers_unreachable = false;
    trace_span_began_ms = trace_span_ended_ms = 0;
    tracing = true;
}

void trace_span_add(double began_ms, double ended_ms)
{
    if (trace_span_began_ms == 0)
        trace_span_began_ms = began_ms;
    trace_span_ended_ms = ended_ms;
}

void trace_resume(void)
{
    tracing = true;
}

void trace_stop(void)
{
    tracing = false;
}

bool trace_is_on(void)
{
    return tracing;
}

size_t trace_count(void)
{
    trace_evidence_read = true;
    return trace_recorded;
}

const traced_call *trace_get(size_t index)
{
    trace_evidence_read = true;
    return index < trace_recorded ? &trace_calls[index] : NULL;
}

size_t trace_count_of(traced_function function)
{
    trace_evidence_read = true;
    return function < TRACED_FUNCTION_COUNT ? trace_made[function] : 0;
}

const traced_call *trace_nth(traced_function function, size_t n)
{
    trace_evidence_read = true;
    for (size_t i = 0, seen = 0; i < trace_recorded; i++)
        if (trace_calls[i].function == function && ++seen == n)
            return &trace_calls[i];
    return NULL;
}

size_t trace_count_acquired(trace_resource resource)
{
    trace_evidence_read = true;
    size_t count = 0;
    for (size_t i = 0; i < trace_recorded; i++)
        count += traced_function_role(trace_calls[i].function) == ROLE_ACQUIRE &&
                 traced_function_resource(trace_calls[i].function) == resource &&
                 trace_calls[i].result == cudaSuccess && trace_calls[i].handle != NULL;
    return count;
}

size_t trace_dropped(void)
{
    trace_evidence_read = true;
    return trace_dropped_calls;
}

void trace_inject_failure(traced_function function, size_t n, cudaError_t error)
{
    trace_injections[function].armed = true;
    trace_injections[function].n = n;
    trace_injections[function].error = error;
}

void trace_delay_async_copies(enum cudaMemcpyKind direction, double milliseconds)
{
    trace_delay.direction = direction;
    trace_delay.milliseconds = milliseconds;
    trace_delay.copies = 0;
}

void trace_delay_host_copies(double milliseconds)
{
    trace_delay.host_milliseconds = milliseconds;
}

void trace_delay_kernels(double milliseconds)
{
    trace_delay.kernel_milliseconds = milliseconds;
}

void trace_skip_prefetches(bool skip)
{
    trace_delay.prefetches_skipped = skip;
}

void trace_deny_peer_access(bool deny)
{
    trace_delay.peers_unreachable = deny;
}

void trace_delay_first_async_copies(size_t copies, double milliseconds)
{
    trace_delay.direction = cudaMemcpyDefault;
    trace_delay.milliseconds = milliseconds;
    trace_delay.copies = copies;
}

/* --- Pointers and kinds ------------------------------------------------------------------ */

const char *memory_location_name(memory_location location)
{
    switch (location) {
    case LOCATION_NULL: return "a NULL pointer";
    case LOCATION_PAGEABLE_HOST: return "pageable host memory";
    case LOCATION_PINNED_HOST: return "pinned host memory";
    case LOCATION_DEVICE: return "device memory";
    case LOCATION_MANAGED: return "managed memory";
    case LOCATION_UNKNOWN: break;
    }
    return "memory the runtime does not know";
}

const char *mem_location_words(struct cudaMemLocation location)
{
    static char words[48];
    switch (location.type) {
    case cudaMemLocationTypeDevice:
        snprintf(words, sizeof words, "device %d", location.id);
        return words;
    case cudaMemLocationTypeHost: return "the host";
    case cudaMemLocationTypeHostNuma:
        snprintf(words, sizeof words, "host NUMA node %d", location.id);
        return words;
    case cudaMemLocationTypeHostNumaCurrent: return "the calling thread's host NUMA node";
    default:
        snprintf(words, sizeof words, "a location of type %d, id %d", (int)location.type,
                 location.id);
        return words;
    }
}

const char *mem_advice_name(enum cudaMemoryAdvise advice)
{
    switch (advice) {
    case cudaMemAdviseSetReadMostly: return "cudaMemAdviseSetReadMostly";
    case cudaMemAdviseUnsetReadMostly: return "cudaMemAdviseUnsetReadMostly";
    case cudaMemAdviseSetPreferredLocation: return "cudaMemAdviseSetPreferredLocation";
    case cudaMemAdviseUnsetPreferredLocation: return "cudaMemAdviseUnsetPreferredLocation";
    case cudaMemAdviseSetAccessedBy: return "cudaMemAdviseSetAccessedBy";
    case cudaMemAdviseUnsetAccessedBy: return "cudaMemAdviseUnsetAccessedBy";
    }
    return "an advice the runtime does not know";
}

const char *memcpy_kind_name(enum cudaMemcpyKind kind)
{
    switch (kind) {
    case cudaMemcpyHostToHost: return "cudaMemcpyHostToHost";
    case cudaMemcpyHostToDevice: return "cudaMemcpyHostToDevice";
    case cudaMemcpyDeviceToHost: return "cudaMemcpyDeviceToHost";
    case cudaMemcpyDeviceToDevice: return "cudaMemcpyDeviceToDevice";
    case cudaMemcpyDefault: return "cudaMemcpyDefault";
    }
    return "an invalid cudaMemcpyKind";
}

static bool on_device(memory_location location)
{
    return location == LOCATION_DEVICE;
}

enum cudaMemcpyKind memcpy_kind_for(memory_location dst, memory_location src)
{
    if (on_device(src))
        return on_device(dst) ? cudaMemcpyDeviceToDevice : cudaMemcpyDeviceToHost;
    return on_device(dst) ? cudaMemcpyHostToDevice : cudaMemcpyHostToHost;
}

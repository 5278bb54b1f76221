/* trace.c - the record of traced calls and the failure-injection schedule. */
#include "trace.h"

#include "timing.h"

#define TRACE_CAPACITY 8192

static traced_call calls[TRACE_CAPACITY];
static size_t recorded;
static size_t made[TRACED_FUNCTION_COUNT]; /* calls made while tracing, by function */
static bool overflowed;
static bool tracing;

static struct {
    bool armed;
    size_t n;
    cudaError_t error;
} injection[TRACED_FUNCTION_COUNT];

void trace_start(void)
{
    recorded = 0;
    overflowed = false;
    for (int f = 0; f < TRACED_FUNCTION_COUNT; f++) {
        made[f] = 0;
        injection[f].armed = false;
    }
    tracing = true;
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
    return recorded;
}

const traced_call *trace_get(size_t index)
{
    return index < recorded ? &calls[index] : NULL;
}

size_t trace_count_of(traced_function function)
{
    return made[function];
}

const traced_call *trace_nth(traced_function function, size_t n)
{
    for (size_t i = 0, seen = 0; i < recorded; i++)
        if (calls[i].function == function && ++seen == n)
            return &calls[i];
    return NULL;
}

bool trace_overflowed(void)
{
    return overflowed;
}

void trace_inject_failure(traced_function function, size_t n, cudaError_t error)
{
    injection[function].armed = true;
    injection[function].n = n;
    injection[function].error = error;
}

bool trace_should_fail(traced_function function, cudaError_t *error)
{
    made[function]++;
    if (injection[function].armed && made[function] == injection[function].n) {
        *error = injection[function].error;
        return true;
    }
    return false;
}

void trace_record(const traced_call *call)
{
    if (recorded == TRACE_CAPACITY) {
        overflowed = true;
        return;
    }
    calls[recorded] = *call;
    calls[recorded].host_ms = host_clock_ms();
    recorded++;
}

memory_location trace_locate(const void *ptr)
{
    if (ptr == NULL)
        return LOCATION_NULL;
    struct cudaPointerAttributes attributes;
    if (cudaPointerGetAttributes(&attributes, ptr) != cudaSuccess) {
        cudaGetLastError(); /* the failed query must not look like the learner's error */
        return LOCATION_UNKNOWN;
    }
    switch (attributes.type) {
    case cudaMemoryTypeUnregistered: return LOCATION_PAGEABLE_HOST;
    case cudaMemoryTypeHost: return LOCATION_PINNED_HOST;
    case cudaMemoryTypeDevice: return LOCATION_DEVICE;
    case cudaMemoryTypeManaged: return LOCATION_MANAGED;
    }
    return LOCATION_UNKNOWN;
}

const char *traced_function_name(traced_function function)
{
    static const char *const names[] = {
#define TRACED(name) #name,
#include "traced_calls.def"
#undef TRACED
    };
    return function < TRACED_FUNCTION_COUNT ? names[function] : "(unknown call)";
}

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

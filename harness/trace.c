/* trace.c - the record of traced calls, the failure-injection schedule and the ledger. */
#include "trace.h"

#include "gpu_work.h"
#include "timing.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TRACE_CAPACITY 8192
#define LEDGER_CAPACITY 4096

static traced_call calls[TRACE_CAPACITY];
static size_t recorded;
static size_t dropped;
static size_t made[TRACED_FUNCTION_COUNT]; /* calls made while tracing, by function */
static bool tracing;

static struct {
    bool armed;
    size_t n;
    cudaError_t error;
} injection[TRACED_FUNCTION_COUNT];

static struct {
    enum cudaMemcpyKind direction;
    double milliseconds; /* 0: no delay */
} copy_delay;

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
    recorded = 0;
    dropped = 0;
    for (int f = 0; f < TRACED_FUNCTION_COUNT; f++) {
        made[f] = 0;
        injection[f].armed = false;
    }
    copy_delay.milliseconds = 0;
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

size_t trace_count_acquired(trace_resource resource)
{
    size_t count = 0;
    for (size_t i = 0; i < recorded; i++)
        count += traced_function_role(calls[i].function) == ROLE_ACQUIRE &&
                 traced_function_resource(calls[i].function) == resource &&
                 calls[i].result == cudaSuccess && calls[i].handle != NULL;
    return count;
}

size_t trace_dropped(void)
{
    return dropped;
}

void trace_inject_failure(traced_function function, size_t n, cudaError_t error)
{
    injection[function].armed = true;
    injection[function].n = n;
    injection[function].error = error;
}

void trace_delay_async_copies(enum cudaMemcpyKind direction, double milliseconds)
{
    copy_delay.direction = direction;
    copy_delay.milliseconds = milliseconds;
    if (milliseconds <= 0)
        return;
    /* Load the kernel now, untraced: loading it at its first launch, in the middle of the
     * learner's calls, could make the host wait there. */
    const bool was_tracing = tracing;
    tracing = false;
    if (gpu_work_keep_busy(NULL, 0.0) != cudaSuccess || cudaDeviceSynchronize() != cudaSuccess)
        cudaGetLastError(); /* a runtime without kernels: the copies are simply not delayed */
    tracing = was_tracing;
}

void trace_delay_copy(const traced_call *call)
{
    if (!tracing || copy_delay.milliseconds <= 0)
        return;
    if (copy_delay.direction != cudaMemcpyDefault &&
        copy_delay.direction != memcpy_kind_for(call->dst_location, call->src_location))
        return;
    /* Best effort: where it cannot run (no kernels in a stand-in runtime) the copy is simply not
     * delayed, and the failed launch must not look like the learner's error. */
    if (gpu_work_keep_busy(call->stream, copy_delay.milliseconds) != cudaSuccess)
        cudaGetLastError();
}

/* The learner's code may call the runtime from several threads at once (chapter 3's
 * pageable_fast may): the counts, the trace and the ledger change under this lock. */
static pthread_mutex_t trace_lock = PTHREAD_MUTEX_INITIALIZER;

bool trace_should_fail(traced_function function, cudaError_t *error)
{
    pthread_mutex_lock(&trace_lock);
    made[function]++;
    bool fail = injection[function].armed && made[function] == injection[function].n;
    if (fail)
        *error = injection[function].error;
    pthread_mutex_unlock(&trace_lock);
    return fail;
}

/* --- The ledger: what is held, traced or not ---------------------------------------------- */

static struct {
    trace_resource resource;
    const void *handle;
    size_t bytes;
} held[LEDGER_CAPACITY];
static size_t held_count;
static size_t held_bytes[RESOURCE_COUNT];
static bool ledger_overflowed;

static void ledger_note(const traced_call *call)
{
    trace_resource resource = traced_function_resource(call->function);
    if (resource == RESOURCE_NONE || call->result != cudaSuccess || call->handle == NULL)
        return;
    if (traced_function_role(call->function) == ROLE_ACQUIRE) {
        if (held_count == LEDGER_CAPACITY) {
            ledger_overflowed = true;
            return;
        }
        held[held_count].resource = resource;
        held[held_count].handle = call->handle;
        held[held_count].bytes = call->bytes;
        held_bytes[resource] += call->bytes;
        held_count++;
        return;
    }
    for (size_t i = held_count; i-- > 0;)
        if (held[i].resource == resource && held[i].handle == call->handle) {
            held_bytes[resource] -= held[i].bytes;
            held[i] = held[--held_count];
            return;
        }
}

/* COURSE_MEMORY_LIMIT_MB: what one test program may hold of device memory, and of pinned host
 * memory (allocated or registered), where several share a GPU and a machine (make grade): a
 * program that takes everything fails its own tests, not its neighbours'. */
static size_t memory_limit(void)
{
    static size_t limit = 0;
    static bool read = false;
    if (!read) {
        const char *text = getenv("COURSE_MEMORY_LIMIT_MB");
        char *end = NULL;
        unsigned long long megabytes = text ? strtoull(text, &end, 10) : 0;
        limit = text && end != text && *end == '\0' && megabytes > 0 ? (size_t)megabytes << 20
                                                                       : SIZE_MAX;
        read = true;
    }
    return limit;
}

bool ledger_over_limit(traced_function function, size_t bytes)
{
    trace_resource resource = traced_function_resource(function);
    if (traced_function_role(function) != ROLE_ACQUIRE || resource == RESOURCE_EVENT ||
        resource == RESOURCE_STREAM)
        return false;
    pthread_mutex_lock(&trace_lock);
    size_t held_now = resource == RESOURCE_DEVICE_MEMORY
                          ? held_bytes[RESOURCE_DEVICE_MEMORY]
                          : held_bytes[RESOURCE_PINNED_MEMORY] + held_bytes[RESOURCE_REGISTRATION];
    pthread_mutex_unlock(&trace_lock);
    return bytes > memory_limit() || held_now > memory_limit() - bytes;
}

void trace_record(const traced_call *call, bool tracing_this_call)
{
    pthread_mutex_lock(&trace_lock);
    ledger_note(call);
    if (tracing_this_call && recorded == TRACE_CAPACITY) {
        dropped++;
    } else if (tracing_this_call) {
        calls[recorded] = *call;
        calls[recorded].host_ms = host_clock_ms();
        recorded++;
    }
    pthread_mutex_unlock(&trace_lock);
}

trace_resource ledger_resource_of(const void *handle)
{
    trace_resource resource = RESOURCE_NONE;
    pthread_mutex_lock(&trace_lock);
    for (size_t i = 0; i < held_count && resource == RESOURCE_NONE; i++)
        if (held[i].handle == handle)
            resource = held[i].resource;
    pthread_mutex_unlock(&trace_lock);
    return resource;
}

static cudaError_t release(trace_resource resource, const void *handle)
{
    switch (resource) {
#define RESOURCE(name, words, release_call)                                                        \
    case RESOURCE_##name: return release_call((void *)handle);
#include "traced_calls.def"
#undef RESOURCE
    default: return cudaErrorInvalidValue;
    }
}

size_t ledger_release_all(bool *complete)
{
    bool was_tracing = tracing;
    tracing = false;
    size_t released = 0;
    for (int r = RESOURCE_NONE + 1; r < RESOURCE_COUNT; r++)
        for (size_t i = held_count; i-- > 0;) {
            if (held[i].resource != (trace_resource)r)
                continue;
            const void *handle = held[i].handle;
            held[i] = held[--held_count]; /* the wrapper would drop it too; once is enough */
            (void)release((trace_resource)r, handle);
            released++;
        }
    held_count = 0;
    for (int r = 0; r < RESOURCE_COUNT; r++)
        held_bytes[r] = 0;
    *complete = !ledger_overflowed;
    ledger_overflowed = false;
    tracing = was_tracing;
    return released;
}

/* --- Pointers and kinds ------------------------------------------------------------------ */

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

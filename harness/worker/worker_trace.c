/* worker_trace.c - in the worker: recording the learner's calls, failing them on demand, and the
 * ledger of what the learner's code holds. The record itself is trace.c's. */
#include "trace.h"
#include "worker.h"

#include "timing.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LEDGER_CAPACITY 4096

/* The checker's room for records, for this call: past it, calls are counted as dropped. */
size_t trace_room = TRACE_CAPACITY;

/* The learner's code may call the runtime from several threads at once (chapter 3's
 * pageable_fast may): the counts, the trace and the ledger change under this lock. */
static pthread_mutex_t trace_lock = PTHREAD_MUTEX_INITIALIZER;

bool trace_should_fail(traced_function function, cudaError_t *error)
{
    pthread_mutex_lock(&trace_lock);
    trace_made[function]++;
    bool fail = trace_injections[function].armed && trace_made[function] == trace_injections[function].n;
    if (fail)
        *error = trace_injections[function].error;
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

/* What the harness gave back at the end of a test, for the learner's code, which never did: a
 * handle kept in a static variable from one call to the next is then a dangling one, and the
 * test that uses it again says so, instead of a crash or an unrelated error. An entry goes once
 * the runtime hands the same handle or memory out again. */
#define GIVEN_BACK_CAPACITY 256
static struct {
    trace_resource resource;
    const void *handle;
    size_t bytes;
} given_back[GIVEN_BACK_CAPACITY];
static size_t given_back_count, given_back_next;

static bool overlaps(const void *a, size_t a_bytes, const void *b, size_t b_bytes)
{
    const uintptr_t x = (uintptr_t)a, y = (uintptr_t)b;
    return x < y + (b_bytes ? b_bytes : 1) && y < x + (a_bytes ? a_bytes : 1);
}

static void forget_given_back(const void *handle, size_t bytes)
{
    for (size_t i = 0; i < given_back_count; i++)
        if (overlaps(given_back[i].handle, given_back[i].bytes, handle, bytes))
            given_back[i].handle = NULL;
}

void ledger_forget_given_back(const void *handle, size_t bytes)
{
    pthread_mutex_lock(&trace_lock);
    forget_given_back(handle, bytes);
    pthread_mutex_unlock(&trace_lock);
}

static void remember_given_back(trace_resource resource, const void *handle, size_t bytes)
{
    given_back[given_back_next].resource = resource;
    given_back[given_back_next].handle = handle;
    given_back[given_back_next].bytes =
        resource == RESOURCE_EVENT || resource == RESOURCE_STREAM ? 0 : bytes;
    given_back_next = (given_back_next + 1) % GIVEN_BACK_CAPACITY;
    if (given_back_count < GIVEN_BACK_CAPACITY)
        given_back_count++;
}

trace_resource ledger_given_back(const void *ptr)
{
    trace_resource found = RESOURCE_NONE;
    pthread_mutex_lock(&trace_lock);
    for (size_t i = 0; i < given_back_count && ptr != NULL && found == RESOURCE_NONE; i++)
        if (given_back[i].handle != NULL &&
            (given_back[i].handle == ptr ||
             (given_back[i].bytes > 0 && overlaps(given_back[i].handle, given_back[i].bytes, ptr, 1))))
            found = given_back[i].resource;
    pthread_mutex_unlock(&trace_lock);
    return found;
}

static void ledger_note(const traced_call *call)
{
    trace_resource resource = traced_function_resource(call->function);
    if (resource == RESOURCE_NONE || call->result != cudaSuccess || call->handle == NULL)
        return;
    if (traced_function_role(call->function) == ROLE_ACQUIRE) {
        forget_given_back(call->handle, call->bytes);
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
    if (tracing_this_call && trace_recorded >= trace_room) {
        trace_dropped_calls++;
    } else if (tracing_this_call) {
        trace_calls[trace_recorded] = *call;
        trace_calls[trace_recorded].host_ms = host_clock_ms();
        trace_recorded++;
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
    bool was_tracing = trace_is_on();
    trace_stop();
    size_t released = 0;
    for (int r = RESOURCE_NONE + 1; r < RESOURCE_COUNT; r++)
        for (size_t i = held_count; i-- > 0;) {
            if (held[i].resource != (trace_resource)r)
                continue;
            const void *handle = held[i].handle;
            const size_t bytes = held[i].bytes;
            held[i] = held[--held_count]; /* the wrapper would drop it too; once is enough */
            (void)release((trace_resource)r, handle);
            remember_given_back((trace_resource)r, handle, bytes);
            released++;
        }
    held_count = 0;
    for (int r = 0; r < RESOURCE_COUNT; r++)
        held_bytes[r] = 0;
    *complete = !ledger_overflowed;
    ledger_overflowed = false;
    if (was_tracing)
        trace_resume();
    return released;
}

/* --- Pointers and kinds ------------------------------------------------------------------ */

memory_location worker_locate(const void *ptr)
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


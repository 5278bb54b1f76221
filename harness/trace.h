/* trace.h - what the learner's code asked of the CUDA runtime, and failures on demand.
 *
 * Every call listed in traced_calls.def is linked through a wrapper
 * (-Wl,--wrap=cudaMemcpy and so on). While tracing is on, the wrapper records
 * the call (its arguments, where each pointer lives, what it returned) before
 * or instead of passing it to the runtime; a test can also make the n-th call
 * of a function fail with an error of its choice, to see whether the learner's
 * code notices. While tracing is off (the harness's own set-up and checks) the
 * wrappers pass calls straight through.
 */
#ifndef COURSE_TRACE_H
#define COURSE_TRACE_H

#include <cuda_runtime_api.h>
#include <stdbool.h>
#include <stddef.h>

typedef enum traced_function {
#define TRACED(name) TRACED_##name,
#include "traced_calls.def"
#undef TRACED
    TRACED_FUNCTION_COUNT
} traced_function;

/* Where a pointer points, as cudaPointerGetAttributes sees it. */
typedef enum memory_location {
    LOCATION_NULL,
    LOCATION_PAGEABLE_HOST, /* ordinary malloc'd or stack memory */
    LOCATION_PINNED_HOST,   /* cudaMallocHost / cudaHostAlloc / registered */
    LOCATION_DEVICE,
    LOCATION_MANAGED,
    LOCATION_UNKNOWN
} memory_location;

typedef struct traced_call {
    traced_function function;
    cudaError_t result;
    bool injected; /* the harness made this call fail; the runtime never saw it */
    void *dst;     /* cudaMemcpy*, cudaMemset: destination; cudaFree*: the pointer */
    const void *src;
    memory_location dst_location, src_location;
    size_t bytes; /* copies, sets and allocations */
    enum cudaMemcpyKind kind;
    void *allocated; /* what an allocation returned through its out-parameter */
    cudaEvent_t event, end_event;
    cudaStream_t stream;
    double host_ms; /* host clock when the call returned */
} traced_call;

void trace_start(void);  /* forget earlier calls and injections, start recording */
void trace_resume(void); /* record again, keeping what was recorded and armed */
void trace_stop(void);
bool trace_is_on(void);

size_t trace_count(void);                   /* calls recorded, all functions */
const traced_call *trace_get(size_t index); /* 0-based over all calls, NULL past the end */
size_t trace_count_of(traced_function function);
const traced_call *trace_nth(traced_function function, size_t n); /* 1-based; NULL if fewer */
bool trace_overflowed(void); /* more calls were made than the trace keeps */

/* Makes the n-th (1-based) call of `function` return `error` without reaching
 * the runtime. For allocations the out-parameter is left untouched. */
void trace_inject_failure(traced_function function, size_t n, cudaError_t error);

const char *traced_function_name(traced_function function);
const char *memory_location_name(memory_location location);
const char *memcpy_kind_name(enum cudaMemcpyKind kind);
/* The kind that matches a copy between these locations. */
enum cudaMemcpyKind memcpy_kind_for(memory_location dst, memory_location src);

/* Internal to the wrappers: classify a pointer without disturbing the runtime's error state. */
memory_location trace_locate(const void *ptr);
/* Internal: returns true and the error to give when this call is to fail; counts the call. */
bool trace_should_fail(traced_function function, cudaError_t *error);
void trace_record(const traced_call *call);

#endif

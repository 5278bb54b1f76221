/* trace.h - what the learner's code asked of the CUDA runtime, and failures on demand.
 *
 * Every call described in traced_calls.def is linked through a wrapper
 * (-Wl,--wrap=cudaMemcpy and so on). While tracing is on, the wrapper records
 * the call (its arguments, where each pointer lives, what it returned) before
 * or instead of passing it to the runtime; a test can also make the n-th call
 * of a function fail with an error of its choice, to see whether the learner's
 * code notices. While tracing is off (the harness's own set-up and checks) the
 * wrappers pass calls straight through.
 *
 * Whether tracing or not, the wrappers keep a ledger of what is held (device
 * and pinned memory, registrations, events, streams): between two tests that
 * share a process, the harness gives back whatever the first one left.
 */
#ifndef COURSE_TRACE_H
#define COURSE_TRACE_H

#include <cuda_runtime_api.h>
#include <stdbool.h>
#include <stddef.h>

typedef enum traced_function {
#define TRACED(name, resource, role, error) TRACED_##name,
#include "traced_calls.def"
#undef TRACED
    TRACED_FUNCTION_COUNT
} traced_function;

/* What a call acquires or releases (traced_calls.def's RESOURCE rows). */
typedef enum trace_resource {
    RESOURCE_NONE,
#define RESOURCE(name, words, release) RESOURCE_##name,
#include "traced_calls.def"
#undef RESOURCE
    RESOURCE_COUNT
} trace_resource;

typedef enum trace_role { ROLE_USE, ROLE_ACQUIRE, ROLE_RELEASE } trace_role;

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
    bool injected;   /* the harness made this call fail; the runtime never saw it */
    bool over_limit; /* refused: the program would hold more memory than it may */
    /* What an acquisition returned through its out-parameter, or what a release gave back:
     * a pointer, an event or a stream. */
    const void *handle;
    void *dst; /* cudaMemcpy*, cudaMemset: destination; cudaFree*: the pointer */
    const void *src;
    memory_location dst_location, src_location;
    size_t bytes; /* copies, sets, allocations and registrations */
    enum cudaMemcpyKind kind;
    unsigned int flags; /* cudaHostAlloc, cudaHostRegister, ...WithFlags, cudaStreamWaitEvent */
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
/* Successful acquisitions of `resource` in the trace, by any call that acquires it. */
size_t trace_count_acquired(trace_resource resource);
size_t trace_dropped(void); /* calls made but not kept: the trace was full */

/* Makes the n-th (1-based) call of `function` return `error` without reaching
 * the runtime. For allocations the out-parameter is left untouched. */
void trace_inject_failure(traced_function function, size_t n, cudaError_t error);

/* Holds the learner's streams up, so that what their code reads or reuses too early reads
 * poison or another chunk's data rather than, by luck, the right values. While tracing, before
 * each cudaMemcpyAsync that moves data in `direction` (as where its pointers live says, whatever
 * kind the call names; cudaMemcpyDefault: every one), the wrapper queues
 * gpu_work_keep_busy(its stream, milliseconds) on the call's stream; gpu_work_keep_busy is not
 * traced, so the trace and the learner's results see nothing else of it. 0 turns it off;
 * trace_start forgets it. A runtime whose streams run in call order (the course's stand-in)
 * cannot show what it provokes. */
void trace_delay_async_copies(enum cudaMemcpyKind direction, double milliseconds);

/* The description of each call, from traced_calls.def. */
const char *traced_function_name(traced_function function);
trace_resource traced_function_resource(traced_function function);
trace_role traced_function_role(traced_function function);
cudaError_t traced_function_error(traced_function function);
const char *resource_words(trace_resource resource); /* "device memory" */
/* The call that gives `resource` back, as its RESOURCE row names it: "cudaFree". */
const char *resource_release_call(trace_resource resource);

/* The ledger: what is held now, whoever acquired it, traced or not. */
/* Whether acquiring `bytes` more with `function` would pass the memory this program may hold
 * (COURSE_MEMORY_LIMIT_MB, which make grade sets); such a call fails with
 * cudaErrorMemoryAllocation without reaching the runtime. */
bool ledger_over_limit(traced_function function, size_t bytes);
/* What the ledger holds at exactly this pointer (RESOURCE_NONE: nothing). */
trace_resource ledger_resource_of(const void *handle);
/* Gives back everything held (events and streams after the memory they may use); returns how
 * many it gave back. False in *complete when the ledger had overflowed, so some could not be. */
size_t ledger_release_all(bool *complete);

const char *memory_location_name(memory_location location);
const char *memcpy_kind_name(enum cudaMemcpyKind kind);
/* The kind that matches a copy between these locations. */
enum cudaMemcpyKind memcpy_kind_for(memory_location dst, memory_location src);

/* Internal to the wrappers: classify a pointer without disturbing the runtime's error state. */
memory_location trace_locate(const void *ptr);
/* Internal: returns true and the error to give when this call is to fail; counts the call. */
bool trace_should_fail(traced_function function, cudaError_t *error);
/* Internal: queues the delay trace_delay_async_copies asked for before this copy, if any. */
void trace_delay_copy(const traced_call *call);
/* Internal: notes the call in the ledger and, when `tracing`, in the trace. */
void trace_record(const traced_call *call, bool tracing);

/* Internal to the wrappers: the worker's pool of pinned blocks that the code gave back
 * (pinned_pool.c). Take: true, with a kept block of at least `bytes` allocated with `flags`,
 * poisoned, in *ptr. Note: a block the runtime has just allocated. Give: what became of a block
 * handed to cudaFreeHost; the caller frees it for real unless the pool kept it, and a block
 * the pool already holds was given back twice, an invalid pointer to the runtime. */
typedef enum { PINNED_POOL_NOT_KEPT, PINNED_POOL_KEPT, PINNED_POOL_ALREADY_KEPT } pinned_pool_verdict;
bool pinned_pool_take(void **ptr, size_t bytes, unsigned int flags);
void pinned_pool_note(void *ptr, size_t bytes, unsigned int flags);
pinned_pool_verdict pinned_pool_give(void *ptr);
/* For the runner: while a timed test has the GPU alone, the pool neither keeps nor gives. */
void pinned_pool_set_measuring(bool on);

#endif

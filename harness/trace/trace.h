/* trace.h - what the learner's code asked of the CUDA runtime, and failures on demand.
 *
 * Every call described in traced_calls.def that the learner's module makes is linked through a
 * wrapper in the worker (-Wl,--wrap=cudaMemcpy and so on, worker_wrappers.c). While tracing is
 * on, the wrapper records the call (its arguments, where each pointer lives, what it returned)
 * before or instead of passing it to the runtime; a test can also make the n-th call of a
 * function fail with an error of its choice, to see whether the learner's code notices. While
 * tracing is off the wrappers pass calls straight through.
 *
 * The tests read the record in the checker, which keeps a copy of it that every call of an
 * exercise function brings up to date (remote.h). It is what the worker says of itself:
 * evidence, which the learner's code could have written over (trace_evidence_read).
 *
 * Whether tracing or not, the worker's wrappers keep a ledger of what is held (device and
 * pinned memory, registrations, events, streams): between two tests that share a worker, it
 * gives back whatever the first one left.
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
    /* cudaMemPrefetchAsync: where to; cudaMemAdvise: the advice and whom it names. */
    struct cudaMemLocation location;
    enum cudaMemoryAdvise advice;
    /* The device current when the call was made (cudaGetDevice), and the devices it names:
     * cudaSetDevice [device]; cudaDeviceCanAccessPeer [device, peer]; cudaDeviceEnablePeerAccess
     * and _Disable [peer]; cudaMemcpyPeer and _Async [destination's, source's]. */
    int current_device;
    int devices[2];
    double host_ms; /* host clock when the call returned */
} traced_call;

/* The record and the schedule (trace.c): one copy in each process. */
#define TRACE_CAPACITY 8192
typedef struct trace_injection {
    bool armed;
    size_t n;
    cudaError_t error;
} trace_injection;
/* What a test has the worker do to the learner's calls so that a mistake shows every time: hold
 * copies, memcpy calls and kernels up (the direction, milliseconds and copies are the copies'),
 * or make prefetches move nothing. */
typedef struct trace_provocation {
    enum cudaMemcpyKind direction;
    double milliseconds; /* 0: no delay */
    size_t copies;       /* how many copies of a call to hold up, the first ones; 0: every one */
    double host_milliseconds;   /* the learner's memcpy calls of 256 bytes or more; 0: none */
    double kernel_milliseconds; /* each gpu_work kernel the learner's code launches; 0: none */
    bool prefetches_skipped;    /* trace_skip_prefetches */
    bool peers_unreachable;     /* trace_deny_peer_access */
} trace_provocation;
extern traced_call trace_calls[TRACE_CAPACITY];
extern size_t trace_recorded, trace_dropped_calls;
extern size_t trace_made[TRACED_FUNCTION_COUNT];
extern trace_injection trace_injections[TRACED_FUNCTION_COUNT];
extern trace_provocation trace_delay;
/* Set by every reader of the record below: the running test has leaned on the worker's word.
 * A test that passes so, and compared none of the code's results with what they must be
 * (harness_results_compared), rests on evidence alone. */
extern bool trace_evidence_read;
/* Where the learner's functions ran since trace_start, on the worker's host clock: from the
 * start of the first called to the return of the last (both 0 when none was called). The
 * worker's word, as the record is. */
extern double trace_span_began_ms, trace_span_ended_ms;
void trace_span_add(double began_ms, double ended_ms);

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
 * each cudaMemcpyAsync (and cudaMemcpyPeerAsync) that moves data in `direction` (as where its
 * pointers live says, whatever kind the call names; cudaMemcpyDefault: every one), the wrapper
 * queues gpu_work_keep_busy(its stream, milliseconds) on the call's stream; gpu_work_keep_busy is
 * not traced, so the trace and the learner's results see nothing else of it. 0 turns it off;
 * trace_start forgets it. A runtime whose streams run in call order (the course's stand-in)
 * cannot show what it provokes. */
void trace_delay_async_copies(enum cudaMemcpyKind direction, double milliseconds);
/* The same for the first `copies` cudaMemcpyAsync calls of each call of the learner's, in either
 * direction: what a function queued before it hit an error is then still running when it
 * returns, unless it waited for it. */
void trace_delay_first_async_copies(size_t copies, double milliseconds);
/* Holds up each memcpy of 256 bytes or more that the learner's code makes on a thread of its own
 * (not the one that runs the call), traced
 * or not, by `milliseconds` before it starts (0: off; trace_start forgets it): a buffer handed
 * to the GPU before the threads filling it have finished then shows it every time. */
void trace_delay_host_copies(double milliseconds);
/* Holds up each traced gpu_work kernel (gpu_work_scale_add, gpu_work_checksum,
 * gpu_work_bytes_to_floats) the learner's code launches while tracing, as
 * trace_delay_async_copies holds up copies: gpu_work_keep_busy for `milliseconds` on the
 * kernel's stream first (0: off; trace_start forgets it). A host that
 * reads managed memory before the kernel is done then reads what was there before it. */
void trace_delay_kernels(double milliseconds);
/* Makes each cudaMemPrefetchAsync of the learner's code, while tracing, return cudaSuccess
 * without moving anything (recorded as injected): the same code then runs on page faults alone,
 * so a timed test can measure what its prefetches saved, whatever its host code costs, by
 * timing it both ways. trace_start forgets it. */
void trace_skip_prefetches(bool skip);
/* While tracing, cudaDeviceCanAccessPeer answers 0 for every pair, as on a machine whose GPUs
 * cannot reach each other's memory (two GPUs on different PCIe root complexes, say): code that
 * enables access without asking then meets the runtime's refusal, or would on such a machine.
 * trace_start forgets it. */
void trace_deny_peer_access(bool deny);

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
/* What the harness gave back at the end of an earlier test that ptr (a handle, or a pointer into
 * memory) belongs to; RESOURCE_NONE when nothing. */
trace_resource ledger_given_back(const void *ptr);
/* The runtime handed [handle, handle + bytes) out again (to the test, say): no longer dangling. */
void ledger_forget_given_back(const void *handle, size_t bytes);
/* Gives back everything held (events and streams after the memory they may use); returns how
 * many it gave back. False in *complete when the ledger had overflowed, so some could not be. */
size_t ledger_release_all(bool *complete);

const char *memory_location_name(memory_location location);
const char *memcpy_kind_name(enum cudaMemcpyKind kind);
/* "device 0", "the host" (cudaMemLocationTypeHost), "host NUMA node 1": where a prefetch goes or
 * whom advice names. The text lasts until the next call. */
const char *mem_location_words(struct cudaMemLocation location);
const char *mem_advice_name(enum cudaMemoryAdvise advice); /* "cudaMemAdviseSetReadMostly" */
/* The kind that matches a copy between these locations. */
enum cudaMemcpyKind memcpy_kind_for(memory_location dst, memory_location src);

/* Where a pointer lives, without disturbing the runtime's error state: in the worker, asked of
 * its runtime; in the checker, asked of the worker (evidence). */
memory_location trace_locate(const void *ptr);
/* Internal: returns true and the error to give when this call is to fail; counts the call. */
bool trace_should_fail(traced_function function, cudaError_t *error);
/* Internal: queues the delay trace_delay_async_copies asked for before this copy, if any. */
void trace_delay_copy(const traced_call *call);
void trace_delay_count_again(void); /* a new call of the learner's: no copy held up yet */
/* Internal: queues the delay trace_delay_kernels asked for before this kernel, if any. */
void trace_delay_kernel(const traced_call *call);
/* Internal: notes the call in the ledger and, when `tracing`, in the trace. */
void trace_record(const traced_call *call, bool tracing);

#endif

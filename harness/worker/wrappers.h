/* wrappers.h - what the worker's link-time wrappers share (worker_wrappers.c, and
 * worker_wrappers_gpus.c for the calls about several GPUs): the steps every wrapper takes.
 *
 * A wrapper begins a record of its call (BEGIN), fills in what is particular to it, and ends
 * with FINISH (or ACQUIRE, for a call that acquires a handle), which passes the call on unless
 * it is to fail and records it from the row of traced_calls.def that describes it.
 */
#ifndef COURSE_WRAPPERS_H
#define COURSE_WRAPPERS_H

#include "trace.h"

#include <stdbool.h>
#include <stddef.h>

/* Whether the call uses a handle or memory that the harness gave back after an earlier test
 * (the test then fails, saying so). */
bool kept_past_its_test(const traced_call *call);
/* The call's pointers and size; while tracing, where each pointer lives. */
void locate_ends(traced_call *call, bool tracing, void *dst, const void *src, size_t bytes);

#define DECLARE_REAL(ret, name, params) ret __real_##name params;

/* Start a record for this call; `call`, `tracing`, `fail` and `error` are in scope afterwards. */
#define BEGIN(name)                                                                                \
    traced_call call;                                                                              \
    memset(&call, 0, sizeof call);                                                                 \
    call.function = TRACED_##name;                                                                 \
    bool tracing = trace_is_on();                                                                  \
    cudaError_t error = cudaSuccess;                                                               \
    bool fail = tracing && trace_should_fail(TRACED_##name, &error);                               \
    if (tracing) /* which GPU the call is about, where there are several */                        \
        (void)cudaGetDevice(&call.current_device)

/* Pass the call on unless it is to fail, or uses what the harness gave back after an earlier
 * test (kept_past_its_test), record it, return its result. */
#define FINISH(real_call)                                                                          \
    do {                                                                                           \
        if (!fail && kept_past_its_test(&call)) {                                                  \
            fail = true;                                                                           \
            error = cudaErrorInvalidResourceHandle;                                                \
        }                                                                                          \
        if (!fail)                                                                                 \
            error = real_call;                                                                     \
        call.result = error;                                                                       \
        call.injected = fail && !call.over_limit;                                                  \
        trace_record(&call, tracing);                                                              \
        return error;                                                                              \
    } while (0)

/* An acquisition: run it unless it is to fail or would pass the program's memory limit, and keep
 * what its out-parameter received. */
#define ACQUIRE(out, real_call)                                                                    \
    do {                                                                                           \
        if (!fail && ledger_over_limit(call.function, call.bytes)) {                               \
            fail = call.over_limit = true;                                                         \
            error = cudaErrorMemoryAllocation;                                                     \
        }                                                                                          \
        if (!fail) {                                                                               \
            error = real_call;                                                                     \
            call.handle = error == cudaSuccess && (out) ? (const void *)*(out) : NULL;             \
        }                                                                                          \
        FINISH(error);                                                                             \
    } while (0)

#endif

/* worker.h - inside the worker (worker_main.c): what its parts share.
 *
 * The worker runs the learner's code. Nothing here decides a verdict: the checker does, from
 * what it sees in the shared memory and on the GPU. The worker records what the learner's code
 * asked of the runtime, fails calls on demand, and gives back what a test left held.
 */
#ifndef COURSE_WORKER_H
#define COURSE_WORKER_H

#include "remote.h"
#include "trace.h"

#include <cuda_runtime_api.h>
#include <stdbool.h>
#include <stddef.h>

/* The checker's room for records during this call (worker_trace.c). */
extern size_t trace_room;
/* Where a pointer lives, as this process's runtime says (worker_trace.c). */
memory_location worker_locate(const void *ptr);

/* The learner's pinned memory (cudaMallocHost, cudaHostAlloc): blocks of the arena's learner
 * part, registered with the runtime, so that a test can read what the learner allocated
 * (worker_pinned.c). Blocks the code gives back are kept, registered, and given again,
 * poisoned, to the next request that fits (the pool below): pinning is slow, and the driver
 * pins for one process at a time. */
cudaError_t worker_pinned_alloc(void **ptr, size_t bytes, unsigned int flags);
/* cudaFreeHost of ptr: true when ptr is the learner's pinned memory, with the result in *err. */
bool worker_pinned_free(void *ptr, cudaError_t *err);
/* Whether ptr starts a block of the learner's pinned memory that is in use. */
bool worker_pinned_holds(const void *ptr);

/* The learner's heap blocks of a page or more (worker_libc.c): free() of one gives it back to
 * the arena and says true; false for any other pointer. */
bool worker_heap_free(void *ptr);

/* The pool (worker_pinned_pool.c), which never calls the runtime itself. Take: true, with a
 * kept block of at least `bytes` allocated with `flags`, poisoned, in *ptr. Note: a block just
 * allocated. Give: what became of a block handed to cudaFreeHost; the caller frees it for real
 * unless the pool kept it, and a block the pool already holds was given back twice. While a
 * timed test has the GPU alone, the pool neither keeps nor gives: what is timed then costs
 * what it really costs. */
typedef enum { PINNED_POOL_NOT_KEPT, PINNED_POOL_KEPT, PINNED_POOL_ALREADY_KEPT } pinned_pool_verdict;
bool pinned_pool_take(void **ptr, size_t bytes, unsigned int flags);
void pinned_pool_note(void *ptr, size_t bytes, unsigned int flags);
pinned_pool_verdict pinned_pool_give(void *ptr);
bool pinned_pool_kept(const void *ptr);
void pinned_pool_set_measuring(bool on);

/* The test's pinned buffers (the arena's test part): registered once, kept across tests. */
cudaError_t worker_register_test_buffer(void *ptr, size_t bytes);

/* The learner's code did what fails the running test (free() of CUDA memory): the first such
 * message goes back with the call's reply. */
void worker_fail(const char *format, ...) __attribute__((format(printf, 1, 2)));
/* Whether an exercise function is running (the call's trace is on). */
bool worker_in_call(void);
/* The name of the exercise function the checker is calling ("the code" between calls). */
const char *worker_called_function(void);
/* Whether a call of the learner's code runs (its threads' work counts), traced or not; and
 * whether the caller is the thread that runs it, not one the learner's code started. */
bool worker_call_running(void);
bool worker_on_calling_thread(void);
/* Drops every capability and installs the seccomp filter (worker_confine.c); false, with a
 * reason, when it cannot. */
bool worker_confine(char *why, size_t why_size);

/* The harness's own calls go straight to the runtime: not traced, not in the learner's ledger. */
cudaError_t __real_cudaMalloc(void **, size_t);
cudaError_t __real_cudaFree(void *);
cudaError_t __real_cudaMallocManaged(void **, size_t, unsigned int);
cudaError_t __real_cudaMemPrefetchAsync(const void *, size_t, struct cudaMemLocation, unsigned int,
                                        cudaStream_t);
cudaError_t __real_cudaDeviceSynchronize(void);
cudaError_t __real_cudaSetDevice(int);
cudaError_t __real_cudaDeviceDisablePeerAccess(int);
cudaError_t __real_cudaStreamCreateWithFlags(cudaStream_t *, unsigned int);
cudaError_t __real_cudaStreamSynchronize(cudaStream_t);
cudaError_t __real_cudaStreamDestroy(cudaStream_t);
cudaError_t __real_cudaEventCreateWithFlags(cudaEvent_t *, unsigned int);
cudaError_t __real_cudaEventRecord(cudaEvent_t, cudaStream_t);
cudaError_t __real_cudaEventSynchronize(cudaEvent_t);
cudaError_t __real_cudaEventDestroy(cudaEvent_t);
cudaError_t __real_cudaEventQuery(cudaEvent_t);

/* The holds a test asked for (worker_delays.c): how many of them were still running, asked of
 * the GPU now (0 where none was made); -1 where the test asked for none, or one went unmarked
 * (it could not be made, or more than the worker keeps), and the time a wait takes must say
 * instead. Then forgets them. */
int worker_holds_still_running(void);

/* The harness's own operations (worker_operations.c): start once the context is made (its
 * threads and free memory then are the baseline), then each request other than a call or a
 * load, its reply filled in (why: a message to send after it). */
void worker_operations_start(bool use_cuda);
void worker_operation(const remote_request *request, remote_reply *reply, char *why, size_t size);

#endif

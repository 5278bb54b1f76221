/* worker_pinned.c - the learner's pinned memory, in the arena's learner part (worker.h).
 *
 * cudaMallocHost and cudaHostAlloc in the learner's code get a block of the shared arena,
 * registered with the runtime (cudaHostRegister), where a test in the checker can read and
 * write it as the learner's caller would: both_directions' tests fill and check the buffers the
 * learner's both_directions_host_alloc returned. To the learner's code it behaves as pinned
 * memory from cudaMallocHost does: the copy engines reach it, cudaPointerGetAttributes says
 * cudaMemoryTypeHost, cudaFreeHost gives it back, cudaHostUnregister, cudaFree and free() of it
 * are mistakes. Blocks go through the pool (worker_pinned_pool.c), below the record: the trace,
 * the ledger, the failures injected and the memory limit all happen above this.
 *
 * And the test's own pinned buffers, in the arena's test part: registered once and kept so,
 * since the same buffers in the same order come at the same addresses, test after test.
 */
#include "arena.h"
#include "harness.h"
#include "remote.h"
#include "worker.h"

#include <pthread.h>
#include <string.h>

#define PAGE ((size_t)4096)

cudaError_t __real_cudaHostRegister(void *, size_t, unsigned int);
cudaError_t __real_cudaHostUnregister(void *);

static arena_part learner_part = ARENA_PART(REMOTE_LEARNER_PINNED_OFFSET, REMOTE_LEARNER_PART_BYTES);

/* cudaHostAlloc's flags as cudaHostRegister's: portable and mapped mean the same; write-combined
 * memory has no registered counterpart, and only changes how fast the host reads it. */
static unsigned int register_flags(unsigned int flags)
{
    return (flags & cudaHostAllocPortable ? cudaHostRegisterPortable : 0) |
           (flags & cudaHostAllocMapped ? cudaHostRegisterMapped : 0);
}

cudaError_t worker_pinned_alloc(void **ptr, size_t bytes, unsigned int flags)
{
    if (ptr == NULL || (flags & ~(unsigned int)(cudaHostAllocPortable | cudaHostAllocMapped |
                                                 cudaHostAllocWriteCombined)))
        return cudaErrorInvalidValue;
    if (bytes == 0) { /* as the runtime does */
        *ptr = NULL;
        return cudaSuccess;
    }
    if (bytes > REMOTE_LEARNER_PART_BYTES)
        return cudaErrorMemoryAllocation;
    const size_t whole = (bytes + PAGE - 1) / PAGE * PAGE; /* a registration covers pages */
    if (pinned_pool_take(ptr, whole, flags))
        return cudaSuccess;
    void *block = arena_part_alloc(&learner_part, whole);
    if (block == NULL)
        return cudaErrorMemoryAllocation;
    memset(block, POISON_BYTE, whole); /* and its pages are touched before they are pinned */
    cudaError_t err = __real_cudaHostRegister(block, whole, register_flags(flags));
    if (err != cudaSuccess) {
        arena_part_free(&learner_part, block);
        return err;
    }
    pinned_pool_note(block, whole, flags);
    *ptr = block;
    return cudaSuccess;
}

bool worker_pinned_holds(const void *ptr)
{
    return ptr != NULL && arena_part_holds(&learner_part, ptr) &&
           arena_part_size_of(&learner_part, ptr) > 0 && !pinned_pool_kept(ptr);
}

bool worker_pinned_free(void *ptr, cudaError_t *err)
{
    if (ptr == NULL || !arena_part_holds(&learner_part, ptr))
        return false;
    if (arena_part_size_of(&learner_part, ptr) == 0) { /* not a block, or one freed already */
        *err = cudaErrorInvalidValue;
        return true;
    }
    switch (pinned_pool_give(ptr)) {
    case PINNED_POOL_KEPT: *err = cudaSuccess; return true;
    case PINNED_POOL_ALREADY_KEPT: *err = cudaErrorInvalidValue; return true;
    case PINNED_POOL_NOT_KEPT: break;
    }
    /* cudaFreeHost waits for the device; so does this, through the unregistration. */
    *err = __real_cudaHostUnregister(ptr);
    if (*err == cudaErrorHostMemoryNotRegistered)
        *err = cudaSuccess; /* unregistered behind the pool's back: still the learner's to free */
    arena_part_free(&learner_part, ptr);
    return true;
}

/* --- The test's own pinned buffers ------------------------------------------------------- */

typedef struct registration {
    void *ptr;
    size_t bytes;
} registration;

static registration registered[256];
static size_t registered_count;

static bool still_registered(const void *ptr)
{
    struct cudaPointerAttributes attributes;
    if (cudaPointerGetAttributes(&attributes, ptr) != cudaSuccess) {
        (void)cudaGetLastError();
        return false;
    }
    return attributes.type == cudaMemoryTypeHost;
}

cudaError_t worker_register_test_buffer(void *ptr, size_t bytes)
{
    for (size_t i = 0; i < registered_count; i++) {
        registration *r = &registered[i];
        const bool overlaps = (char *)r->ptr < (char *)ptr + bytes && (char *)ptr < (char *)r->ptr + r->bytes;
        if (r->ptr == ptr && r->bytes == bytes && still_registered(ptr))
            return cudaSuccess;
        if (overlaps) {
            if (__real_cudaHostUnregister(r->ptr) != cudaSuccess)
                (void)cudaGetLastError(); /* the learner's code unregistered it already */
            *r = registered[--registered_count];
            i--;
        }
    }
    cudaError_t err = __real_cudaHostRegister(ptr, bytes, cudaHostRegisterDefault);
    if (err == cudaSuccess && registered_count < sizeof registered / sizeof registered[0])
        registered[registered_count++] = (registration){ptr, bytes};
    return err;
}

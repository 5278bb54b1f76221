/* worker_libc.c - the learner's heap blocks of a page or more, in the arena, and its memcpy,
 * held up where a test asks (worker.h).
 *
 * A learner module is linked with --wrap for malloc, calloc, realloc, posix_memalign and
 * aligned_alloc (and free, worker_wrappers.c), so that a block of a page or more that the
 * learner's code allocates comes from the arena's learner heap, mapped at the same address in
 * the checker: a test can read and write host memory the learner allocated and registered
 * (cudaHostRegister of aligned memory, which both_directions' header admits), as the learner's
 * caller would. Smaller blocks (a struct, a few counters) stay in the C library's heap; so do
 * alignments above a page, and any block once the part is full: the learner's code cannot tell
 * the difference, a test only sees fewer buffers.
 *
 * The worker's own code is not wrapped: it calls the C library's functions, as do these.
 */
#include "arena.h"
#include "remote.h"
#include "worker.h"

#include "trace.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define PAGE ((size_t)4096)

static arena_part heap = ARENA_PART(REMOTE_LEARNER_HEAP_OFFSET, REMOTE_LEARNER_HEAP_BYTES);

/* A block of the arena for `bytes`, or NULL where the C library's heap should serve. */
static void *arena_block_for(size_t bytes)
{
    if (bytes < PAGE || bytes > REMOTE_LEARNER_HEAP_BYTES)
        return NULL;
    return arena_part_alloc(&heap, (bytes + PAGE - 1) / PAGE * PAGE);
}

bool worker_heap_free(void *ptr)
{
    return ptr != NULL && arena_part_holds(&heap, ptr) && arena_part_free(&heap, ptr);
}

void *__wrap_malloc(size_t bytes)
{
    void *block = arena_block_for(bytes);
    return block != NULL ? block : malloc(bytes);
}

void *__wrap_calloc(size_t count, size_t size)
{
    if (size != 0 && count > SIZE_MAX / size) {
        errno = ENOMEM;
        return NULL;
    }
    void *block = arena_block_for(count * size);
    if (block == NULL)
        return calloc(count, size);
    memset(block, 0, count * size); /* a reused block holds what its last owner left */
    return block;
}

void *__wrap_realloc(void *ptr, size_t bytes)
{
    if (ptr == NULL)
        return __wrap_malloc(bytes);
    if (!arena_part_holds(&heap, ptr))
        return realloc(ptr, bytes); /* the C library's block stays the C library's */
    const size_t held = arena_part_size_of(&heap, ptr);
    if (held == 0) { /* no block starts there */
        errno = EINVAL;
        return NULL;
    }
    if (bytes == 0) {
        worker_heap_free(ptr);
        return NULL;
    }
    if (bytes <= held)
        return ptr;
    void *moved = __wrap_malloc(bytes);
    if (moved == NULL)
        return NULL; /* the old block stays the caller's */
    memcpy(moved, ptr, held);
    worker_heap_free(ptr);
    return moved;
}

int __wrap_posix_memalign(void **ptr, size_t alignment, size_t bytes)
{
    if (alignment <= PAGE && alignment >= sizeof(void *) && (alignment & (alignment - 1)) == 0) {
        void *block = arena_block_for(bytes); /* a page's alignment serves every smaller one */
        if (block != NULL) {
            *ptr = block;
            return 0;
        }
    }
    return posix_memalign(ptr, alignment, bytes);
}

void *__wrap_aligned_alloc(size_t alignment, size_t bytes)
{
    if (alignment != 0 && alignment <= PAGE && (alignment & (alignment - 1)) == 0) {
        void *block = arena_block_for(bytes);
        if (block != NULL)
            return block;
    }
    return aligned_alloc(alignment, bytes);
}

/* --- memcpy, held up ------------------------------------------------------------------------
 * Where a test asks (trace_delay_host_copies), each memcpy of HELD_UP_FROM bytes or more that
 * a thread of the learner's own makes (not the one that runs the call) starts that long late:
 * a thread that says its part of a buffer is filled before it has filled it then loses its race
 * with the GPU every time, not once in a while, while the calling thread, which queues the
 * copies, goes at full speed. Also __memcpy_chk, which memcpy becomes under _FORTIFY_SOURCE. */
#define HELD_UP_FROM ((size_t)256) /* a struct copied whole is not held up; a thread's part is */

static void hold_up(size_t bytes)
{
    const double ms = trace_delay.host_milliseconds;
    if (ms <= 0 || bytes < HELD_UP_FROM || !worker_call_running() || worker_on_calling_thread())
        return;
    struct timespec pause = {(time_t)(ms / 1e3), (long)((ms - 1e3 * (double)(time_t)(ms / 1e3)) * 1e6)};
    while (nanosleep(&pause, &pause) != 0 && errno == EINTR)
        ;
}

void *__wrap_memcpy(void *dst, const void *src, size_t bytes)
{
    hold_up(bytes);
    return memcpy(dst, src, bytes);
}

void *__memcpy_chk(void *dst, const void *src, size_t bytes, size_t dst_size);
void *__wrap___memcpy_chk(void *dst, const void *src, size_t bytes, size_t dst_size)
{
    hold_up(bytes);
    return __memcpy_chk(dst, src, bytes, dst_size);
}

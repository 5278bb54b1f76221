/* worker_pinned_pool.c - pinned host memory a worker gives its tests again rather than back to
 * the driver (worker.h).
 *
 * Pinning is slow, most of it the kernel faulting in and zeroing fresh pages, and the driver
 * pins for one process at a time, so programs pinning side by side wait for each other
 * (dev/setup_cost measures it; docs/performance.md has the figures). Tests pin far more than
 * the code they test seems to: checking that a copier gives everything back on each of its
 * error paths creates it thirty times, 64 MiB of pinned buffers each time.
 *
 * So a pinned block of POOL_SMALLEST or more that the code gives back with cudaFreeHost is
 * kept, up to POOL_KEPT_MAX in all, and the next cudaMallocHost or cudaHostAlloc with the same
 * flags that fits in it gets it again, poisoned like a fresh buffer of the test's. The wrappers
 * record every call as the code made it: the trace, the ledger, the failures injected and the
 * memory limit all happen above the pool and cannot tell. While a timed test has the GPU alone
 * the pool neither keeps nor gives: what is timed then costs what it really costs.
 */
#include "harness.h"
#include "worker.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define POOL_SMALLEST ((size_t)1 << 20)
#define POOL_KEPT_MAX ((size_t)768 << 20)

typedef struct pinned_block {
    void *ptr;
    size_t bytes; /* as allocated */
    unsigned int flags;
    bool kept; /* given back by the code, held by the pool */
} pinned_block;

static pinned_block *blocks; /* every block of POOL_SMALLEST or more, in use or kept */
static size_t block_count, block_room, kept_bytes;
static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER; /* chapter 3's code has threads */
static bool measuring; /* a timed test has the GPU alone (the runner says so) */

void pinned_pool_set_measuring(bool on)
{
    measuring = on;
}


static pinned_block *find(const void *ptr)
{
    for (size_t i = 0; i < block_count; i++)
        if (blocks[i].ptr == ptr)
            return &blocks[i];
    return NULL;
}

bool pinned_pool_kept(const void *ptr)
{
    pthread_mutex_lock(&pool_lock);
    const pinned_block *b = ptr != NULL ? find(ptr) : NULL;
    const bool kept = b != NULL && b->kept;
    pthread_mutex_unlock(&pool_lock);
    return kept;
}

bool pinned_pool_take(void **ptr, size_t bytes, unsigned int flags)
{
    if (bytes < POOL_SMALLEST || measuring)
        return false;
    pthread_mutex_lock(&pool_lock);
    /* The smallest kept block that fits, and not one more than twice the size asked for. */
    pinned_block *best = NULL;
    for (size_t i = 0; i < block_count; i++) {
        pinned_block *b = &blocks[i];
        if (b->kept && b->flags == flags && b->bytes >= bytes && b->bytes / 2 <= bytes &&
            (best == NULL || b->bytes < best->bytes))
            best = b;
    }
    if (best != NULL) {
        best->kept = false;
        kept_bytes -= best->bytes;
        *ptr = best->ptr;
    }
    pthread_mutex_unlock(&pool_lock);
    if (best == NULL)
        return false;
    memset(*ptr, POISON_BYTE, bytes); /* what the last owner wrote is not the next one's to see */
    return true;
}

void pinned_pool_note(void *ptr, size_t bytes, unsigned int flags)
{
    if (bytes < POOL_SMALLEST)
        return;
    pthread_mutex_lock(&pool_lock);
    if (block_count == block_room) {
        size_t room = block_room ? 2 * block_room : 64;
        pinned_block *grown = realloc(blocks, room * sizeof *grown);
        if (grown == NULL) { /* not tracked: it is freed for real when given back */
            pthread_mutex_unlock(&pool_lock);
            return;
        }
        blocks = grown;
        block_room = room;
    }
    blocks[block_count++] = (pinned_block){ptr, bytes, flags, false};
    pthread_mutex_unlock(&pool_lock);
}

pinned_pool_verdict pinned_pool_give(void *ptr)
{
    pinned_pool_verdict verdict = PINNED_POOL_NOT_KEPT;
    pthread_mutex_lock(&pool_lock);
    pinned_block *b = ptr != NULL ? find(ptr) : NULL;
    if (b != NULL && b->kept) {
        verdict = PINNED_POOL_ALREADY_KEPT;
    } else if (b != NULL && !measuring && kept_bytes + b->bytes <= POOL_KEPT_MAX) {
        b->kept = true;
        kept_bytes += b->bytes;
        verdict = PINNED_POOL_KEPT;
    } else if (b != NULL) {
        *b = blocks[--block_count]; /* freed for real by the caller */
    }
    pthread_mutex_unlock(&pool_lock);
    return verdict;
}

/* arena.c - the shared memory of the checker and the worker, and the blocks it is handed out in. */
#define _GNU_SOURCE /* memfd_create, MAP_FIXED_NOREPLACE, fallocate */
#include "arena.h"
#include "remote.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

bool remote_in_arena(const void *ptr, size_t bytes)
{
    const uintptr_t p = (uintptr_t)ptr;
    return p >= REMOTE_ARENA_BASE && p - REMOTE_ARENA_BASE <= REMOTE_ARENA_BYTES &&
           bytes <= REMOTE_ARENA_BYTES - (p - REMOTE_ARENA_BASE);
}

int arena_create(char *why, size_t why_size)
{
    int fd = memfd_create("course-arena", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (fd < 0) {
        snprintf(why, why_size, "memfd_create failed: %s", strerror(errno));
        return -1;
    }
    /* Sparse: only what the tests touch takes memory. A file size limit below it (ulimit -f)
     * must be said in words, not end the program with SIGXFSZ. */
    signal(SIGXFSZ, SIG_IGN);
    if (ftruncate(fd, (off_t)REMOTE_ARENA_BYTES) != 0 ||
        fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_SEAL) != 0) {
        snprintf(why, why_size,
                 "the tests' shared memory (a sparse file of %zu GiB) could not be made: %s%s",
                 REMOTE_ARENA_BYTES >> 30, strerror(errno),
                 errno == EFBIG ? " (the file size limit, ulimit -f, is too low)" : "");
        close(fd);
        return -1;
    }
    return fd;
}

bool arena_map(int fd, char *why, size_t why_size)
{
    void *at = mmap((void *)REMOTE_ARENA_BASE, REMOTE_ARENA_BYTES, PROT_READ | PROT_WRITE,
                    MAP_SHARED | MAP_FIXED_NOREPLACE | MAP_NORESERVE, fd, 0);
    if (at == (void *)REMOTE_ARENA_BASE)
        return true;
    snprintf(why, why_size, "the tests' shared memory could not be mapped at %p: %s",
             (void *)REMOTE_ARENA_BASE, at == MAP_FAILED ? strerror(errno) : "the address is taken");
    if (at != MAP_FAILED)
        munmap(at, REMOTE_ARENA_BYTES);
    return false;
}

void arena_discard(void *ptr, size_t bytes)
{
    (void)madvise(ptr, bytes, MADV_REMOVE); /* a hint: the pages stay valid either way */
}

/* Small blocks share pages; a large one starts on a huge page's boundary, so that the kernel
 * may back it with huge pages where it can. */
static size_t alignment_for(size_t bytes)
{
    return bytes >= ((size_t)2 << 20) ? (size_t)2 << 20 : bytes >= 4096 ? 4096 : 64;
}

static uintptr_t align_up(uintptr_t at, size_t alignment)
{
    return (at + alignment - 1) & ~(uintptr_t)(alignment - 1);
}

void *arena_part_alloc(arena_part *part, size_t bytes)
{
    if (bytes == 0)
        bytes = 1;
    const size_t alignment = alignment_for(bytes);
    void *found = NULL;
    pthread_mutex_lock(&part->lock);
    if (part->count == part->room) {
        size_t room = part->room ? 2 * part->room : 64;
        arena_block *grown = realloc(part->used, room * sizeof *grown);
        if (grown == NULL)
            goto done;
        part->used = grown;
        part->room = room;
    }
    /* The first gap that fits, from the start. */
    uintptr_t at = part->start;
    size_t index = 0;
    for (; index <= part->count; index++) {
        const uintptr_t candidate = align_up(at, alignment);
        const uintptr_t gap_end =
            index < part->count ? part->used[index].start : part->start + part->size;
        if (candidate <= gap_end && gap_end - candidate >= bytes) {
            memmove(&part->used[index + 1], &part->used[index],
                    (part->count - index) * sizeof part->used[0]);
            part->used[index] = (arena_block){candidate, bytes};
            part->count++;
            found = (void *)candidate;
            break;
        }
        if (index < part->count)
            at = part->used[index].start + part->used[index].bytes;
    }
done:
    pthread_mutex_unlock(&part->lock);
    return found;
}

/* The index of the block that starts at ptr, or count; the lock held. */
static size_t find(const arena_part *part, const void *ptr)
{
    size_t low = 0, high = part->count;
    while (low < high) {
        const size_t middle = low + (high - low) / 2;
        if (part->used[middle].start < (uintptr_t)ptr)
            low = middle + 1;
        else
            high = middle;
    }
    return low < part->count && part->used[low].start == (uintptr_t)ptr ? low : part->count;
}

size_t arena_part_size_of(arena_part *part, const void *ptr)
{
    pthread_mutex_lock(&part->lock);
    const size_t index = find(part, ptr);
    const size_t bytes = index < part->count ? part->used[index].bytes : 0;
    pthread_mutex_unlock(&part->lock);
    return bytes;
}

bool arena_part_free(arena_part *part, void *ptr)
{
    pthread_mutex_lock(&part->lock);
    const size_t index = find(part, ptr);
    const bool found = index < part->count;
    if (found) {
        memmove(&part->used[index], &part->used[index + 1],
                (part->count - index - 1) * sizeof part->used[0]);
        part->count--;
    }
    pthread_mutex_unlock(&part->lock);
    return found;
}

bool arena_part_holds(const arena_part *part, const void *ptr)
{
    const uintptr_t p = (uintptr_t)ptr;
    return p >= part->start && p - part->start < part->size;
}

void arena_part_reset(arena_part *part)
{
    pthread_mutex_lock(&part->lock);
    part->count = 0;
    pthread_mutex_unlock(&part->lock);
}

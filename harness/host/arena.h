/* arena.h - the memory the checker and the worker share (remote.h), and its allocator. */
#ifndef COURSE_ARENA_H
#define COURSE_ARENA_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The checker makes the arena's memfd (sealed against shrinking) and maps it; -1 and a reason
 * in why when it cannot. */
int arena_create(char *why, size_t why_size);
/* Maps the memfd at REMOTE_ARENA_BASE; false, with a reason, when that address is taken. */
bool arena_map(int fd, char *why, size_t why_size);
/* Gives the pages of [ptr, ptr + bytes) back to the kernel: they read as zeros after. */
void arena_discard(void *ptr, size_t bytes);

/* A part of the arena, handed out in blocks: the same requests in the same order get the same
 * addresses, so a test run again reuses pages already touched (and pinned). */
typedef struct arena_block {
    uintptr_t start;
    size_t bytes;
} arena_block;

typedef struct arena_part {
    uintptr_t start;
    size_t size;
    arena_block *used; /* by address */
    size_t count, room;
    pthread_mutex_t lock; /* the learner's threads allocate pinned memory too */
} arena_part;

#define ARENA_PART(offset, bytes)                                                                  \
    {(uintptr_t)REMOTE_ARENA_BASE + (offset), (bytes), NULL, 0, 0, PTHREAD_MUTEX_INITIALIZER}

/* NULL when the part has no room. */
void *arena_part_alloc(arena_part *part, size_t bytes);
/* The block's size, 0 when ptr starts no block of the part. */
size_t arena_part_size_of(arena_part *part, const void *ptr);
/* Gives the block back; false when ptr starts no block of the part. */
bool arena_part_free(arena_part *part, void *ptr);
bool arena_part_holds(const arena_part *part, const void *ptr);
/* Gives every block back. */
void arena_part_reset(arena_part *part);

#endif

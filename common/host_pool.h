/* host_pool.h - host threads sharing one task: a persistent pool, or threads made for each call.
 *
 * A task is split into `parts`: a call runs task(arg, part, parts) once for each part, on
 * a thread of its own, and returns when every part has returned. host_pool_run does it with
 * threads created once and kept waiting between calls; host_threads_run creates the threads
 * for the call and joins them at its end. The two give the same result; chapter 3 times
 * what the second pays for creating threads every time (06-staged-pageable).
 *
 * Programs that use these link with -pthread.
 */
#ifndef COURSE_HOST_POOL_H
#define COURSE_HOST_POOL_H

#include <stdbool.h>
#include <stddef.h>

typedef void (*host_task)(void *arg, unsigned part, unsigned parts);

typedef struct host_pool host_pool;

/* A pool of `threads` (1 to HOST_POOL_MAX_THREADS) waiting threads; NULL when they could
 * not all be created (none is left running then). */
#define HOST_POOL_MAX_THREADS 256
host_pool *host_pool_create(unsigned threads);

/* The number of threads, which is the number of parts each run splits a task into. */
unsigned host_pool_threads(const host_pool *pool);

/* Runs task on every thread of the pool, part i on thread i, and waits for all of them. One
 * caller at a time. */
void host_pool_run(host_pool *pool, host_task task, void *arg);

/* Stops and joins the threads and frees the pool; NULL is allowed. */
void host_pool_destroy(host_pool *pool);

/* The same work with `threads` threads created for this call alone and joined before it
 * returns. False when a thread could not be created (or threads is 0 or more than
 * HOST_POOL_MAX_THREADS): the parts already started are joined, the others never run. */
bool host_threads_run(unsigned threads, host_task task, void *arg);

/* Part `part` of `parts` of the range [0, total): *begin and *end, nearly equal shares
 * rounded to multiples of `align` (the last one takes the rest). */
void host_share(size_t total, size_t align, unsigned part, unsigned parts, size_t *begin,
                size_t *end);

#endif

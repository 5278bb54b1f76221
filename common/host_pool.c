/* host_pool.c - a pool of threads that wait for work between calls, and its per-call rival. */
#include "host_pool.h"

#include <pthread.h>
#include <stdlib.h>

struct host_pool {
    pthread_mutex_t lock;
    pthread_cond_t work_posted; /* a new round, or the end */
    pthread_cond_t work_done;   /* the last part of a round returned */
    unsigned threads;
    unsigned long round; /* incremented for each run: a thread takes each round once */
    unsigned unfinished; /* parts of the current round still running */
    bool stopping;
    host_task task;
    void *arg;
    pthread_t *ids;
};

typedef struct worker {
    host_pool *pool;
    unsigned part;
} worker;

/* listing: pool-worker */
/* Each thread sleeps until a round is posted, runs its part, and counts itself out. */
static void *pool_worker(void *argument)
{
    worker *self = argument;
    host_pool *pool = self->pool;
    unsigned long seen = 0;
    pthread_mutex_lock(&pool->lock);
    for (;;) {
        while (pool->round == seen && !pool->stopping)
            pthread_cond_wait(&pool->work_posted, &pool->lock);
        if (pool->stopping)
            break;
        seen = pool->round;
        pthread_mutex_unlock(&pool->lock);
        pool->task(pool->arg, self->part, pool->threads); /* the work itself, unlocked */
        pthread_mutex_lock(&pool->lock);
        if (--pool->unfinished == 0)
            pthread_cond_signal(&pool->work_done);
    }
    pthread_mutex_unlock(&pool->lock);
    free(self);
    return NULL;
}

void host_pool_run(host_pool *pool, host_task task, void *arg)
{
    pthread_mutex_lock(&pool->lock);
    pool->task = task;
    pool->arg = arg;
    pool->unfinished = pool->threads;
    pool->round++;
    pthread_cond_broadcast(&pool->work_posted); /* wakes threads that exist already */
    while (pool->unfinished > 0)
        pthread_cond_wait(&pool->work_done, &pool->lock);
    pthread_mutex_unlock(&pool->lock);
}
/* end listing: pool-worker */

static void stop_and_join(host_pool *pool, unsigned started)
{
    pthread_mutex_lock(&pool->lock);
    pool->stopping = true;
    pthread_cond_broadcast(&pool->work_posted);
    pthread_mutex_unlock(&pool->lock);
    for (unsigned t = 0; t < started; t++)
        pthread_join(pool->ids[t], NULL);
}

static void pool_free(host_pool *pool)
{
    pthread_cond_destroy(&pool->work_done);
    pthread_cond_destroy(&pool->work_posted);
    pthread_mutex_destroy(&pool->lock);
    free(pool->ids);
    free(pool);
}

host_pool *host_pool_create(unsigned threads)
{
    if (threads == 0 || threads > HOST_POOL_MAX_THREADS)
        return NULL;
    host_pool *pool = calloc(1, sizeof *pool);
    if (pool == NULL)
        return NULL;
    pool->ids = calloc(threads, sizeof *pool->ids);
    pool->threads = threads;
    pthread_mutex_init(&pool->lock, NULL);
    pthread_cond_init(&pool->work_posted, NULL);
    pthread_cond_init(&pool->work_done, NULL);
    unsigned started = 0;
    while (pool->ids != NULL && started < threads) {
        worker *w = malloc(sizeof *w);
        if (w == NULL)
            break;
        *w = (worker){pool, started};
        if (pthread_create(&pool->ids[started], NULL, pool_worker, w) != 0) {
            free(w);
            break;
        }
        started++;
    }
    if (started < threads) {
        stop_and_join(pool, started);
        pool_free(pool);
        return NULL;
    }
    return pool;
}

unsigned host_pool_threads(const host_pool *pool)
{
    return pool->threads;
}

void host_pool_destroy(host_pool *pool)
{
    if (pool == NULL)
        return;
    stop_and_join(pool, pool->threads);
    pool_free(pool);
}

typedef struct one_call {
    host_task task;
    void *arg;
    unsigned part, parts;
} one_call;

static void *run_one_part(void *argument)
{
    one_call *call = argument;
    call->task(call->arg, call->part, call->parts);
    return NULL;
}

/* listing: threads-per-call */
bool host_threads_run(unsigned threads, host_task task, void *arg)
{
    if (threads == 0 || threads > HOST_POOL_MAX_THREADS)
        return false;
    pthread_t ids[HOST_POOL_MAX_THREADS];
    one_call calls[HOST_POOL_MAX_THREADS];
    unsigned started = 0;
    for (; started < threads; started++) {
        calls[started] = (one_call){task, arg, started, threads};
        if (pthread_create(&ids[started], NULL, run_one_part, &calls[started]) != 0)
            break;
    }
    for (unsigned t = 0; t < started; t++) /* a thread made for this call ends with it */
        pthread_join(ids[t], NULL);
    return started == threads;
}
/* end listing: threads-per-call */

void host_share(size_t total, size_t align, unsigned part, unsigned parts, size_t *begin,
                size_t *end)
{
    if (align == 0)
        align = 1;
    size_t units = total / align; /* whole aligned units; the last part also takes the tail */
    *begin = units * part / parts * align;
    *end = part + 1 == parts ? total : units * (part + 1) / parts * align;
}

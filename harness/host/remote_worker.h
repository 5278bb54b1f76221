/* remote_worker.h - in the checker, between remote.c (the calls) and remote_worker.c (the
 * worker's life): the worker's state, and how to wait for it. */
#ifndef COURSE_REMOTE_WORKER_H
#define COURSE_REMOTE_WORKER_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define MAX_EXERCISES 256
#define ALONE_LIMIT_S 5.0 /* the learner's code, while a timed test has the GPU alone */
#define DEVICE_SLACK ((unsigned long long)192 << 20) /* what a context's own use may grow by */

typedef struct remote_worker_state {
    pid_t pid;
    int socket, output;
    bool loaded[MAX_EXERCISES];
    unsigned long long baseline; /* device memory it held once ready, where NVML says */
} remote_worker_state;
extern remote_worker_state worker;

/* The device's word on the worker's memory, where make grade shares it out. */
typedef struct remote_watch_state {
    bool on;
    unsigned long long limit;        /* COURSE_MEMORY_LIMIT_MB, the learner's share */
    unsigned long long test_buffers; /* the test's own device buffers in the worker, now */
    volatile pid_t watched;
    volatile unsigned long long over; /* what it held when it was stopped; 0 if never */
    pthread_t thread;
    bool thread_started;
} remote_watch_state;
extern remote_watch_state watch;

extern bool remote_lost_in_this_test; /* the worker ended in the middle of the running test */

typedef enum wait_result {
    WAIT_OK,
    WAIT_GONE,
    WAIT_DEADLINE,
    WAIT_ALONE_TOO_LONG,
    WAIT_DAMAGED /* what came back is no reply: the learner's code wrote on the channel */
} wait_result;

/* Waits until `size` bytes from the worker are at buffer, reading its output and the judge's
 * news meanwhile, until the test's deadline (or deadline_override, or, with the GPU alone, the
 * window's limit). */
wait_result remote_await(void *buffer, size_t size, double deadline_override);
/* A worker ready for the running exercise: started if need be, its learner module loaded. */
void remote_ready_worker(void);
/* Whether the worker holds more device memory than its share, as the device reports it now
 * or the watch saw it during the test; the words that say so to the learner. */
bool remote_worker_over_share(void);
void remote_memory_over_words(char *out, size_t size);
/* The worker is lost in the middle of a test: it ends, and so does the test, saying why. */
_Noreturn void remote_lose_worker(wait_result why);
/* Ends the worker and everything it started; how it ended goes in *status. */
void remote_end_worker(int *status);
/* Reads what the worker printed that is there now; false at its end. */
bool remote_drain_output(void);

#endif

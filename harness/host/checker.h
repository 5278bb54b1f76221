/* checker.h - inside the checker (runner.c's child): the running test, and the worker it calls.
 *
 * The checker runs the tests' bodies with Check and holds every verdict; it loads no learner
 * code. The judge above it (runner.c) hands it one test at a time and holds the GPU's locks;
 * the worker below it (remote.c) runs the learner's functions.
 */
#ifndef COURSE_CHECKER_H
#define COURSE_CHECKER_H

#include "gpu_share.h"
#include "remote.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* What the checker knows of the running test. */
typedef struct checker_state {
    bool use_cuda;      /* the harness's own self-test runs without CUDA */
    bool gpu_shared;    /* other programs use the GPU at the same time (make check, grade, test) */
    int command_fd;     /* from the judge: the test to run, deadlines moved, go-aheads */
    int reply_fd;       /* to the judge */
    context_turns context_turns; /* the turns to make a CUDA context (gpu_share.h) */
    double worker_turn_wait_s, worker_making_s; /* the last worker's start, for the judge */
    int arena;          /* the shared memory's memfd */
    uint32_t exercise;  /* the running test's exercise, by index */
    const char *learner_module; /* its learner module; NULL: it has none (a fixture's) */
    double timeout;     /* the test's limit, seconds */
    double deadline;    /* host clock, seconds; moved on by the judge's waits */
    bool in_test;       /* a test's body runs */
    bool timed;         /* declared with COURSE_TIMED_TEST */
    bool alone;         /* between harness_gpu_alone_begin and _end */
    double alone_since;
    bool unloadable;    /* the learner's module could not be loaded */
    bool not_graded;    /* something outside the code spoiled the test (a busy GPU, memory) */
    char not_graded_why[256];
    unsigned stops;     /* the judge's COMMAND_STOPPING notices read so far */
    void (*undo)(void *what); /* harness_undo_if_failed's undo and what it undoes, for the */
    void *undo_what;          /* worker running then (remote_workers_started then)          */
    int undo_worker;
} checker_state;

extern checker_state checker;

/* --- What travels between the judge and the checker ------------------------------------------ */

/* STOPPING: sent before the judge stops the checker, its worker and all they started for
 * another program's timed test (the MOVE after it says for how long), so that a test that
 * reads the judge's news after its stretch of work sees every stop that fell within it. */
enum command_kind { COMMAND_RUN, COMMAND_MOVE, COMMAND_GO, COMMAND_QUIT, COMMAND_STOPPING };

typedef struct command {
    uint32_t kind;
    uint32_t exercise; /* index into entries[] */
    uint32_t test;     /* index into its tests[] */
    uint32_t reserved;
    double seconds; /* RUN: the test's limit; MOVE: how far its deadline moves on */
} command;

typedef struct hello {
    int32_t gpu_ok;
    int32_t devices;    /* the GPUs it sees */
    char why[256];      /* when there is no GPU */
    double turn_wait_s; /* waiting for COURSE_CONTEXT_LOCK */
    double making_s;    /* making the context */
} hello;

enum verdict { VERDICT_PASS, VERDICT_FAIL, VERDICT_NOT_GRADED };

/* What the checker says during a test: its verdict, at the end; in a timed test, also when its
 * measurement starts and ends (harness_gpu_alone_begin and _end); and when it starts a worker
 * and has started it, a wait for a turn to make a context that is not the test's time. */
enum reply_kind { REPLY_VERDICT, REPLY_ALONE, REPLY_SHARED, REPLY_STARTING, REPLY_STARTED };

/* The driver reads a context's hardware work queues from this variable when it makes it. */
#define CONNECTIONS_VARIABLE "CUDA_DEVICE_MAX_CONNECTIONS"

/* How long a worker may take to say it is ready once it has its turn to make its context:
 * making one can take a second when many ask at once. */
#define WORKER_START_S 120.0

/* A notice to the judge during a test (not a verdict); ends the checker if the judge is gone. */
void checker_tell_judge(enum reply_kind kind);

#define REPLY_EVIDENCE 1u   /* the test read what the worker says of itself */
#define REPLY_UNLOADABLE 2u /* the learner's module could not be loaded: the rest need not run */

typedef struct reply {
    uint32_t kind;
    uint32_t exercise;
    uint32_t test;
    uint32_t verdict;
    uint32_t flags;
    uint32_t fresh_start; /* why the worker was replaced after the test; 0: it was not */
    uint64_t printed;     /* bytes the learner's code printed during the test */
    uint32_t message_length;
    uint32_t reserved;
    double turn_wait_s, making_s; /* REPLY_STARTED: the worker's wait for a turn, its making */
} reply;


double checker_now_s(void);
/* Reads what the judge has sent (a deadline moved on) without waiting, but for the MOVE that
 * follows a STOPPING, which it waits for; false once the judge is gone. remote.c calls it while
 * it waits for the worker. */
bool checker_read_judge(void);
/* The test is spoiled by something outside the learner's code: it is reported as not graded,
 * whatever its checks say. */
void checker_not_graded(const char *why);

/* --- remote.c: the worker -------------------------------------------------------------------- */

/* Ends the worker, if there is one (quietly, between tests). */
void remote_quit(void);
/* Once, before the first test: the work queues every worker's context asks for (host_work_queues,
 * 0 for the environment's), where the environment names no number. */
void remote_fit_worker(int work_queues);
/* After a test: the worker gives back what the test left, and anything the learner's code
 * started is ended. Returns the reasons the worker was replaced (0: it goes on); where its
 * context was poisoned, poisoned_by names the error. */
uint32_t remote_end_of_test(char *poisoned_by, size_t size);
/* What the worker printed during this test: the last bytes of it, and how much in all. */
const char *remote_test_output(size_t *dropped);
size_t remote_printed_bytes(void); /* since the test began */
void remote_test_begin(void);     /* forgets what the last test printed */
/* How many workers were started, for the runner's stats. */
int remote_workers_started(void);

/* The harness's operations on the test's behalf (harness.c calls them). */
/* The worker's device memory on GPU `device`, opened here. */
void *remote_device_alloc(int device, size_t bytes);
void remote_device_free(void *d_buffer);
/* The checker's own view of the worker's device memory at [ptr, ptr + bytes): the same memory,
 * opened by IPC; NULL when it lies in no buffer of the test's. */
void *remote_device_view(const void *ptr, size_t bytes);
/* The GPU that memory lives on; -1 when it lies in no buffer of the test's. */
int remote_device_of(const void *ptr, size_t bytes);
/* Makes `device` the checker's current GPU (0 between the harness's own steps); or the one
 * that holds the test's device memory at [ptr, ptr + bytes), true when one does (GPU 0
 * otherwise). remote_device_done ends such a stretch: it waits for the checker's own work on
 * the current GPU (the learner's code, in another context, must find it done), then makes
 * GPU 0 current again. */
void remote_on_device(int device);
bool remote_on_device_of(const void *ptr, size_t bytes);
void remote_device_done(void);
void remote_register(void *h_buffer, size_t bytes); /* pinned in the worker, kept so */
cudaStream_t remote_stream_create(unsigned int flags);
/* NULL: the whole device, and then the milliseconds the device took to become idle. */
double remote_synchronize(cudaStream_t stream);
/* Before the checker reads device memory the learner's code wrote: see worker_operations.c. */
void remote_settle(void);
cudaError_t remote_keep_busy(cudaStream_t stream, double milliseconds);
memory_location remote_locate(const void *ptr);
size_t remote_threads(void);
void remote_set_device(int device); /* current for the learner's code, as its caller made it */
int remote_current_device(void);    /* current in the learner's process: evidence */
cudaError_t remote_last_error(void); /* cudaPeekAtLastError there, after the call: evidence */
/* Closes the checker's views of the test's device buffers (the worker frees them at its tidy). */
void remote_forget_device_buffers(void);

/* What the tests capture of the learner's output (checks_output.c). */
void remote_capture(bool on);
size_t remote_captured(int stream, char *text, size_t size); /* 0 stdout, 1 stderr */

#endif

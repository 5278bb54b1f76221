/* remote.h - the line between the checker, which runs the tests, and the worker, which runs the
 * learner's code.
 *
 * The checker (harness/host/runner.c's child, the test bodies and every check that decides a
 * verdict) loads no learner code. The learner's functions run in a worker, a process of its own
 * (build/tests/worker, harness/worker/worker_main.c), which loads the learner's module and calls
 * what the checker asks for. Each exercise function a test calls is a stub, generated from the
 * exercise's header (harness/host/remote_stubs.awk), that sends the call over a socket and waits
 * for the answer; the worker's side of the same file calls the learner's function.
 *
 * Pointers cross as they are: the tests' host buffers live in an arena of shared memory mapped
 * at the same address in both processes, and their device buffers are the worker's own, which
 * the checker opens through CUDA IPC to poison and read them. The worker can write everything
 * it shares, so what the checker compares a result with never lives there (harness.c,
 * harness_expected), and what the checker reads back from the device goes to its own memory.
 * Everything the worker says about itself (its call trace, its thread count, where a pointer
 * lives) is evidence, read through trace.h's accessors; a test that passes on it scores only
 * where a test that rests on results alone also passed (report.c).
 */
#ifndef COURSE_REMOTE_H
#define COURSE_REMOTE_H

#include "trace.h"

#include <cuda_runtime_api.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* --- The shared arena ------------------------------------------------------------------------
 * One memfd, sealed against shrinking (so the worker cannot make the checker's reads fault),
 * mapped at REMOTE_ARENA_BASE in both processes before either makes its CUDA context (which then
 * keeps its own reservations clear of it; on the H200 they lie below 0x300200000 and near the
 * top of the address space). Four parts: the tests' pageable host buffers, their pinned ones
 * (registered with CUDA in both processes), the learner's pinned memory (cudaMallocHost and
 * cudaHostAlloc in the worker) and the learner's heap blocks of a page or more (malloc and its
 * kin, worker_libc.c), so that a test can read what the learner allocated. */
#define REMOTE_ARENA_BASE ((uintptr_t)0x300000000000ULL)
#define REMOTE_ARENA_BYTES ((size_t)64 << 30)
#define REMOTE_TEST_PAGEABLE_OFFSET ((size_t)0)
#define REMOTE_TEST_PINNED_OFFSET ((size_t)16 << 30)
#define REMOTE_LEARNER_PINNED_OFFSET ((size_t)32 << 30)
#define REMOTE_LEARNER_HEAP_OFFSET ((size_t)48 << 30)
#define REMOTE_PART_BYTES ((size_t)16 << 30)
#define REMOTE_LEARNER_PART_BYTES ((size_t)16 << 30)
#define REMOTE_LEARNER_HEAP_BYTES ((size_t)16 << 30)

bool remote_in_arena(const void *ptr, size_t bytes);

/* The descriptors a worker starts with (the checker's spawn sets them; everything else is
 * closed before any learner code is loaded). */
#define WORKER_FD_SOCKET 3
#define WORKER_FD_ARENA 4

/* --- Requests and replies --------------------------------------------------------------------
 * A request is a remote_request, then `payload` bytes; a reply a remote_reply, then its records
 * and texts. The checker believes nothing of a reply beyond its bounds. */
typedef enum remote_op {
    OP_LOAD = 1,      /* exercise's learner module: payload = its path */
    OP_CALL,          /* exercise, function: payload = remote_trace_settings, then the arguments */
    OP_DEVICE_ALLOC,  /* a = bytes, b = device: value = pointer, handle = its IPC handle */
    OP_DEVICE_FREE,   /* a = pointer */
    OP_REGISTER,      /* a = pointer, b = bytes: the test's pinned buffer, kept registered */
    OP_STREAM_CREATE, /* a = flags: value = the stream */
    OP_SYNCHRONIZE,   /* cudaDeviceSynchronize, untraced: value = how long it took, in us */
    OP_STREAM_SYNCHRONIZE, /* a = stream */
    OP_SETTLE,             /* untraced: waits for what a cudaMemcpy in one process would wait for */
    OP_KEEP_BUSY,          /* a = stream, ms: gpu_work_keep_busy, untraced */
    OP_LOCATE,             /* a = pointer: value = its memory_location */
    OP_THREADS,            /* value = the threads the learner's code may have started */
    OP_TIDY,               /* after a test: value = fresh_start reasons */
    OP_SET_DEVICE,         /* a = device: made current, untraced, as a caller's code would */
    OP_CURRENT_DEVICE,     /* value = the current device (the worker's word) */
    OP_LAST_ERROR,         /* value = what cudaPeekAtLastError says on the learner's thread */
    OP_QUIT
} remote_op;

typedef struct remote_request {
    uint32_t op;
    uint32_t exercise;
    uint32_t function;
    uint32_t flags; /* REMOTE_CAPTURE_OUTPUT, REMOTE_MEASURING */
    uint64_t a, b;
    double ms;
    uint32_t payload;
    uint32_t reserved;
} remote_request;

#define REMOTE_CAPTURE_OUTPUT 1u /* OP_CALL: what the call prints comes back in the reply */
#define REMOTE_MEASURING 2u      /* OP_CALL: a timed test measures; the pinned pool stands aside */

/* The trace's state, which the checker owns and the worker applies for one call. */
typedef struct remote_trace_settings {
    uint32_t tracing;
    int32_t delay_direction; /* enum cudaMemcpyKind */
    double delay_ms;
    uint64_t delay_copies;       /* the first copies held up; 0: every one */
    double host_copy_delay_ms;   /* the learner's large memcpy calls held up (worker_libc.c) */
    double kernel_delay_ms;      /* the learner's gpu_work kernels held up */
    uint32_t prefetches_skipped; /* trace_skip_prefetches */
    uint32_t peers_unreachable;  /* trace_deny_peer_access */
    uint64_t room;               /* records the checker can still keep */
    uint64_t made[TRACED_FUNCTION_COUNT];
    struct {
        uint32_t armed;
        int32_t error;
        uint64_t n;
    } injection[TRACED_FUNCTION_COUNT];
} remote_trace_settings;

#define REMOTE_ARGUMENTS_MAX 4096 /* the arguments of one call, strings included */
#define REMOTE_RESULT_MAX 16
#define REMOTE_TEXT_MAX (16u << 10) /* a reply's texts: a failure, what a call printed */

typedef enum remote_status {
    REMOTE_OK = 0,
    REMOTE_REFUSED, /* the request made no sense to the worker (a bug in the course) */
    REMOTE_FAILED,  /* the learner's code did what fails a test (free() of CUDA memory): message */
} remote_status;

typedef struct remote_reply {
    uint32_t status;
    int32_t error; /* a harness operation's cudaError_t */
    uint64_t value;
    unsigned char result[REMOTE_RESULT_MAX]; /* OP_CALL: what the function returned */
    cudaIpcMemHandle_t handle;               /* OP_DEVICE_ALLOC */
    uint64_t made[TRACED_FUNCTION_COUNT];    /* OP_CALL: the counts after the call */
    uint64_t dropped;                        /* calls made past the room */
    uint32_t records;                        /* traced_call records that follow */
    uint32_t message_length;                 /* then the message */
    uint32_t out_length, err_length;         /* then what the call printed, if captured */
    double began_ms, ended_ms; /* OP_CALL: the function's start and return, the worker's clock */
} remote_reply;

/* Why a worker cannot vouch for the next test (OP_TIDY's value, a set of these). */
enum fresh_start_reason {
    FRESH_POISONED = 1,        /* a CUDA error that no call clears */
    FRESH_LEDGER_FULL = 2,     /* more held than the ledger could note, so not all given back */
    FRESH_MEMORY_KEPT = 4,     /* device memory missing that the ledger did not know of */
    FRESH_THREADS_LEFT = 8,    /* threads of the code under test still running */
    FRESH_PROCESSES_LEFT = 16, /* processes the code under test started */
    FRESH_GONE = 32,           /* the worker ended, or stopped answering */
    FRESH_OVER_SHARE = 64,     /* more device memory held than its share, as the device says */
};
const char *fresh_start_words(uint32_t reasons);

/* The hello a worker sends once it is ready. Before it makes its CUDA context it sends one with
 * gpu_ok HELLO_WANTS_A_TURN and waits for a byte back: the checker holds the machine's context
 * lock while the context is made, not while the worker starts, loads and confines itself. */
#define HELLO_WANTS_A_TURN (-1)
typedef struct remote_hello {
    int32_t gpu_ok;  /* 1 ready, 0 not (why says why), or HELLO_WANTS_A_TURN */
    char why[256];   /* when there is no GPU, or the worker could not start */
    double making_s; /* making its CUDA context */
} remote_hello;

/* --- The stubs' and the dispatchers' side (remote_stubs.awk writes their code) -------------- */

/* Checker: one call of an exercise function, argument by argument. */
typedef struct remote_call {
    uint32_t function;
    const char *name;
    unsigned char arguments[REMOTE_ARGUMENTS_MAX];
    size_t used;
} remote_call;
void remote_call_begin(remote_call *call, uint32_t function, const char *name);
void remote_call_argument(remote_call *call, const void *value, size_t size);
void remote_call_string(remote_call *call, const char *text);
/* Sends it, waits for the learner's function to return, and fails the test (in the learner's
 * terms) when the worker crashed, hung, exited or did what fails a test. */
void remote_call_run(remote_call *call, void *result, size_t result_size);

/* Worker: what a dispatcher takes from the call and gives back. */
typedef struct remote_arguments {
    const unsigned char *data;
    size_t size, at;
    bool bad;
    unsigned char result[REMOTE_RESULT_MAX];
} remote_arguments;
void remote_take(remote_arguments *arguments, void *value, size_t size);
const char *remote_take_string(remote_arguments *arguments);
void remote_give(remote_arguments *arguments, const void *value, size_t size);

typedef struct remote_function {
    const char *name;
    void (*call)(remote_arguments *arguments);
} remote_function;

/* A learner module's table, which the dispatchers' file defines. */
#define REMOTE_TABLE "course_remote_functions"
#define REMOTE_TABLE_COUNT "course_remote_function_count"

#endif

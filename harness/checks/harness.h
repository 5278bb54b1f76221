/* harness.h - what an exercise's test file uses: tests with points, poison, diagnostics.
 *
 * A test file declares its exercise once and then its tests:
 *
 *     COURSE_EXERCISE("Allocate, copy up, copy back, free",
 *                     "a mild hint: the idea.\n\n"
 *                     "a closer one: the calls.");
 *
 *     COURSE_TEST(the_floats_come_back_unchanged, 3) { ... ck_assert_msg(...); }
 *
 * The test's name, with its underscores read as spaces, is the sentence the
 * learner sees; the number is its points. That is the whole rubric: make check,
 * make grade and the book all read it from here (the test program prints it
 * with --list). An exercise's tests run one after another in one process, which
 * holds one CUDA context for all of them (the test host, for make test and make
 * grade, runs several exercises' tests so, each linked as a module); the runner
 * (runner.c) supervises it from a parent that never touches CUDA, so a crash, a
 * hang, an exit() or a CUDA error that poisons the context in the learner's
 * code fails that test alone, and the next test runs in a fresh process.
 */
#ifndef COURSE_HARNESS_H
#define COURSE_HARNESS_H

#include "cuda_check.h"
#include "trace.h"

#include <check.h>
#include <stdbool.h>
#include <stddef.h>

typedef struct course_exercise {
    const char *id; /* "ch01-memory/roundtrip" */
    const char *title;
    const char *hint; /* its levels, mild to explicit, apart by a blank line: make hint shows
                         the first, make hint LEVEL=2 the next (harness/hint.sh) */
} course_exercise;

#ifndef COURSE_EXERCISE_ID /* the Makefile defines it for each test file: "chNN-slug/name" */
#define COURSE_EXERCISE_ID "unnamed"
#endif
#define COURSE_EXERCISE(title, hint)                                                               \
    const course_exercise course_exercise_info = {COURSE_EXERCISE_ID, title, hint}

/* An exercise about several GPUs says how many its tests need. Where the machine has fewer, its
 * tests that need a GPU are not run, and the exercise is reported as skipped (too_few_gpus),
 * never as passed or failed. Without it, an exercise needs one. */
#define COURSE_EXERCISE_NEEDS_GPUS(count) const int course_exercise_gpus = (count)

/* An exercise says how many hardware work queues its learner's code needs, and its code runs in
 * a worker whose CUDA context has that many (CUDA_DEVICE_MAX_CONNECTIONS), where a context has
 * the driver's 8. The driver makes a context slower the more queues it asks for (a context of 8
 * costs three of 2, and is made one after another with every other program's: docs/performance.md,
 * "What a context costs"), so every program sharing the GPU gains. One for code that queues all
 * its GPU work on one stream (the default one, as chapters 1 and 2 do, or a single stream of its
 * own or the test's, as async_roundtrip and loader_ring do): one stream's work runs in its order
 * whatever the queues. Code of several streams needs a queue for each stream it keeps busy at
 * once: streams that share a queue wait on each other's work, so a missing wait between two of
 * them could hide behind the order the queue imposes, and an overlap the book teaches could
 * vanish. The driver gives a context's streams its queues in turn as they are made, so the
 * streams an exercise makes one after another get queues of their own when there are as many
 * (dev/stream_queues measures it). Without it, the code gets the environment's queues, or the
 * driver's 8. A test host takes the most that any of its exercises asks for, and the
 * environment's where one says nothing; an instructor's CUDA_DEVICE_MAX_CONNECTIONS always wins. */
#define COURSE_EXERCISE_WORK_QUEUES(count) const int course_exercise_work_queues = (count)

/* COURSE_EXERCISE_TIMED_WITH_ALL_QUEUES, beside COURSE_EXERCISE_WORK_QUEUES: the exercise's
 * timed tests measure its code with the environment's queues (the driver's 8), where its other
 * tests need only the count it names. pageable_fast's copies from pinned buffers, beside the
 * host's threads, moved half as fast with one queue on an H100 (docs/performance.md, stop 50):
 * a speed the book does not teach. A host that is to run a timed test of such an exercise gives
 * its worker the environment's queues from the start (one context, not a cheap one and then
 * another); a host that runs it without its timed tests, as the self-test and make grade's
 * agreement run a known mistake, keeps the cheap one. */
#define COURSE_EXERCISE_TIMED_WITH_ALL_QUEUES const int course_exercise_timed_with_all_queues = 1

/* Internal: called by the constructor each COURSE_TEST generates, and around each test's body.
 * A test counts as passed only when its body ran to course_test_end: a test that the learner's
 * code left early (a longjmp, a return from a signal handler) does not. */
enum course_test_kind { COURSE_TEST_GPU, COURSE_TEST_TIMED, COURSE_TEST_HOST };
void course_register_test(const TTest *test, int points, int line, enum course_test_kind kind);
void course_test_begin(void);
void course_test_end(void);

#define COURSE_TEST(test_name, test_points)                                                        \
    COURSE_TEST_DEFINE(test_name, test_points, COURSE_TEST_GPU)
/* A test that times the GPU: where tests of several programs share a GPU (make grade), its
 * measurement runs with the GPU to itself (harness_gpu_alone_begin), and only such a test may
 * call the harness's timing helpers. */
#define COURSE_TIMED_TEST(test_name, test_points)                                                  \
    COURSE_TEST_DEFINE(test_name, test_points, COURSE_TEST_TIMED)
/* A test that needs no GPU: neither its body nor any correct code it calls uses CUDA (pure
 * arithmetic). Where there is no GPU, make check runs these tests all the same, in a checker and
 * a worker that make no CUDA context. */
#define COURSE_HOST_TEST(test_name, test_points)                                                   \
    COURSE_TEST_DEFINE(test_name, test_points, COURSE_TEST_HOST)

#define COURSE_TEST_DEFINE(test_name, test_points, kind)                                           \
    static void test_name##_body(void);                                                            \
    START_TEST(test_name)                                                                          \
    {                                                                                              \
        course_test_begin();                                                                       \
        test_name##_body();                                                                        \
        course_test_end();                                                                         \
    }                                                                                              \
    END_TEST                                                                                       \
    __attribute__((constructor)) static void test_name##_register(void)                            \
    {                                                                                              \
        course_register_test(test_name, test_points, __LINE__, kind);                              \
    }                                                                                              \
    static void test_name##_body(void)

/* --- Buffers the test owns --------------------------------------------------------------- */

/* The poison byte: 0xFF in every byte of a float is a NaN, never a valid result. */
#define POISON_BYTE 0xFF

void poison_host(void *h_buffer, size_t bytes);
void poison_device(void *d_buffer, size_t bytes); /* fails the test on error */
/* The test's own buffers: poisoned, and given back when the test ends, however it ends. */
void *harness_host_alloc(size_t bytes);    /* pageable host memory the learner's code sees */
void *harness_pinned_alloc(size_t bytes);  /* the same, pinned (in both processes) */
void *harness_private_alloc(size_t bytes); /* the checker's alone: what results are compared with */
void *harness_device_alloc(size_t bytes);  /* the worker's device memory */
void *harness_device_alloc_on(int device, size_t bytes); /* the same, on GPU `device` */
int harness_device_count(void); /* the GPUs the test sees, the learner's code the same */
/* The checker's, after each test (checker_main.c): the test's buffers given back, and the
 * patterns it filled them with forgotten (harness_results.c). */
void harness_release_buffers(void);
void harness_forget_fills(void);
void harness_device_free(void *d_buffer); /* early, for a large buffer */
void harness_host_free(void *h_buffer);   /* early, for a large buffer */
/* The checker's own copy, with device buffers of the test's at either end; reading the device
 * back into shared memory is refused (the learner's code could write the result there). */
void harness_copy(void *dst, const void *src, size_t bytes, enum cudaMemcpyKind kind);
/* The checker's own address for the test's memory, for its own CUDA calls: a device buffer of
 * the test's is the worker's, opened here at another address; host memory is the same. */
void *harness_view(const void *ptr, size_t bytes);
/* A pointer the learner's code returned, as host memory the test can read: its host memory is
 * shared only where it came from cudaMallocHost or cudaHostAlloc; anything else fails the test,
 * saying `what` is not visible. */
void *harness_learner_buffer(void *h_buffer, size_t bytes, const char *what);
/* Recognisable values: element i is 1 + ((i + s) % 2^22) / 4, exact in a float, where s is
 * drawn afresh for each fill, so that no code can know the values in advance. */
void fill_floats(float *h_values, size_t n);
/* The running test compared the code's results with what they must be: every comparison
 * below says so; a test that compares in its own way (a result computed from its input) calls
 * it. A test that read the worker's evidence (trace.h) and compared no result rests on
 * evidence alone, and counts only where a test of its exercise that rests on results passed. */
void harness_results_compared(void);
extern bool harness_results_were_compared;
/* What a result is compared with: `want` itself when it is the checker's own memory, the
 * checker's copy of the pattern when the harness filled it in shared memory; anything else
 * fails the test as a bug in the course. Every comparison below goes through it. */
const void *harness_expected(const void *want, size_t bytes);
/* A stream of the worker's, for a learner's function that takes one; given back at the end. */
cudaStream_t harness_stream_create(unsigned int flags);
/* gpu_work_keep_busy on a stream of the worker's (0: its legacy default stream), untraced. */
cudaError_t harness_keep_busy(cudaStream_t stream, double milliseconds);
/* Copies the first `period` bytes of buffer over the rest of its `bytes`, period after period. */
void repeat_period(void *buffer, size_t period, size_t bytes);

/* Fails the test, in the learner's terms, unless got[0..n) equals want[0..n).
 * `what` names the buffer ("the floats copied back"). The message tells how
 * many elements arrived, whether the rest still hold the poison, and names
 * the bytes-versus-elements mistake when the copy stopped at n bytes. */
void expect_floats_arrived(const float *got, const float *want, size_t n, const char *what);
/* The diagnosis under every comparison of a copy: what arrived, what still holds the poison,
 * and the bytes-versus-elements mistake when exactly one byte per element arrived. */
typedef struct element_type {
    size_t size;
    const char *plural;     /* "floats", counted in elements; NULL: counted in bytes */
    const char *byte_count; /* what to pass instead: "n * sizeof(float), not n" */
    void (*format)(const void *element, char *text, size_t size);
} element_type;
extern const element_type float_elements;
bool describe_mismatch(const void *got, const void *want, size_t bytes, const element_type *type,
                       const char *what, char *message, size_t size);
/* The same for floats, into `message`; returns false when the floats are equal. */
bool describe_float_mismatch(const float *got, const float *want, size_t n, const char *what,
                             char *message, size_t size);

/* Waits for everything the worker queued on the device, as a caller of the learner's function
 * would before it reads the results; not traced, whether tracing is on or not. Returns how long
 * the wait took, in milliseconds, as the worker measured it: near 0 where nothing was queued. */
double harness_synchronize_untraced(void);
void harness_synchronize_stream(cudaStream_t stream); /* one stream of the worker's */
/* How often the running test has been stopped so far while another program's timed test had
 * the GPU (the judge says so before it stops it). The GPU runs on while the code under test is
 * stopped: work a test held up may end meanwhile, so whether the code returned before it ended
 * is known only for a stretch with no stop in it (the mark before equals the mark after). */
unsigned harness_stops_so_far(void);
/* run(context), which starts a trace, asks the holds its test wants and runs the code under
 * test, then harness_synchronize_untraced: how long the GPU went on after the code returned,
 * in milliseconds. Run again where a stop fell between the two, once no stop has come for a
 * moment (a few times at most; then the test is not graded). */
double harness_busy_after(void (*run)(void *context), void *context);

/* Appends printf-style text at text[*used], never past its end (the diagnoses' lists). */
void harness_append_text(char *text, size_t size, size_t *used, const char *format, ...)
    __attribute__((format(printf, 4, 5)));

/* Describes an error as "cudaErrorInvalidValue (invalid argument)" in a static buffer. */
const char *error_text(cudaError_t err);

/* Runs `statement` with tracing on; the calls it makes are in the trace afterwards. */
#define TRACED_RUN(statement)                                                                      \
    do {                                                                                           \
        trace_resume();                                                                            \
        statement;                                                                                 \
        trace_stop();                                                                              \
    } while (0)

/* The byte comparison under every diagnosis: the offset of the first byte where got and
 * want differ (`bytes` when they are equal), and whether a region still holds only poison. */
size_t first_differing_byte(const void *got, const void *want, size_t bytes);
bool holds_only_poison(const void *buffer, size_t count);

/* "cudaMemcpy number N (what) copies from X to Y but says KIND: the kind must name ..."
 * (what may be NULL); in a static buffer. */
const char *describe_kind_mismatch(size_t nth, const char *what, const traced_call *call);

/* Fails the test, naming the pitfall, unless the nth (1-based) traced cudaMemcpy
 * moved expected_bytes in expected_direction with a kind that says so. */
void expect_memcpy(size_t nth, size_t expected_bytes, size_t element_size,
                   enum cudaMemcpyKind expected_direction, const char *what);

/* The one release scan: fails the test if anything the trace shows acquired (memory, a
 * registration, an event, a stream: traced_calls.def) was not given back afterwards, or if
 * anything was given back twice. */
void expect_everything_released(const char *function_name);

/* One line per traced call, for a failure message: "cudaMemcpy(4096 bytes, HostToDevice) -> ...".
 */
const char *trace_summary(void);

/* --- Chapter-1 checks (harness/checks_*.c) ----------------------------------------------- */

/* Byte i is (i + s) % 251, s drawn afresh for each fill: never the poison byte, and no short
 * period a shifted copy could match. */
void fill_bytes(void *h_bytes, size_t bytes);
/* Like describe_float_mismatch, for any element size: names a copy of `count` bytes where
 * count * element_size were due as the bytes-versus-elements pitfall. */
bool describe_byte_mismatch(const void *got, const void *want, size_t bytes, size_t element_size,
                            const char *what, char *message, size_t size);
void expect_bytes_arrived(const void *got, const void *want, size_t bytes, size_t element_size,
                          const char *what);
/* "" or a sentence naming the first traced cudaMemcpy whose kind contradicts its pointers. */
const char *kind_mismatch_note(void);

/* The trace by position, events, failures in turn (checks_trace.c). */
size_t trace_position(const traced_call *call); /* 0-based; SIZE_MAX for NULL */
/* The last call of `function` on `event` (the event it records, waits for, ...) before
 * position `before` (SIZE_MAX: anywhere); NULL if none. */
const traced_call *trace_last_on_event(traced_function function, cudaEvent_t event, size_t before);
const char *nth_call_name(traced_function function, size_t n); /* "the second cudaEventRecord" */
/* Runs `action` once cleanly under the trace, then once more for each runtime call that run
 * made (frees and destroys aside), making just that call fail. Fails the test unless every
 * failure is returned as it was and everything allocated or created is released. */
typedef cudaError_t (*traced_action)(void *context);
void expect_every_failure_handled(const char *function_name, traced_action action, void *context);
/* The same, for a function whose contract says it waits for what it queued on an error too: the
 * first copy it queues is held up each time, and the GPU must be idle when it returns. */
void expect_every_failure_handled_and_waited_for(const char *function_name, traced_action action,
                                                 void *context);
/* Either of them (`waits`), each run made with GPU `caller_device` current, as its caller would
 * have it: after each run that GPU must be current again, unless the test made the very
 * cudaSetDevice that would have put it back fail. */
void expect_every_failure_handled_on_device(const char *function_name, traced_action action,
                                            void *context, int caller_device, bool waits);

/* What the code under test prints (checks_output.c): between begin and end, standard output
 * and standard error go to temporary files, whose text end() hands back. */
void output_capture_begin(void);
void output_capture_end(char *out, size_t out_size, char *err, size_t err_size);

/* A COURSE_TIMED_TEST's measurement: between harness_gpu_alone_begin() and _end() the test has
 * the GPU to itself where programs share it (make grade, make test); before and after, while
 * it allocates, fills and checks its buffers, it shares the GPU like any test. Only the code
 * in between may time anything. A test that fails in between ends the window with it. */
void harness_gpu_alone_begin(void);
void harness_gpu_alone_end(void);
bool harness_gpu_is_alone(void);
/* Within a window: waits until no other program's queued work still runs on the GPU (a short
 * copy each way reaches the speed this checker has seen), so that it cannot slow what is timed;
 * a GPU that stays busy marks the test not graded if it fails. harness_gpu_alone_begin calls it. */
void harness_gpu_quiet(void);

/* Every copy a timed test times is checked, cheaply: before each timed call the test poisons a
 * few places of the destination (host or device), chosen afresh each time, the last bytes among
 * them; after it, each must hold what the source holds there, so a call that skipped its copy,
 * or cut it short, fails. harness_spot_read gives spot k's bytes, for a result computed from
 * its source (pipeline's). */
#define HARNESS_SPOTS 16
#define HARNESS_SPOT_BYTES 8
typedef struct harness_spots {
    void *dst;
    int count;
    size_t offset[HARNESS_SPOTS];
} harness_spots;
void harness_spots_poison(harness_spots *spots, void *dst, size_t bytes);
void harness_spots_expect(const harness_spots *spots, const void *want, const char *what);
void harness_spot_read(const harness_spots *spots, int k, void *value);

/* The harness's own measurements, with tracing off (checks_timing.c); in a COURSE_TIMED_TEST,
 * between harness_gpu_alone_begin() and _end(), only. */
double harness_time_copy_ms(void *dst, const void *src, size_t bytes, enum cudaMemcpyKind kind);

/* The host time a timed call of the learner's spent acquiring and releasing (allocations,
 * streams, events, their frees), from the trace of that call, which began at call_start_ms on
 * the host clock: each acquisition's time since the call before it returned, and each release's
 * where the GPU was already waited for (a release that waits for queued work itself keeps that
 * wait in the loop's time). Where programs share the GPU, those calls wait for the driver
 * while other programs make and end their contexts, tens of milliseconds at a time, so a test
 * that times a loop of a few milliseconds leaves them out of it. Evidence: the worker's word. */
double harness_setup_ms(double call_start_ms);
/* Runs `action` once under a fresh trace and returns its time on the host clock, from the call
 * until it returned (the learner's functions' span as the worker stamps it, where that lies
 * within the checker's), less harness_setup_ms of it: the loop's own time, which a timed test
 * compares with its own measurement. *err is what `action` returned. The trace holds the run's
 * calls afterwards, for the test's diagnosis. */
double harness_time_traced_run_ms(traced_action action, void *context, cudaError_t *err);
/* Pinned host and device buffers, one warm-up copy, the median of `runs` timed copies. */
double harness_bandwidth_gb_per_s(size_t bytes, enum cudaMemcpyKind kind, int runs);
/* What `threads` of the checker's own threads, started together, copy of `bytes` of host memory
 * at `src` with memcpy, into buffers of their own (GB/s): what the host's CPUs and memory can do
 * at this moment, beside whatever else runs on the machine. */
double harness_host_memcpy_gb_per_s(const void *src, size_t bytes, int threads);

/* --- End of chapter-1 checks -------------------------------------------------------------- */

/* A note for the learner on this test, shown under it in the report even when it passes: how a
 * speed the test measured compares with another, say. Each call adds a sentence. */
void harness_note(const char *format, ...) __attribute__((format(printf, 1, 2)));
const char *harness_test_note(void); /* internal: the running test's note, "" when none */
/* The running test was spoiled by something outside the learner's code (a GPU that others
 * kept busy while the test measured, say): it ends here, reported not graded, and make grade
 * runs it again. The sentence says what the test saw. */
void harness_not_graded(const char *format, ...) __attribute__((format(printf, 1, 2), noreturn));

/* --- Streams, from the trace (checks_streams.c) -------------------------------------------- */

/* Whether the call makes the host wait for the GPU: cudaDeviceSynchronize,
 * cudaStreamSynchronize, cudaEventSynchronize. */
bool traced_call_waits_for_the_gpu(const traced_call *call);
/* The first such call strictly between two positions of the trace; NULL if the host never
 * waited there (the delays of trace.h aside, the way to tell "cudaStreamWaitEvent" from
 * "the host synchronised in between"). */
const traced_call *trace_host_wait_between(size_t after, size_t before);
/* Whether the trace shows `stream` created with cudaStreamNonBlocking. */
bool trace_stream_is_non_blocking(cudaStream_t stream);
/* The GPU whose work `call`, queued on `stream`, is: a stream the trace saw made belongs to the
 * GPU current then, for its whole life; a default stream is the GPU current at the call. With
 * one GPU, always 0. */
int trace_stream_gpu(cudaStream_t stream, const traced_call *call);
/* Copies queued from device memory to device memory, which in chapter 6's tests are copies from
 * one GPU to another: cudaMemcpyPeerAsync, or cudaMemcpyAsync, which with unified addressing
 * finds each end's GPU from its pointer (cudaMemcpyDefault; the CUDA C++ Programming Guide,
 * "Peer-to-Peer Memory Copy"). Their count in the trace, and the n-th (from 1; NULL past the
 * last). */
bool traced_call_copies_between_gpus(const traced_call *call);
size_t trace_count_of_gpu_copies(void);
const traced_call *trace_nth_gpu_copy(size_t n);
/* The first successful call after position `after` (a call queued on `stream`) that leaves the
 * host knowing that everything `stream` held at `after` has finished: cudaDeviceSynchronize
 * with the stream's GPU current, cudaStreamSynchronize or a cudaStreamQuery that says done, of
 * that stream or of the same GPU's legacy default stream where `stream` is a blocking one (the
 * per-thread default stream is), or cudaEventSynchronize or a cudaEventQuery that says done, of
 * an event recorded after `after` on `stream`, or on a legacy default stream that waits for
 * `stream`. A stream's GPU is the one current when it was made. NULL if none. */
const traced_call *trace_wait_for_stream(cudaStream_t stream, size_t after);
/* The learner's calls as a timeline, one line each, for a failure message: the host clock
 * when each returned, from the first call, the stream it went to (streams named A, B, C in
 * the order they first appear; "default stream" for the legacy one), what it did; a long
 * trace is folded in the middle. In a static buffer; each line starts with "\n  ". */
const char *trace_timeline(void);

/* What a test holds up of the learner's work, so that a missing wait shows every time rather
 * than when the GPU happens to be slow: nothing, each host-to-device cudaMemcpyAsync
 * (trace_delay_async_copies) or each traced kernel (trace_delay_kernels). harness_hold_next_run
 * forgets the trace (trace_start, then trace_stop) and arms the hold for the next TRACED_RUN;
 * harness_held_words says it for a message, naming the kernel as the exercise calls it ("step's
 * checksum"): " (the test held every copy up 3 ms, as a busy link would)", "" for HOLD_NOTHING, in
 * a static buffer. */
typedef enum harness_hold { HOLD_NOTHING, HOLD_COPIES, HOLD_KERNELS } harness_hold;
void harness_hold_next_run(harness_hold what, double milliseconds);
const char *harness_held_words(harness_hold what, double milliseconds, const char *kernel);

/* Several GPUs: harness_set_device makes a GPU current for the code under test, as its caller's
 * own code would before calling it; harness_current_device says which GPU is current in the
 * code's process (evidence, like the trace). Each test starts with the first GPU current. */
void harness_set_device(int device);
int harness_current_device(void);
/* What cudaPeekAtLastError says in the code's process after its last call: an error it met
 * and did not clear, which the next cudaGetLastError there would report (evidence). */
cudaError_t harness_last_error(void);

/* The threads the code under test has started and not ended, as the worker counts them (those
 * named like the program: a new thread inherits the name; the CUDA runtime's own named threads
 * are not counted). Evidence, like the trace. */
size_t harness_thread_count(void);
/* How many more threads than `before` are still running after up to a second's wait: a thread
 * that was joined is gone at once, one that is just ending gets a moment. */
size_t harness_threads_left_after(size_t before);

/* What to undo if the test fails before it undoes it itself: where the test ends failed, the
 * checker calls undo(what) once the verdict is decided, in the same worker (never a fresh one),
 * with no error injected and no delay, within a few seconds, and whatever it does changes
 * nothing of the verdict. A learner's object whose threads a failed test would leave running
 * (pageable_fast's copier) is ended so: threads left running cost a fresh worker, and a CUDA
 * context, before the next test, after each test that a known mistake of pageable_fast failed.
 * Called again, it replaces what was asked; harness_undo_if_failed(NULL, NULL), before the test
 * undoes it itself, asks for nothing. undo may call the learner's functions, never ck_assert. */
void harness_undo_if_failed(void (*undo)(void *what), void *what);

#endif

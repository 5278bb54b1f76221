/* harness.c - helpers for test bodies, in the checker: buffers, poison, comparisons, trace checks.
 *
 * The test's host buffers live in the arena the worker shares (remote.h), so that a pointer the
 * test passes to the learner's function means the same memory there; its device buffers are
 * the worker's, opened here to be poisoned and read. What the test compares a result with
 * must not be memory the worker can write: harness_private_alloc gives the checker's own, and
 * an input the harness filled (fill_bytes, fill_floats) is compared through a copy made here
 * from the pattern (harness_expected). What the test reads back from the device comes here, to
 * the checker's own memory, never to the arena (harness_copy refuses).
 */
#define _GNU_SOURCE /* MADV_HUGEPAGE, getrandom */
#include "harness.h"
#include "arena.h"
#include "checker.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <time.h>

/* CUDA_CHECK failing in a test's own set-up is the harness's problem, not the
 * learner's: say so, so nobody hunts for a bug in correct code. */
static void fail_the_test(cudaError_t err, const char *expr, const char *file, int line)
{
    ck_abort_msg("the test's own CUDA call %s failed at %s:%d with %s (a problem of the machine "
                 "or the course, not of your code)",
                 expr, file, line, error_text(err));
}

/* Set when the running test's body reached its end; the runner reads it. */
bool course_test_completed;

static char test_note[1024]; /* harness_note's, for the running test */

bool harness_results_were_compared;

void harness_results_compared(void)
{
    harness_results_were_compared = true;
}

void course_test_begin(void)
{
    course_test_completed = false;
    test_note[0] = '\0';
    cuda_check_set_handler(fail_the_test);
    trace_start(); /* clears what an earlier test left */
    trace_stop();
    trace_evidence_read = false;
    harness_results_were_compared = false;
    checker.undo = NULL;
}

void course_test_end(void)
{
    course_test_completed = true;
}

/* --- The test's host buffers ------------------------------------------------------------- */

static arena_part pageable_part = ARENA_PART(REMOTE_TEST_PAGEABLE_OFFSET, REMOTE_PART_BYTES);
static arena_part pinned_part = ARENA_PART(REMOTE_TEST_PINNED_OFFSET, REMOTE_PART_BYTES);

typedef enum host_kind { HOST_SHARED, HOST_PINNED, HOST_PRIVATE } host_kind;

#define MAX_HOST_BUFFERS 256
static struct {
    void *ptr;
    size_t bytes;
    host_kind kind;
} host_buffers[MAX_HOST_BUFFERS];
static size_t host_buffer_count;

/* A registration the checker keeps of the arena's pinned part, across tests: the same buffers in
 * the same order come at the same addresses, and pinning is slow. */
typedef struct pinned_range {
    void *ptr;
    size_t bytes;
} pinned_range;
static pinned_range pinned_here[64];
static size_t pinned_here_count;

static void pin_harness_view(void *ptr, size_t bytes)
{
    for (size_t i = 0; i < pinned_here_count; i++) {
        const bool overlaps = (char *)pinned_here[i].ptr < (char *)ptr + bytes &&
                              (char *)ptr < (char *)pinned_here[i].ptr + pinned_here[i].bytes;
        if (pinned_here[i].ptr == ptr && pinned_here[i].bytes == bytes)
            return;
        if (overlaps) {
            (void)cudaHostUnregister(pinned_here[i].ptr);
            (void)cudaGetLastError();
            pinned_here[i--] = pinned_here[--pinned_here_count];
        }
    }
    if (cudaHostRegister(ptr, bytes, cudaHostRegisterDefault) == cudaSuccess &&
        pinned_here_count < sizeof pinned_here / sizeof pinned_here[0])
        pinned_here[pinned_here_count++] = (pinned_range){ptr, bytes};
    (void)cudaGetLastError(); /* unpinned here, the test's own copies are only slower */
}

#define PAGE ((size_t)4096)
/* From this size up, a private buffer is mapped in huge pages where the kernel has them: the
 * first touch of fresh memory is most of what a test's 256 MiB costs. */
#define HUGE_BUFFER_BYTES ((size_t)4 << 20)

static void *host_alloc(size_t bytes, host_kind kind)
{
    ck_assert_msg(host_buffer_count < MAX_HOST_BUFFERS, "the test allocated too many buffers");
    void *h_buffer = NULL;
    if (kind == HOST_PRIVATE && bytes >= HUGE_BUFFER_BYTES) {
        h_buffer = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (h_buffer == MAP_FAILED)
            h_buffer = NULL;
        else
            (void)madvise(h_buffer, bytes, MADV_HUGEPAGE); /* a hint: refused is fine */
    } else if (kind == HOST_PRIVATE) {
        h_buffer = malloc(bytes ? bytes : 1);
    } else {
        /* Whole pages: a registration covers pages, and two buffers must not share one. */
        const size_t whole = (bytes + PAGE - 1) / PAGE * PAGE;
        h_buffer = arena_part_alloc(kind == HOST_PINNED ? &pinned_part : &pageable_part,
                                    whole ? whole : PAGE);
        if (h_buffer != NULL && bytes >= HUGE_BUFFER_BYTES)
            (void)madvise(h_buffer, whole, MADV_HUGEPAGE);
    }
    ck_assert_msg(h_buffer != NULL, "the test could not allocate %zu bytes of host memory", bytes);
    host_buffers[host_buffer_count].ptr = h_buffer;
    host_buffers[host_buffer_count].bytes = bytes;
    host_buffers[host_buffer_count].kind = kind;
    host_buffer_count++;
    poison_host(h_buffer, bytes);
    if (kind == HOST_PINNED) {
        remote_register(h_buffer, (bytes + PAGE - 1) / PAGE * PAGE);
        if (checker.use_cuda)
            pin_harness_view(h_buffer, (bytes + PAGE - 1) / PAGE * PAGE);
    }
    return h_buffer;
}

void *harness_host_alloc(size_t bytes)
{
    return host_alloc(bytes, HOST_SHARED);
}

void *harness_pinned_alloc(size_t bytes)
{
    return host_alloc(bytes, HOST_PINNED);
}

void *harness_private_alloc(size_t bytes)
{
    return host_alloc(bytes, HOST_PRIVATE);
}

static void free_host_buffer(size_t i)
{
    void *ptr = host_buffers[i].ptr;
    switch (host_buffers[i].kind) {
    case HOST_PRIVATE:
        if (host_buffers[i].bytes >= HUGE_BUFFER_BYTES)
            munmap(ptr, host_buffers[i].bytes);
        else
            free(ptr);
        break;
    case HOST_SHARED: (void)arena_part_free(&pageable_part, ptr); break;
    case HOST_PINNED: (void)arena_part_free(&pinned_part, ptr); break;
    }
    host_buffers[i] = host_buffers[--host_buffer_count];
}

void harness_host_free(void *h_buffer)
{
    for (size_t i = 0; i < host_buffer_count; i++)
        if (host_buffers[i].ptr == h_buffer) {
            free_host_buffer(i);
            return;
        }
}

void harness_release_buffers(void)
{
    while (host_buffer_count > 0)
        free_host_buffer(host_buffer_count - 1);
    harness_forget_fills();
}

void *harness_learner_buffer(void *h_buffer, size_t bytes, const char *what)
{
    ck_assert_msg(h_buffer == NULL || remote_in_arena(h_buffer, bytes),
                  "%s is not memory the test can see: the learner's host memory is visible "
                  "to the test only where it came from cudaMallocHost, cudaHostAlloc, or "
                  "malloc and its kin for a page or more, aligned to a page at most",
                  what);
    return h_buffer;
}

/* --- Device buffers, and copies in the checker -------------------------------------------- */

void *harness_device_alloc(size_t bytes)
{
    return harness_device_alloc_on(0, bytes);
}

void *harness_device_alloc_on(int device, size_t bytes)
{
    void *d_buffer = remote_device_alloc(device, bytes);
    poison_device(d_buffer, bytes);
    return d_buffer;
}

int harness_device_count(void)
{
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess) {
        (void)cudaGetLastError();
        count = 0;
    }
    return count;
}

void harness_device_free(void *d_buffer)
{
    remote_device_free(d_buffer);
}

void *harness_view(const void *ptr, size_t bytes)
{
    void *view = remote_device_view(ptr, bytes);
    return view != NULL ? view : (void *)ptr;
}

void harness_copy(void *dst, const void *src, size_t bytes, enum cudaMemcpyKind kind)
{
    const bool from_device = remote_device_view(src, bytes) != NULL;
    ck_assert_msg(!(from_device && remote_in_arena(dst, bytes)),
                  "the test reads device memory back into memory the code under test can write "
                  "(a bug in the course: read it into harness_private_alloc's memory)");
    if (from_device)
        remote_settle();
    CUDA_CHECK(cudaMemcpy(harness_view(dst, bytes), harness_view(src, bytes), bytes, kind));
    /* A pageable copy returns before its bytes land; the learner's code, in another context,
     * must find them there. */
    if (remote_on_device_of(dst, bytes))
        remote_device_done();
}

double harness_synchronize_untraced(void)
{
    return remote_synchronize(NULL);
}

/* Runs at most: under make test, with a timed test somewhere every second, about one test in
 * three is stopped at some point, and a stretch of a few milliseconds far more rarely. */
#define UNSTOPPED_TRIES 4
/* But the stops come in bursts, timed tests one after another: in a make test on an H100, one
 * error-path test of loader_ring's solution was stopped in all four runs of one of its failing
 * calls, back to back. So a run after a stopped one waits for a moment of this long with no
 * stop in it, or for the longest wait below, whichever comes first. */
#define QUIET_S 0.3
#define QUIET_AT_MOST_S 1.0

/* Waits until no stop has come for QUIET_S, or QUIET_AT_MOST_S have passed. */
static void wait_for_a_quiet_moment(void)
{
    const double until = checker_now_s() + QUIET_AT_MOST_S;
    unsigned stops = harness_stops_so_far();
    double quiet_since = checker_now_s();
    while (checker_now_s() < until && checker_now_s() - quiet_since < QUIET_S) {
        nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
        if (harness_stops_so_far() != stops) {
            stops = harness_stops_so_far();
            quiet_since = checker_now_s();
        }
    }
}

double harness_busy_after(void (*run)(void *context), void *context)
{
    for (int tries = 1;; tries++) {
        const unsigned stops = harness_stops_so_far();
        run(context);
        const double busy_ms = harness_synchronize_untraced();
        if (harness_stops_so_far() == stops)
            return busy_ms;
        if (tries == UNSTOPPED_TRIES)
            harness_not_graded("the test was stopped for other programs' timed tests in each "
                               "of its %d runs, between the code's start and the wait after "
                               "its return: whether it returned before the work the test held "
                               "up had ended could not be seen",
                               tries);
        wait_for_a_quiet_moment();
    }
}

void harness_synchronize_stream(cudaStream_t stream)
{
    remote_synchronize(stream);
}

cudaStream_t harness_stream_create(unsigned int flags)
{
    return remote_stream_create(flags);
}

cudaError_t harness_keep_busy(cudaStream_t stream, double milliseconds)
{
    return remote_keep_busy(stream, milliseconds);
}

const char *error_text(cudaError_t err)
{
    static char text[256];
    return cuda_error_describe(err, text, sizeof text);
}

void poison_host(void *h_buffer, size_t bytes)
{
    memset(h_buffer, POISON_BYTE, bytes);
}

void poison_device(void *d_buffer, size_t bytes)
{
    remote_on_device_of(d_buffer, bytes);
    CUDA_CHECK(cudaMemset(harness_view(d_buffer, bytes), POISON_BYTE, bytes));
    remote_device_done();
}

void repeat_period(void *buffer, size_t period, size_t bytes)
{
    /* Each copy doubles what is there, so `done` stays a whole number of periods: memcpy's
     * speed, where a loop that computes every element takes several times as long on the
     * hundreds of MiB a test fills. */
    unsigned char *b = buffer;
    size_t done = period < bytes ? period : bytes;
    while (done > 0 && done < bytes) {
        const size_t n = done < bytes - done ? done : bytes - done;
        memcpy(b + done, b, n);
        done += n;
    }
}

void harness_note(const char *format, ...)
{
    size_t used = strlen(test_note);
    if (used > 0 && used + 1 < sizeof test_note)
        test_note[used++] = ' ', test_note[used] = '\0';
    va_list arguments;
    va_start(arguments, format);
    vsnprintf(test_note + used, sizeof test_note - used, format, arguments);
    va_end(arguments);
}

void harness_not_graded(const char *format, ...)
{
    char why[512];
    va_list arguments;
    va_start(arguments, format);
    vsnprintf(why, sizeof why, format, arguments);
    va_end(arguments);
    checker_not_graded(why);
    ck_abort_msg("%s", why); /* a test that ends passed keeps its pass (checker_main.c) */
}

const char *harness_test_note(void)
{
    return test_note;
}

void harness_set_device(int device)
{
    remote_set_device(device);
}

int harness_current_device(void)
{
    return remote_current_device();
}

cudaError_t harness_last_error(void)
{
    return remote_last_error();
}

size_t harness_thread_count(void)
{
    return remote_threads();
}

void harness_undo_if_failed(void (*undo)(void *what), void *what)
{
    checker.undo = undo;
    checker.undo_what = what;
    checker.undo_worker = remote_workers_started();
}

size_t harness_threads_left_after(size_t before)
{
    size_t now = harness_thread_count();
    for (int waited = 0; now > before && waited < 100; waited++) {
        nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
        now = harness_thread_count();
    }
    return now > before ? now - before : 0;
}

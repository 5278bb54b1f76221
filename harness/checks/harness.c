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

static void forget_fills(void);

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
    forget_fills();
}

void *harness_learner_buffer(void *h_buffer, size_t bytes, const char *what)
{
    ck_assert_msg(h_buffer == NULL || remote_in_arena(h_buffer, bytes),
                  "%s is not memory the test can see: the learner's host memory is visible "
                  "to the test only where it came from cudaMallocHost, cudaHostAlloc, or "
                  "malloc and its kin for a page or more, aligned to a page at most", what);
    return h_buffer;
}

/* --- Device buffers, and copies in the checker -------------------------------------------- */

void *harness_device_alloc(size_t bytes)
{
    void *d_buffer = remote_device_alloc(bytes);
    poison_device(d_buffer, bytes);
    return d_buffer;
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
    CUDA_CHECK(cudaMemcpy(harness_view(dst, bytes), harness_view(src, bytes), bytes, kind));
}

double harness_synchronize_untraced(void)
{
    return remote_synchronize(NULL);
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
    CUDA_CHECK(cudaMemset(harness_view(d_buffer, bytes), POISON_BYTE, bytes));
    CUDA_CHECK(cudaDeviceSynchronize());
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

/* --- Spots: every timed copy checked ------------------------------------------------------- */

static uint64_t draw(void)
{
    uint64_t drawn = 0;
    if (getrandom(&drawn, sizeof drawn, 0) != (ssize_t)sizeof drawn)
        drawn = (uint64_t)(uintptr_t)&drawn * 2654435761u;
    return drawn;
}

void harness_spots_poison(harness_spots *spots, void *dst, size_t bytes)
{
    spots->dst = dst;
    spots->count = bytes < HARNESS_SPOT_BYTES ? 0 : HARNESS_SPOTS;
    for (int k = 0; k < spots->count; k++) {
        /* Anywhere, the very end included: a copy cut short is caught at its tail. */
        size_t at = k == 0 ? bytes - HARNESS_SPOT_BYTES
                           : (size_t)(draw() % (bytes - HARNESS_SPOT_BYTES + 1));
        spots->offset[k] = at / HARNESS_SPOT_BYTES * HARNESS_SPOT_BYTES;
        void *spot = (char *)dst + spots->offset[k];
        if (remote_device_view(spot, HARNESS_SPOT_BYTES) != NULL)
            CUDA_CHECK(cudaMemset(harness_view(spot, HARNESS_SPOT_BYTES), POISON_BYTE,
                                  HARNESS_SPOT_BYTES));
        else
            poison_host(spot, HARNESS_SPOT_BYTES);
    }
    if (remote_device_view(dst, bytes) != NULL)
        CUDA_CHECK(cudaDeviceSynchronize());
}

void harness_spot_read(const harness_spots *spots, int k, void *value)
{
    const void *spot = (const char *)spots->dst + spots->offset[k];
    if (remote_device_view(spot, HARNESS_SPOT_BYTES) != NULL)
        CUDA_CHECK(cudaMemcpy(value, harness_view(spot, HARNESS_SPOT_BYTES), HARNESS_SPOT_BYTES,
                              cudaMemcpyDeviceToHost));
    else
        memcpy(value, spot, HARNESS_SPOT_BYTES);
}

void harness_spots_expect(const harness_spots *spots, const void *want, const char *what)
{
    harness_results_compared();
    int wrong = 0, first = -1;
    bool first_poisoned = false;
    for (int k = 0; k < spots->count; k++) {
        unsigned char got[HARNESS_SPOT_BYTES];
        harness_spot_read(spots, k, got);
        const void *expected = harness_expected((const char *)want + spots->offset[k],
                                                HARNESS_SPOT_BYTES);
        if (memcmp(got, expected, HARNESS_SPOT_BYTES) == 0)
            continue;
        if (wrong++ == 0) {
            first = k;
            first_poisoned = holds_only_poison(got, HARNESS_SPOT_BYTES);
        }
    }
    if (wrong > 0)
        ck_abort_msg("%s: %d of the %d places the test checked in the destination are wrong "
                     "after the timed call returned; the first, byte %zu, %s. The test checks a "
                     "few places, chosen afresh, after every call it times: each call must copy "
                     "all its data, every time",
                     what, wrong, spots->count, spots->offset[first],
                     first_poisoned ? "still held the test's poison, so nothing had been copied "
                                      "there"
                                    : "held something else than the source");
}

/* --- Patterns, and what a result is compared with ------------------------------------------- */

typedef enum fill_kind { FILL_BYTES, FILL_FLOATS } fill_kind;

/* What the harness filled in the arena, to regenerate here (the worker can write the arena). */
#define MAX_FILLS 64
typedef struct fill_record {
    uintptr_t start;
    size_t bytes;
    fill_kind kind;
    uint32_t shift; /* where in its period the pattern starts: drawn at random, per fill */
    void *regenerated; /* the checker's own copy, made when first compared with */
} fill_record;
static fill_record fills[MAX_FILLS];
static size_t fill_count;

static uint32_t draw_shift(uint32_t period)
{
    return (uint32_t)(draw() % period);
}

static void pattern(void *into, size_t bytes, fill_kind kind, uint32_t shift)
{
    if (kind == FILL_BYTES) {
        /* Byte i is (i + shift) % 251 (251 is prime and below the poison byte). */
        unsigned char *b = into;
        const size_t period = bytes < 251 ? bytes : 251;
        for (size_t i = 0; i < period; i++)
            b[i] = (unsigned char)((i + shift) % 251);
        repeat_period(into, period, bytes);
    } else {
        /* Value i is 1 + ((i + shift) % 2^22) / 4: exact in a float, and never the poison. */
        float *f = into;
        const size_t n = bytes / sizeof *f, whole = (size_t)1 << 22;
        const size_t period = n < whole ? n : whole;
        for (size_t i = 0; i < period; i++)
            f[i] = 1.0f + (float)((i + shift) % whole) / 4.0f;
        repeat_period(into, period * sizeof *f, n * sizeof *f);
    }
}

static void fill(void *buffer, size_t bytes, fill_kind kind)
{
    const uint32_t shift = draw_shift(kind == FILL_BYTES ? 251 : (uint32_t)1 << 22);
    pattern(buffer, bytes, kind, shift);
    if (bytes == 0 || !remote_in_arena(buffer, bytes))
        return;
    ck_assert_msg(fill_count < MAX_FILLS, "the test filled too many buffers (a bug in the course)");
    /* A fill over an earlier one's range replaces it. */
    for (size_t i = 0; i < fill_count; i++)
        if (fills[i].start < (uintptr_t)buffer + bytes &&
            (uintptr_t)buffer < fills[i].start + fills[i].bytes) {
            if (fills[i].regenerated != NULL)
                munmap(fills[i].regenerated, fills[i].bytes);
            fills[i--] = fills[--fill_count];
        }
    fills[fill_count++] = (fill_record){(uintptr_t)buffer, bytes, kind, shift, NULL};
}

void fill_bytes(void *h_bytes, size_t bytes)
{
    fill(h_bytes, bytes, FILL_BYTES);
}

void fill_floats(float *h_values, size_t n)
{
    fill(h_values, n * sizeof *h_values, FILL_FLOATS);
}

static void forget_fills(void)
{
    while (fill_count > 0) {
        fill_count--;
        if (fills[fill_count].regenerated != NULL)
            munmap(fills[fill_count].regenerated, fills[fill_count].bytes);
    }
}

const void *harness_expected(const void *want, size_t bytes)
{
    if (!remote_in_arena(want, bytes))
        return want;
    const uintptr_t w = (uintptr_t)want;
    for (size_t i = 0; i < fill_count; i++) {
        if (w < fills[i].start || w - fills[i].start > fills[i].bytes ||
            bytes > fills[i].bytes - (w - fills[i].start))
            continue;
        if (fills[i].regenerated == NULL) {
            void *copy = mmap(NULL, fills[i].bytes, PROT_READ | PROT_WRITE,
                              MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            ck_assert_msg(copy != MAP_FAILED, "the test could not allocate %zu bytes to compare "
                                              "with", fills[i].bytes);
            pattern(copy, fills[i].bytes, fills[i].kind, fills[i].shift);
            fills[i].regenerated = copy;
        }
        return (const char *)fills[i].regenerated + (w - fills[i].start);
    }
    ck_abort_msg("the test compares a result with memory the code under test can write, and "
                 "that the harness did not fill (a bug in the course: keep what a result is "
                 "compared with in harness_private_alloc's memory)");
}

/* Both compare with memcmp, which is vectorised, where a loop over bytes is not: a test checks
 * hundreds of MiB. */
bool holds_only_poison(const void *buffer, size_t count)
{
    const unsigned char *bytes = buffer;
    /* Every byte is the poison when the first is and each equals the one after it. */
    return count == 0 || (bytes[0] == POISON_BYTE && memcmp(bytes, bytes + 1, count - 1) == 0);
}

size_t first_differing_byte(const void *got, const void *want, size_t bytes)
{
    enum { BLOCK = 4096 };
    const unsigned char *g = got, *w = harness_expected(want, bytes);
    harness_results_compared();
    size_t first = 0;
    while (bytes - first >= BLOCK && memcmp(g + first, w + first, BLOCK) == 0)
        first += BLOCK;
    while (first < bytes && g[first] == w[first])
        first++;
    return first;
}

bool describe_float_mismatch(const float *got, const float *want, size_t n, const char *what,
                             char *message, size_t size)
{
    return describe_mismatch(got, want, n * sizeof(float), &float_elements, what, message, size);
}

void expect_floats_arrived(const float *got, const float *want, size_t n, const char *what)
{
    char message[512];
    if (describe_float_mismatch(got, want, n, what, message, sizeof message))
        ck_abort_msg("%s", message);
}

void harness_append_text(char *summary, size_t size, size_t *used, const char *format, ...)
{
    if (*used >= size)
        return;
    va_list arguments;
    va_start(arguments, format);
    int written = vsnprintf(summary + *used, size - *used, format, arguments);
    va_end(arguments);
    *used += written > 0 ? (size_t)written : 0;
}

/* Whether the call at `index` gives back a handle that an earlier call, since its last
 * acquisition, already gave back; that earlier release goes in *first. */
static bool released_before(size_t index, size_t *first)
{
    const traced_call *release = trace_get(index);
    trace_resource resource = traced_function_resource(release->function);
    for (size_t j = index; j-- > 0;) {
        const traced_call *earlier = trace_get(j);
        if (earlier->handle != release->handle || earlier->result != cudaSuccess ||
            traced_function_resource(earlier->function) != resource)
            continue;
        *first = j;
        return traced_function_role(earlier->function) == ROLE_RELEASE;
    }
    return false;
}

/* The first release after the acquisition at `index` that was given its handle but gives back
 * another resource (cudaFree of pinned memory, cudaFreeHost of device memory); NULL if none. */
static const traced_call *other_release_of(size_t index)
{
    const traced_call *acquired = trace_get(index);
    const trace_resource resource = traced_function_resource(acquired->function);
    for (size_t j = index + 1; j < trace_count(); j++) {
        const traced_call *later = trace_get(j);
        if (later->handle == acquired->handle &&
            traced_function_role(later->function) == ROLE_RELEASE &&
            traced_function_resource(later->function) != resource)
            return later;
    }
    return NULL;
}

void expect_everything_released(const char *function_name)
{
    for (size_t i = 0; i < trace_count(); i++) {
        const traced_call *call = trace_get(i);
        trace_resource resource = traced_function_resource(call->function);
        if (resource == RESOURCE_NONE || call->handle == NULL)
            continue;
        const char *acquired_with = traced_function_name(call->function);
        /* A second release is a mistake whether or not the runtime noticed it. */
        if (traced_function_role(call->function) == ROLE_RELEASE && !call->injected) {
            size_t first = 0;
            ck_assert_msg(!released_before(i, &first),
                          "%s gave back the same %s twice: call %zu (%s) released it, then call "
                          "%zu (%s) again%s. After the first release it is no longer yours (the "
                          "runtime may already have handed it to someone else): release each "
                          "thing exactly once, and on an error path only what was acquired. "
                          "The calls:%s",
                          function_name, resource_words(resource), first + 1,
                          traced_function_name(trace_get(first)->function), i + 1, acquired_with,
                          call->result != cudaSuccess ? ", which the runtime refused" : "",
                          trace_summary());
            continue;
        }
        if (call->result != cudaSuccess)
            continue;
        bool released = false;
        for (size_t j = i + 1; j < trace_count() && !released; j++) {
            const traced_call *later = trace_get(j);
            released = later->handle == call->handle && later->result == cudaSuccess &&
                       traced_function_role(later->function) == ROLE_RELEASE &&
                       traced_function_resource(later->function) == resource;
        }
        if (released)
            continue;
        /* Given back, but to the call that releases something else (cudaFree of pinned memory). */
        const traced_call *other = other_release_of(i);
        if (other != NULL)
            ck_abort_msg("%s gave %s from %s to %s, which gives back %s, not %s: release it "
                         "with %s, the partner of %s. The calls:%s",
                         function_name, resource_words(resource), acquired_with,
                         traced_function_name(other->function),
                         resource_words(traced_function_resource(other->function)),
                         resource_words(resource), resource_release_call(resource), acquired_with,
                         trace_summary());
        if (call->bytes)
            ck_abort_msg("%s %s %zu bytes with %s and returned without %s on that pointer: "
                         "every allocation needs its free, on the error paths too",
                         function_name,
                         resource == RESOURCE_REGISTRATION ? "registered" : "allocated",
                         call->bytes, acquired_with, resource_release_call(resource));
        ck_abort_msg("%s created %s with %s and returned without %s on it: it holds driver "
                     "resources until it is given back, so release everything you create, on the "
                     "error paths too. The calls:%s",
                     function_name, resource_words(resource), acquired_with,
                     resource_release_call(resource), trace_summary());
    }
}

/* One call, as the summary shows it: "cudaMemcpy(4096 bytes, ...) -> cudaSuccess". */
static void describe_call(const traced_call *call, char *text, size_t size)
{
    size_t used = 0;
    text[0] = '\0';
    harness_append_text(text, size, &used, "%s", traced_function_name(call->function));
    if (call->function == TRACED_cudaMemcpy || call->function == TRACED_cudaMemcpyAsync)
        harness_append_text(text, size, &used, "(%zu bytes, %s: %s to %s)", call->bytes,
                    memcpy_kind_name(call->kind), memory_location_name(call->src_location),
                    memory_location_name(call->dst_location));
    else if (call->bytes)
        harness_append_text(text, size, &used, "(%zu bytes)", call->bytes);
    if (call->flags)
        harness_append_text(text, size, &used, " flags 0x%x", call->flags);
    if (call->stream != NULL && call->function != TRACED_cudaStreamCreate &&
        call->function != TRACED_cudaStreamCreateWithFlags)
        harness_append_text(text, size, &used, " on a stream");
    harness_append_text(text, size, &used, " -> %s%s", cudaGetErrorName(call->result),
                call->injected     ? " (injected by the test)"
                : call->over_limit ? " (over the memory a test program may hold here)"
                                   : "");
}

const char *trace_summary(void)
{
    static char summary[4096];
    const size_t room = sizeof summary - 160; /* kept for the last line */
    size_t used = 0, shown = 0;
    summary[0] = '\0';
    /* A run of calls that read the same (a copy per element, say) is one line with its count. */
    char line[512], next[512];
    while (shown < trace_count() && used < room) {
        describe_call(trace_get(shown), line, sizeof line);
        size_t same = 1;
        while (shown + same < trace_count()) {
            describe_call(trace_get(shown + same), next, sizeof next);
            if (strcmp(next, line) != 0)
                break;
            same++;
        }
        if (same > 2)
            harness_append_text(summary, room, &used, "\n  %zu-%zu. %s, %zu times", shown + 1, shown + same,
                        line, same);
        else
            for (size_t i = 0; i < same; i++)
                harness_append_text(summary, room, &used, "\n  %zu. %s", shown + i + 1, line);
        shown += same;
    }
    size_t unshown = trace_count() - shown + trace_dropped();
    if (trace_count() == 0 && unshown == 0)
        snprintf(summary, sizeof summary, " none");
    else if (unshown > 0)
        harness_append_text(summary, sizeof summary, &used, "\n  ... and %zu more call%s%s", unshown,
                    unshown == 1 ? "" : "s",
                    trace_dropped() ? " (more than the trace keeps: the code made a great many)"
                                    : "");
    return summary;
}

static const char *direction_words(enum cudaMemcpyKind kind)
{
    switch (kind) {
    case cudaMemcpyHostToDevice: return "from host to device";
    case cudaMemcpyDeviceToHost: return "from device to host";
    case cudaMemcpyDeviceToDevice: return "from device to device";
    case cudaMemcpyHostToHost: return "from host to host";
    default: return "in the direction its pointers say";
    }
}

const char *describe_kind_mismatch(size_t nth, const char *what, const traced_call *call)
{
    static char sentence[512];
    snprintf(sentence, sizeof sentence,
             "cudaMemcpy number %zu%s%s%s copies from %s to %s but says %s: the kind must name the "
             "direction the data moves, here %s (or cudaMemcpyDefault, which infers it)",
             nth, what ? " (" : "", what ? what : "", what ? ")" : "",
             memory_location_name(call->src_location), memory_location_name(call->dst_location),
             memcpy_kind_name(call->kind),
             memcpy_kind_name(memcpy_kind_for(call->dst_location, call->src_location)));
    return sentence;
}

void expect_memcpy(size_t nth, size_t expected_bytes, size_t element_size,
                   enum cudaMemcpyKind expected_direction, const char *what)
{
    const traced_call *call = trace_nth(TRACED_cudaMemcpy, nth);
    ck_assert_msg(call != NULL,
                  "expected cudaMemcpy number %zu (%s), but only %zu were made. The calls were:%s",
                  nth, what, trace_count_of(TRACED_cudaMemcpy), trace_summary());
    if (call->bytes != expected_bytes) {
        if (element_size > 1 && call->bytes * element_size == expected_bytes)
            ck_abort_msg("cudaMemcpy number %zu (%s) was asked for %zu bytes, which is the "
                         "number of elements: cudaMemcpy's count is in bytes, so pass "
                         "n * sizeof(element) = %zu",
                         nth, what, call->bytes, expected_bytes);
        if (call->bytes == sizeof(void *))
            ck_abort_msg("cudaMemcpy number %zu (%s) was asked for %zu bytes, the size of a "
                         "pointer: sizeof applied to a pointer gives the pointer's size, not the "
                         "buffer's. It should move %zu bytes, n * sizeof(element)",
                         nth, what, call->bytes, expected_bytes);
        ck_abort_msg("cudaMemcpy number %zu (%s) was asked for %zu bytes; it should move %zu", nth,
                     what, call->bytes, expected_bytes);
    }
    const bool into_managed = call->dst_location == LOCATION_MANAGED;
    ck_assert_msg(!into_managed && call->src_location != LOCATION_MANAGED,
                  "cudaMemcpy number %zu (%s) copies %s managed memory (cudaMallocManaged), which "
                  "the runtime moves between host and GPU by itself: this copy is about device "
                  "memory from cudaMalloc, which only the GPU can reach, so allocate it with "
                  "cudaMalloc",
                  nth, what, into_managed ? "into" : "from");
    enum cudaMemcpyKind actual = memcpy_kind_for(call->dst_location, call->src_location);
    ck_assert_msg(actual == expected_direction,
                  "cudaMemcpy number %zu (%s) copies from %s to %s, but this copy should go %s: "
                  "the destination is the first argument, the source the second",
                  nth, what, memory_location_name(call->src_location),
                  memory_location_name(call->dst_location), direction_words(expected_direction));
    ck_assert_msg(call->kind == actual || call->kind == cudaMemcpyDefault, "%s",
                  describe_kind_mismatch(nth, what, call));
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

const char *harness_test_note(void)
{
    return test_note;
}

size_t harness_thread_count(void)
{
    return remote_threads();
}

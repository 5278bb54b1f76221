/* harness.c - helpers for test bodies: buffers, poison, comparisons, trace checks. */
#define _GNU_SOURCE /* MADV_HUGEPAGE */
#include "harness.h"

#include <dirent.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* CUDA_CHECK failing in a test's own set-up is the harness's problem, not the
 * learner's: say so, so nobody hunts for a bug in correct code. */
static void fail_the_test(cudaError_t err, const char *expr, const char *file, int line)
{
    ck_abort_msg("the test's own CUDA call %s failed at %s:%d with %s; if your code ran just "
                 "before, it may have left the GPU in an error state",
                 expr, file, line, error_text(err));
}

/* Set when the running test's body reached its end; the runner reads it (runner.h). */
bool course_test_completed;

static char test_note[1024]; /* harness_note's, for the running test */

void course_test_begin(void)
{
    course_test_completed = false;
    test_note[0] = '\0';
    cuda_check_set_handler(fail_the_test);
    trace_start(); /* clears what an earlier test left */
    trace_stop();
}

void course_test_end(void)
{
    course_test_completed = true;
}

/* The test's own host buffers, freed by harness_release_buffers when the test ends. */
#define MAX_HOST_BUFFERS 256
static struct {
    void *ptr;
    size_t mapped; /* bytes mapped for it (a large buffer), 0 for one from malloc */
} host_buffers[MAX_HOST_BUFFERS];
static size_t host_buffer_count;

bool harness_free_of_cuda_memory(const void *ptr, trace_resource resource)
{
    if (!trace_is_on())
        return false; /* the harness's own frees, and anything outside a test */
    (void)ptr;
    if (resource == RESOURCE_REGISTRATION)
        ck_abort_msg("free() was given host memory that is still registered with the CUDA runtime "
                     "(cudaHostRegister): call cudaHostUnregister on it first, then free it");
    ck_abort_msg("free() was given %s, which malloc never returned: memory from cudaMalloc is "
                 "given back with cudaFree, pinned memory from cudaMallocHost or cudaHostAlloc "
                 "with cudaFreeHost; free() takes only what malloc returned",
                 resource_words(resource));
}

/* Frees one of the test's host buffers. A registration that the code under test left on it
 * goes first: memory is unregistered before it is freed, and the ledger's own clean-up, which
 * comes later, would otherwise unregister memory that is no longer there. */
static void free_host_buffer(void *h_buffer, size_t mapped)
{
    if (ledger_resource_of(h_buffer) == RESOURCE_REGISTRATION &&
        cudaHostUnregister(h_buffer) != cudaSuccess)
        (void)cudaGetLastError(); /* the harness's failure is not the next call's error */
    if (mapped)
        munmap(h_buffer, mapped);
    else
        free(h_buffer);
}

void harness_host_free(void *h_buffer)
{
    size_t mapped = 0;
    for (size_t i = 0; i < host_buffer_count; i++)
        if (host_buffers[i].ptr == h_buffer) {
            mapped = host_buffers[i].mapped;
            host_buffers[i] = host_buffers[--host_buffer_count];
            break;
        }
    free_host_buffer(h_buffer, mapped);
}

void harness_release_buffers(void)
{
    for (size_t i = 0; i < host_buffer_count; i++)
        free_host_buffer(host_buffers[i].ptr, host_buffers[i].mapped);
    host_buffer_count = 0;
}

void harness_synchronize_untraced(void)
{
    const bool tracing = trace_is_on();
    trace_stop();
    CUDA_CHECK(cudaDeviceSynchronize());
    if (tracing)
        trace_resume();
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
    CUDA_CHECK(cudaMemset(d_buffer, POISON_BYTE, bytes));
    CUDA_CHECK(cudaDeviceSynchronize());
}

/* From this size up, a buffer is mapped in huge pages where the kernel has them: the first
 * touch of fresh memory is most of what a test's 256 MiB costs, and it is the kernel zeroing
 * pages one fault at a time. On the lent H200, 256 MiB took 120 ms to malloc and fill, 47 ms
 * mapped with MADV_HUGEPAGE. */
#define HUGE_BUFFER_BYTES ((size_t)4 << 20)

void *harness_host_alloc(size_t bytes)
{
    ck_assert_msg(host_buffer_count < MAX_HOST_BUFFERS, "the test allocated too many buffers");
    void *h_buffer = NULL;
    size_t mapped = 0;
    if (bytes >= HUGE_BUFFER_BYTES) {
        h_buffer = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (h_buffer == MAP_FAILED)
            h_buffer = NULL;
        else {
            mapped = bytes;
            (void)madvise(h_buffer, bytes, MADV_HUGEPAGE); /* a hint: refused is fine */
        }
    }
    if (h_buffer == NULL)
        h_buffer = malloc(bytes);
    ck_assert_msg(h_buffer != NULL, "the test could not allocate %zu bytes of host memory", bytes);
    host_buffers[host_buffer_count].ptr = h_buffer;
    host_buffers[host_buffer_count].mapped = mapped;
    host_buffer_count++;
    poison_host(h_buffer, bytes);
    return h_buffer;
}

void *harness_device_alloc(size_t bytes)
{
    void *d_buffer = NULL;
    CUDA_CHECK(cudaMalloc(&d_buffer, bytes));
    poison_device(d_buffer, bytes);
    return d_buffer;
}

void harness_copy(void *dst, const void *src, size_t bytes, enum cudaMemcpyKind kind)
{
    CUDA_CHECK(cudaMemcpy(dst, src, bytes, kind));
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

void fill_floats(float *h_values, size_t n)
{
    /* Value i is 1 + (i % 2^22) / 4: exact in a float, and never the poison. */
    const uint32_t period = n < ((size_t)1 << 22) ? (uint32_t)n : (uint32_t)1 << 22;
    for (uint32_t i = 0; i < period; i++)
        h_values[i] = 1.0f + (float)i / 4.0f;
    repeat_period(h_values, period * sizeof *h_values, n * sizeof *h_values);
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
    const unsigned char *g = got, *w = want;
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

/* The threads of this process that the code under test may have started: those that bear the
 * program's own name. The CUDA runtime names its helper threads (cuda-EvtHandlr, ...) and
 * starts them when it pleases, so they are not counted. */
size_t harness_thread_count(void)
{
    char own_name[64] = "", name[64], path[300]; /* a task name is at most 255 bytes */
    FILE *file = fopen("/proc/self/comm", "r");
    if (file == NULL || fgets(own_name, sizeof own_name, file) == NULL) {
        if (file)
            fclose(file);
        return 0;
    }
    fclose(file);
    DIR *tasks = opendir("/proc/self/task");
    size_t count = 0;
    if (tasks == NULL)
        return 0;
    for (struct dirent *entry; (entry = readdir(tasks)) != NULL;) {
        if (entry->d_name[0] == '.')
            continue;
        snprintf(path, sizeof path, "/proc/self/task/%s/comm", entry->d_name);
        file = fopen(path, "r");
        if (file != NULL) {
            count += fgets(name, sizeof name, file) != NULL && strcmp(name, own_name) == 0;
            fclose(file);
        }
    }
    closedir(tasks);
    return count;
}

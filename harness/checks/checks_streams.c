/* checks_streams.c - reading streams out of the trace: who waited for what, and a timeline.
 *
 * The trace keeps, for every call, the stream it was queued on and the host clock when it
 * returned (trace.h). From that alone the checks here tell whether the host waited for the
 * GPU between two calls, whether work queued on a stream was waited for before the learner's
 * function returned, and draw what the learner's code asked of which stream, when.
 */
#include "harness.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

bool traced_call_waits_for_the_gpu(const traced_call *call)
{
    switch (call->function) {
    case TRACED_cudaDeviceSynchronize:
    case TRACED_cudaStreamSynchronize:
    case TRACED_cudaEventSynchronize: return true;
    default: return false;
    }
}

const traced_call *trace_host_wait_between(size_t after, size_t before)
{
    for (size_t i = after + 1; i < before && i < trace_count(); i++)
        if (traced_call_waits_for_the_gpu(trace_get(i)))
            return trace_get(i);
    return NULL;
}

static bool is_legacy_default_stream(cudaStream_t stream)
{
    return stream == NULL || stream == cudaStreamLegacy;
}

bool trace_stream_is_non_blocking(cudaStream_t stream)
{
    for (size_t i = 0; i < trace_count(); i++) {
        const traced_call *call = trace_get(i);
        if (call->function == TRACED_cudaStreamCreateWithFlags && call->result == cudaSuccess &&
            call->stream == stream)
            return (call->flags & cudaStreamNonBlocking) != 0;
    }
    return false;
}

int trace_stream_gpu(cudaStream_t stream, const traced_call *call)
{
    if (!is_legacy_default_stream(stream) && stream != cudaStreamPerThread)
        for (size_t i = trace_position(call) + 1; i-- > 0;) { /* the last made with its handle */
            const traced_call *made = trace_get(i);
            if ((made->function == TRACED_cudaStreamCreate ||
                 made->function == TRACED_cudaStreamCreateWithFlags) &&
                made->result == cudaSuccess && made->stream == stream)
                return made->current_device;
        }
    return call->current_device;
}

/* Whether what is queued on `on` (by `call`) after `stream`'s work on GPU `device` waits for
 * it: the same stream, or the legacy default stream of the same GPU, which waits for every
 * blocking stream's earlier work there (the per-thread default stream is a blocking one; the
 * runtime's reference, "Stream synchronization behavior"). */
static bool comes_after(cudaStream_t on, const traced_call *call, cudaStream_t stream, int device)
{
    return on == stream || (is_legacy_default_stream(on) && !trace_stream_is_non_blocking(stream) &&
                            trace_stream_gpu(on, call) == device);
}

/* Whether `call` (at position `at`) makes the host wait for what `stream` held at `after`,
 * work of GPU `device`. cudaDeviceSynchronize waits for the current GPU's work alone. */
static bool waits_for(const traced_call *call, size_t at, cudaStream_t stream, int device,
                      size_t after)
{
    if (call->result != cudaSuccess)
        return false;
    switch (call->function) {
    case TRACED_cudaDeviceSynchronize: return call->current_device == device;
    case TRACED_cudaStreamSynchronize:
    case TRACED_cudaStreamQuery: /* a query that says "done" is a wait that already ended */
        return comes_after(call->stream, call, stream, device);
    case TRACED_cudaEventSynchronize:
    case TRACED_cudaEventQuery: {
        const traced_call *record = trace_last_on_event(TRACED_cudaEventRecord, call->event, at);
        return record != NULL && record->result == cudaSuccess && trace_position(record) > after &&
               comes_after(record->stream, record, stream, device);
    }
    default: return false;
    }
}

bool traced_call_copies_between_gpus(const traced_call *call)
{
    return call->function == TRACED_cudaMemcpyPeerAsync ||
           (call->function == TRACED_cudaMemcpyAsync && call->dst_location == LOCATION_DEVICE &&
            call->src_location == LOCATION_DEVICE);
}

size_t trace_count_of_gpu_copies(void)
{
    size_t count = 0;
    for (size_t i = 0; i < trace_count(); i++)
        count += traced_call_copies_between_gpus(trace_get(i));
    return count;
}

const traced_call *trace_nth_gpu_copy(size_t n)
{
    for (size_t i = 0; i < trace_count(); i++)
        if (traced_call_copies_between_gpus(trace_get(i)) && --n == 0)
            return trace_get(i);
    return NULL;
}

const traced_call *trace_wait_for_stream(cudaStream_t stream, size_t after)
{
    if (after >= trace_count())
        return NULL;
    const int device = trace_stream_gpu(stream, trace_get(after));
    for (size_t i = after + 1; i < trace_count(); i++)
        if (waits_for(trace_get(i), i, stream, device, after))
            return trace_get(i);
    return NULL;
}

/* --- The timeline ----------------------------------------------------------------------- */

#define MAX_NAMED_STREAMS 64
#define TIMELINE_HEAD 20 /* lines shown before a long timeline is folded */
#define TIMELINE_TAIL 8  /* and after: a failure message holds 4 KiB */

/* Streams by order of first appearance in the trace: A, B, C ... */
static const char *stream_name(cudaStream_t stream, cudaStream_t *named, size_t *named_count)
{
    static char name[32];
    if (is_legacy_default_stream(stream))
        return "default stream";
    if (stream == cudaStreamPerThread)
        return "per-thread stream";
    size_t i = 0;
    while (i < *named_count && named[i] != stream)
        i++;
    if (i == *named_count && *named_count < MAX_NAMED_STREAMS)
        named[(*named_count)++] = stream;
    if (i < 26)
        snprintf(name, sizeof name, "stream %c", 'A' + (int)i);
    else
        snprintf(name, sizeof name, "stream %zu", i + 1);
    return name;
}

static const char *size_words(size_t bytes)
{
    static char words[32];
    if (bytes >= ((size_t)1 << 20) && bytes % ((size_t)1 << 20) == 0)
        snprintf(words, sizeof words, "%zu MiB", bytes >> 20);
    else if (bytes >= 1024 && bytes % 1024 == 0)
        snprintf(words, sizeof words, "%zu KiB", bytes >> 10);
    else
        snprintf(words, sizeof words, "%zu bytes", bytes);
    return words;
}

static const char *direction_words(const traced_call *call)
{
    switch (memcpy_kind_for(call->dst_location, call->src_location)) {
    case cudaMemcpyHostToDevice: return "host to device";
    case cudaMemcpyDeviceToHost: return "device to host";
    case cudaMemcpyDeviceToDevice: return "device to device";
    default: return "host to host";
    }
}

static bool pageable_end(const traced_call *call)
{
    return call->src_location == LOCATION_PAGEABLE_HOST ||
           call->dst_location == LOCATION_PAGEABLE_HOST;
}

static void timeline_line(const traced_call *call, double start_ms, cudaStream_t *named,
                          size_t *named_count, char *line, size_t size)
{
    size_t used = 0;
    const bool creates = call->function == TRACED_cudaStreamCreate ||
                         call->function == TRACED_cudaStreamCreateWithFlags;
    const bool on_stream =
        creates || call->stream != NULL || call->function == TRACED_cudaMemcpyAsync ||
        call->function == TRACED_gpu_work_scale_add || call->function == TRACED_gpu_work_checksum ||
        call->function == TRACED_gpu_work_bytes_to_floats ||
        call->function == TRACED_cudaMemPrefetchAsync || call->function == TRACED_cudaEventRecord ||
        call->function == TRACED_cudaStreamWaitEvent ||
        call->function == TRACED_cudaStreamSynchronize;
    const char *where = creates && call->result != cudaSuccess ? "host"
                        : on_stream ? stream_name(call->stream, named, named_count)
                                    : "host";
    harness_append_text(line, size, &used, "%8.2f ms  %-17s  %s", call->host_ms - start_ms, where,
                        traced_function_name(call->function));
    if (call->function == TRACED_cudaMemcpy || call->function == TRACED_cudaMemcpyAsync)
        harness_append_text(line, size, &used, " %s %s%s", direction_words(call),
                            size_words(call->bytes),
                            pageable_end(call) ? " (pageable host memory)" : "");
    else if (call->function == TRACED_gpu_work_scale_add ||
             call->function == TRACED_gpu_work_checksum ||
             call->function == TRACED_gpu_work_bytes_to_floats)
        harness_append_text(line, size, &used, " on %s", size_words(call->bytes));
    else if (call->function == TRACED_cudaMemPrefetchAsync)
        harness_append_text(line, size, &used, " %s to %s", size_words(call->bytes),
                            mem_location_words(call->location));
    else if (call->bytes)
        harness_append_text(line, size, &used, " %s", size_words(call->bytes));
    if (traced_call_waits_for_the_gpu(call))
        harness_append_text(line, size, &used, " (the host waits)");
    if (call->result != cudaSuccess)
        harness_append_text(line, size, &used, " -> %s", cudaGetErrorName(call->result));
}

const char *trace_timeline(void)
{
    static char timeline[6144];
    size_t used = 0;
    timeline[0] = '\0';
    const size_t count = trace_count();
    if (count == 0)
        return "\n  (no calls)";
    cudaStream_t named[MAX_NAMED_STREAMS];
    size_t named_count = 0;
    const double start_ms = trace_get(0)->host_ms;
    const bool folded = count > TIMELINE_HEAD + TIMELINE_TAIL + 1;
    char line[256];
    for (size_t i = 0; i < count; i++) {
        /* Every line is formatted, so that streams keep the names they were first given. */
        timeline_line(trace_get(i), start_ms, named, &named_count, line, sizeof line);
        if (folded && i == TIMELINE_HEAD)
            harness_append_text(timeline, sizeof timeline, &used,
                                "\n  %8s     ... %zu calls more ...", "",
                                count - TIMELINE_HEAD - TIMELINE_TAIL);
        if (!folded || i < TIMELINE_HEAD || i >= count - TIMELINE_TAIL)
            harness_append_text(timeline, sizeof timeline, &used, "\n  %s", line);
    }
    return timeline;
}

void harness_hold_next_run(harness_hold what, double milliseconds)
{
    trace_start();
    trace_stop();
    if (what == HOLD_COPIES)
        trace_delay_async_copies(cudaMemcpyHostToDevice, milliseconds);
    if (what == HOLD_KERNELS)
        trace_delay_kernels(milliseconds);
}

const char *harness_held_words(harness_hold what, double milliseconds, const char *kernel)
{
    static char words[160];
    snprintf(words, sizeof words, " (the test held every %s up %g ms, as a busy %s would)",
             what == HOLD_COPIES ? "copy" : kernel, milliseconds,
             what == HOLD_COPIES ? "link" : "GPU");
    return what == HOLD_NOTHING ? "" : words;
}

/* feed_loops.c - chapter 5's training loops on the GPU, their stages timed alone, the ideal.
 *
 * Every loop runs the same training step on the step stream: gpu_work_keep_busy for the
 * step's milliseconds, then a checksum of the batch's floats into d_sums[batch], between two
 * events that time it. The loops differ only in how the floats get to d_floats. Two device
 * buffers take turns: a batch may arrive in one while the step reads the other, and a copy into
 * a buffer waits (cudaStreamWaitEvent, on the GPU: the host does not wait) for the step that
 * last read it.
 */
#include "feed.h"

#include "chapter.h"
#include "cuda_check.h"
#include "gpu_work.h"
#include "timing.h"
#include "units.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const feed_variant_names[FEED_VARIANTS] = {"naive", "pinned_async", "loader_ring",
                                                       "compact"};
const char *const feed_stage_names[FEED_STAGES] = {
    "read", "convert", "copy_pageable", "copy_pinned", "copy_compact", "gpu_convert", "step"};

#define MAX_STAGE_REPS 50

/* --- The rig --------------------------------------------------------------------------------- */

/* Each kernel launched once on a small buffer: the first launch in a context may load it, which
 * no loop's first batch should pay for. */
static void warm_kernels(feed_rig *rig)
{
    CUDA_CHECK(gpu_work_keep_busy(rig->step_stream, 0));
    CUDA_CHECK(gpu_work_checksum(rig->step_stream, rig->d_floats[0], 4096, 1, rig->d_sums));
    if (rig->d_bytes[0] != NULL)
        CUDA_CHECK(gpu_work_bytes_to_floats(rig->step_stream, rig->d_floats[1], rig->d_bytes[0],
                                            4096, FEED_SCALE, FEED_OFFSET));
    CUDA_CHECK(cudaStreamSynchronize(rig->step_stream));
}

void feed_rig_create(feed_rig *rig, size_t max_batch_samples, size_t max_batches, unsigned loaders,
                     const bool uses[FEED_VARIANTS])
{
    memset(rig, 0, sizeof *rig);
    rig->max_batch_samples = max_batch_samples;
    rig->max_batches = max_batches;
    rig->loaders = loaders;
    const size_t bytes = max_batch_samples * FEED_SAMPLE_BYTES;
    CUDA_CHECK(cudaStreamCreateWithFlags(&rig->copy_stream, cudaStreamNonBlocking));
    CUDA_CHECK(cudaStreamCreateWithFlags(&rig->step_stream, cudaStreamNonBlocking));
    for (int i = 0; i < 2; i++) {
        CUDA_CHECK(cudaMalloc((void **)&rig->d_floats[i], bytes * sizeof(float)));
        if (uses[FEED_COMPACT])
            CUDA_CHECK(cudaMalloc((void **)&rig->d_bytes[i], bytes));
        CUDA_CHECK(cudaEventCreateWithFlags(&rig->stepped[i], cudaEventDisableTiming));
    }
    CUDA_CHECK(cudaMalloc((void **)&rig->d_sums, max_batches * sizeof *rig->d_sums));
    rig->step_start = host_alloc(max_batches * sizeof *rig->step_start);
    rig->step_end = host_alloc(max_batches * sizeof *rig->step_end);
    for (size_t b = 0; b < max_batches; b++) {
        CUDA_CHECK(cudaEventCreate(&rig->step_start[b]));
        CUDA_CHECK(cudaEventCreate(&rig->step_end[b]));
    }
    if (uses[FEED_NAIVE] || uses[FEED_PINNED_ASYNC]) {
        rig->h_bytes = host_alloc(bytes);
        memset(rig->h_bytes, 0, bytes); /* its pages made now, not in the first batch */
    }
    if (uses[FEED_NAIVE]) {
        rig->h_floats = host_alloc(bytes * sizeof(float));
        memset(rig->h_floats, 0, bytes * sizeof(float));
    }
    /* pinned_async takes two slots of the ring; the loaders want one each and two in flight. */
    if (uses[FEED_PINNED_ASYNC] || uses[FEED_LOADER_RING]) {
        const unsigned slots = uses[FEED_LOADER_RING] ? loaders + 2 : 2;
        feed_ring_init(&rig->float_ring, slots, uses[FEED_LOADER_RING] ? loaders : 0,
                       max_batch_samples, true);
        rig->has_float_ring = true;
    }
    if (uses[FEED_COMPACT]) {
        feed_ring_init(&rig->byte_ring, loaders + 2, loaders, max_batch_samples, false);
        rig->has_byte_ring = true;
    }
    warm_kernels(rig);
}

void feed_rig_destroy(feed_rig *rig)
{
    CUDA_CHECK(cudaDeviceSynchronize());
    feed_ring_destroy(&rig->byte_ring);
    feed_ring_destroy(&rig->float_ring);
    free(rig->h_floats);
    free(rig->h_bytes);
    for (size_t b = 0; b < rig->max_batches; b++) {
        CUDA_CHECK(cudaEventDestroy(rig->step_end[b]));
        CUDA_CHECK(cudaEventDestroy(rig->step_start[b]));
    }
    free(rig->step_end);
    free(rig->step_start);
    CUDA_CHECK(cudaFree(rig->d_sums));
    for (int i = 0; i < 2; i++) {
        CUDA_CHECK(cudaEventDestroy(rig->stepped[i]));
        CUDA_CHECK(cudaFree(rig->d_bytes[i])); /* NULL is allowed */
        CUDA_CHECK(cudaFree(rig->d_floats[i]));
    }
    CUDA_CHECK(cudaStreamDestroy(rig->step_stream));
    CUDA_CHECK(cudaStreamDestroy(rig->copy_stream));
}

/* --- The step and the loops ------------------------------------------------------------------ */

/* What a loop is asked to do. */
typedef struct loop_plan {
    feed_rig *rig;
    const feed_data *data;
    size_t batch_samples, batches, bytes; /* bytes: a batch's, before conversion */
    double step_ms;
    feed_run *run;
} loop_plan;

/* listing: step */
/* The training step on batch b, which is in d_floats[buffer]: keep the GPU busy, then read the
 * whole batch (its checksum proves what arrived), between the two events that time it. */
static void queue_step(const loop_plan *p, cudaStream_t stream, size_t b, int buffer)
{
    feed_rig *rig = p->rig;
    CUDA_CHECK(cudaEventRecord(rig->step_start[b], stream));
    CUDA_CHECK(gpu_work_keep_busy(stream, p->step_ms));
    CUDA_CHECK(gpu_work_checksum(stream, rig->d_floats[buffer], p->bytes * sizeof(float), 1,
                                 &rig->d_sums[b]));
    CUDA_CHECK(cudaEventRecord(rig->step_end[b], stream));
    CUDA_CHECK(cudaEventRecord(rig->stepped[buffer], stream));
}
/* end listing: step */

static void read_failed(feed_run *run, const char *variant, size_t batch, int err)
{
    snprintf(run->failure_text, sizeof run->failure_text, "%s: reading batch %zu failed: %s",
             variant, batch, err != 0 ? strerror(err) : "the file came short");
    run->failure = run->failure_text;
}

/* listing: naive-loop */
/* Read, convert, copy, step, and wait for it: one stage after the other. */
static void naive_loop(const loop_plan *p)
{
    feed_rig *rig = p->rig;
    for (size_t b = 0; b < p->batches; b++) {
        const double start = host_clock_ms();
        if (!feed_read_batch(p->data, p->batch_samples, b, rig->h_bytes)) {
            read_failed(p->run, "naive", b, errno);
            return;
        }
        const double read = host_clock_ms();
        feed_convert(rig->h_floats, rig->h_bytes, p->bytes);
        const double converted = host_clock_ms();
        CUDA_CHECK(cudaMemcpy(rig->d_floats[0], rig->h_floats, p->bytes * sizeof(float),
                              cudaMemcpyHostToDevice));
        const double copied = host_clock_ms();
        queue_step(p, 0, b, 0); /* the legacy stream: after the copy, whose DMA may still run */
        CUDA_CHECK(cudaStreamSynchronize(0));
        p->run->read_ms += read - start;
        p->run->convert_ms += converted - read;
        p->run->copy_ms += copied - converted;
    }
}
/* end listing: naive-loop */

/* Batch b read and converted into a pinned slot, on the loop's own thread. */
static bool prepare(const loop_plan *p, size_t b, feed_slot *slot)
{
    if (!feed_read_batch(p->data, p->batch_samples, b, p->rig->h_bytes)) {
        read_failed(p->run, "pinned_async", b, errno);
        return false;
    }
    feed_convert(slot->h_buffer, p->rig->h_bytes, p->bytes);
    return true;
}

/* listing: queue-copy */
/* Batch b's copy from `from` into d_floats or d_bytes[b % 2], once the step that last read that
 * buffer is done, and its event; the step stream waits for the copy on the GPU. */
static int queue_copy(const loop_plan *p, size_t b, feed_slot *from, bool bytes_only)
{
    feed_rig *rig = p->rig;
    const int buffer = (int)(b % 2);
    if (b >= 2)
        CUDA_CHECK(cudaStreamWaitEvent(rig->copy_stream, rig->stepped[buffer], 0));
    void *to = bytes_only ? (void *)rig->d_bytes[buffer] : (void *)rig->d_floats[buffer];
    CUDA_CHECK(cudaMemcpyAsync(to, from->h_buffer, bytes_only ? p->bytes : p->bytes * sizeof(float),
                               cudaMemcpyHostToDevice, rig->copy_stream));
    CUDA_CHECK(cudaEventRecord(from->copied, rig->copy_stream));
    CUDA_CHECK(cudaStreamWaitEvent(rig->step_stream, from->copied, 0));
    return buffer;
}
/* end listing: queue-copy */

/* listing: pinned-async-loop */
/* Two pinned buffers: while the GPU copies and steps batch b, this thread prepares b + 1 in
 * the other, once the copy out of it (batch b - 1's) is done. */
static void pinned_async_loop(const loop_plan *p)
{
    feed_slot *slots = p->rig->float_ring.slots;
    if (!prepare(p, 0, &slots[0]))
        return;
    for (size_t b = 0; b < p->batches; b++) {
        queue_step(p, p->rig->step_stream, b, queue_copy(p, b, &slots[b % 2], false));
        if (b + 1 == p->batches)
            break;
        feed_slot *next = &slots[(b + 1) % 2];
        if (b >= 1)
            CUDA_CHECK(cudaEventSynchronize(next->copied));
        if (!prepare(p, b + 1, next))
            return;
    }
}
/* end listing: pinned-async-loop */

/* listing: ring-loop */
/* The loaders fill the ring ahead; this thread only sends and steps, in order. compact sends
 * the bytes, and the GPU converts them before the step. */
static void ring_loop(const loop_plan *p, feed_ring *ring, bool compact)
{
    feed_rig *rig = p->rig;
    const char *name = feed_variant_names[compact ? FEED_COMPACT : FEED_LOADER_RING];
    if (!feed_ring_start(ring, p->data, p->batch_samples, p->batches)) {
        snprintf(p->run->failure_text, sizeof p->run->failure_text,
                 "%s: the loader threads could not start", name);
        p->run->failure = p->run->failure_text;
        return;
    }
    for (size_t b = 0; b < p->batches; b++) {
        feed_slot *slot = feed_ring_take(ring, b);
        if (slot == NULL) {
            read_failed(p->run, name, ring->failed_batch, ring->read_errno);
            break;
        }
        const int buffer = queue_copy(p, b, slot, compact);
        feed_ring_sent(ring, slot);
        if (compact)
            CUDA_CHECK(gpu_work_bytes_to_floats(rig->step_stream, rig->d_floats[buffer],
                                                rig->d_bytes[buffer], p->bytes, FEED_SCALE,
                                                FEED_OFFSET));
        queue_step(p, rig->step_stream, b, buffer);
    }
    feed_ring_stop(ring);
}
/* end listing: ring-loop */

/* The steps' times summed, and each batch's checksum compared with what its samples give. */
static void judge_run(const loop_plan *p, const char *variant, const unsigned long long *expected)
{
    feed_run *run = p->run;
    for (size_t b = 0; b < p->batches; b++) {
        float ms = 0;
        CUDA_CHECK(cudaEventElapsedTime(&ms, p->rig->step_start[b], p->rig->step_end[b]));
        run->step_ms += ms;
    }
    run->utilisation = run->wall_ms > 0 ? run->step_ms / run->wall_ms : 0;
    if (run->failure != NULL)
        return;
    unsigned long long *sums = host_alloc(p->batches * sizeof *sums);
    CUDA_CHECK(cudaMemcpy(sums, p->rig->d_sums, p->batches * sizeof *sums, cudaMemcpyDeviceToHost));
    for (size_t b = 0; b < p->batches && run->failure == NULL; b++) {
        if (sums[b] == expected[b])
            continue;
        snprintf(run->failure_text, sizeof run->failure_text,
                 "%s: batch %zu arrived wrong (its checksum on the GPU is %#llx, its samples "
                 "give %#llx)",
                 variant, b, sums[b], expected[b]);
        run->failure = run->failure_text;
    }
    free(sums);
}

void feed_run_loop(feed_rig *rig, feed_variant variant, const feed_data *data, size_t batch_samples,
                   size_t batches, double step_ms, const unsigned long long *expected,
                   feed_run *run)
{
    memset(run, 0, sizeof *run);
    run->batches = batches;
    if (batch_samples > rig->max_batch_samples || batches > rig->max_batches || batches < 2) {
        fprintf(stderr, "feed: a loop of %zu batches of %zu is beyond what the rig was made for\n",
                batches, batch_samples);
        abort(); /* the program's own mistake */
    }
    loop_plan plan = {rig,     data, batch_samples, batches, batch_samples * FEED_SAMPLE_BYTES,
                      step_ms, run};
    const double start = host_clock_ms();
    switch (variant) {
    case FEED_NAIVE: naive_loop(&plan); break;
    case FEED_PINNED_ASYNC: pinned_async_loop(&plan); break;
    case FEED_LOADER_RING: ring_loop(&plan, &rig->float_ring, false); break;
    case FEED_COMPACT: ring_loop(&plan, &rig->byte_ring, true); break;
    case FEED_VARIANTS: abort();
    }
    CUDA_CHECK(cudaStreamSynchronize(rig->copy_stream));
    CUDA_CHECK(cudaStreamSynchronize(rig->step_stream));
    CUDA_CHECK(cudaStreamSynchronize(0));
    run->wall_ms = host_clock_ms() - start;
    if (run->failure != NULL)
        run->batches = 0; /* the steps' events of the batches never queued mean nothing */
    plan.batches = run->batches;
    judge_run(&plan, feed_variant_names[variant], expected);
}

void feed_batch_times(const feed_rig *rig, size_t batch, double *period_ms, double *step_ms)
{
    float period = 0, step = 0;
    CUDA_CHECK(cudaEventElapsedTime(&period, rig->step_start[batch], rig->step_start[batch + 1]));
    CUDA_CHECK(cudaEventElapsedTime(&step, rig->step_start[batch], rig->step_end[batch]));
    *period_ms = period;
    *step_ms = step;
}

/* --- The stages alone, and the ideal --------------------------------------------------------- */

/* One timing of every stage on batch b (the data set's batch b % what it holds). */
static void time_stages(feed_rig *rig, const feed_data *data, size_t batch_samples, size_t b,
                        double step_ms, event_timer *timer, double ms[FEED_STAGES])
{
    const size_t bytes = batch_samples * FEED_SAMPLE_BYTES, floats = bytes * sizeof(float);
    double t = host_clock_ms();
    if (!feed_read_batch(data, batch_samples, b, rig->h_bytes)) {
        fflush(stdout);
        fprintf(stderr, "feed: reading %s failed: %s\n", data->path, strerror(errno));
        exit(verdict("the data set could not be read"));
    }
    ms[STAGE_READ] = host_clock_ms() - t;
    t = host_clock_ms();
    feed_convert(rig->h_floats, rig->h_bytes, bytes);
    ms[STAGE_CONVERT] = host_clock_ms() - t;
    t = host_clock_ms();
    CUDA_CHECK(cudaMemcpy(rig->d_floats[0], rig->h_floats, floats, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaStreamSynchronize(0)); /* its DMA may outlast the call */
    ms[STAGE_COPY_PAGEABLE] = host_clock_ms() - t;
    const struct {
        feed_stage stage;
        void *to;
        const void *from;
        size_t bytes;
    } copies[] = {
        {STAGE_COPY_PINNED, rig->d_floats[0], rig->float_ring.slots[0].h_buffer, floats},
        {STAGE_COPY_COMPACT, rig->d_bytes[0], rig->byte_ring.slots[0].h_buffer, bytes},
    };
    for (size_t c = 0; c < sizeof copies / sizeof copies[0]; c++) {
        t = host_clock_ms();
        CUDA_CHECK(cudaMemcpyAsync(copies[c].to, copies[c].from, copies[c].bytes,
                                   cudaMemcpyHostToDevice, rig->copy_stream));
        CUDA_CHECK(cudaStreamSynchronize(rig->copy_stream));
        ms[copies[c].stage] = host_clock_ms() - t;
    }
    float elapsed = 0;
    CUDA_CHECK(event_timer_start(timer, rig->step_stream));
    CUDA_CHECK(gpu_work_bytes_to_floats(rig->step_stream, rig->d_floats[0], rig->d_bytes[0], bytes,
                                        FEED_SCALE, FEED_OFFSET));
    CUDA_CHECK(event_timer_stop(timer, rig->step_stream, &elapsed));
    ms[STAGE_GPU_CONVERT] = elapsed;
    CUDA_CHECK(event_timer_start(timer, rig->step_stream));
    CUDA_CHECK(gpu_work_keep_busy(rig->step_stream, step_ms));
    CUDA_CHECK(gpu_work_checksum(rig->step_stream, rig->d_floats[0], floats, 1, rig->d_sums));
    CUDA_CHECK(event_timer_stop(timer, rig->step_stream, &elapsed));
    ms[STAGE_STEP] = elapsed;
}

void feed_measure_stages(feed_rig *rig, const feed_data *data, size_t batch_samples, double step_ms,
                         int reps, double ms[FEED_STAGES])
{
    if (rig->h_floats == NULL || !rig->has_float_ring || !rig->has_byte_ring ||
        batch_samples > rig->max_batch_samples || reps < 1 || reps > MAX_STAGE_REPS) {
        fprintf(stderr, "feed: timing the stages needs a rig made for every variant\n");
        abort(); /* the program's own mistake */
    }
    event_timer timer;
    CUDA_CHECK(event_timer_create(&timer));
    double samples[FEED_STAGES][MAX_STAGE_REPS], once[FEED_STAGES];
    time_stages(rig, data, batch_samples, 0, step_ms, &timer, once); /* first calls: not kept */
    for (int r = 0; r < reps; r++) {
        time_stages(rig, data, batch_samples, (size_t)r, step_ms, &timer, once);
        for (int s = 0; s < FEED_STAGES; s++)
            samples[s][r] = once[s];
    }
    for (int s = 0; s < FEED_STAGES; s++)
        ms[s] = median_of(samples[s], (size_t)reps);
    CUDA_CHECK(event_timer_destroy(&timer));
}

size_t feed_stage_bytes(feed_stage stage, size_t batch_samples)
{
    const size_t bytes = batch_samples * FEED_SAMPLE_BYTES;
    return stage == STAGE_READ || stage == STAGE_COPY_COMPACT ? bytes : bytes * sizeof(float);
}

static double longest(double a, double b, double c)
{
    const double ab = a > b ? a : b;
    return ab > c ? ab : c;
}

/* listing: ideal */
double feed_ideal_ms(feed_variant variant, const double ms[FEED_STAGES], unsigned loaders)
{
    if (variant == FEED_COMPACT)
        return longest(ms[STAGE_STEP] + ms[STAGE_GPU_CONVERT], ms[STAGE_COPY_COMPACT],
                       ms[STAGE_READ] / loaders);
    return longest(ms[STAGE_STEP], ms[STAGE_COPY_PINNED],
                   (ms[STAGE_READ] + ms[STAGE_CONVERT]) / loaders);
}
/* end listing: ideal */

size_t feed_link_bytes(feed_variant variant, size_t batch_samples)
{
    const size_t bytes = batch_samples * FEED_SAMPLE_BYTES;
    return variant == FEED_COMPACT ? bytes : bytes * sizeof(float);
}

/* 04-pipeline.c - copy up, compute, copy down, in chunks over several streams, overlapped.
 *
 * The work: y = A * x + B over N floats (gpu_work_scale_add), with x coming from the host
 * and y going back to it. Done serially, on one stream, it takes the three stages one after
 * the other: copy everything up, compute, copy everything down. Cut into chunks spread over
 * k streams, the copy up of one chunk can run while another is computed and a third copied
 * down, each on its own engine. The serial time is the three stages added; no pipeline can
 * beat the longest stage alone, its ideal.
 *
 * For k = 1 to --max-streams it runs the pipeline and prints its time against both. Events
 * recorded around every stage of every chunk give a timeline, which --csv writes for one run
 * with --timeline-streams streams: stream, stage, chunk, start and end in ms. A stage "starts"
 * when its stream reaches it, which may be before its engine is free to take it.
 *
 *     04-pipeline [--floats N] [--chunks N] [--max-streams K] [--reps N]
 *                 [--timeline-streams K] [--csv DIR]
 *
 * --csv writes DIR/overlap.csv and DIR/timeline.csv (`make measure`). Every run's result is
 * compared, bit for bit, with the host's own fmaf; the last line is "PASSED" or "FAILED: why".
 */
#include "chapter.h"
#include "measure_csv.h"
#include "cuda_check.h"
#include "gpu_work.h"
#include "timing.h"
#include "units.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SCALE 2.0f
#define OFFSET 1.0f
#define MAX_STREAMS 32
#define MAX_CHUNKS 1024
#define MAX_REPS 100
#define POISON 0xFF

enum stage { H2D, KERNEL, D2H, STAGES };
static const char *const stage_names[STAGES] = {"h2d", "kernel", "d2h"};

static const char usage[] =
    "[--floats N] [--chunks N] [--max-streams K] [--reps N] [--timeline-streams K] [--csv DIR]\n"
    "       --floats            floats to process; K and M multiply by 1024 (default 32M)\n"
    "       --chunks            pieces the work is cut into, 1 to 1024 (default 16)\n"
    "       --max-streams       the pipeline runs over 1 to K streams (default 8, at most 32)\n"
    "       --reps              runs per case; the median is reported (default 3)\n"
    "       --timeline-streams  the run whose timeline --csv writes (default 4)\n"
    "       --csv               also write overlap.csv and timeline.csv into DIR";

typedef struct options {
    size_t floats;
    int chunks, max_streams, reps, timeline_streams;
    const char *csv_dir;
} options;

static options parse_options(int argc, char **argv)
{
    options opt = {.floats = (size_t)32 << 20,
                   .chunks = 16,
                   .max_streams = 8,
                   .reps = 3,
                   .timeline_streams = 4};
    const option_spec specs[] = {
        {"--floats", OPTION_SIZE, &opt.floats, 0, 0}, /* a count: K and M multiply by 1024 */
        {"--chunks", OPTION_COUNT, &opt.chunks, 1, MAX_CHUNKS},
        {"--max-streams", OPTION_COUNT, &opt.max_streams, 1, MAX_STREAMS},
        {"--reps", OPTION_COUNT, &opt.reps, 1, MAX_REPS},
        {"--timeline-streams", OPTION_COUNT, &opt.timeline_streams, 1, MAX_STREAMS},
        {"--csv", OPTION_TEXT, &opt.csv_dir, 0, 0},
    };
    options_parse(argc, argv, usage, specs, sizeof specs / sizeof specs[0]);
    if (opt.floats > SIZE_MAX / sizeof(float))
        usage_error(argv[0], usage, "--floats: %zu floats do not fit in memory", opt.floats);
    if ((size_t)opt.chunks > opt.floats)
        usage_error(argv[0], usage, "--chunks: %d chunks of %zu floats would leave some empty",
                    opt.chunks, opt.floats);
    return opt;
}

typedef struct work {
    float *h_in, *h_out; /* pinned */
    float *d_data;       /* every chunk has its own place here, so none is reused */
    size_t floats, chunk_floats;
    int chunks;
    cudaStream_t streams[MAX_STREAMS];
    cudaEvent_t start;
    cudaEvent_t marks[MAX_CHUNKS][STAGES + 1]; /* before the copy up, then after each stage */
} work;

static double elapsed_ms(cudaEvent_t from, cudaEvent_t to)
{
    float ms;
    CUDA_CHECK(cudaEventElapsedTime(&ms, from, to));
    return ms;
}

/* The serial version, on one stream: each stage over all the data, timed on its own. */
static void serial(work *w, double stage_ms[STAGES])
{
    cudaStream_t s = w->streams[0];
    size_t bytes = w->floats * sizeof(float);
    cudaEvent_t *mark = w->marks[0];
    CUDA_CHECK(cudaEventRecord(mark[0], s));
    CUDA_CHECK(cudaMemcpyAsync(w->d_data, w->h_in, bytes, cudaMemcpyHostToDevice, s));
    CUDA_CHECK(cudaEventRecord(mark[1], s));
    CUDA_CHECK(gpu_work_scale_add(s, w->d_data, w->d_data, w->floats, SCALE, OFFSET));
    CUDA_CHECK(cudaEventRecord(mark[2], s));
    CUDA_CHECK(cudaMemcpyAsync(w->h_out, w->d_data, bytes, cudaMemcpyDeviceToHost, s));
    CUDA_CHECK(cudaEventRecord(mark[3], s));
    CUDA_CHECK(cudaEventSynchronize(mark[3]));
    for (int stage = 0; stage < STAGES; stage++)
        stage_ms[stage] = elapsed_ms(mark[stage], mark[stage + 1]);
}

/* listing: pipeline */
/* Chunk c goes to stream c % k: its copy up, its computation and its copy down follow each
 * other in that stream, while the other streams' chunks are at other stages. Returns the
 * time from the start to the end of the last chunk. */
static double pipelined(work *w, int k)
{
    CUDA_CHECK(cudaEventRecord(w->start, w->streams[0]));
    for (int s = 1; s < k; s++)
        CUDA_CHECK(cudaStreamWaitEvent(w->streams[s], w->start, 0)); /* all start together */
    for (int c = 0; c < w->chunks; c++) {
        cudaStream_t s = w->streams[c % k];
        size_t first = (size_t)c * w->chunk_floats;
        size_t n = w->floats - first < w->chunk_floats ? w->floats - first : w->chunk_floats;
        float *d_chunk = w->d_data + first;
        cudaEvent_t *mark = w->marks[c];
        CUDA_CHECK(cudaEventRecord(mark[0], s));
        CUDA_CHECK(cudaMemcpyAsync(d_chunk, w->h_in + first, n * sizeof(float),
                                   cudaMemcpyHostToDevice, s));
        CUDA_CHECK(cudaEventRecord(mark[1], s));
        CUDA_CHECK(gpu_work_scale_add(s, d_chunk, d_chunk, n, SCALE, OFFSET));
        CUDA_CHECK(cudaEventRecord(mark[2], s));
        CUDA_CHECK(cudaMemcpyAsync(w->h_out + first, d_chunk, n * sizeof(float),
                                   cudaMemcpyDeviceToHost, s));
        CUDA_CHECK(cudaEventRecord(mark[3], s));
    }
    double end_ms = 0;
    for (int c = 0; c < w->chunks; c++) {
        CUDA_CHECK(cudaEventSynchronize(w->marks[c][STAGES]));
        double t = elapsed_ms(w->start, w->marks[c][STAGES]);
        end_ms = t > end_ms ? t : end_ms;
    }
    return end_ms;
}
/* end listing: pipeline */

static void write_timeline(const work *w, int k, FILE *out)
{
    fprintf(out, "stream,stage,chunk,start_ms,end_ms\n");
    for (int c = 0; c < w->chunks; c++)
        for (int stage = 0; stage < STAGES; stage++)
            fprintf(out, "%d,%s,%d,%.4f,%.4f\n", c % k, stage_names[stage], c,
                    elapsed_ms(w->start, w->marks[c][stage]),
                    elapsed_ms(w->start, w->marks[c][stage + 1]));
}

/* What the pipeline is measured against: the serial version, each stage timed (medians of
 * `reps` runs after a warm-up) and the whole. */
static double measure_serial(work *w, int reps, double stage_ms[STAGES])
{
    double samples[STAGES + 1][MAX_REPS];
    serial(w, stage_ms); /* warm-up: loads the kernel, touches the buffers */
    for (int r = 0; r < reps; r++) {
        serial(w, stage_ms);
        samples[STAGES][r] = 0;
        for (int stage = 0; stage < STAGES; stage++) {
            samples[stage][r] = stage_ms[stage];
            samples[STAGES][r] += stage_ms[stage];
        }
    }
    for (int stage = 0; stage < STAGES; stage++)
        stage_ms[stage] = median_of(samples[stage], (size_t)reps);
    return median_of(samples[STAGES], (size_t)reps);
}

/* The pipeline over 1 to max_streams streams, each run's result checked: the median times go
 * to pipelined_ms[k], a line each, then what they show. Returns what went wrong, or NULL. */
static const char *compare_stream_counts(work *w, const options *opt, const float *h_expected,
                                         double serial_ms, double ideal_ms,
                                         double pipelined_ms[MAX_STREAMS + 1])
{
    const size_t bytes = opt->floats * sizeof(float);
    const char *failure = NULL;
    printf("  %7s %12s %10s %14s\n", "streams", "pipelined", "speed-up", "time / ideal");
    for (int k = 1; k <= opt->max_streams && failure == NULL; k++) {
        double samples[MAX_REPS];
        for (int r = 0; r < opt->reps; r++) {
            memset(w->h_out, POISON, bytes);
            samples[r] = pipelined(w, k);
            if (memcmp(w->h_out, h_expected, bytes) != 0)
                failure = "a pipelined run's result differs from the host's";
        }
        pipelined_ms[k] = median_of(samples, (size_t)opt->reps);
        printf("  %7d %9.3f ms %9.2fx %14.2f\n", k, pipelined_ms[k], serial_ms / pipelined_ms[k],
               pipelined_ms[k] / ideal_ms);
    }
    if (failure == NULL && opt->max_streams >= 2) {
        double best = pipelined_ms[1];
        int best_k = 1;
        for (int k = 2; k <= opt->max_streams; k++)
            if (pipelined_ms[k] < best)
                best = pipelined_ms[k], best_k = k;
        printf("\nOne stream does the chunks one after the other, no faster than serial. From two\n"
               "streams on, one chunk's copy up overlaps another's copy down; the best here, %d\n"
               "streams, took %.2f times the ideal and ran %.2f times faster than serial. The\n"
               "ideal assumes each stage as fast as alone, and copies both ways at once are\n"
               "each a little slower than one way alone (03-both-directions).\n",
               best_k, best / ideal_ms, serial_ms / best);
    }
    return failure;
}

/* overlap.csv (the times above) and timeline.csv (one more run over timeline_streams streams,
 * each stage's start and end) in opt->csv_dir. Returns what went wrong, or NULL. */
static const char *write_measurements(work *w, const options *opt, const float *h_expected,
                                      const double stage_ms[STAGES], double serial_ms,
                                      double ideal_ms, const double pipelined_ms[])
{
    const size_t bytes = opt->floats * sizeof(float);
    const char *failure = NULL;
    device_info info;
    char date[32];
    CUDA_CHECK(device_info_query(0, &info));
    measure_date_now(date, sizeof date);
    measure_dir_create(opt->csv_dir);
    measure_csv csv;
    char what[256];
    snprintf(what, sizeof what,
             "a chunked pipeline (copy up, y = %g x + %g, copy down) over 1 to %d streams, "
             "%zu floats in %d chunks",
             SCALE, OFFSET, opt->max_streams, opt->floats, w->chunks);
    measure_csv_open(&csv, opt->csv_dir, "overlap.csv", what, &info, date,
                     "chapters/ch03-streams/04-pipeline");
    fprintf(csv.file,
            "# unit: milliseconds, CUDA events, median of %d runs; ideal_ms: the "
            "longest stage of the serial version; bytes: the data each way, in chunks\n"
            "streams,serial_ms,pipelined_ms,ideal_ms,h2d_ms,kernel_ms,d2h_ms,bytes,chunks\n",
            opt->reps);
    for (int k = 1; k <= opt->max_streams; k++)
        fprintf(csv.file, "%d,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%zu,%d\n", k, serial_ms,
                pipelined_ms[k], ideal_ms, stage_ms[H2D], stage_ms[KERNEL], stage_ms[D2H], bytes,
                w->chunks);
    measure_csv_close(&csv);

    memset(w->h_out, POISON, bytes);
    double total_ms = pipelined(w, opt->timeline_streams);
    if (memcmp(w->h_out, h_expected, bytes) != 0)
        failure = "the timeline run's result differs from the host's";
    snprintf(what, sizeof what,
             "the timeline of one pipeline run over %d streams, %zu floats in %d chunks, "
             "%.3f ms in all",
             opt->timeline_streams, opt->floats, w->chunks, total_ms);
    measure_csv_open(&csv, opt->csv_dir, "timeline.csv", what, &info, date,
                     "chapters/ch03-streams/04-pipeline");
    fprintf(csv.file, "# unit: milliseconds after the run's start event; a stage starts "
                      "when its stream reaches it\n");
    write_timeline(w, opt->timeline_streams, csv.file);
    measure_csv_close(&csv);
    return failure;
}

int main(int argc, char **argv)
{
    options opt = parse_options(argc, argv);
    const size_t bytes = opt.floats * sizeof(float);
    char size[32];
    const char *failure = NULL;

    work *w = calloc(1, sizeof *w);
    if (w == NULL)
        return verdict("out of host memory");
    w->floats = opt.floats;
    w->chunks = opt.chunks;
    w->chunk_floats = (opt.floats + (size_t)opt.chunks - 1) / (size_t)opt.chunks;
    /* Rounding up can leave the last chunks empty (10 floats in 4 chunks of 3: 3+3+3+1, but
     * 10 in 6 chunks of 2 uses only 5): use the chunks that hold something. */
    w->chunks = (int)((opt.floats + w->chunk_floats - 1) / w->chunk_floats);
    float *h_expected = host_alloc(bytes);
    CUDA_CHECK(cudaMallocHost((void **)&w->h_in, bytes));
    CUDA_CHECK(cudaMallocHost((void **)&w->h_out, bytes));
    CUDA_CHECK(cudaMalloc((void **)&w->d_data, bytes));
    for (size_t i = 0; i < opt.floats; i++) {
        w->h_in[i] = (float)(i % 4099) * 0.25f - 300.0f;
        h_expected[i] = fmaf(SCALE, w->h_in[i], OFFSET); /* what the kernel computes */
    }
    int streams = opt.max_streams > opt.timeline_streams ? opt.max_streams : opt.timeline_streams;
    for (int s = 0; s < streams; s++)
        CUDA_CHECK(cudaStreamCreateWithFlags(&w->streams[s], cudaStreamNonBlocking));
    CUDA_CHECK(cudaEventCreate(&w->start));
    for (int c = 0; c < w->chunks; c++)
        for (int m = 0; m <= STAGES; m++)
            CUDA_CHECK(cudaEventCreate(&w->marks[c][m]));
    gpu_work_require("to compute each chunk");

    /* Serial, with each stage timed: the reference for the pipeline. */
    double stage_ms[STAGES];
    const double serial_ms = measure_serial(w, opt.reps, stage_ms);
    const double ideal_ms = fmax(stage_ms[H2D], fmax(stage_ms[KERNEL], stage_ms[D2H]));
    if (memcmp(w->h_out, h_expected, bytes) != 0)
        failure = "the serial version's result differs from the host's";
    printf("y = %.0f x + %.0f over %s (%zu floats), in %d chunks of up to %s\n", SCALE, OFFSET,
           format_bytes(bytes, size, sizeof size), opt.floats, w->chunks,
           format_bytes(w->chunk_floats * sizeof(float), (char[32]){0}, 32));
    printf("serial, one stream: copy up %.3f ms + compute %.3f ms + copy down %.3f ms = %.3f ms\n",
           stage_ms[H2D], stage_ms[KERNEL], stage_ms[D2H], serial_ms);
    printf("ideal: the longest stage alone, %.3f ms\n\n", ideal_ms);

    double pipelined_ms[MAX_STREAMS + 1] = {0};
    if (failure == NULL)
        failure = compare_stream_counts(w, &opt, h_expected, serial_ms, ideal_ms, pipelined_ms);
    if (failure == NULL && opt.csv_dir != NULL)
        failure =
            write_measurements(w, &opt, h_expected, stage_ms, serial_ms, ideal_ms, pipelined_ms);

    for (int c = 0; c < w->chunks; c++)
        for (int m = 0; m <= STAGES; m++)
            CUDA_CHECK(cudaEventDestroy(w->marks[c][m]));
    CUDA_CHECK(cudaEventDestroy(w->start));
    for (int s = 0; s < streams; s++)
        CUDA_CHECK(cudaStreamDestroy(w->streams[s]));
    CUDA_CHECK(cudaFree(w->d_data));
    CUDA_CHECK(cudaFreeHost(w->h_out));
    CUDA_CHECK(cudaFreeHost(w->h_in));
    free(h_expected);
    free(w);
    if (failure == NULL)
        printf("verified: every run's %s of results equal the host's fmaf, bit for bit\n", size);
    return verdict(failure);
}

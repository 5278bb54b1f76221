/* 01-naive-loop.c - a training loop as it is first written, and how much of the time its GPU
 * works.
 *
 * The loop reads a batch of images from the data set's file (pread), converts its 8-bit
 * pixels to normalised floats on the host, copies the floats to the GPU from the pageable
 * buffer it converted into (cudaMemcpy), runs the training step there (a kernel that keeps the
 * GPU busy for --step-ms, then a checksum of the batch) and waits for it; then the next batch.
 * Each stage waits for the one before, so the GPU is idle while the host reads, converts and
 * copies: the utilisation, the steps' time (CUDA events around each step) over the loop's wall
 * time (the host clock from the first read to the last synchronisation), says how idle. The
 * program prints it for the first batches and over the whole loop, and where the host's share
 * of each batch went.
 *
 *     01-naive-loop [--data FILE] [--data-size SIZE] [--batch N] [--step-ms MS] [--loaders N]
 *                   [--csv DIR] [--batch-count N]
 *
 * (--loaders is every chapter 5 program's; this loop has none.) The data set is written
 * first, or reused from --data FILE. Its verdict is on the batches: the checksum the GPU took
 * of each must equal the host's of the same samples, converted the same way; the times are
 * printed, not judged.
 */
#include "chapter.h"
#include "cuda_check.h"
#include "feed.h"
#include "measure_csv.h"
#include "units.h"

#include <stdio.h>
#include <stdlib.h>

static const char usage[] = FEED_USAGE_DATA
    " " FEED_USAGE_BATCH " " FEED_USAGE_LOOP
    " [--batch-count N]\n" FEED_WORDS_DATA FEED_WORDS_BATCH FEED_WORDS_LOOP "naive_loop.csv\n"
    "       --batch-count  batches the loop runs, 2 to 10000 (default: one pass over the\n"
    "                      data set, at most 96)";

/* How many of the first batches the output shows one by one. */
#define SHOWN_BATCHES 5

static void write_csv(const char *dir, const feed_rig *rig, size_t batches, size_t batch_samples,
                      double step_ms)
{
    measure_csv csv;
    FILE *f = measure_csv_create(&csv, dir, "naive_loop.csv",
                                 "the naive training loop: each batch read, converted, copied from "
                                 "pageable memory and stepped, one after the other",
                                 "chapters/ch05-training-loop/01-naive-loop");
    fprintf(f,
            "# unit: milliseconds; %zu samples a batch, a step of %g ms; loop_ms: from the "
            "batch's step start to the next one's (CUDA events), so the last batch has no row\n"
            "batch,loop_ms,step_ms,utilisation\n",
            batch_samples, step_ms);
    for (size_t b = 0; b + 1 < batches; b++) {
        double period, step;
        feed_batch_times(rig, b, &period, &step);
        fprintf(f, "%zu,%.4f,%.4f,%.4f\n", b, period, step, period > 0 ? step / period : 0);
    }
    measure_csv_close(&csv);
}

static void print_run(const feed_rig *rig, const feed_run *run, size_t batch_samples)
{
    char bytes[32], floats[32];
    const size_t batch_bytes = batch_samples * FEED_SAMPLE_BYTES;
    printf("The naive loop: %zu batches of %zu samples (%s of bytes, %s of floats)\n", run->batches,
           batch_samples, format_bytes(batch_bytes, bytes, sizeof bytes),
           format_bytes(batch_bytes * sizeof(float), floats, sizeof floats));
    printf("  %-8s %16s %10s %10s\n", "batch", "to next step ms", "step ms", "GPU busy");
    for (size_t b = 0; b < SHOWN_BATCHES && b + 1 < run->batches; b++) {
        double period, step;
        feed_batch_times(rig, b, &period, &step);
        printf("  %-8zu %16.2f %10.2f %9.1f%%\n", b, period, step,
               period > 0 ? 100 * step / period : 0);
    }
    const double n = (double)run->batches;
    printf("  %-8s %16.2f %10.2f %9.1f%%   (a batch on average, by the host clock)\n", "all",
           run->wall_ms / n, run->step_ms / n, 100 * run->utilisation);
    const double host_ms = run->read_ms + run->convert_ms + run->copy_ms;
    printf("\nA batch's time: reading %.2f ms, converting %.2f ms, copying %.2f ms, the step\n"
           "%.2f ms. The GPU was busy %.0f%% of the time: it waits while the host reads,\n"
           "converts and copies (%.1f ms a batch), and the host waits while the GPU steps.\n",
           run->read_ms / n, run->convert_ms / n, run->copy_ms / n, run->step_ms / n,
           100 * run->utilisation, host_ms / n);
}

int main(int argc, char **argv)
{
    int batch_count = 0; /* 0: the default */
    const option_spec extra[] = {
        {"--batch-count", OPTION_COUNT, &batch_count, 2, FEED_MAX_BATCHES}};
    const feed_options opt = feed_options_parse(argc, argv, usage, FEED_ALL_OPTIONS, extra, 1);
    gpu_work_require("for the training step (a kernel that keeps the GPU busy, a checksum)");
    const size_t batch = (size_t)opt.batch_samples;

    feed_data data;
    unsigned long long *expected;
    const size_t batches = feed_prepare_batches(&opt, (size_t)batch_count, 96, &data, &expected);

    feed_rig rig;
    const bool uses[FEED_VARIANTS] = {[FEED_NAIVE] = true};
    feed_rig_create(&rig, batch, batches, (unsigned)opt.loaders, uses);
    feed_run run;
    feed_run_loop(&rig, FEED_NAIVE, &data, batch, batches, opt.step_ms, expected, &run);
    if (run.failure == NULL) {
        print_run(&rig, &run, batch);
        if (opt.csv_dir != NULL)
            write_csv(opt.csv_dir, &rig, batches, batch, opt.step_ms);
    }

    feed_rig_destroy(&rig);
    free(expected);
    feed_data_close(&data);
    return verdict(run.failure);
}

/* 02-where-time-goes.c - the naive loop taken apart: each stage of a batch timed alone, and the
 * ideal a loop could reach.
 *
 * A batch goes through four stages: read (pread from the page cache), convert (bytes to floats,
 * one thread), copy (cudaMemcpy from pageable memory) and the step. Each is timed alone on
 * the same batch, medians of --reps rounds, with the ways the cure of 03-cure does them: the
 * copy from pinned memory, the bytes alone (the compact form, a quarter of the floats) and the
 * conversion on the GPU. Then the naive loop runs, to compare its time a batch with the sum of
 * its stages, and the program prints the ideal: the longest stage once the host's work is spread
 * over --loaders threads, max(step, pinned copy, (read + convert) / loaders). No loop beats it;
 * whichever stage it is bounds the loop.
 *
 *     02-where-time-goes [--data FILE] [--data-size SIZE] [--batch N] [--step-ms MS]
 *                        [--loaders N] [--csv DIR] [--reps N]
 *
 * Its verdict is on the naive loop's batches (each checksum on the GPU equal to the host's of
 * the same samples); the times are printed, not judged.
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
    " [--reps N]\n" FEED_WORDS_DATA FEED_WORDS_BATCH FEED_WORDS_LOOP "stages.csv\n"
    "       --reps         timings of each stage, whose median is kept, 1 to 50 (default 5)";

/* What each stage is, for the table. */
static const char *const stage_words[FEED_STAGES] = {
    [STAGE_READ] = "read: pread of the bytes, page cache",
    [STAGE_CONVERT] = "convert: bytes to floats, one thread",
    [STAGE_COPY_PAGEABLE] = "copy: cudaMemcpy, pageable floats",
    [STAGE_COPY_PINNED] = "copy: cudaMemcpyAsync, pinned floats",
    [STAGE_COPY_COMPACT] = "copy: cudaMemcpyAsync, pinned bytes",
    [STAGE_GPU_CONVERT] = "convert on the GPU",
    [STAGE_STEP] = "the training step",
};

static double naive_sum(const double ms[FEED_STAGES])
{
    return ms[STAGE_READ] + ms[STAGE_CONVERT] + ms[STAGE_COPY_PAGEABLE] + ms[STAGE_STEP];
}

/* The stage that sets the ideal, in words. */
static const char *bound_by(const double ms[FEED_STAGES], unsigned loaders)
{
    const double host = (ms[STAGE_READ] + ms[STAGE_CONVERT]) / loaders;
    if (ms[STAGE_STEP] >= ms[STAGE_COPY_PINNED] && ms[STAGE_STEP] >= host)
        return "the step: the GPU's own work";
    return ms[STAGE_COPY_PINNED] >= host ? "the copy: the link"
                                         : "reading and converting: the CPUs";
}

static void print_stages(const double ms[FEED_STAGES], size_t batch, double naive_ms,
                         double ideal_ms, unsigned loaders)
{
    char size[32];
    printf("Each stage alone, a batch of %zu samples (%s of bytes), medians:\n", batch,
           format_bytes(batch * FEED_SAMPLE_BYTES, size, sizeof size));
    printf("  %-40s %10s %10s\n", "stage", "ms", "GB/s");
    for (int s = 0; s < FEED_STAGES; s++) {
        const size_t bytes = feed_stage_bytes((feed_stage)s, batch);
        if (s == STAGE_STEP)
            printf("  %-40s %10.3f\n", stage_words[s], ms[s]);
        else
            printf("  %-40s %10.3f %10.1f\n", stage_words[s], ms[s],
                   bandwidth_gb_per_s(bytes, ms[s]));
    }
    printf("\nThe naive loop, measured: %.2f ms a batch; its four stages one after another: "
           "%.2f ms.\n",
           naive_ms, naive_sum(ms));
    printf("The ideal with %u loaders, max(step, pinned copy, (read + convert) / %u): %.2f ms a\n"
           "batch, %.1f times faster than the naive loop; the GPU would be busy %.0f%% of the "
           "time.\nIt is bound by %s.\n",
           loaders, loaders, ideal_ms, naive_ms / ideal_ms,
           100 * (ms[STAGE_STEP] < ideal_ms ? ms[STAGE_STEP] / ideal_ms : 1),
           bound_by(ms, loaders));
}

static void write_csv(const char *dir, const double ms[FEED_STAGES], size_t batch, double step_ms,
                      unsigned loaders, double naive_ms, double ideal_ms)
{
    measure_csv csv;
    FILE *f = measure_csv_create(&csv, dir, "stages.csv",
                                 "each stage of the training loop timed alone, then the naive "
                                 "loop and the ideal",
                                 "chapters/ch05-training-loop/02-where-time-goes");
    fprintf(f,
            "# unit: milliseconds per batch, medians; %zu samples a batch, a step of %g ms, %u "
            "loaders for the ideal, max(step, copy_pinned, (read + convert) / loaders)\n"
            "stage,ms_per_batch,bytes\n",
            batch, step_ms, loaders);
    for (int s = 0; s < FEED_STAGES; s++)
        fprintf(f, "%s,%.4f,%zu\n", feed_stage_names[s], ms[s],
                feed_stage_bytes((feed_stage)s, batch));
    const size_t floats = batch * FEED_SAMPLE_BYTES * sizeof(float);
    fprintf(f, "naive_loop,%.4f,%zu\nideal,%.4f,%zu\n", naive_ms, floats, ideal_ms, floats);
    measure_csv_close(&csv);
}

int main(int argc, char **argv)
{
    int reps = 5;
    const option_spec extra[] = {{"--reps", OPTION_COUNT, &reps, 1, 50}};
    const feed_options opt = feed_options_parse(argc, argv, usage, FEED_ALL_OPTIONS, extra, 1);
    gpu_work_require("for the training step (a kernel that keeps the GPU busy, a checksum)");
    const size_t batch = (size_t)opt.batch_samples;
    const unsigned loaders = (unsigned)opt.loaders;

    /* One pass over the data set, at most 50 batches: as many as --reps can time. */
    feed_data data;
    unsigned long long *expected;
    const size_t batches = feed_prepare_batches(&opt, 0, 50, &data, &expected);

    feed_rig rig;
    const bool uses[FEED_VARIANTS] = {true, true, true, true};
    feed_rig_create(&rig, batch, batches, loaders, uses);
    double ms[FEED_STAGES];
    feed_measure_stages(&rig, &data, batch, opt.step_ms, reps, ms);
    feed_run run;
    feed_run_loop(&rig, FEED_NAIVE, &data, batch, batches, opt.step_ms, expected, &run);
    if (run.failure == NULL) {
        const double naive_ms = run.wall_ms / (double)run.batches;
        const double ideal_ms = feed_ideal_ms(FEED_LOADER_RING, ms, loaders);
        print_stages(ms, batch, naive_ms, ideal_ms, loaders);
        if (opt.csv_dir != NULL)
            write_csv(opt.csv_dir, ms, batch, opt.step_ms, loaders, naive_ms, ideal_ms);
    }

    feed_rig_destroy(&rig);
    free(expected);
    feed_data_close(&data);
    return verdict(run.failure);
}

/* 03-cure.c - the naive loop cured one step at a time, each step measured on the same batches.
 *
 *   naive          read, convert, cudaMemcpy from pageable memory, step, wait: as 01-naive-loop;
 *   pinned_async   two pinned buffers, cudaMemcpyAsync on a copy stream of its own and events:
 *                  the host prepares batch b + 1 while the GPU copies and steps batch b;
 *   loader_ring    --loaders threads read and convert ahead into a ring of pinned buffers, and
 *                  the loop's thread only sends and steps;
 *   compact        the loaders only read; the batch's bytes cross the link, a quarter of the
 *                  floats, and the GPU converts them before the step.
 *
 * Each stage of a batch is timed alone first (as 02-where-time-goes does), for each variant's
 * ideal: the sum of the stages for the naive loop, which overlaps nothing; the longest stage
 * for the others, the host's work spread over the threads that do it (one for pinned_async).
 * Each variant prints its time a batch, its ideal, the GPU's utilisation (the steps' event
 * times over the loop's wall time) and the bytes it sends, and a line for scripts:
 *
 *     feed: variant=NAME batches=N seconds=S batches_per_s=X utilisation=U loop_ms=L ideal_ms=I
 *
 *     03-cure [--data FILE] [--data-size SIZE] [--batch N] [--step-ms MS] [--loaders N]
 *             [--csv DIR] [--variant NAME] [--batch-count N]
 *
 * Its verdict is on the batches: every variant's checksums on the GPU must equal the host's of
 * the same samples, converted the same way. The times are printed, not judged.
 */
#include "chapter.h"
#include "cuda_check.h"
#include "feed.h"
#include "measure_csv.h"
#include "units.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] = FEED_USAGE_DATA
    " " FEED_USAGE_BATCH " " FEED_USAGE_LOOP
    " [--variant NAME] [--batch-count N]\n" FEED_WORDS_DATA FEED_WORDS_BATCH FEED_WORDS_LOOP
    "cure.csv\n"
    "       --variant      one of naive, pinned_async, loader_ring, compact (default: each, in\n"
    "                      that order)\n"
    "       --batch-count  batches each loop runs, 2 to 10000 (default: one pass over the data\n"
    "                      set, at most 100)";

/* A variant's ideal ms a batch, from its stages alone. */
static double variant_ideal(feed_variant variant, const double ms[FEED_STAGES], unsigned loaders)
{
    switch (variant) {
    case FEED_NAIVE:
        return ms[STAGE_READ] + ms[STAGE_CONVERT] + ms[STAGE_COPY_PAGEABLE] + ms[STAGE_STEP];
    case FEED_PINNED_ASYNC: return feed_ideal_ms(FEED_LOADER_RING, ms, 1);
    default: return feed_ideal_ms(variant, ms, loaders);
    }
}

typedef struct variant_result {
    feed_variant variant;
    feed_run run;
    double ideal_ms;
} variant_result;

static double loop_ms(const variant_result *r)
{
    return r->run.wall_ms / (double)r->run.batches;
}

static void print_results(const variant_result *results, int count, size_t batch)
{
    char size[32];
    printf("The loop cured one step at a time: %zu batches of %zu samples (%s of bytes)\n",
           results[0].run.batches, batch,
           format_bytes(batch * FEED_SAMPLE_BYTES, size, sizeof size));
    printf("  %-13s %11s %10s %8s %9s %13s\n", "variant", "ms a batch", "ideal ms", "x ideal",
           "GPU busy", "link a batch");
    for (int i = 0; i < count; i++) {
        const variant_result *r = &results[i];
        printf("  %-13s %11.2f %10.2f %8.2f %8.1f%% %13s\n", feed_variant_names[r->variant],
               loop_ms(r), r->ideal_ms, loop_ms(r) / r->ideal_ms, 100 * r->run.utilisation,
               format_bytes(feed_link_bytes(r->variant, batch), size, sizeof size));
    }
    printf("\n");
    for (int i = 0; i < count; i++) {
        const variant_result *r = &results[i];
        printf("feed: variant=%s batches=%zu seconds=%.4f batches_per_s=%.2f utilisation=%.4f "
               "loop_ms=%.4f ideal_ms=%.4f\n",
               feed_variant_names[r->variant], r->run.batches, r->run.wall_ms / 1e3,
               1e3 / loop_ms(r), r->run.utilisation, loop_ms(r), r->ideal_ms);
    }
}

static void write_csv(const char *dir, const variant_result *results, int count, size_t batch,
                      double step_ms, unsigned loaders)
{
    measure_csv csv;
    FILE *f = measure_csv_create(&csv, dir, "cure.csv",
                                 "the training loop cured one step at a time, each variant over "
                                 "the same batches",
                                 "chapters/ch05-training-loop/03-cure");
    fprintf(f,
            "# unit: milliseconds per batch, utilisation 0 to 1 (the steps' event times over the "
            "loop's wall time); %zu samples a batch, a step of %g ms, %u loaders\n"
            "variant,batches,loop_ms_per_batch,ideal_ms_per_batch,utilisation,"
            "link_bytes_per_batch\n",
            batch, step_ms, loaders);
    for (int i = 0; i < count; i++) {
        const variant_result *r = &results[i];
        fprintf(f, "%s,%zu,%.4f,%.4f,%.4f,%zu\n", feed_variant_names[r->variant], r->run.batches,
                loop_ms(r), r->ideal_ms, r->run.utilisation, feed_link_bytes(r->variant, batch));
    }
    measure_csv_close(&csv);
}

/* --variant's value: a variant's index, or -1 for every variant. */
static int variant_option(const char *name, const char *argv0)
{
    if (name == NULL)
        return -1;
    for (int v = 0; v < FEED_VARIANTS; v++)
        if (strcmp(name, feed_variant_names[v]) == 0)
            return v;
    usage_error(argv0, usage,
                "--variant: '%s' is not one of naive, pinned_async, loader_ring, "
                "compact",
                name);
}

int main(int argc, char **argv)
{
    int batch_count = 0; /* 0: the default */
    const char *variant_name = NULL;
    const option_spec extra[] = {
        {"--variant", OPTION_TEXT, &variant_name, 0, 0},
        {"--batch-count", OPTION_COUNT, &batch_count, 2, FEED_MAX_BATCHES}};
    const feed_options opt = feed_options_parse(argc, argv, usage, FEED_ALL_OPTIONS, extra, 2);
    const int only = variant_option(variant_name, argv[0]);
    gpu_work_require("for the training step (a kernel that keeps the GPU busy, a checksum)");
    const size_t batch = (size_t)opt.batch_samples;
    const unsigned loaders = (unsigned)opt.loaders;

    feed_data data;
    unsigned long long *expected;
    const size_t batches = feed_prepare_batches(&opt, (size_t)batch_count, 100, &data, &expected);

    /* Every variant's buffers, whichever runs: the stages are timed with all of them. */
    feed_rig rig;
    const bool uses[FEED_VARIANTS] = {true, true, true, true};
    feed_rig_create(&rig, batch, batches, loaders, uses);
    double ms[FEED_STAGES];
    feed_measure_stages(&rig, &data, batch, opt.step_ms, 5, ms);

    variant_result results[FEED_VARIANTS];
    int count = 0;
    const char *failure = NULL;
    for (int v = 0; v < FEED_VARIANTS && failure == NULL; v++) {
        if (only >= 0 && v != only)
            continue;
        variant_result *r = &results[count++];
        r->variant = (feed_variant)v;
        r->ideal_ms = variant_ideal(r->variant, ms, loaders);
        feed_run_loop(&rig, r->variant, &data, batch, batches, opt.step_ms, expected, &r->run);
        failure = r->run.failure;
    }
    if (failure == NULL) {
        print_results(results, count, batch);
        if (opt.csv_dir != NULL)
            write_csv(opt.csv_dir, results, count, batch, opt.step_ms, loaders);
    }

    feed_rig_destroy(&rig);
    free(expected);
    feed_data_close(&data);
    return verdict(failure);
}

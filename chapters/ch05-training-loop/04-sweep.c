/* 04-sweep.c - utilisation from copy-bound to compute-bound: the naive loop, the loader ring and
 * the compact loop for several step times and batch sizes, each beside its ideal.
 *
 * For each batch size (--batches) and step time (--steps), the stages of a batch are timed alone
 * (medians of 3, as 02-where-time-goes times them), then the three loops run on the same
 * batches. The ideal is the longest stage with the host's work spread over the loaders: with the
 * host converting, max(step, pinned copy, (read + convert) / loaders), which is also what the
 * naive loop could reach once cured; with the GPU converting, the compact loop's, max(step +
 * GPU conversion, copy of the bytes, read / loaders). A short step on a large batch is the hard
 * case: the same bytes must arrive in less time.
 *
 *     04-sweep [--data FILE] [--data-size SIZE] [--loaders N] [--csv DIR] [--steps LIST]
 *              [--batches LIST] [--batch-count N]
 *
 * Its verdict is on the batches of every loop (each checksum on the GPU equal to the host's of
 * the same samples); the times are printed, not judged.
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
    " [--loaders N] [--csv DIR] [--steps LIST] [--batches LIST]\n"
    "       [--batch-count N]\n" FEED_WORDS_DATA
    "       --loaders      threads that read and convert ahead, 1 to 64 (default 4)\n"
    "       --csv          also write DIR/sweep.csv\n"
    "       --steps        the training step's milliseconds, a comma-separated list of up to 8,\n"
    "                      each 0 to 1000, in place of the other programs' --step-ms\n"
    "                      (default 1,4,16; make measure uses 0.5,1,2,4,8,16)\n"
    "       --batches      samples a batch, a comma-separated list of up to 8, each 1 to 1024\n"
    "                      (default 16,64,256)\n"
    "       --batch-count  batches each loop runs, 2 to 10000 (default 8; make measure uses 24)";

#define MAX_LIST 8

static const feed_variant swept[] = {FEED_NAIVE, FEED_LOADER_RING, FEED_COMPACT};
#define SWEPT_VARIANTS (sizeof swept / sizeof swept[0])

/* A comma-separated list of at most MAX_LIST numbers, each read by `one` (which exits with a
 * usage error naming `option` when it cannot): how many. */
static int parse_list(const char *text, const char *option, const char *argv0, double *values,
                      double (*one)(const char *, const char *, const char *))
{
    char copy[256];
    if (strlen(text) >= sizeof copy)
        usage_error(argv0, usage, "%s: '%s' is too long", option, text);
    strcpy(copy, text);
    int count = 0;
    for (char *word = strtok(copy, ","); word != NULL; word = strtok(NULL, ",")) {
        if (count == MAX_LIST)
            usage_error(argv0, usage, "%s: at most %d values", option, MAX_LIST);
        values[count++] = one(word, option, argv0);
    }
    if (count == 0)
        usage_error(argv0, usage, "%s: give at least one value", option);
    return count;
}

static double step_value(const char *word, const char *option, const char *argv0)
{
    return feed_parse_ms(word, option, argv0, usage);
}

static double batch_value(const char *word, const char *option, const char *argv0)
{
    char *end = NULL;
    const long samples = strtol(word, &end, 10);
    if (end == word || *end != '\0' || samples < 1 || samples > FEED_MAX_BATCH)
        usage_error(argv0, usage, "%s: '%s' is not a number of samples from 1 to %d", option, word,
                    FEED_MAX_BATCH);
    return (double)samples;
}

typedef struct sweep_plan {
    double steps[MAX_LIST], sizes[MAX_LIST];
    int step_count, size_count;
    size_t batches, largest;
    unsigned loaders;
} sweep_plan;

/* One row of the sweep, printed and kept for the CSV. */
typedef struct sweep_row {
    feed_variant variant;
    size_t batch_samples;
    double step_ms, loop_ms, ideal_ms, utilisation, ideal_utilisation;
} sweep_row;

/* The three loops on batches of `samples` with a step of step_ms; false, with *failure set, when
 * one's batches arrived wrong. */
static bool sweep_point(feed_rig *rig, const feed_data *data, const sweep_plan *plan,
                        host_pool *pool, size_t samples, double step_ms, sweep_row *rows,
                        const char **failure)
{
    static char failure_text[200];
    unsigned long long *expected = feed_expected_sums(data, samples, plan->batches, pool);
    double ms[FEED_STAGES];
    feed_measure_stages(rig, data, samples, step_ms, 3, ms);
    for (size_t v = 0; v < SWEPT_VARIANTS; v++) {
        const feed_variant variant = swept[v];
        feed_run run;
        feed_run_loop(rig, variant, data, samples, plan->batches, step_ms, expected, &run);
        if (run.failure != NULL) {
            snprintf(failure_text, sizeof failure_text, "%s", run.failure);
            *failure = failure_text;
            free(expected);
            return false;
        }
        const double ideal = feed_ideal_ms(
            variant == FEED_COMPACT ? FEED_COMPACT : FEED_LOADER_RING, ms, plan->loaders);
        const double step = ms[STAGE_STEP] < ideal ? ms[STAGE_STEP] : ideal;
        rows[v] = (sweep_row){variant,
                              samples,
                              step_ms,
                              run.wall_ms / (double)run.batches,
                              ideal,
                              run.utilisation,
                              ideal > 0 ? step / ideal : 1};
    }
    free(expected);
    return true;
}

static void print_row(const sweep_row *r)
{
    printf("  %7zu %8g  %-12s %10.2f %10.2f %8.1f%% %8.1f%%\n", r->batch_samples, r->step_ms,
           feed_variant_names[r->variant], r->loop_ms, r->ideal_ms, 100 * r->utilisation,
           100 * r->ideal_utilisation);
}

static void write_csv(const char *dir, const sweep_row *rows, size_t count, const sweep_plan *plan)
{
    measure_csv csv;
    FILE *f = measure_csv_create(&csv, dir, "sweep.csv",
                                 "utilisation against the step time and the batch size, for three "
                                 "variants",
                                 "chapters/ch05-training-loop/04-sweep");
    fprintf(f,
            "# unit: milliseconds per batch, utilisation 0 to 1; %zu batches a loop, %u loaders; "
            "ideal_utilisation: the step over the ideal, at most 1\n"
            "variant,batch_samples,step_ms,loop_ms_per_batch,ideal_ms_per_batch,utilisation,"
            "ideal_utilisation\n",
            plan->batches, plan->loaders);
    /* Variant by variant, so that each plots as its own lines. */
    for (size_t v = 0; v < SWEPT_VARIANTS; v++)
        for (size_t i = v; i < count; i += SWEPT_VARIANTS) {
            const sweep_row *r = &rows[i];
            fprintf(f, "%s,%zu,%g,%.4f,%.4f,%.4f,%.4f\n", feed_variant_names[r->variant],
                    r->batch_samples, r->step_ms, r->loop_ms, r->ideal_ms, r->utilisation,
                    r->ideal_utilisation);
        }
    measure_csv_close(&csv);
}

static sweep_plan plan_from_options(int argc, char **argv, feed_options *opt)
{
    const char *steps = "1,4,16", *sizes = "16,64,256";
    int batch_count = 8;
    const option_spec extra[] = {
        {"--steps", OPTION_TEXT, &steps, 0, 0},
        {"--batches", OPTION_TEXT, &sizes, 0, 0},
        {"--batch-count", OPTION_COUNT, &batch_count, 2, FEED_MAX_BATCHES}};
    /* It sweeps the batch sizes and the step times (--batches, --steps): the one size and step
     * of the other chapter 5 programs are not its options. */
    *opt =
        feed_options_parse(argc, argv, usage, FEED_WITHOUT_BATCH | FEED_WITHOUT_STEP_MS, extra, 3);
    sweep_plan plan = {.batches = (size_t)batch_count, .loaders = (unsigned)opt->loaders};
    plan.step_count = parse_list(steps, "--steps", argv[0], plan.steps, step_value);
    plan.size_count = parse_list(sizes, "--batches", argv[0], plan.sizes, batch_value);
    for (int i = 0; i < plan.size_count; i++)
        if ((size_t)plan.sizes[i] > plan.largest)
            plan.largest = (size_t)plan.sizes[i];
    if (opt->data_bytes / FEED_SAMPLE_BYTES < plan.largest)
        usage_error(argv[0], usage, "--data-size: fewer samples than the largest batch, %zu",
                    plan.largest);
    return plan;
}

int main(int argc, char **argv)
{
    feed_options opt;
    const sweep_plan plan = plan_from_options(argc, argv, &opt);
    gpu_work_require("for the training step (a kernel that keeps the GPU busy, a checksum)");

    host_pool *pool = feed_pool_create();
    feed_data data;
    feed_data_open(&data, opt.data_path, opt.data_bytes, pool);
    feed_data_warm(&data, plan.batches * plan.largest, pool);

    feed_rig rig;
    const bool uses[FEED_VARIANTS] = {true, true, true, true}; /* the stages are timed with all */
    feed_rig_create(&rig, plan.largest, plan.batches, plan.loaders, uses);
    const size_t points = (size_t)plan.size_count * (size_t)plan.step_count;
    sweep_row *rows = host_alloc(points * SWEPT_VARIANTS * sizeof *rows);
    printf("Utilisation against the step and the batch: %zu batches a loop, %u loaders\n",
           plan.batches, plan.loaders);
    printf("  %7s %8s  %-12s %10s %10s %9s %9s\n", "samples", "step ms", "variant", "ms a batch",
           "ideal ms", "GPU busy", "ideal");
    const char *failure = NULL;
    size_t count = 0;
    for (int s = 0; s < plan.size_count && failure == NULL; s++)
        for (int t = 0; t < plan.step_count && failure == NULL; t++) {
            if (!sweep_point(&rig, &data, &plan, pool, (size_t)plan.sizes[s], plan.steps[t],
                             &rows[count], &failure))
                break;
            for (size_t v = 0; v < SWEPT_VARIANTS; v++)
                print_row(&rows[count + v]);
            count += SWEPT_VARIANTS;
        }
    if (failure == NULL && opt.csv_dir != NULL)
        write_csv(opt.csv_dir, rows, count, &plan);

    free(rows);
    host_pool_destroy(pool);
    feed_rig_destroy(&rig);
    feed_data_close(&data);
    return verdict(failure);
}

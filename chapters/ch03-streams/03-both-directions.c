/* 03-both-directions.c - copies to the device and to the host at the same time, on two streams.
 *
 * A PCIe link carries data both ways at once, and a GPU has copy engines for each direction,
 * so a copy up and a copy down queued on two streams can run together. For each size it
 * measures, from pinned memory, with events:
 *
 *   alone     one copy host to device, then one device to host, each on its own;
 *   together  ROUNDS copies each way, the two streams released at the same instant by an
 *             event: the total (every byte moved either way, over the time from the release
 *             to the last copy's end), and each direction's own rate while the other runs
 *             (its middle copy, which the other direction's copies surround), the figure
 *             nvbandwidth's bidirectional tests report for the direction they time.
 *
 * The sum of the two "while the other runs" rates is comparable to nvbandwidth's two
 * bidirectional figures added; the total is what a program that moves data both ways gets.
 * Both are less than twice one way: the link's other direction also carries the requests and
 * acknowledgements of each copy (see the book).
 *
 *     03-both-directions [--sizes LIST] [--reps N] [--csv DIR]
 *
 * --csv writes DIR/bidirectional.csv (`make measure`). Its last line is "PASSED" when the
 * copies of the largest size delivered their data both ways, or "FAILED: why".
 */
#include "chapter.h"
#include "measure_csv.h"
#include "cuda_check.h"
#include "gpu_work.h"
#include "timing.h"
#include "units.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SIZES 16
#define MAX_REPS 100
#define ROUNDS 3    /* copies each way in the "together" run; the middle one is timed */
#define GATE_MS 2.0 /* time for the host to queue both streams' copies before they go */
#define POISON 0xFF

static const char usage[] =
    "[--sizes LIST] [--reps N] [--csv DIR]\n"
    "       --sizes  comma-separated copy sizes, K/M/G = 1024/1024^2/1024^3 (default 64M;\n"
    "                make measure uses 4M,16M,64M,256M,1G)\n"
    "       --reps   measurements per size and case; the median is reported (default 5)\n"
    "       --csv    also write bidirectional.csv into DIR";

typedef struct options {
    size_t sizes[MAX_SIZES];
    int size_count, reps;
    const char *csv_dir;
} options;

static options parse_options(int argc, char **argv)
{
    options opt = {.sizes = {(size_t)64 << 20}, .size_count = 1, .reps = 5};
    const char *sizes = NULL;
    const option_spec specs[] = {
        {"--sizes", OPTION_TEXT, &sizes, 0, 0},
        {"--reps", OPTION_COUNT, &opt.reps, 1, MAX_REPS},
        {"--csv", OPTION_TEXT, &opt.csv_dir, 0, 0},
    };
    options_parse(argc, argv, usage, specs, sizeof specs / sizeof specs[0]);
    if (sizes != NULL) {
        char list[1024];
        snprintf(list, sizeof list, "%s", sizes);
        opt.size_count = 0;
        for (char *item = strtok(list, ","); item != NULL; item = strtok(NULL, ",")) {
            if (opt.size_count == MAX_SIZES)
                usage_error(argv[0], usage, "--sizes: at most %d sizes", MAX_SIZES);
            if (!parse_size(item, &opt.sizes[opt.size_count++]))
                usage_error(argv[0], usage, "--sizes: '%s' is not a size (e.g. 64M,1G)", item);
        }
        if (opt.size_count == 0)
            usage_error(argv[0], usage, "--sizes: no size given");
    }
    return opt;
}

typedef struct rig {
    unsigned char *h_up, *h_down; /* pinned: the source up, the destination down */
    unsigned char *d_up, *d_down; /* the destination up, the source down */
    cudaStream_t up, down, gate;
    cudaEvent_t go, up_marks[ROUNDS + 1], down_marks[ROUNDS + 1];
} rig;

typedef struct figures {
    double h2d_alone, d2h_alone; /* GB/s */
    double h2d_loaded, d2h_loaded, total;
} figures;

static double elapsed_ms(cudaEvent_t from, cudaEvent_t to)
{
    float ms;
    CUDA_CHECK(cudaEventElapsedTime(&ms, from, to));
    return ms;
}

/* One copy alone on its stream, timed by the first two marks of that stream. */
static double alone_gb_per_s(rig *r, size_t bytes, bool to_device)
{
    cudaStream_t stream = to_device ? r->up : r->down;
    cudaEvent_t *marks = to_device ? r->up_marks : r->down_marks;
    CUDA_CHECK(cudaEventRecord(marks[0], stream));
    if (to_device)
        CUDA_CHECK(cudaMemcpyAsync(r->d_up, r->h_up, bytes, cudaMemcpyHostToDevice, stream));
    else
        CUDA_CHECK(cudaMemcpyAsync(r->h_down, r->d_down, bytes, cudaMemcpyDeviceToHost, stream));
    CUDA_CHECK(cudaEventRecord(marks[1], stream));
    CUDA_CHECK(cudaEventSynchronize(marks[1]));
    return bandwidth_gb_per_s(bytes, elapsed_ms(marks[0], marks[1]));
}

/* listing: together */
/* ROUNDS copies each way, both streams held at the gate until everything is queued. */
static void together(rig *r, size_t bytes, figures *f)
{
    CUDA_CHECK(gpu_work_keep_busy(r->gate, GATE_MS));
    CUDA_CHECK(cudaEventRecord(r->go, r->gate));
    CUDA_CHECK(cudaStreamWaitEvent(r->up, r->go, 0)); /* neither starts before the gate opens */
    CUDA_CHECK(cudaStreamWaitEvent(r->down, r->go, 0));
    CUDA_CHECK(cudaEventRecord(r->up_marks[0], r->up));
    CUDA_CHECK(cudaEventRecord(r->down_marks[0], r->down));
    for (int i = 1; i <= ROUNDS; i++) {
        CUDA_CHECK(cudaMemcpyAsync(r->d_up, r->h_up, bytes, cudaMemcpyHostToDevice, r->up));
        CUDA_CHECK(cudaEventRecord(r->up_marks[i], r->up));
        CUDA_CHECK(cudaMemcpyAsync(r->h_down, r->d_down, bytes, cudaMemcpyDeviceToHost, r->down));
        CUDA_CHECK(cudaEventRecord(r->down_marks[i], r->down));
    }
    CUDA_CHECK(cudaEventSynchronize(r->up_marks[ROUNDS]));
    CUDA_CHECK(cudaEventSynchronize(r->down_marks[ROUNDS]));

    double up_end = elapsed_ms(r->go, r->up_marks[ROUNDS]);
    double down_end = elapsed_ms(r->go, r->down_marks[ROUNDS]);
    double span = up_end > down_end ? up_end : down_end;
    f->total = bandwidth_gb_per_s(2 * ROUNDS * bytes, span);
    int middle = ROUNDS / 2; /* copy middle+1, between marks middle and middle + 1 */
    f->h2d_loaded =
        bandwidth_gb_per_s(bytes, elapsed_ms(r->up_marks[middle], r->up_marks[middle + 1]));
    f->d2h_loaded =
        bandwidth_gb_per_s(bytes, elapsed_ms(r->down_marks[middle], r->down_marks[middle + 1]));
}
/* end listing: together */

/* The median over reps of each figure. */
static figures measure(rig *r, size_t bytes, int reps)
{
    double *samples[5];
    for (int k = 0; k < 5; k++)
        samples[k] = host_alloc((size_t)reps * sizeof(double));
    for (int i = 0; i < reps; i++) {
        figures f;
        f.h2d_alone = alone_gb_per_s(r, bytes, true);
        f.d2h_alone = alone_gb_per_s(r, bytes, false);
        together(r, bytes, &f);
        double values[5] = {f.h2d_alone, f.d2h_alone, f.h2d_loaded, f.d2h_loaded, f.total};
        for (int k = 0; k < 5; k++)
            samples[k][i] = values[k];
    }
    double medians[5];
    for (int k = 0; k < 5; k++) {
        medians[k] = median_of(samples[k], (size_t)reps);
        free(samples[k]);
    }
    return (figures){medians[0], medians[1], medians[2], medians[3], medians[4]};
}

/* The table: each size one way alone, then both ways at once, into results; and what the
 * largest size shows. */
static void compare_directions(rig *r, const options *opt, figures results[MAX_SIZES])
{
    char size[32];
    printf("Copies from pinned memory, one way and both ways at once; GB/s, median of %d\n",
           opt->reps);
    printf("  %10s %9s %9s  %9s %9s %9s  %9s\n", "size", "H2D", "D2H", "H2D", "D2H", "sum",
           "total");
    printf("  %10s %19s  %29s  %9s\n", "", "(alone)", "(each while the other runs)", "(both)");
    for (int s = 0; s < opt->size_count; s++) {
        size_t bytes = opt->sizes[s];
        (void)alone_gb_per_s(r, bytes, true); /* warm-up, untimed */
        (void)alone_gb_per_s(r, bytes, false);
        figures f = results[s] = measure(r, bytes, opt->reps);
        printf("  %10s %9.1f %9.1f  %9.1f %9.1f %9.1f  %9.1f\n",
               format_bytes(bytes, size, sizeof size), f.h2d_alone, f.d2h_alone, f.h2d_loaded,
               f.d2h_loaded, f.h2d_loaded + f.d2h_loaded, f.total);
    }
    figures last = results[opt->size_count - 1];
    double one_way = last.h2d_alone > last.d2h_alone ? last.h2d_alone : last.d2h_alone;
    printf("\nBoth directions together moved %.1f GB/s, %.2f times the faster direction alone\n"
           "(%.1f GB/s), not 2: each direction slowed to %.1f and %.1f GB/s while the other ran.\n"
           "nvbandwidth's bidirectional tests report such a figure, one direction while the\n"
           "other runs; add its two to compare with the total here.\n",
           last.total, one_way > 0 ? last.total / one_way : 0, one_way, last.h2d_loaded,
           last.d2h_loaded);
}

/* bidirectional.csv in opt->csv_dir, from the table's figures. */
static void write_measurements(const options *opt, const figures results[MAX_SIZES])
{
    measure_csv csv;
    measure_csv_create(&csv, opt->csv_dir, "bidirectional.csv",
                       "copies one way and both ways at once, pinned memory, two streams",
                       "chapters/ch03-streams/03-both-directions");
    fprintf(csv.file,
            "# unit: GB/s (10^9 bytes per second), median of %d; *_loaded: that direction's "
            "copy while the other direction runs; total_both: every byte moved either way "
            "over the time both took, %d copies each way\n"
            "bytes,h2d_alone,d2h_alone,h2d_loaded,d2h_loaded,total_both\n",
            opt->reps, ROUNDS);
    for (int s = 0; s < opt->size_count; s++)
        fprintf(csv.file, "%zu,%.2f,%.2f,%.2f,%.2f,%.2f\n", opt->sizes[s], results[s].h2d_alone,
                results[s].d2h_alone, results[s].h2d_loaded, results[s].d2h_loaded,
                results[s].total);
    measure_csv_close(&csv);
}

int main(int argc, char **argv)
{
    options opt = parse_options(argc, argv);
    size_t largest = 0;
    for (int s = 0; s < opt.size_count; s++)
        largest = opt.sizes[s] > largest ? opt.sizes[s] : largest;
    char size[32];

    rig r;
    unsigned char *h_expected_down = host_alloc(largest);
    fill_pattern(h_expected_down, largest);
    for (size_t i = 0; i < largest; i++) /* another pattern than the one going up */
        h_expected_down[i] = (unsigned char)~h_expected_down[i];
    CUDA_CHECK(cudaMallocHost((void **)&r.h_up, largest));
    CUDA_CHECK(cudaMallocHost((void **)&r.h_down, largest));
    CUDA_CHECK(cudaMalloc((void **)&r.d_up, largest));
    CUDA_CHECK(cudaMalloc((void **)&r.d_down, largest));
    fill_pattern(r.h_up, largest);
    CUDA_CHECK(cudaMemcpy(r.d_down, h_expected_down, largest, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaStreamCreateWithFlags(&r.up, cudaStreamNonBlocking));
    CUDA_CHECK(cudaStreamCreateWithFlags(&r.down, cudaStreamNonBlocking));
    CUDA_CHECK(cudaStreamCreateWithFlags(&r.gate, cudaStreamNonBlocking));
    CUDA_CHECK(cudaEventCreate(&r.go));
    for (int i = 0; i <= ROUNDS; i++) {
        CUDA_CHECK(cudaEventCreate(&r.up_marks[i]));
        CUDA_CHECK(cudaEventCreate(&r.down_marks[i]));
    }
    gpu_work_require("to release both streams at the same instant");
    CUDA_CHECK(gpu_work_keep_busy(r.gate, 0)); /* loads the kernel, untimed */

    figures results[MAX_SIZES];
    compare_directions(&r, &opt, results);

    /* Both ways once more, into poisoned destinations, and everything checked. */
    memset(r.h_down, POISON, largest);
    CUDA_CHECK(cudaMemset(r.d_up, POISON, largest));
    CUDA_CHECK(cudaDeviceSynchronize()); /* the streams are non-blocking: they would not wait */
    figures ignored;
    together(&r, largest, &ignored);
    const char *failure = NULL;
    if (memcmp(r.h_down, h_expected_down, largest) != 0)
        failure = "the copies to the host did not deliver the device's data";
    CUDA_CHECK(cudaMemcpy(r.h_down, r.d_up, largest, cudaMemcpyDeviceToHost));
    if (failure == NULL && memcmp(r.h_down, r.h_up, largest) != 0)
        failure = "the copies to the device did not deliver the host's data";
    if (failure == NULL)
        printf("verified: %s copied both ways at once arrived intact each way\n",
               format_bytes(largest, size, sizeof size));

    if (failure == NULL && opt.csv_dir != NULL)
        write_measurements(&opt, results);

    for (int i = 0; i <= ROUNDS; i++) {
        CUDA_CHECK(cudaEventDestroy(r.up_marks[i]));
        CUDA_CHECK(cudaEventDestroy(r.down_marks[i]));
    }
    CUDA_CHECK(cudaEventDestroy(r.go));
    CUDA_CHECK(cudaStreamDestroy(r.gate));
    CUDA_CHECK(cudaStreamDestroy(r.down));
    CUDA_CHECK(cudaStreamDestroy(r.up));
    CUDA_CHECK(cudaFree(r.d_down));
    CUDA_CHECK(cudaFree(r.d_up));
    CUDA_CHECK(cudaFreeHost(r.h_down));
    CUDA_CHECK(cudaFreeHost(r.h_up));
    free(h_expected_down);
    return verdict(failure);
}

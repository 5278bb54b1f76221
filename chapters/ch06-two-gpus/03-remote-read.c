/* 03-remote-read.c - a kernel on GPU 1 reading GPU 0's memory directly, against copying first.
 *
 * With peer access enabled, a kernel may dereference a pointer from cudaMalloc on the other
 * GPU (unified addressing makes it one address space): each of its loads crosses the link. The
 * program runs the course's kernel y = a * x + b (gpu_work_scale_add) on GPU 1 three ways, x
 * being --size bytes of floats that live on GPU 0, y in GPU 1's memory, each timed by CUDA
 * events on GPU 1's stream (median of --reps runs):
 *
 *   direct      the kernel reads x from GPU 0's memory, over the link, and writes y locally;
 *   copy first  cudaMemcpyPeerAsync of x to GPU 1, then the kernel on the local copy: the copy,
 *               the kernel and the two together, timed apart by three events;
 *   local       the kernel on a copy of x already in GPU 1's memory: the baseline.
 *
 *     03-remote-read [--size SIZE] [--reps N] [--csv DIR]
 *
 * A kernel that reads its input once, as this one does, streams it over the link, and direct
 * may cost little more than the copy alone; one that read it many times would pay the link
 * each time, and should copy first.
 *
 * Where the two GPUs cannot have peer access (cudaDeviceCanAccessPeer), a kernel cannot reach
 * the other GPU's memory at all: the program says so and measures the other two ways. It needs
 * two GPUs or more (it uses 0 and 1); with fewer it says so and exits 77 (skipped). Every way's
 * y is checked on the host against fmaf(a, x, b), bit for bit, into a y poisoned before it;
 * its last line is "PASSED" or "FAILED: which way".
 */
#include "chapter.h"
#include "cuda_check.h"
#include "gpu_work.h"
#include "measure_csv.h"
#include "peer.h"
#include "timing.h"
#include "units.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_REPS 100

static const char usage[] =
    "[--size SIZE] [--reps N] [--csv DIR]\n"
    "       --size  bytes of input floats on GPU 0, K/M/G = 1024/1024^2/1024^3 (default 256M;\n"
    "               make measure passes 1G)\n"
    "       --reps  timed runs per way; the median is reported (default 5)\n"
    "       --csv   also write remote_read.csv into DIR";

static const float A = 0.5f, B = 3.0f;

/* The figures, in the order of the table and the CSV's columns, in milliseconds. */
enum figure { DIRECT, COPY, COPY_KERNEL, COPY_TOTAL, LOCAL, FIGURES };
static const char *const figure_columns[FIGURES] = {"direct_ms", "copy_ms", "copy_kernel_ms",
                                                    "copy_total_ms", "local_ms"};
static const char *const figure_words[FIGURES] = {
    "direct: the kernel reads GPU 0's memory over the link",
    "copy first: cudaMemcpyPeerAsync to GPU 1", "copy first: then the kernel on the local copy",
    "copy first: the two together", "local: the kernel on GPU 1's own memory (baseline)"};

/* What the program works on: x on GPU 0 (p->d_source[0]), its copy on GPU 1
 * (p->d_received[1]), y on GPU 1, and the event between the copy and the kernel. */
typedef struct remote_read {
    gpu_pair p;
    size_t n;
    float *d_y;         /* on GPU 1 */
    float *h_expected;  /* fmaf(A, x, B) */
    float *h_y;         /* y read back */
    cudaEvent_t copied; /* on GPU 1's stream, after the copy */
} remote_read;

static void remote_read_create(remote_read *r, size_t bytes)
{
    r->n = bytes / sizeof(float);
    gpu_pair_create(&r->p, 0, 1, r->n * sizeof(float));
    float *h_x = host_alloc(r->n * sizeof(float));
    r->h_expected = host_alloc(r->n * sizeof(float));
    r->h_y = host_alloc(r->n * sizeof(float));
    for (size_t i = 0; i < r->n; i++) {
        h_x[i] = (float)(i % 16777213) / 4.0f; /* exact in a float, no short period */
        r->h_expected[i] = fmaf(A, h_x[i], B);
    }
    gpu_pair_fill_floats(&r->p, 0, h_x, r->n);
    free(h_x);
    CUDA_CHECK(cudaSetDevice(r->p.gpu[1]));
    CUDA_CHECK(cudaMalloc((void **)&r->d_y, r->n * sizeof(float)));
    CUDA_CHECK(cudaEventCreate(&r->copied));
}

static void remote_read_destroy(remote_read *r)
{
    CUDA_CHECK(cudaSetDevice(r->p.gpu[1]));
    CUDA_CHECK(cudaEventDestroy(r->copied));
    CUDA_CHECK(cudaFree(r->d_y));
    free(r->h_expected);
    free(r->h_y);
    gpu_pair_destroy(&r->p);
}

/* Fills y with 0xFF bytes (a NaN, which fmaf of these inputs never gives) and waits. */
static void poison_y(remote_read *r)
{
    CUDA_CHECK(cudaSetDevice(r->p.gpu[1]));
    CUDA_CHECK(cudaMemset(r->d_y, 0xFF, r->n * sizeof(float)));
    CUDA_CHECK(cudaDeviceSynchronize());
}

/* Whether y holds fmaf(A, x, B), bit for bit. */
static bool y_is_right(remote_read *r)
{
    CUDA_CHECK(cudaSetDevice(r->p.gpu[1]));
    CUDA_CHECK(cudaMemcpy(r->h_y, r->d_y, r->n * sizeof(float), cudaMemcpyDeviceToHost));
    return memcmp(r->h_y, r->h_expected, r->n * sizeof(float)) == 0;
}

/* listing: remote-read */
/* One run of the kernel on GPU 1, y = A * x + B, reading x at d_x: GPU 0's memory for the
 * direct way (a plain cudaMalloc pointer of GPU 0, which GPU 1 may dereference once it has
 * peer access), GPU 1's own for the local one. Timed by GPU 1's events. Returns milliseconds. */
static double kernel_ms(remote_read *r, const float *d_x)
{
    gpu_pair *p = &r->p;
    cudaStream_t stream = p->stream[1];
    float ms;
    CUDA_CHECK(cudaSetDevice(p->gpu[1])); /* the kernel runs on the current device */
    CUDA_CHECK(event_timer_start(&p->timer[1], stream));
    CUDA_CHECK(gpu_work_scale_add(stream, r->d_y, d_x, r->n, A, B));
    CUDA_CHECK(event_timer_stop(&p->timer[1], stream, &ms));
    return ms;
}

/* One run of the copy first: x from GPU 0 into GPU 1's memory, then the kernel on that copy,
 * both on GPU 1's stream, which orders them; the event between them splits the time. */
static void copy_then_kernel_ms(remote_read *r, double *copy_ms, double *kernel_ms,
                                double *total_ms)
{
    gpu_pair *p = &r->p;
    cudaStream_t stream = p->stream[1];
    float *d_local = (float *)p->d_received[1];
    CUDA_CHECK(cudaSetDevice(p->gpu[1]));
    CUDA_CHECK(cudaEventRecord(p->timer[1].start, stream));
    CUDA_CHECK(cudaMemcpyPeerAsync(d_local, p->gpu[1], p->d_source[0], p->gpu[0],
                                   r->n * sizeof(float), stream));
    CUDA_CHECK(cudaEventRecord(r->copied, stream));
    CUDA_CHECK(gpu_work_scale_add(stream, r->d_y, d_local, r->n, A, B));
    CUDA_CHECK(cudaEventRecord(p->timer[1].stop, stream));
    CUDA_CHECK(cudaEventSynchronize(p->timer[1].stop));
    float copy, kernel, total;
    CUDA_CHECK(cudaEventElapsedTime(&copy, p->timer[1].start, r->copied));
    CUDA_CHECK(cudaEventElapsedTime(&kernel, r->copied, p->timer[1].stop));
    CUDA_CHECK(cudaEventElapsedTime(&total, p->timer[1].start, p->timer[1].stop));
    *copy_ms = copy, *kernel_ms = kernel, *total_ms = total;
}
/* end listing: remote-read */

/* What a run of the kernel alone needs: peer_medians' context. */
typedef struct kernel_run {
    remote_read *r;
    const float *d_x;
} kernel_run;

static void run_kernel(void *context, double *ms)
{
    const kernel_run *run = context;
    *ms = kernel_ms(run->r, run->d_x);
}

/* One run of the copy first, its three figures in ms. */
static void run_copy_first(void *context, double *ms)
{
    copy_then_kernel_ms(context, &ms[0], &ms[1], &ms[2]);
}

/* Every way possible, each into a poisoned y checked after its runs; the first wrong way, or
 * NULL. ms[DIRECT] is NAN where the pair cannot have peer access. */
static const char *measure_ways(remote_read *r, int reps, double ms[FIGURES], bool *peer_possible)
{
    gpu_pair *p = &r->p;
    const char *failure = NULL;
    *peer_possible = gpu_pair_peer_access(p, true);
    ms[DIRECT] = NAN;
    if (*peer_possible) {
        poison_y(r);
        peer_medians(run_kernel, &(kernel_run){r, (const float *)p->d_source[0]}, reps, 1,
                     &ms[DIRECT]);
        verdict_require(y_is_right(r), "the kernel reading GPU 0's memory got a wrong y", &failure);
    }

    poison_y(r);
    gpu_pair_poison(p, 1);
    peer_medians(run_copy_first, r, reps, 3, &ms[COPY]);
    verdict_require(gpu_pair_arrived(p, 1, r->n * sizeof(float)),
                    "the copy first did not deliver GPU 0's floats", &failure);
    verdict_require(y_is_right(r), "the kernel after the copy got a wrong y", &failure);

    poison_y(r); /* x is on GPU 1 now, from the copy first */
    peer_medians(run_kernel, &(kernel_run){r, (const float *)p->d_received[1]}, reps, 1,
                 &ms[LOCAL]);
    verdict_require(y_is_right(r), "the kernel on GPU 1's own memory got a wrong y", &failure);
    return failure;
}

static void write_csv(const peer_options *opt, size_t bytes, const double ms[FIGURES],
                      bool peer_possible)
{
    measure_csv csv;
    FILE *f = gpu_pair_csv_create(&csv, 0, 1, peer_possible, opt->csv_dir, "remote_read.csv",
                                  "a kernel on GPU 1 reading GPU 0's memory, against copying first",
                                  "chapters/ch06-two-gpus/03-remote-read");
    fprintf(f,
            "# unit: ms, median of %d, by GPU 1's events; direct_ms is empty where the GPUs "
            "cannot have peer access\n"
            "bytes,peer_access_possible",
            opt->reps);
    for (int k = 0; k < FIGURES; k++)
        fprintf(f, ",%s", figure_columns[k]);
    fprintf(f, "\n%zu,%d", bytes, peer_possible);
    for (int k = 0; k < FIGURES; k++) {
        if (isnan(ms[k]))
            fprintf(f, ",");
        else
            fprintf(f, ",%.4f", ms[k]);
    }
    fprintf(f, "\n");
    measure_csv_close(&csv);
}

int main(int argc, char **argv)
{
    peer_options opt = {.bytes = (size_t)256 << 20, .reps = 5};
    peer_options_parse(argc, argv, usage, &opt, sizeof(float), MAX_REPS);
    gpu_work_require("the kernel that reads the input");

    device_info first, second;
    CUDA_CHECK(device_info_query(0, &first));
    CUDA_CHECK(device_info_query(1, &second));
    remote_read r;
    remote_read_create(&r, opt.bytes);
    const size_t bytes = r.n * sizeof(float);
    char link[64], size[32];
    printf("y = a * x + b on GPU 1 (%s, %s), x on GPU 0 (%s, %s), linked by %s: %s of x, "
           "median of %d\n\n",
           second.name, second.pci_bus_id, first.name, first.pci_bus_id,
           gpu_pair_link_words(0, 1, link, sizeof link), format_bytes(bytes, size, sizeof size),
           opt.reps);

    double ms[FIGURES];
    bool peer_possible;
    const char *failure = measure_ways(&r, opt.reps, ms, &peer_possible);
    for (int k = 0; k < FIGURES; k++) {
        if (isnan(ms[k]))
            printf("  %-58s  impossible\n", figure_words[k]);
        else
            printf("  %-58s %9.3f ms %8.1f GB/s of x\n", figure_words[k], ms[k],
                   bandwidth_gb_per_s(bytes, ms[k]));
    }
    if (!peer_possible)
        printf("\nThese GPUs cannot have peer access (cudaDeviceCanAccessPeer): a kernel on GPU 1 "
               "cannot read GPU 0's memory, and the copy was staged through host memory.\n");
    remote_read_destroy(&r);
    if (failure == NULL && opt.csv_dir != NULL) /* figures from a wrong y are no figures */
        write_csv(&opt, bytes, ms, peer_possible);
    return verdict(failure);
}

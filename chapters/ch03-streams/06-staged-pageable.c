/* 06-staged-pageable.c - a copy from pageable memory faster than cudaMemcpy: stage it yourself.
 *
 * cudaMemcpy from pageable memory is slow because one CPU thread copies the data through the
 * driver's small pinned staging buffers, one piece after the other (chapter 1). This program
 * does the staging itself, better: a ring of B pinned buffers of C bytes each, a persistent
 * pool of T host threads that copy the pageable data into a free buffer together, and
 * cudaMemcpyAsync sending each filled buffer to the device while the threads fill the next.
 * The GPU's copy and the CPU's copies overlap, and T threads copy faster than one. Device to
 * host is the same in reverse: the GPU fills the buffers, the threads empty them.
 *
 * For each direction and each combination of threads, buffers and chunk size asked for, it
 * times the whole copy with the host clock, the pool against threads created for each chunk
 * (the same work, plus thread creation every time), and prints them against plain pageable
 * cudaMemcpy and pinned cudaMemcpy of the same size, measured in the same run.
 *
 *     06-staged-pageable [--size SIZE] [--threads LIST] [--buffers LIST] [--chunks LIST]
 *                        [--reps N] [--sweep] [--csv DIR]
 *
 * --sweep: 1 GiB, threads 1,2,4,8,12,16, buffers 1,2,3,4, chunks 4M,16M,64M (a few minutes on
 * an H200); a size or a list given beside it replaces its own. --csv writes DIR/staged_h2d.csv and
 * DIR/staged_d2h.csv (`make measure`). Every combination's copy is checked, byte for byte,
 * into a poisoned destination; the last line is "PASSED" or "FAILED: why".
 */
#include "chapter.h"
#include "measure_csv.h"
#include "cuda_check.h"
#include "host_pool.h"
#include "timing.h"
#include "units.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_LIST 16
#define MAX_BUFFERS 16
#define MAX_REPS 50
#define POISON 0xFF
#define SHARE_ALIGN 4096 /* each thread copies whole pages, but for the last one */

static const char usage[] =
    "[--size SIZE] [--threads LIST] [--buffers LIST] [--chunks LIST] [--reps N] [--sweep]\n"
    "       [--csv DIR]\n"
    "       --size     bytes copied each way; K, M, G multiply by 1024 (default 256M)\n"
    "       --threads  comma-separated counts of host threads, 1 to 256 (default 4)\n"
    "       --buffers  comma-separated counts of pinned buffers in the ring, 1 to 16 (default 2)\n"
    "       --chunks   comma-separated sizes of each buffer (default 16M)\n"
    "       --reps     timed copies per case; the median is reported (default 3)\n"
    "       --sweep    1G; threads 1,2,4,8,12,16; buffers 1,2,3,4; chunks 4M,16M,64M (a size\n"
    "                  or list given beside it stays)\n"
    "       --csv      also write staged_h2d.csv and staged_d2h.csv into DIR";

typedef struct list {
    size_t values[MAX_LIST];
    int count;
} list;

typedef struct options {
    size_t bytes;
    list threads, buffers, chunks;
    int reps;
    const char *csv_dir;
} options;

/* A comma-separated list of counts (sizes: false) or sizes, each from 1 to high. */
static list parse_list(const char *argv0, const char *name, const char *text, bool sizes,
                       size_t high)
{
    list l = {.count = 0};
    char copy[1024];
    snprintf(copy, sizeof copy, "%s", text);
    for (char *item = strtok(copy, ","); item != NULL; item = strtok(NULL, ",")) {
        if (l.count == MAX_LIST)
            usage_error(argv0, usage, "%s: at most %d values", name, MAX_LIST);
        size_t value = 0;
        char *end;
        errno = 0;
        if (sizes ? !parse_size(item, &value)
                  : (value = strtoul(item, &end, 10),
                     errno != 0 || end == item || *end != '\0' || item[0] == '-'))
            value = 0;
        if (value == 0 || value > high)
            usage_error(argv0, usage, "%s: '%s' is not %s from 1 to %zu", name, item,
                        sizes ? "a size" : "a whole number", high);
        l.values[l.count++] = value;
    }
    if (l.count == 0)
        usage_error(argv0, usage, "%s: no value given", name);
    return l;
}

static options parse_options(int argc, char **argv)
{
    options opt = {.reps = 3};
    const char *threads = NULL, *buffers = NULL, *chunks = NULL;
    bool sweep = false;
    const option_spec specs[] = {
        {"--size", OPTION_SIZE, &opt.bytes, 0, 0},
        {"--threads", OPTION_TEXT, &threads, 0, 0},
        {"--buffers", OPTION_TEXT, &buffers, 0, 0},
        {"--chunks", OPTION_TEXT, &chunks, 0, 0},
        {"--reps", OPTION_COUNT, &opt.reps, 1, MAX_REPS},
        {"--sweep", OPTION_FLAG, &sweep, 0, 0},
        {"--csv", OPTION_TEXT, &opt.csv_dir, 0, 0},
    };
    options_parse(argc, argv, usage, specs, sizeof specs / sizeof specs[0]);
    /* --sweep changes the defaults; what is given explicitly stays. */
    if (opt.bytes == 0)
        opt.bytes = sweep ? (size_t)1 << 30 : (size_t)256 << 20;
    opt.threads = parse_list(argv[0], "--threads",
                             threads ? threads
                             : sweep ? "1,2,4,8,12,16"
                                     : "4",
                             false, HOST_POOL_MAX_THREADS);
    opt.buffers = parse_list(argv[0], "--buffers",
                             buffers ? buffers
                             : sweep ? "1,2,3,4"
                                     : "2",
                             false, MAX_BUFFERS);
    opt.chunks = parse_list(argv[0], "--chunks",
                            chunks  ? chunks
                            : sweep ? "4M,16M,64M"
                                    : "16M",
                            true, (size_t)1 << 30);
    return opt;
}

/* --- The staged copy --------------------------------------------------------------------- */

typedef struct stager {
    host_pool *pool; /* NULL: threads are created for each chunk instead */
    unsigned threads;
    unsigned char *h_ring[MAX_BUFFERS]; /* pinned, chunk bytes each */
    cudaEvent_t ring_done[MAX_BUFFERS]; /* the last copy into or out of each buffer is done */
    int buffers;
    size_t chunk;
    cudaStream_t stream;
} stager;

typedef struct copy_job {
    unsigned char *dst;
    const unsigned char *src;
    size_t bytes;
} copy_job;

/* listing: host-copy */
/* One thread's share of a chunk: a plain memcpy of its slice. */
static void copy_share(void *arg, unsigned part, unsigned parts)
{
    copy_job *job = arg;
    size_t begin, end;
    host_share(job->bytes, SHARE_ALIGN, part, parts, &begin, &end);
    memcpy(job->dst + begin, job->src + begin, end - begin);
}

/* All the threads copy one chunk between pageable memory and a pinned buffer. */
static void host_copy(stager *s, unsigned char *dst, const unsigned char *src, size_t bytes)
{
    copy_job job = {dst, src, bytes};
    if (s->pool != NULL)
        host_pool_run(s->pool, copy_share, &job);
    else if (!host_threads_run(s->threads, copy_share, &job))
        exit(verdict("could not create the threads for a chunk"));
}
/* end listing: host-copy */

static size_t piece(const stager *s, size_t bytes, size_t k)
{
    size_t offset = k * s->chunk;
    return bytes - offset < s->chunk ? bytes - offset : s->chunk;
}

/* listing: staged-to-device */
static void staged_to_device(stager *s, unsigned char *d_dst, const unsigned char *h_src,
                             size_t bytes)
{
    for (size_t k = 0; k * s->chunk < bytes; k++) {
        int slot = (int)(k % (size_t)s->buffers);
        size_t offset = k * s->chunk, n = piece(s, bytes, k);
        CUDA_CHECK(cudaEventSynchronize(s->ring_done[slot])); /* its last copy up has left */
        host_copy(s, s->h_ring[slot], h_src + offset, n);     /* the threads fill it */
        CUDA_CHECK(cudaMemcpyAsync(d_dst + offset, s->h_ring[slot], n, cudaMemcpyHostToDevice,
                                   s->stream)); /* and the GPU sends it while they go on */
        CUDA_CHECK(cudaEventRecord(s->ring_done[slot], s->stream));
    }
    CUDA_CHECK(cudaStreamSynchronize(s->stream));
}
/* end listing: staged-to-device */

static void copy_down(stager *s, const unsigned char *d_src, size_t bytes, size_t k)
{
    int slot = (int)(k % (size_t)s->buffers);
    CUDA_CHECK(cudaMemcpyAsync(s->h_ring[slot], d_src + k * s->chunk, piece(s, bytes, k),
                               cudaMemcpyDeviceToHost, s->stream));
    CUDA_CHECK(cudaEventRecord(s->ring_done[slot], s->stream));
}

/* listing: staged-to-host */
static void staged_to_host(stager *s, unsigned char *h_dst, const unsigned char *d_src,
                           size_t bytes)
{
    size_t chunks = (bytes + s->chunk - 1) / s->chunk;
    for (size_t k = 0; k < chunks && k < (size_t)s->buffers; k++)
        copy_down(s, d_src, bytes, k); /* the GPU fills every buffer of the ring */
    for (size_t k = 0; k < chunks; k++) {
        int slot = (int)(k % (size_t)s->buffers);
        CUDA_CHECK(cudaEventSynchronize(s->ring_done[slot])); /* chunk k has arrived */
        host_copy(s, h_dst + k * s->chunk, s->h_ring[slot], piece(s, bytes, k));
        if (k + (size_t)s->buffers < chunks)
            copy_down(s, d_src, bytes, k + (size_t)s->buffers); /* the buffer is free again */
    }
}
/* end listing: staged-to-host */

/* --- Measuring ------------------------------------------------------------------------------ */

typedef struct rig {
    size_t bytes;
    unsigned char *h_src, *h_dst; /* pageable: malloc */
    unsigned char *h_pinned;      /* for the pinned reference copy and the checks */
    unsigned char *d_dst, *d_src; /* d_src holds the pattern */
} rig;

enum direction { TO_DEVICE, TO_HOST };

static double median_ms(double *samples, int reps)
{
    return median_of(samples, (size_t)reps);
}

/* Times reps copies of the whole buffer with the stager, the last into a poisoned
 * destination, and checks that one; returns the median GB/s, or -1 when the check failed. */
static double staged_gb_per_s(stager *s, rig *r, enum direction d, int reps)
{
    double ms[MAX_REPS];
    for (int i = 0; i < reps; i++) {
        bool last = i + 1 == reps;
        if (last && d == TO_DEVICE) { /* its stream is non-blocking: wait for the poison here */
            CUDA_CHECK(cudaMemset(r->d_dst, POISON, r->bytes));
            CUDA_CHECK(cudaDeviceSynchronize());
        }
        if (last && d == TO_HOST)
            memset(r->h_dst, POISON, r->bytes);
        double start = host_clock_ms();
        if (d == TO_DEVICE)
            staged_to_device(s, r->d_dst, r->h_src, r->bytes);
        else
            staged_to_host(s, r->h_dst, r->d_src, r->bytes);
        ms[i] = host_clock_ms() - start;
    }
    bool intact;
    if (d == TO_DEVICE) {
        CUDA_CHECK(cudaMemcpy(r->h_pinned, r->d_dst, r->bytes, cudaMemcpyDeviceToHost));
        intact = memcmp(r->h_pinned, r->h_src, r->bytes) == 0;
    } else
        intact = memcmp(r->h_dst, r->h_src, r->bytes) == 0; /* d_src holds h_src's pattern */
    return intact ? bandwidth_gb_per_s(r->bytes, median_ms(ms, reps)) : -1;
}

/* Plain cudaMemcpy of the whole buffer, from or to pageable or pinned memory. */
static double plain_gb_per_s(rig *r, enum direction d, bool pinned, int reps)
{
    double ms[MAX_REPS];
    unsigned char *h = pinned ? r->h_pinned : d == TO_DEVICE ? r->h_src : r->h_dst;
    for (int i = -1; i < reps; i++) { /* the first, untimed, sets things up */
        double start = host_clock_ms();
        if (d == TO_DEVICE)
            CUDA_CHECK(cudaMemcpy(r->d_dst, h, r->bytes, cudaMemcpyHostToDevice));
        else
            CUDA_CHECK(cudaMemcpy(h, r->d_src, r->bytes, cudaMemcpyDeviceToHost));
        if (i >= 0)
            ms[i] = host_clock_ms() - start;
    }
    return bandwidth_gb_per_s(r->bytes, median_ms(ms, reps));
}

typedef struct result {
    unsigned threads;
    int buffers;
    size_t chunk;
    double pool_gb_per_s, per_chunk_gb_per_s;
    int rank; /* 1: the fastest pool */
} result;

static int faster_first(const void *a, const void *b)
{
    double x = ((const result *)a)->pool_gb_per_s, y = ((const result *)b)->pool_gb_per_s;
    return (x < y) - (x > y);
}

/* By ring, then chunk, then threads: each line of the book's plot is a run of rows. */
static int by_ring_chunk_threads(const void *a, const void *b)
{
    const result *x = a, *y = b;
    if (x->buffers != y->buffers)
        return x->buffers - y->buffers;
    if (x->chunk != y->chunk)
        return (x->chunk > y->chunk) - (x->chunk < y->chunk);
    return (x->threads > y->threads) - (x->threads < y->threads);
}

static void write_csv(const char *dir, const char *name, const char *what, result *results,
                      int count, double pageable, double pinned, size_t bytes, int reps)
{
    measure_csv csv;
    measure_csv_create(&csv, dir, name, what, "chapters/ch03-streams/06-staged-pageable");
    fprintf(csv.file,
            "# unit: GB/s (10^9 bytes per second), host clock, median of %d copies of %zu "
            "bytes; rank 1 is the fastest pool; rows by buffers, chunk, threads; pool: "
            "persistent threads; per_chunk: threads "
            "created for each chunk; pageable, pinned: plain cudaMemcpy in the same run\n"
            "rank,threads,buffers,chunk_bytes,pool_gb_per_s,per_chunk_gb_per_s,"
            "pageable_gb_per_s,pinned_gb_per_s\n",
            reps, bytes);
    qsort(results, (size_t)count, sizeof *results, faster_first);
    for (int i = 0; i < count; i++)
        results[i].rank = i + 1;
    qsort(results, (size_t)count, sizeof *results, by_ring_chunk_threads);
    for (int i = 0; i < count; i++)
        fprintf(csv.file, "%d,%u,%d,%zu,%.2f,%.2f,%.2f,%.2f\n", results[i].rank, results[i].threads,
                results[i].buffers, results[i].chunk, results[i].pool_gb_per_s,
                results[i].per_chunk_gb_per_s, pageable, pinned);
    measure_csv_close(&csv);
}

/* One direction: the plain copies from pageable and from pinned memory, then every staged
 * copier of the sweep, with a pool of threads and with threads created per chunk, a line each,
 * into results; and the best of them. Returns what went wrong, or NULL. */
static const char *sweep_direction(stager *s, rig *r, const options *opt, enum direction d,
                                   result *results, double *pageable, double *pinned)
{
    static const char *const direction_names[2] = {"host to device", "device to host"};
    char size[32], chunk_text[32];
    *pageable = plain_gb_per_s(r, d, false, opt->reps);
    *pinned = plain_gb_per_s(r, d, true, opt->reps);
    printf("%s, %s from pageable memory: plain cudaMemcpy %.1f GB/s, pinned cudaMemcpy %.1f "
           "GB/s\n",
           direction_names[d], format_bytes(r->bytes, size, sizeof size), *pageable, *pinned);
    printf("  %7s %7s %9s %11s %14s %9s %9s\n", "threads", "buffers", "chunk", "pool GB/s",
           "per-chunk GB/s", "x plain", "of pinned");
    int n = 0;
    for (int t = 0; t < opt->threads.count; t++) {
        host_pool *pool = host_pool_create((unsigned)opt->threads.values[t]);
        if (pool == NULL)
            return "could not start the pool of threads";
        for (int b = 0; b < opt->buffers.count; b++)
            for (int c = 0; c < opt->chunks.count; c++) {
                result *res = &results[n++];
                *res = (result){(unsigned)opt->threads.values[t],
                                (int)opt->buffers.values[b],
                                opt->chunks.values[c],
                                0,
                                0,
                                0};
                s->threads = res->threads;
                s->buffers = res->buffers;
                s->chunk = res->chunk;
                s->pool = pool;
                res->pool_gb_per_s = staged_gb_per_s(s, r, d, opt->reps);
                s->pool = NULL;
                res->per_chunk_gb_per_s = staged_gb_per_s(s, r, d, opt->reps);
                printf("  %7u %7d %9s %11.1f %14.1f %9.2f %8.0f%%\n", res->threads, res->buffers,
                       format_bytes(res->chunk, chunk_text, sizeof chunk_text), res->pool_gb_per_s,
                       res->per_chunk_gb_per_s, res->pool_gb_per_s / *pageable,
                       100 * res->pool_gb_per_s / *pinned);
                fflush(stdout);
                if (res->pool_gb_per_s < 0 || res->per_chunk_gb_per_s < 0) {
                    host_pool_destroy(pool);
                    return "a staged copy did not deliver its data intact";
                }
            }
        host_pool_destroy(pool);
    }
    result best = results[0];
    for (int i = 1; i < n; i++)
        if (results[i].pool_gb_per_s > best.pool_gb_per_s)
            best = results[i];
    printf("  best: %u threads, %d buffers of %s: %.1f GB/s, %.1f times plain pageable "
           "cudaMemcpy,\n  %.0f%% of pinned; threads created per chunk instead: %.1f GB/s\n\n",
           best.threads, best.buffers, format_bytes(best.chunk, chunk_text, sizeof chunk_text),
           best.pool_gb_per_s, best.pool_gb_per_s / *pageable, 100 * best.pool_gb_per_s / *pinned,
           best.per_chunk_gb_per_s);
    return NULL;
}

int main(int argc, char **argv)
{
    options opt = parse_options(argc, argv);
    const char *failure = NULL;
    rig r = {.bytes = opt.bytes};
    r.h_src = host_alloc(r.bytes);
    r.h_dst = host_alloc(r.bytes);
    fill_pattern(r.h_src, r.bytes); /* touches every page before anything is timed */
    memset(r.h_dst, 0, r.bytes);
    CUDA_CHECK(cudaMallocHost((void **)&r.h_pinned, r.bytes));
    CUDA_CHECK(cudaMalloc((void **)&r.d_dst, r.bytes));
    CUDA_CHECK(cudaMalloc((void **)&r.d_src, r.bytes));
    CUDA_CHECK(cudaMemcpy(r.d_src, r.h_src, r.bytes, cudaMemcpyHostToDevice));
    size_t largest_chunk = 0;
    int largest_buffers = 0;
    for (int c = 0; c < opt.chunks.count; c++)
        largest_chunk = opt.chunks.values[c] > largest_chunk ? opt.chunks.values[c] : largest_chunk;
    for (int b = 0; b < opt.buffers.count; b++)
        largest_buffers = (int)opt.buffers.values[b] > largest_buffers ? (int)opt.buffers.values[b]
                                                                       : largest_buffers;
    stager s = {.buffers = largest_buffers};
    CUDA_CHECK(cudaStreamCreateWithFlags(&s.stream, cudaStreamNonBlocking));
    for (int b = 0; b < largest_buffers; b++) {
        CUDA_CHECK(cudaMallocHost((void **)&s.h_ring[b], largest_chunk));
        CUDA_CHECK(cudaEventCreateWithFlags(&s.ring_done[b], cudaEventDisableTiming));
    }

    const int cases = opt.threads.count * opt.buffers.count * opt.chunks.count;
    result *results[2] = {calloc((size_t)cases, sizeof(result)),
                          calloc((size_t)cases, sizeof(result))};
    if (results[0] == NULL || results[1] == NULL)
        return verdict("out of host memory");
    double pageable[2], pinned[2];
    for (int d = TO_DEVICE; d <= TO_HOST && failure == NULL; d++)
        failure =
            sweep_direction(&s, &r, &opt, (enum direction)d, results[d], &pageable[d], &pinned[d]);
    if (failure == NULL) {
        printf("Why the others lose: one buffer leaves the GPU idle while the threads fill it and\n"
               "the threads idle while it is sent; few threads copy no faster than one CPU core\n"
               "can; small chunks pay a synchronisation, a call and a wake-up of every thread\n"
               "per few megabytes; threads created per chunk pay their creation every time.\n");
        printf("verified: every staged copy arrived intact, into a poisoned destination\n");
    }
    if (failure == NULL && opt.csv_dir != NULL) {
        char what[160];
        snprintf(what, sizeof what,
                 "a pageable copy to the device staged by host threads through a ring of pinned "
                 "buffers");
        write_csv(opt.csv_dir, "staged_h2d.csv", what, results[TO_DEVICE], cases,
                  pageable[TO_DEVICE], pinned[TO_DEVICE], r.bytes, opt.reps);
        snprintf(what, sizeof what,
                 "a copy to pageable memory on the host staged by host threads through a ring of "
                 "pinned buffers");
        write_csv(opt.csv_dir, "staged_d2h.csv", what, results[TO_HOST], cases, pageable[TO_HOST],
                  pinned[TO_HOST], r.bytes, opt.reps);
    }

    for (int b = 0; b < largest_buffers; b++) {
        CUDA_CHECK(cudaEventDestroy(s.ring_done[b]));
        CUDA_CHECK(cudaFreeHost(s.h_ring[b]));
    }
    CUDA_CHECK(cudaStreamDestroy(s.stream));
    CUDA_CHECK(cudaFree(r.d_src));
    CUDA_CHECK(cudaFree(r.d_dst));
    CUDA_CHECK(cudaFreeHost(r.h_pinned));
    free(r.h_dst);
    free(r.h_src);
    free(results[0]);
    free(results[1]);
    return verdict(failure);
}

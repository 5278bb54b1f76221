/* 02-ways-to-pin.c - every way to get pinned host memory: what it costs, and what it gives.
 *
 * Pinned memory comes from the CUDA runtime in two ways. It allocates it
 * (cudaMallocHost, or cudaHostAlloc with flags: Portable for every context,
 * Mapped for a device pointer to it, WriteCombined for memory the CPU only
 * writes), or it pins memory the program already has (cudaHostRegister on
 * memory from malloc or mmap). For each way, and for plain malloc as the
 * pageable reference, this program measures on one buffer:
 *   - what getting it costs: the allocation, or the registration of memory
 *     that was allocated and touched before (that preparation is timed apart);
 *   - what giving it back costs: cudaFreeHost, cudaHostUnregister, free;
 *   - cudaMemcpy's bandwidth to the device and back (CUDA events);
 *   - the CPU's own bandwidth reading it and writing it (one thread, host
 *     clock), where write-combined memory shows what it is for.
 * Each buffer is checked too: a pattern copied up, back into the poisoned
 * buffer, and up and back once more into a poisoned pageable one.
 *
 *     02-ways-to-pin [--size SIZE] [--reps N] [--csv DIR]
 *
 * By default 256 MiB, each allocation 3 times (medians), a few seconds. `make
 * measure` runs --size 1G --csv DIR, which writes DIR/pinning_cost.csv.
 */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS: Linux and the BSDs have it, POSIX does not name it */

#include "chapter.h"
#include "copy_timing.h"
#include "cuda_check.h"
#include "device_info.h"
#include "measure_csv.h"
#include "timing.h"
#include "units.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

static const char usage[] =
    "[--size SIZE] [--reps N] [--csv DIR]\n"
    "       --size  the buffer each way allocates or pins; K, M, G multiply by 1024\n"
    "               (default 256M; make measure: 1G)\n"
    "       --reps  allocations, copies and CPU passes of each kind; medians are kept\n"
    "               (default 3)\n"
    "       --csv   also write DIR/pinning_cost.csv";

/* A CPU pass over a buffer stops after this long: reading write-combined memory is so slow
 * that a whole pass over a large buffer would take seconds, and a part tells as much. */
#define CPU_PASS_MAX_MS 200.0
#define CPU_CHUNK_BYTES ((size_t)1 << 20)

typedef enum source { MALLOC, MALLOC_HOST, HOST_ALLOC, REGISTER_MALLOC, REGISTER_MMAP } source;

typedef struct way {
    const char *name;  /* in the CSV file, a name Lua and gnuplot can use */
    const char *label; /* in the printed table */
    source source;
    unsigned flags; /* cudaHostAlloc's or cudaHostRegister's */
} way;

static const way ways[] = {
    {"malloc", "malloc (pageable)", MALLOC, 0},
    {"cudaMallocHost", "cudaMallocHost", MALLOC_HOST, 0},
    {"cudaHostAlloc_default", "cudaHostAlloc Default", HOST_ALLOC, cudaHostAllocDefault},
    {"cudaHostAlloc_portable", "cudaHostAlloc Portable", HOST_ALLOC, cudaHostAllocPortable},
    {"cudaHostAlloc_mapped", "cudaHostAlloc Mapped", HOST_ALLOC, cudaHostAllocMapped},
    {"cudaHostAlloc_writecombined", "cudaHostAlloc WriteCombined", HOST_ALLOC,
     cudaHostAllocWriteCombined},
    {"malloc_register", "malloc + cudaHostRegister", REGISTER_MALLOC, cudaHostRegisterDefault},
    {"mmap_register", "mmap + cudaHostRegister", REGISTER_MMAP, cudaHostRegisterDefault},
};
enum { WAYS = sizeof ways / sizeof ways[0] };

typedef struct costs {
    double prepare_ms; /* malloc or mmap and touching every page, before registering */
    double get_ms;     /* the allocation (malloc: with the first touch) or the registration */
    double release_ms; /* cudaFreeHost, cudaHostUnregister or free */
    double h2d_gb_per_s, d2h_gb_per_s;
    double cpu_read_gb_per_s, cpu_write_gb_per_s;
} costs;

/* listing: get */
/* Gets `bytes` of host memory the way `w` says, timing what that way costs: for the two that
 * register, the memory is allocated and touched first, as a program's own buffer would be,
 * and only the registration counts as getting it. */
static unsigned char *get_buffer(const way *w, size_t bytes, costs *c)
{
    void *h_buffer = NULL;
    double start = host_clock_ms();
    switch (w->source) {
    case MALLOC:
        h_buffer = host_alloc(bytes);
        memset(h_buffer, 0, bytes); /* the first touch gives malloc'd memory its pages */
        break;
    case MALLOC_HOST: CUDA_CHECK(cudaMallocHost(&h_buffer, bytes)); break;
    case HOST_ALLOC: CUDA_CHECK(cudaHostAlloc(&h_buffer, bytes, w->flags)); break;
    case REGISTER_MALLOC:
    case REGISTER_MMAP:
        if (w->source == REGISTER_MALLOC)
            h_buffer = host_alloc(bytes);
        else {
            h_buffer =
                mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            if (h_buffer == MAP_FAILED) {
                perror("mmap");
                exit(EXIT_FAILURE);
            }
        }
        memset(h_buffer, 0, bytes);
        c->prepare_ms = host_clock_ms() - start;
        start = host_clock_ms();
        CUDA_CHECK(cudaHostRegister(h_buffer, bytes, w->flags));
        break;
    }
    c->get_ms = host_clock_ms() - start;
    return h_buffer;
}
/* end listing: get */

/* Gives the buffer back, timing the part that undoes get_buffer's timed part. */
static void release_buffer(const way *w, unsigned char *h_buffer, size_t bytes, costs *c)
{
    double start = host_clock_ms();
    switch (w->source) {
    case MALLOC: free(h_buffer); break;
    case MALLOC_HOST:
    case HOST_ALLOC: CUDA_CHECK(cudaFreeHost(h_buffer)); break;
    case REGISTER_MALLOC:
    case REGISTER_MMAP: CUDA_CHECK(cudaHostUnregister(h_buffer)); break;
    }
    c->release_ms = host_clock_ms() - start;
    if (w->source == REGISTER_MALLOC)
        free(h_buffer);
    else if (w->source == REGISTER_MMAP)
        munmap(h_buffer, bytes);
}

/* listing: cpu-passes */
/* The CPU reading the buffer (summing its 64-bit words) or writing it (memset), one chunk after
 * another until the end or CPU_PASS_MAX_MS; the median of reps passes, in GB/s. */
static double cpu_gb_per_s(unsigned char *h_buffer, size_t bytes, bool write, int reps)
{
    double *gb_per_s = host_alloc((size_t)reps * sizeof *gb_per_s);
    volatile uint64_t sink = 0; /* keeps the reads from being optimised away */
    for (int r = 0; r < reps; r++) {
        size_t done = 0;
        double start = host_clock_ms(), elapsed = 0;
        while (done < bytes && elapsed < CPU_PASS_MAX_MS) {
            size_t chunk = bytes - done < CPU_CHUNK_BYTES ? bytes - done : CPU_CHUNK_BYTES;
            if (write)
                memset(h_buffer + done, (int)r, chunk);
            else {
                uint64_t sum = 0, word;
                for (size_t at = 0; at + sizeof word <= chunk; at += sizeof word) {
                    memcpy(&word, h_buffer + done + at, sizeof word);
                    sum += word;
                }
                sink += sum;
            }
            done += chunk;
            elapsed = host_clock_ms() - start;
        }
        gb_per_s[r] = bandwidth_gb_per_s(done, elapsed);
    }
    (void)sink;
    double median = median_of(gb_per_s, (size_t)reps);
    free(gb_per_s);
    return median;
}
/* end listing: cpu-passes */

typedef struct scratch {
    unsigned char *h_expected, *h_check; /* malloc: the pattern, and where it comes back */
    unsigned char *d_first, *d_second;
} scratch;

/* The pattern up from the buffer, back into it after poisoning it, and up and back again into
 * a poisoned pageable buffer: the CPU never reads the buffer itself (write-combined memory
 * reads slowly), and a copy that missed either way leaves poison where the pattern should be. */
static bool copies_intact(unsigned char *h_buffer, size_t bytes, const scratch *s)
{
    memcpy(h_buffer, s->h_expected, bytes);
    CUDA_CHECK(cudaMemset(s->d_first, 0xFF, bytes));
    CUDA_CHECK(cudaMemcpy(s->d_first, h_buffer, bytes, cudaMemcpyHostToDevice));
    memset(h_buffer, 0xFF, bytes);
    CUDA_CHECK(cudaMemcpy(h_buffer, s->d_first, bytes, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemset(s->d_second, 0xFF, bytes));
    CUDA_CHECK(cudaMemcpy(s->d_second, h_buffer, bytes, cudaMemcpyHostToDevice));
    memset(s->h_check, 0xFF, bytes);
    CUDA_CHECK(cudaMemcpy(s->h_check, s->d_second, bytes, cudaMemcpyDeviceToHost));
    return memcmp(s->h_check, s->h_expected, bytes) == 0;
}

/* Gets and releases a buffer reps times (the median cost of each), and measures the copies and
 * the CPU's passes on the last one. False when its copies did not arrive intact. */
static bool measure_way(const way *w, size_t bytes, int reps, const scratch *s, event_timer *timer,
                        costs *median)
{
    double *get = host_alloc((size_t)reps * sizeof *get);
    double *release = host_alloc((size_t)reps * sizeof *release);
    double *prepare = host_alloc((size_t)reps * sizeof *prepare);
    bool intact = true;
    for (int r = 0; r < reps; r++) {
        costs c = {0};
        unsigned char *h_buffer = get_buffer(w, bytes, &c);
        if (r == reps - 1) {
            intact = copies_intact(h_buffer, bytes, s);
            median->h2d_gb_per_s = copy_median_gb_per_s(s->d_first, h_buffer, bytes,
                                                        cudaMemcpyHostToDevice, reps, timer);
            median->d2h_gb_per_s = copy_median_gb_per_s(h_buffer, s->d_first, bytes,
                                                        cudaMemcpyDeviceToHost, reps, timer);
            median->cpu_read_gb_per_s = cpu_gb_per_s(h_buffer, bytes, false, reps);
            median->cpu_write_gb_per_s = cpu_gb_per_s(h_buffer, bytes, true, reps);
        }
        release_buffer(w, h_buffer, bytes, &c);
        get[r] = c.get_ms;
        release[r] = c.release_ms;
        prepare[r] = c.prepare_ms;
    }
    median->get_ms = median_of(get, (size_t)reps);
    median->release_ms = median_of(release, (size_t)reps);
    median->prepare_ms = median_of(prepare, (size_t)reps);
    free(get);
    free(release);
    free(prepare);
    return intact;
}

static double per_gib(double ms, size_t bytes)
{
    return ms * BYTES_PER_GIB / (double)bytes;
}

static void write_csv(const char *dir, size_t bytes, int reps, const costs *c)
{
    measure_csv csv;
    FILE *f =
        measure_csv_create(&csv, dir, "pinning_cost.csv",
                           "every way to get pinned host memory: its cost, copies and CPU speed",
                           "chapters/ch02-pinned/02-ways-to-pin");
    fprintf(f,
            "# unit: milliseconds (host clock) and GB/s (10^9 bytes per second), medians of %d; "
            "prepare = malloc or mmap and touching every page before registering; get = the "
            "allocation (malloc: with the first touch) or the registration; release = "
            "cudaFreeHost, cudaHostUnregister or free; per GiB = get scaled to 2^30 bytes\n"
            "method,bytes,prepare_ms,get_ms,release_ms,get_ms_per_gib,release_ms_per_gib,"
            "h2d_gb_per_s,d2h_gb_per_s,cpu_read_gb_per_s,cpu_write_gb_per_s\n",
            reps);
    for (int i = 0; i < WAYS; i++)
        fprintf(f, "%s,%zu,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f\n", ways[i].name, bytes,
                c[i].prepare_ms, c[i].get_ms, c[i].release_ms, per_gib(c[i].get_ms, bytes),
                per_gib(c[i].release_ms, bytes), c[i].h2d_gb_per_s, c[i].d2h_gb_per_s,
                c[i].cpu_read_gb_per_s, c[i].cpu_write_gb_per_s);
    measure_csv_close(&csv);
}

static const costs *cost_of(const costs *c, const char *name)
{
    for (int i = 0; i < WAYS; i++)
        if (strcmp(ways[i].name, name) == 0)
            return &c[i];
    return NULL;
}

int main(int argc, char **argv)
{
    size_t bytes = (size_t)256 << 20;
    int reps = 3;
    const char *csv_dir = NULL;
    const option_spec specs[] = {
        {"--size", OPTION_SIZE, &bytes, 0, 0},
        {"--reps", OPTION_COUNT, &reps, 1, 100},
        {"--csv", OPTION_TEXT, &csv_dir, 0, 0},
    };
    options_parse(argc, argv, usage, specs, sizeof specs / sizeof specs[0]);
    if (bytes % 8 != 0)
        usage_error(argv[0], usage, "--size: give a multiple of 8 bytes");

    char size[32];
    scratch s;
    s.h_expected = host_alloc(bytes);
    s.h_check = host_alloc(bytes);
    fill_pattern(s.h_expected, bytes);
    memset(s.h_check, 0, bytes);
    CUDA_CHECK(cudaMalloc((void **)&s.d_first, bytes));
    CUDA_CHECK(cudaMalloc((void **)&s.d_second, bytes));
    event_timer timer;
    CUDA_CHECK(event_timer_create(&timer));
    /* The first pinned allocation of a process may pay for setting something up: not here. */
    void *h_warm_up;
    CUDA_CHECK(cudaMallocHost(&h_warm_up, 1 << 20));
    CUDA_CHECK(cudaFreeHost(h_warm_up));

    printf("Getting %s of host memory each way (median of %d; ms, and ms per GiB), then copies\n"
           "(cudaMemcpy, events) and the CPU's own passes (one thread) over it, in GB/s\n\n",
           format_bytes(bytes, size, sizeof size), reps);
    printf("%-28s %9s %9s %9s %9s   %7s %7s %8s %8s\n", "", "prepare", "get", "per GiB", "release",
           "H2D", "D2H", "CPU read", "CPU write");
    costs c[WAYS];
    const char *failure = NULL;
    for (int i = 0; i < WAYS; i++) {
        memset(&c[i], 0, sizeof c[i]);
        if (!measure_way(&ways[i], bytes, reps, &s, &timer, &c[i]) && failure == NULL)
            failure = ways[i].name;
        printf("%-28s %9.2f %9.2f %9.1f %9.2f   %7.2f %7.2f %8.2f %8.2f\n", ways[i].label,
               c[i].prepare_ms, c[i].get_ms, per_gib(c[i].get_ms, bytes), c[i].release_ms,
               c[i].h2d_gb_per_s, c[i].d2h_gb_per_s, c[i].cpu_read_gb_per_s,
               c[i].cpu_write_gb_per_s);
        fflush(stdout);
    }

    const costs *host = cost_of(c, "cudaMallocHost"), *reg = cost_of(c, "malloc_register"),
                *wc = cost_of(c, "cudaHostAlloc_writecombined");
    printf("\ncudaMallocHost took %.0f ms per GiB; cudaHostRegister, on memory that malloc gave\n"
           "and the program had touched, %.0f ms per GiB: cudaMallocHost cost %.1f times as much.\n"
           "malloc and the first touch had taken %.0f ms per GiB before; with the registration,\n"
           "%.0f. cudaMallocHost gets fresh pages, has them cleared and pins them in one call;\n"
           "cudaHostRegister pins pages that are already there.\n",
           per_gib(host->get_ms, bytes), per_gib(reg->get_ms, bytes),
           reg->get_ms > 0 ? host->get_ms / reg->get_ms : 0, per_gib(reg->prepare_ms, bytes),
           per_gib(reg->prepare_ms + reg->get_ms, bytes));
    printf("Write-combined memory: the CPU read it at %.2f GB/s and wrote it at %.1f, against\n"
           "%.1f and %.1f for cudaMallocHost's: it bypasses the CPU's caches, so it is for\n"
           "buffers the CPU only writes and the GPU reads.\n",
           wc->cpu_read_gb_per_s, wc->cpu_write_gb_per_s, host->cpu_read_gb_per_s,
           host->cpu_write_gb_per_s);

    CUDA_CHECK(event_timer_destroy(&timer));
    CUDA_CHECK(cudaFree(s.d_first));
    CUDA_CHECK(cudaFree(s.d_second));
    free(s.h_expected);
    free(s.h_check);
    if (failure != NULL) {
        static char why[128];
        snprintf(why, sizeof why, "the copies through the %s buffer did not arrive intact",
                 failure);
        return verdict(why);
    }
    printf("verified: for every way, a pattern went up, came back and went up and back again "
           "intact\n");
    if (csv_dir != NULL)
        write_csv(csv_dir, bytes, reps, c);
    return verdict(NULL);
}

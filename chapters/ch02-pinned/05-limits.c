/* 05-limits.c - how much this machine lets a process pin, what a refusal looks like, and where
 * pinned memory lives.
 *
 * Pinned pages are taken out of the operating system's hands for as long as
 * they are held: it can neither swap them out nor move them, nor give them to
 * anyone else. This program shows the limits around that, without pushing
 * the machine to them:
 *   - the process's RLIMIT_MEMLOCK (ulimit -l), and the host's memory;
 *   - pinning --pin SIZE (default 1 GiB) in steps of 1 GiB, and what the rest
 *     of the system has available before, during and after;
 *   - asking cudaHostAlloc for 1 PiB, more than any machine's memory and more
 *     than a process can even address, which fails at once without taking
 *     anything (cudaErrorMemoryAllocation), and the context still working
 *     afterwards;
 *   - the machine's NUMA nodes, the GPU's, and the node the pinned pages were
 *     given; with more than one node, the copy bandwidth from each.
 *
 *     05-limits [--pin SIZE] [--csv DIR]
 *
 * It refuses to pin more than PIN_SHARE_OF_AVAILABLE of the memory available
 * now: past that, pinning pushes other programs into swap or the kernel's
 * out-of-memory killer, which is the lesson, but not one to give a shared
 * machine. `make measure` runs --csv DIR, which writes DIR/limits.csv.
 */
#define _DEFAULT_SOURCE /* syscall() and MAP_ANONYMOUS, which POSIX does not name */

#include "chapter.h"
#include "copy_timing.h"
#include "cuda_check.h"
#include "device_info.h"
#include "host_memory.h"
#include "measure_csv.h"
#include "timing.h"
#include "units.h"

#include <ctype.h>
#include <glob.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

static const char usage[] =
    "[--pin SIZE] [--csv DIR]\n"
    "       --pin  how much to pin, in steps of 1 GiB (default 1G, or a quarter of the\n"
    "              memory available now where that is less; at most half of it)\n"
    "       --csv  also write DIR/limits.csv";

#define PIN_SHARE_OF_AVAILABLE 0.5
#define PIN_STEP_BYTES ((size_t)1 << 30)
#define ABSURD_BYTES ((size_t)1 << 50) /* 1 PiB */
#define NODE_TEST_BYTES ((size_t)256 << 20)
enum { MAX_STEPS = 1024, MAX_NODES = 64 };

/* The Linux memory-policy calls, made directly: their wrappers are libnuma's, which the course
 * does not need for two calls. */
#define POLICY_DEFAULT 0
#define POLICY_BIND 2
#define POLICY_F_NODE 1
#define POLICY_F_ADDR 2

/* The NUMA node of the page at `address`, or -1 where the kernel does not say. */
static int node_of(const void *address)
{
#ifdef SYS_get_mempolicy
    int node = -1;
    if (syscall(SYS_get_mempolicy, &node, NULL, 0UL, address, POLICY_F_NODE | POLICY_F_ADDR) == 0)
        return node;
#else
    (void)address;
#endif
    return -1;
}

/* Binds this thread's future allocations to `node`, or with node < 0 lets them go anywhere
 * again. False where the kernel refuses. */
static bool bind_to_node(int node)
{
#ifdef SYS_set_mempolicy
    unsigned long mask = node >= 0 ? 1UL << node : 0;
    if (node < 0)
        return syscall(SYS_set_mempolicy, POLICY_DEFAULT, NULL, 0UL) == 0;
    return syscall(SYS_set_mempolicy, POLICY_BIND, &mask, (unsigned long)(sizeof mask * 8)) == 0;
#else
    (void)node;
    return false;
#endif
}

/* The node numbers in /sys/devices/system/node (node0, node1, ...); returns how many. */
static int numa_nodes(int *nodes, int most)
{
    glob_t found;
    int count = 0;
    if (glob("/sys/devices/system/node/node[0-9]*", 0, NULL, &found) != 0)
        return 0;
    for (size_t i = 0; i < found.gl_pathc && count < most; i++)
        nodes[count++] = atoi(strrchr(found.gl_pathv[i], '/') + strlen("/node"));
    globfree(&found);
    return count;
}

/* The GPU's NUMA node as the PCI bus reports it (-1: no affinity, or unknown). */
static int gpu_numa_node(const char *pci_bus_id)
{
    char path[128], id[32];
    int node = -1;
    snprintf(id, sizeof id, "%s", pci_bus_id);
    for (char *c = id; *c; c++)
        *c = (char)tolower((unsigned char)*c); /* sysfs writes hexadecimal in lower case */
    snprintf(path, sizeof path, "/sys/bus/pci/devices/%s/numa_node", id);
    FILE *file = fopen(path, "r");
    if (file != NULL) {
        if (fscanf(file, "%d", &node) != 1)
            node = -1;
        fclose(file);
    }
    return node;
}

static void print_limit(const char *what, rlim_t limit)
{
    char size[32];
    if (limit == RLIM_INFINITY)
        printf("  %-22s unlimited\n", what);
    else
        printf("  %-22s %s\n", what, format_bytes((size_t)limit, size, sizeof size));
}

typedef struct findings {
    long long memlock_soft_bytes; /* -1: unlimited */
    size_t total_bytes, available_before, available_pinned, available_after;
    size_t pinned_bytes;
    double pin_ms_per_gib;
    int absurd_refused_as_allocation; /* 1: cudaErrorMemoryAllocation */
    int nodes, gpu_node, buffer_node;
} findings;

/* listing: absurd */
/* Asks for far more pinned memory than there is. The runtime refuses with an error, which
 * is expected here and so not passed to CUDA_CHECK; it leaves the context as it was. */
static cudaError_t ask_for_too_much(void)
{
    void *h_absurd = NULL;
    cudaError_t err = cudaHostAlloc(&h_absurd, ABSURD_BYTES, cudaHostAllocDefault);
    if (err == cudaSuccess) /* no machine has this much, but if one did: give it back */
        CUDA_CHECK(cudaFreeHost(h_absurd));
    (void)cudaGetLastError(); /* clear it from the runtime's last-error slot */
    return err;
}
/* end listing: absurd */

/* A small pinned round trip after the refusal, into a poisoned buffer: true when it arrived. */
static bool context_still_works(void)
{
    enum { BYTES = 1 << 20 };
    unsigned char *h_in, *h_out, *d_buffer;
    CUDA_CHECK(cudaMallocHost((void **)&h_in, BYTES));
    CUDA_CHECK(cudaMallocHost((void **)&h_out, BYTES));
    CUDA_CHECK(cudaMalloc((void **)&d_buffer, BYTES));
    fill_pattern(h_in, BYTES);
    memset(h_out, 0xFF, BYTES);
    CUDA_CHECK(cudaMemcpy(d_buffer, h_in, BYTES, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(h_out, d_buffer, BYTES, cudaMemcpyDeviceToHost));
    bool intact = memcmp(h_in, h_out, BYTES) == 0;
    CUDA_CHECK(cudaFree(d_buffer));
    CUDA_CHECK(cudaFreeHost(h_in));
    CUDA_CHECK(cudaFreeHost(h_out));
    return intact;
}

/* Pins `bytes` in steps of PIN_STEP_BYTES, stopping at the first refusal; reports what the
 * system had available with all of it pinned, then gives it back. */
static void pin_in_steps(size_t bytes, findings *f)
{
    void *steps[MAX_STEPS];
    int held = 0;
    char size[32], other[32];
    double start = host_clock_ms();
    for (size_t pinned = 0; pinned < bytes && held < MAX_STEPS; pinned += PIN_STEP_BYTES) {
        size_t step = bytes - pinned < PIN_STEP_BYTES ? bytes - pinned : PIN_STEP_BYTES;
        cudaError_t err = cudaHostAlloc(&steps[held], step, cudaHostAllocDefault);
        if (err != cudaSuccess) {
            (void)cudaGetLastError();
            printf("  refused after %s: %s\n", format_bytes(pinned, size, sizeof size),
                   cudaGetErrorName(err));
            break;
        }
        held++;
        f->pinned_bytes += step;
    }
    double ms = host_clock_ms() - start;
    f->pin_ms_per_gib = f->pinned_bytes ? ms * BYTES_PER_GIB / (double)f->pinned_bytes : 0;
    if (held > 0)
        f->buffer_node = node_of(steps[0]);
    f->available_pinned = host_memory_query().available_bytes;
    char before[32];
    printf("  pinned %s in %.0f ms (%.0f ms per GiB); available now %s, was %s\n",
           format_bytes(f->pinned_bytes, size, sizeof size), ms, f->pin_ms_per_gib,
           format_bytes(f->available_pinned, other, sizeof other),
           format_bytes(f->available_before, before, sizeof before));
    for (int i = 0; i < held; i++)
        CUDA_CHECK(cudaFreeHost(steps[i]));
    f->available_after = host_memory_query().available_bytes;
    printf("  given back: available %s\n", format_bytes(f->available_after, size, sizeof size));
}

/* With more than one node: pages bound to each node in turn, registered, and copied. */
static void bandwidth_by_node(const int *nodes, int count, int gpu_node)
{
    unsigned char *d_buffer;
    event_timer timer;
    CUDA_CHECK(cudaMalloc((void **)&d_buffer, NODE_TEST_BYTES));
    CUDA_CHECK(event_timer_create(&timer));
    for (int i = 0; i < count; i++) {
        if (!bind_to_node(nodes[i])) {
            printf("  node %d: the kernel refused to bind memory to it\n", nodes[i]);
            continue;
        }
        unsigned char *h_buffer =
            mmap(NULL, NODE_TEST_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (h_buffer != MAP_FAILED)
            memset(h_buffer, 1, NODE_TEST_BYTES); /* the pages are given now, on that node */
        bind_to_node(-1);
        if (h_buffer == MAP_FAILED) {
            printf("  node %d: no memory to map\n", nodes[i]);
            continue;
        }
        CUDA_CHECK(cudaHostRegister(h_buffer, NODE_TEST_BYTES, cudaHostRegisterDefault));
        double h2d = copy_median_gb_per_s(d_buffer, h_buffer, NODE_TEST_BYTES,
                                          cudaMemcpyHostToDevice, 5, &timer);
        double d2h = copy_median_gb_per_s(h_buffer, d_buffer, NODE_TEST_BYTES,
                                          cudaMemcpyDeviceToHost, 5, &timer);
        printf("  node %d%s: pages on node %d, host to device %.1f GB/s, device to host %.1f\n",
               nodes[i], nodes[i] == gpu_node ? " (the GPU's)" : "", node_of(h_buffer), h2d, d2h);
        CUDA_CHECK(cudaHostUnregister(h_buffer));
        munmap(h_buffer, NODE_TEST_BYTES);
    }
    CUDA_CHECK(event_timer_destroy(&timer));
    CUDA_CHECK(cudaFree(d_buffer));
}

static void write_csv(const char *dir, const findings *f, const device_info *info)
{
    char date[32];
    measure_csv csv;
    measure_date_now(date, sizeof date);
    measure_dir_create(dir);
    FILE *out = measure_csv_open(&csv, dir, "limits.csv",
                                 "how much a process may pin, and where pinned memory lives", info,
                                 date, "chapters/ch02-pinned/05-limits");
    fprintf(out, "# unit: bytes and milliseconds; -1: unlimited or unknown\nkey,value\n");
    fprintf(out, "memlock_soft_bytes,%lld\n", f->memlock_soft_bytes);
    fprintf(out, "mem_total_bytes,%zu\n", f->total_bytes);
    fprintf(out, "available_before_bytes,%zu\n", f->available_before);
    fprintf(out, "available_pinned_bytes,%zu\n", f->available_pinned);
    fprintf(out, "available_after_bytes,%zu\n", f->available_after);
    fprintf(out, "pinned_bytes,%zu\n", f->pinned_bytes);
    fprintf(out, "pin_ms_per_gib,%.1f\n", f->pin_ms_per_gib);
    fprintf(out, "absurd_bytes,%zu\n", ABSURD_BYTES);
    fprintf(out, "absurd_refused_as_allocation,%d\n", f->absurd_refused_as_allocation);
    fprintf(out, "numa_nodes,%d\n", f->nodes);
    fprintf(out, "gpu_numa_node,%d\n", f->gpu_node);
    fprintf(out, "buffer_numa_node,%d\n", f->buffer_node);
    measure_csv_close(&csv);
}

int main(int argc, char **argv)
{
    size_t pin_bytes = 0; /* 0: the default, decided once the memory available is known */
    const char *csv_dir = NULL;
    const option_spec specs[] = {
        {"--pin", OPTION_SIZE, &pin_bytes, 0, 0},
        {"--csv", OPTION_TEXT, &csv_dir, 0, 0},
    };
    options_parse(argc, argv, usage, specs, sizeof specs / sizeof specs[0]);

    findings f = {.gpu_node = -1, .buffer_node = -1};
    char size[32], other[32];
    host_memory host = host_memory_query();
    f.total_bytes = host.total_bytes;
    f.available_before = host.available_bytes;
    if (pin_bytes == 0)
        pin_bytes =
            host.available_bytes / 4 < PIN_STEP_BYTES ? host.available_bytes / 4 : PIN_STEP_BYTES;
    if ((double)pin_bytes > PIN_SHARE_OF_AVAILABLE * (double)host.available_bytes)
        usage_error(argv[0], usage,
                    "--pin: %s is more than half of the %s this machine has available now; "
                    "pinning that much would push other programs into swap or out of memory",
                    format_bytes(pin_bytes, size, sizeof size),
                    format_bytes(host.available_bytes, other, sizeof other));

    struct rlimit memlock;
    printf("What may be locked in memory\n");
    if (getrlimit(RLIMIT_MEMLOCK, &memlock) == 0) {
        print_limit("RLIMIT_MEMLOCK, soft", memlock.rlim_cur);
        print_limit("RLIMIT_MEMLOCK, hard", memlock.rlim_max);
        f.memlock_soft_bytes = memlock.rlim_cur == RLIM_INFINITY ? -1 : (long long)memlock.rlim_cur;
    }
    printf("  %-22s %s\n", "host memory, total", format_bytes(host.total_bytes, size, sizeof size));
    printf("  %-22s %s\n", "available now", format_bytes(host.available_bytes, size, sizeof size));
    printf("  (RLIMIT_MEMLOCK bounds mlock(); the NVIDIA driver pins through its own kernel\n"
           "   module, so whether it counts against the limit is what the next step shows)\n");

    device_info info;
    CUDA_CHECK(device_info_query(0, &info));
    printf("\nPinning %s in steps of 1 GiB with cudaHostAlloc\n",
           format_bytes(pin_bytes, size, sizeof size));
    pin_in_steps(pin_bytes, &f);
    const char *failure = NULL;
    if (f.memlock_soft_bytes >= 0 && f.pinned_bytes > (size_t)f.memlock_soft_bytes)
        printf("  more than RLIMIT_MEMLOCK: the limit does not bound what CUDA pins\n");

    printf("\nAsking cudaHostAlloc for %s\n", format_bytes(ABSURD_BYTES, size, sizeof size));
    size_t available = host_memory_query().available_bytes;
    cudaError_t refused = ask_for_too_much();
    f.absurd_refused_as_allocation = refused == cudaErrorMemoryAllocation;
    printf("  -> %s%s; available before %s, after %s\n", cudaGetErrorName(refused),
           refused == cudaErrorMemoryAllocation ? " (the expected answer)" : "",
           format_bytes(available, size, sizeof size),
           format_bytes(host_memory_query().available_bytes, other, sizeof other));
    if (refused == cudaSuccess && failure == NULL)
        failure = "the runtime claimed to have pinned 1 PiB";
    bool works = context_still_works();
    printf("  then a 1 MiB pinned round trip: %s\n", works ? "arrived intact" : "BROKEN");
    if (!works && failure == NULL)
        failure = "after the refusal, a pinned round trip did not arrive intact";

    int nodes[MAX_NODES];
    f.nodes = numa_nodes(nodes, MAX_NODES);
    f.gpu_node = gpu_numa_node(info.pci_bus_id);
    printf("\nWhere pinned memory lives\n");
    printf("  NUMA nodes: %d; the GPU (%s): %s%d%s; the pinned pages: %s%d%s\n", f.nodes,
           info.pci_bus_id, f.gpu_node < 0 ? "no affinity (" : "node ", f.gpu_node,
           f.gpu_node < 0 ? ")" : "", f.buffer_node < 0 ? "unknown (" : "node ", f.buffer_node,
           f.buffer_node < 0 ? ")" : "");
    if (f.nodes > 1)
        bandwidth_by_node(nodes, f.nodes, f.gpu_node);
    else
        printf("  One node: every page is as near the GPU as any other; on a machine with two\n"
               "  sockets, memory on the socket the GPU is not attached to crosses the link\n"
               "  between the sockets too, and this program measures each node.\n");

    if (failure == NULL && csv_dir != NULL)
        write_csv(csv_dir, &f, &info);
    return verdict(failure);
}

/* 05-pageable-access.c - a kernel reading malloc'd memory directly, where the device can.
 *
 * Some systems let a GPU touch memory that malloc gave, with no pinning and no managed
 * allocation: those whose driver mirrors the process's page tables for the GPU (NVIDIA calls
 * it heterogeneous memory management, HMM: Linux with NVIDIA's open kernel modules), and those
 * whose GPU reads the host's own page tables (address translation services, ATS, as on the
 * Grace Hopper superchips). cudaDevAttrPageableMemoryAccess says which: 1 where it can, and
 * then cudaDevAttrPageableMemoryAccessUsesHostPageTables tells ATS (1) from HMM (0).
 *
 * Where it is 0, as on most discrete GPUs in x86 hosts, a kernel that touches malloc'd memory
 * fails with cudaErrorIllegalAddress, an error that poisons the context: every later CUDA call
 * of the process fails too. So this program asks first, and lets a kernel read malloc'd memory
 * only where the device says it may; there it times the read against the same kernel over a
 * copy in device memory.
 *
 *     05-pageable-access [--size SIZE]
 *
 * Its verdict: where the device can, the kernel's checksum over the malloc'd buffer equals the
 * host's; where it cannot, nothing that would poison the context was run, and that passes.
 */
#include "chapter.h"
#include "cuda_check.h"
#include "gpu_work.h"
#include "managed.h"
#include "timing.h"
#include "units.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static const char usage[] =
    "[--size SIZE]\n"
    "       --size  bytes of the malloc'd buffer; K, M, G multiply by 1024\n"
    "               (default 256M)";

static size_t parse_size_option(int argc, char **argv)
{
    size_t bytes = (size_t)256 << 20;
    const option_spec specs[] = {{"--size", OPTION_SIZE, &bytes, 0, 0}};
    options_parse(argc, argv, usage, specs, sizeof specs / sizeof specs[0]);
    if (bytes < MANAGED_PAGE_BYTES || bytes % MANAGED_PAGE_BYTES != 0)
        usage_error(argv[0], usage, "--size: %zu bytes is not a whole number of 4K pages", bytes);
    return bytes;
}

/* listing: pageable-read */
/* A kernel reads `bytes` of malloc'd memory in place, then the same bytes copied to device
 * memory; both checksums must equal the host's. Only where pageableMemoryAccess is 1. */
static bool read_malloced_memory(size_t bytes)
{
    uint32_t *h_words = host_alloc(bytes);
    managed_fill_words(h_words, bytes / sizeof(uint32_t), 0);
    const unsigned long long want = gpu_work_checksum_host(h_words, bytes, 1);
    void *d_copy = NULL;
    unsigned long long *d_sum = NULL;
    CUDA_CHECK(cudaMalloc(&d_copy, bytes));
    CUDA_CHECK(cudaMalloc((void **)&d_sum, sizeof *d_sum));
    event_timer timer;
    CUDA_CHECK(event_timer_create(&timer));

    double in_place_ms = 0, copy_ms = 0, read_copy_ms = 0;
    bool right = managed_timed_checksum(0, h_words, bytes, d_sum, want, &timer, &in_place_ms);
    const double start = host_clock_ms();
    CUDA_CHECK(cudaMemcpy(d_copy, h_words, bytes, cudaMemcpyHostToDevice));
    copy_ms = host_clock_ms() - start;
    right &= managed_timed_checksum(0, d_copy, bytes, d_sum, want, &timer, &read_copy_ms);

    printf("  a kernel reading the malloc'd buffer in place %10.3f ms %8.1f GB/s\n", in_place_ms,
           bandwidth_gb_per_s(bytes, in_place_ms));
    printf("  cudaMemcpy of it to device memory             %10.3f ms %8.1f GB/s\n", copy_ms,
           bandwidth_gb_per_s(bytes, copy_ms));
    printf("  the same kernel reading the copy              %10.3f ms %8.1f GB/s\n", read_copy_ms,
           bandwidth_gb_per_s(bytes, read_copy_ms));
    CUDA_CHECK(event_timer_destroy(&timer));
    CUDA_CHECK(cudaFree(d_sum));
    CUDA_CHECK(cudaFree(d_copy));
    free(h_words);
    return right;
}
/* end listing: pageable-read */

int main(int argc, char **argv)
{
    const size_t bytes = parse_size_option(argc, argv);
    gpu_work_require("the kernel that reads the malloc'd buffer");
    int pageable = 0, host_page_tables = 0;
    CUDA_CHECK(cudaDeviceGetAttribute(&pageable, cudaDevAttrPageableMemoryAccess, 0));
    CUDA_CHECK(cudaDeviceGetAttribute(&host_page_tables,
                                      cudaDevAttrPageableMemoryAccessUsesHostPageTables, 0));
    printf("pageableMemoryAccess %d, pageableMemoryAccessUsesHostPageTables %d\n", pageable,
           host_page_tables);
    if (!pageable) {
        printf("This device cannot touch malloc'd memory: a kernel that tried would fail with\n"
               "cudaErrorIllegalAddress and poison the context, so none is run. Give the GPU\n"
               "memory it can reach: device memory and a copy (chapter 1), pinned memory\n"
               "(chapter 2), or managed memory (01-one-pointer).\n");
        return verdict(NULL);
    }
    char size[32];
    printf("The device reads malloc'd memory through %s; %s of it:\n",
           host_page_tables ? "the host's own page tables (ATS)"
                            : "the driver's mirror of them (HMM)",
           format_bytes(bytes, size, sizeof size));
    return verdict(read_malloced_memory(bytes) ? NULL : "a checksum differs from the host's");
}

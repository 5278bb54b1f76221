/* 01-two-memories.c - host memory and device memory on this machine, and the link between them.
 *
 * A discrete GPU has its own memory, separate from the host's, and the only
 * road between the two is the PCIe link. Look at three numbers: how much
 * memory each side has, how fast the GPU can read its own memory, and how
 * fast the link can carry data to it. The ratio of the last two is why this
 * course exists: every byte a GPU works on has to cross the slow link first,
 * unless it is already there.
 *
 * The link is read through NVML, opened at run time; without it the program
 * says so and reports the rest.
 */
#include "chapter.h"
#include "cuda_check.h"
#include "device_info.h"
#include "host_memory.h"
#include "nvml_link.h"
#include "pcie.h"
#include "units.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

static const char usage[] = "(no arguments: it describes device 0 of this machine)";

int main(int argc, char **argv)
{
    if (argc > 1)
        usage_exit_on_help(argv[1], argv[0], usage);
    if (argc > 1)
        usage_error(argv[0], usage, "unexpected argument '%s'", argv[1]);

    char total[32], available[32], version[2][16];
    const char *failure = NULL;

    host_memory host = host_memory_query();
    printf("Host memory (the CPU's DRAM, what malloc hands out)\n");
    printf("  total            %s\n", format_bytes(host.total_bytes, total, sizeof total));
    printf("  available now    %s\n",
           format_bytes(host.available_bytes, available, sizeof available));
    verdict_require(host.total_bytes > 0, "host memory: the total is zero", &failure);
    verdict_require(host.available_bytes <= host.total_bytes,
                    "host memory: more available than in all", &failure);

    int devices = 0;
    CUDA_CHECK(cudaGetDeviceCount(&devices));
    device_info device;
    CUDA_CHECK(device_info_query(0, &device));
    printf("\nDevice memory (the GPU's own, what cudaMalloc hands out)\n");
    printf("  device           0 of %d: %s (compute capability %d.%d)\n", devices, device.name,
           device.compute_major, device.compute_minor);
    printf("  driver/runtime   CUDA %s / %s\n",
           cuda_version_string(device.driver_version, version[0], sizeof version[0]),
           cuda_version_string(device.runtime_version, version[1], sizeof version[1]));
    printf("  total            %s\n", format_bytes(device.total_bytes, total, sizeof total));
    printf("  free now         %s\n", format_bytes(device.free_bytes, available, sizeof available));
    printf("  bandwidth        %.0f GB/s in theory: %d MHz x 2 (double data rate) x %d bits / 8\n",
           device.memory_gb_per_s, device.memory_clock_khz / 1000, device.memory_bus_width_bits);
    verdict_require(device.total_bytes > 0, "device memory: the total is zero", &failure);
    verdict_require(device.free_bytes <= device.total_bytes, "device memory: more free than in all",
                    &failure);
    verdict_require(device.memory_gb_per_s > 0, "device memory: the bandwidth is not positive",
                    &failure);

    printf("\nThe link between them (PCI Express, as NVML reports it)\n");
    pcie_link link;
    char why[256];
    if (!pcie_link_query(0, &link, why, sizeof why)) {
        printf("  unknown: %s\n", why);
        printf("  (02-pcie-table lists what each generation and width would carry)\n");
    } else {
        printf("  bus id           %s\n", link.pci_bus_id);
        printf("  maximum          Gen%u x%u\n", link.max_generation, link.max_width);
        printf("  current          Gen%u x%u%s\n", link.current_generation, link.current_width,
               link.current_generation < link.max_generation || link.current_width < link.max_width
                   ? "  (an idle GPU slows its link to save power; traffic restores it)"
                   : "");
        /* The theoretical figure is the maximum's: the current state is a power
         * saving that lasts only until the first large copy. */
        double pcie = pcie_gb_per_s((int)link.max_generation, (int)link.max_width);
        verdict_require(link.max_generation > 0 && link.max_width > 0 &&
                            link.current_generation > 0 && link.current_width > 0,
                        "PCIe: NVML reported a generation or a width of 0", &failure);
        if (pcie <= 0)
            printf(
                "  bandwidth        unknown: Gen%u is not in this course's table (common/pcie.c)\n",
                link.max_generation);
        else {
            printf("  bandwidth        %.1f GB/s each way in theory, at the maximum Gen%u x%u\n",
                   pcie, link.max_generation, link.max_width);
            printf("\nThe GPU reads its own memory %.0f times faster than it can be fed over PCIe\n"
                   "(%.0f GB/s against %.1f GB/s).\n",
                   device.memory_gb_per_s / pcie, device.memory_gb_per_s, pcie);
        }
    }
    if (device.total_bytes < host.total_bytes && device.total_bytes > 0)
        printf("\nHost memory is %.1f times the size of device memory: not everything the host\n"
               "holds fits on the GPU at once.\n",
               (double)host.total_bytes / (double)device.total_bytes);
    else
        printf("\nDevice memory is larger than host memory on this machine.\n");
    return verdict(failure);
}

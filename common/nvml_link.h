/* nvml_link.h - a GPU's PCIe link, and how two GPUs are linked, as NVML reports them, with NVML
 * opened at run time.
 *
 * The CUDA runtime does not say how the GPU is attached; NVML (the library
 * behind nvidia-smi, libnvidia-ml.so.1, installed with the driver) does. It is
 * opened with dlopen rather than linked, so the course builds where the driver
 * and nvml.h are absent and a program can carry on without it.
 *
 * A link has a maximum generation and width, what the GPU and the slot agreed
 * on, and a current one: an idle GPU drops its link to a slower generation to
 * save power and raises it again as soon as there is traffic. The theoretical
 * bandwidth of the link is the maximum's.
 */
#ifndef COURSE_NVML_LINK_H
#define COURSE_NVML_LINK_H

#include <stdbool.h>
#include <stddef.h>

typedef struct pcie_link {
    char pci_bus_id[32]; /* domain:bus:device.function */
    unsigned current_generation, current_width;
    unsigned max_generation, max_width;
} pcie_link;

/* Fills link for CUDA device `ordinal` (found in NVML by its PCI bus id).
 * Returns true on success. Otherwise returns false and writes why into `why`
 * (no CUDA device, no libnvidia-ml.so.1, or the NVML call that failed); it
 * prints nothing and never exits, since every caller can do without the link. */
bool pcie_link_query(int ordinal, pcie_link *link, char *why, size_t why_size);

/* How two GPUs reach each other, as NVML sees it from the first: its active NVLinks that end at
 * the second GPU, those that end at an NVSwitch (which reaches every GPU on the switch), and
 * where their PCIe paths meet (NVML's nvmlGpuTopologyLevel_t: 0 the same board, 10 one PCIe
 * switch, 20 several, 30 a host bridge, 40 a NUMA node's host bridges, 50 across sockets). */
typedef struct gpu_pair_link {
    unsigned direct_nvlinks, switch_nvlinks;
    int pcie_level;
} gpu_pair_link;

/* Fills link for CUDA devices `first` and `second`; as pcie_link_query, true on success, else
 * false and why, printing nothing. */
bool gpu_pair_link_query(int first, int second, gpu_pair_link *link, char *why, size_t why_size);

/* "NVLink x18", "NVSwitch, NVLink x18" or "PCIe, one PCIe switch" into buf; returns buf. */
const char *gpu_pair_link_describe(const gpu_pair_link *link, char *buf, size_t size);

#endif

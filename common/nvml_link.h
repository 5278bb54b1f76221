/* nvml_link.h - a GPU's PCIe link as NVML reports it, with NVML opened at run time.
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

#endif

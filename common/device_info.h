/* device_info.h - what a CUDA device says about itself, in the units this course uses. */
#ifndef COURSE_DEVICE_INFO_H
#define COURSE_DEVICE_INFO_H

#include <cuda_runtime_api.h>
#include <stddef.h>

typedef struct device_info {
    int ordinal;
    char name[256];
    int compute_major, compute_minor;
    size_t total_bytes, free_bytes;
    int memory_clock_khz; /* peak memory clock */
    int memory_bus_width_bits;
    double memory_gb_per_s; /* theoretical: clock * 2 (double data rate) * bus width / 8 */
    int copy_engines;       /* engines that can copy while the GPU computes */
    int unified_addressing; /* host and device pointers share one address space */
    char pci_bus_id[32];    /* domain:bus:device.function, for NVML */
    int driver_version, runtime_version; /* e.g. 13000 for 13.0 */
} device_info;

/* Fills info for device `ordinal`; returns the first runtime error. */
cudaError_t device_info_query(int ordinal, device_info *info);

/* "13.0" from 13000. */
const char *cuda_version_string(int version, char *buf, size_t size);

/* Why there is no device, in words, for the error cudaGetDeviceCount returned. With no NVIDIA
 * driver loaded at all, the runtime says its driver is "insufficient"; this says that no driver
 * is there. Returns buf. */
const char *no_device_reason(cudaError_t err, char *buf, size_t size);

#endif

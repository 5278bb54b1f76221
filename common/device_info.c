/* device_info.c - device properties through the CUDA runtime. */
#include "device_info.h"

#include "cuda_check.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

cudaError_t device_info_query(int ordinal, device_info *info)
{
    memset(info, 0, sizeof *info);
    info->ordinal = ordinal;
    struct cudaDeviceProp prop;
    cudaError_t err = CUDA_CHECK(cudaGetDeviceProperties(&prop, ordinal));
    if (err != cudaSuccess)
        return err;
    snprintf(info->name, sizeof info->name, "%s", prop.name);
    info->compute_major = prop.major;
    info->compute_minor = prop.minor;
    info->memory_bus_width_bits = prop.memoryBusWidth;
    info->copy_engines = prop.asyncEngineCount;
    info->unified_addressing = prop.unifiedAddressing;
    /* The memory clock left cudaDeviceProp in CUDA 13; the attribute remains. */
    if ((err = CUDA_CHECK(cudaDeviceGetAttribute(&info->memory_clock_khz,
                                                 cudaDevAttrMemoryClockRate, ordinal))) ||
        (err = CUDA_CHECK(
             cudaDeviceGetPCIBusId(info->pci_bus_id, sizeof info->pci_bus_id, ordinal))) ||
        (err = CUDA_CHECK(cudaSetDevice(ordinal))) ||
        (err = CUDA_CHECK(cudaMemGetInfo(&info->free_bytes, &info->total_bytes))) ||
        (err = CUDA_CHECK(cudaDriverGetVersion(&info->driver_version))) ||
        (err = CUDA_CHECK(cudaRuntimeGetVersion(&info->runtime_version))))
        return err;
    info->memory_gb_per_s =
        info->memory_clock_khz * 1e3 * 2 * (info->memory_bus_width_bits / 8.0) / 1e9;
    return cudaSuccess;
}

const char *cuda_version_string(int version, char *buf, size_t size)
{
    snprintf(buf, size, "%d.%d", version / 1000, version % 1000 / 10);
    return buf;
}

const char *no_device_reason(cudaError_t err, char *buf, size_t size)
{
    /* The kernel module publishes this file while it is loaded, whatever the GPU. */
    bool driver_loaded = access("/proc/driver/nvidia/version", F_OK) == 0;
    if (!driver_loaded && (err == cudaErrorInsufficientDriver || err == cudaErrorNoDevice))
        snprintf(buf, size, "no NVIDIA driver is loaded (the CUDA runtime says %s)",
                 cudaGetErrorName(err));
    else
        cuda_error_describe(err, buf, size);
    return buf;
}

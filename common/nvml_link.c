/* nvml_link.c - the PCIe link through NVML, opened with dlopen. */
#include "nvml_link.h"

#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

/* The little of nvml.h used here, declared to match it, since nvml.h is not
 * installed on every machine that builds the course. nvmlReturn_t is an enum
 * whose 0 is NVML_SUCCESS; nvmlDevice_t is an opaque pointer. */
typedef int nvml_return;
typedef struct nvml_device_st *nvml_device;
#define NVML_SUCCESS 0

typedef struct nvml_api {
    nvml_return (*init)(void);
    nvml_return (*shutdown)(void);
    const char *(*error_string)(nvml_return result);
    nvml_return (*handle_by_pci_bus_id)(const char *pci_bus_id, nvml_device *device);
    nvml_return (*current_generation)(nvml_device device, unsigned *generation);
    nvml_return (*current_width)(nvml_device device, unsigned *width);
    nvml_return (*max_generation)(nvml_device device, unsigned *generation);
    nvml_return (*max_width)(nvml_device device, unsigned *width);
} nvml_api;

_Static_assert(sizeof(void *) == sizeof(void (*)(void)),
               "POSIX dlsym returns functions as void *; they must fit");

/* Stores the address of `name` into the function pointer at `function`. ISO C
 * has no conversion from void * to a function pointer; POSIX guarantees the
 * representation, so the bytes are copied instead of cast. */
static bool load(void *library, const char *name, void *function, char *why, size_t why_size)
{
    void *symbol = dlsym(library, name);
    if (symbol == NULL) {
        snprintf(why, why_size, "libnvidia-ml.so.1 has no %s", name);
        return false;
    }
    memcpy(function, &symbol, sizeof symbol);
    return true;
}

static bool failed(const nvml_api *nvml, nvml_return result, const char *call, char *why,
                   size_t why_size)
{
    if (result == NVML_SUCCESS)
        return false;
    snprintf(why, why_size, "NVML: %s failed: %s", call, nvml->error_string(result));
    return true;
}

bool pcie_link_query(int ordinal, pcie_link *link, char *why, size_t why_size)
{
    memset(link, 0, sizeof *link);
    snprintf(why, why_size, "no reason recorded");

    /* A tolerated failure, not an error to check: without a device there is
     * simply no link to describe, and the caller says so. */
    cudaError_t err = cudaDeviceGetPCIBusId(link->pci_bus_id, sizeof link->pci_bus_id, ordinal);
    if (err != cudaSuccess) {
        snprintf(why, why_size, "the CUDA runtime has no device %d: %s", ordinal,
                 cudaGetErrorName(err));
        return false;
    }

    void *library = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) {
        snprintf(why, why_size, "NVML is not installed: %s", dlerror());
        return false;
    }
    nvml_api nvml;
    bool ok =
        load(library, "nvmlInit_v2", &nvml.init, why, why_size) &&
        load(library, "nvmlShutdown", &nvml.shutdown, why, why_size) &&
        load(library, "nvmlErrorString", &nvml.error_string, why, why_size) &&
        load(library, "nvmlDeviceGetHandleByPciBusId_v2", &nvml.handle_by_pci_bus_id, why,
             why_size) &&
        load(library, "nvmlDeviceGetCurrPcieLinkGeneration", &nvml.current_generation, why,
             why_size) &&
        load(library, "nvmlDeviceGetCurrPcieLinkWidth", &nvml.current_width, why, why_size) &&
        load(library, "nvmlDeviceGetMaxPcieLinkGeneration", &nvml.max_generation, why, why_size) &&
        load(library, "nvmlDeviceGetMaxPcieLinkWidth", &nvml.max_width, why, why_size);
    if (ok && !failed(&nvml, nvml.init(), "nvmlInit_v2", why, why_size)) {
        nvml_device device;
        ok = !failed(&nvml, nvml.handle_by_pci_bus_id(link->pci_bus_id, &device),
                     "nvmlDeviceGetHandleByPciBusId_v2", why, why_size) &&
             !failed(&nvml, nvml.current_generation(device, &link->current_generation),
                     "nvmlDeviceGetCurrPcieLinkGeneration", why, why_size) &&
             !failed(&nvml, nvml.current_width(device, &link->current_width),
                     "nvmlDeviceGetCurrPcieLinkWidth", why, why_size) &&
             !failed(&nvml, nvml.max_generation(device, &link->max_generation),
                     "nvmlDeviceGetMaxPcieLinkGeneration", why, why_size) &&
             !failed(&nvml, nvml.max_width(device, &link->max_width),
                     "nvmlDeviceGetMaxPcieLinkWidth", why, why_size);
        nvml.shutdown();
    } else {
        ok = false;
    }
    dlclose(library);
    return ok;
}

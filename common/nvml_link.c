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

/* nvmlPciInfo_t as nvml.h lays it out since NVML 2.285 (the _v2 calls'); only busId is read. */
typedef struct nvml_pci_info {
    char bus_id_legacy[16];
    unsigned domain, bus, device, pci_device_id, pci_subsystem_id;
    char bus_id[32];
} nvml_pci_info;
#define NVML_FEATURE_ENABLED 1   /* nvmlEnableState_t */
#define NVML_NVLINK_MAX_LINKS 18 /* links a GPU may have: a link number past its own is refused */
#define NVML_NVLINK_DEVICE_TYPE_SWITCH 2 /* nvmlIntNvLinkDeviceType_t */

typedef struct nvml_api {
    void *library;
    nvml_return (*init)(void);
    nvml_return (*shutdown)(void);
    const char *(*error_string)(nvml_return result);
    nvml_return (*handle_by_pci_bus_id)(const char *pci_bus_id, nvml_device *device);
    /* pcie_link_query's */
    nvml_return (*current_generation)(nvml_device device, unsigned *generation);
    nvml_return (*current_width)(nvml_device device, unsigned *width);
    nvml_return (*max_generation)(nvml_device device, unsigned *generation);
    nvml_return (*max_width)(nvml_device device, unsigned *width);
    /* gpu_pair_link_query's */
    nvml_return (*common_ancestor)(nvml_device a, nvml_device b, int *level);
    nvml_return (*nvlink_state)(nvml_device device, unsigned link, int *active);
    nvml_return (*nvlink_remote_pci)(nvml_device device, unsigned link, nvml_pci_info *pci);
    nvml_return (*nvlink_remote_type)(nvml_device device, unsigned link, int *type);
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

/* Opens libnvidia-ml.so.1 and initialises NVML with the calls every query makes; true on
 * success, else false with why (and nothing left open). */
static bool nvml_open(nvml_api *nvml, char *why, size_t why_size)
{
    memset(nvml, 0, sizeof *nvml);
    nvml->library = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (nvml->library == NULL) {
        snprintf(why, why_size, "NVML is not installed: %s", dlerror());
        return false;
    }
    void *library = nvml->library;
    bool ok = load(library, "nvmlInit_v2", &nvml->init, why, why_size) &&
              load(library, "nvmlShutdown", &nvml->shutdown, why, why_size) &&
              load(library, "nvmlErrorString", &nvml->error_string, why, why_size) &&
              load(library, "nvmlDeviceGetHandleByPciBusId_v2", &nvml->handle_by_pci_bus_id, why,
                   why_size) &&
              !failed(nvml, nvml->init(), "nvmlInit_v2", why, why_size);
    if (!ok)
        dlclose(library);
    return ok;
}

static void nvml_close(nvml_api *nvml)
{
    nvml->shutdown();
    dlclose(nvml->library);
}

/* The NVML device of CUDA device `ordinal`, found by its PCI bus id (into pci_bus_id). */
static bool nvml_device_of(const nvml_api *nvml, int ordinal, nvml_device *device,
                           char pci_bus_id[32], char *why, size_t why_size)
{
    /* A tolerated failure, not an error to check: without a device there is
     * simply no link to describe, and the caller says so. */
    cudaError_t err = cudaDeviceGetPCIBusId(pci_bus_id, 32, ordinal);
    if (err != cudaSuccess) {
        snprintf(why, why_size, "the CUDA runtime has no device %d: %s", ordinal,
                 cudaGetErrorName(err));
        return false;
    }
    return !failed(nvml, nvml->handle_by_pci_bus_id(pci_bus_id, device),
                   "nvmlDeviceGetHandleByPciBusId_v2", why, why_size);
}

bool pcie_link_query(int ordinal, pcie_link *link, char *why, size_t why_size)
{
    memset(link, 0, sizeof *link);
    snprintf(why, why_size, "no reason recorded");
    nvml_api nvml;
    if (!nvml_open(&nvml, why, why_size))
        return false;
    nvml_device device;
    void *library = nvml.library;
    bool ok =
        load(library, "nvmlDeviceGetCurrPcieLinkGeneration", &nvml.current_generation, why,
             why_size) &&
        load(library, "nvmlDeviceGetCurrPcieLinkWidth", &nvml.current_width, why, why_size) &&
        load(library, "nvmlDeviceGetMaxPcieLinkGeneration", &nvml.max_generation, why, why_size) &&
        load(library, "nvmlDeviceGetMaxPcieLinkWidth", &nvml.max_width, why, why_size) &&
        nvml_device_of(&nvml, ordinal, &device, link->pci_bus_id, why, why_size) &&
        !failed(&nvml, nvml.current_generation(device, &link->current_generation),
                "nvmlDeviceGetCurrPcieLinkGeneration", why, why_size) &&
        !failed(&nvml, nvml.current_width(device, &link->current_width),
                "nvmlDeviceGetCurrPcieLinkWidth", why, why_size) &&
        !failed(&nvml, nvml.max_generation(device, &link->max_generation),
                "nvmlDeviceGetMaxPcieLinkGeneration", why, why_size) &&
        !failed(&nvml, nvml.max_width(device, &link->max_width), "nvmlDeviceGetMaxPcieLinkWidth",
                why, why_size);
    nvml_close(&nvml);
    return ok;
}

/* listing: count-nvlinks */
/* Counts from's active NVLinks that end at `to` (direct) or at an NVSwitch. A link that NVML
 * refuses to describe (a number past the GPU's own links, or a GPU without NVLink, which
 * answers "not supported" for all) is no link. */
static void count_nvlinks(const nvml_api *nvml, nvml_device from, nvml_device to,
                          gpu_pair_link *link)
{
    for (unsigned l = 0; l < NVML_NVLINK_MAX_LINKS; l++) {
        int active = 0, type = -1;
        nvml_pci_info remote;
        nvml_device remote_device;
        if (nvml->nvlink_state(from, l, &active) != NVML_SUCCESS || active != NVML_FEATURE_ENABLED)
            continue;
        if (nvml->nvlink_remote_type != NULL &&
            nvml->nvlink_remote_type(from, l, &type) == NVML_SUCCESS &&
            type == NVML_NVLINK_DEVICE_TYPE_SWITCH) {
            link->switch_nvlinks++;
            continue;
        }
        if (nvml->nvlink_remote_pci(from, l, &remote) == NVML_SUCCESS &&
            nvml->handle_by_pci_bus_id(remote.bus_id, &remote_device) == NVML_SUCCESS &&
            remote_device == to)
            link->direct_nvlinks++;
    }
}
/* end listing: count-nvlinks */

bool gpu_pair_link_query(int first, int second, gpu_pair_link *link, char *why, size_t why_size)
{
    memset(link, 0, sizeof *link);
    link->pcie_level = -1;
    snprintf(why, why_size, "no reason recorded");
    nvml_api nvml;
    if (!nvml_open(&nvml, why, why_size))
        return false;
    void *library = nvml.library;
    /* Optional: older drivers lack it, and then a switch's links go uncounted. */
    void *remote_type = dlsym(library, "nvmlDeviceGetNvLinkRemoteDeviceType");
    memcpy(&nvml.nvlink_remote_type, &remote_type, sizeof remote_type);
    nvml_device a, b;
    char bus_id[32];
    bool ok = load(library, "nvmlDeviceGetTopologyCommonAncestor", &nvml.common_ancestor, why,
                   why_size) &&
              load(library, "nvmlDeviceGetNvLinkState", &nvml.nvlink_state, why, why_size) &&
              load(library, "nvmlDeviceGetNvLinkRemotePciInfo_v2", &nvml.nvlink_remote_pci, why,
                   why_size) &&
              nvml_device_of(&nvml, first, &a, bus_id, why, why_size) &&
              nvml_device_of(&nvml, second, &b, bus_id, why, why_size) &&
              !failed(&nvml, nvml.common_ancestor(a, b, &link->pcie_level),
                      "nvmlDeviceGetTopologyCommonAncestor", why, why_size);
    if (ok)
        count_nvlinks(&nvml, a, b, link);
    nvml_close(&nvml);
    return ok;
}

const char *gpu_pair_link_describe(const gpu_pair_link *link, char *buf, size_t size)
{
    /* nvmlGpuTopologyLevel_t: how far up the PCIe tree the two GPUs' paths meet. */
    const char *pcie = link->pcie_level == 0    ? "one board"
                       : link->pcie_level <= 10 ? "one PCIe switch"
                       : link->pcie_level <= 20 ? "PCIe switches"
                       : link->pcie_level <= 30 ? "a host bridge"
                       : link->pcie_level <= 40 ? "host bridges of a NUMA node"
                                                : "across CPU sockets";
    if (link->direct_nvlinks > 0)
        snprintf(buf, size, "NVLink x%u", link->direct_nvlinks);
    else if (link->switch_nvlinks > 0)
        snprintf(buf, size, "NVSwitch, NVLink x%u", link->switch_nvlinks);
    else
        snprintf(buf, size, "PCIe, %s", pcie);
    return buf;
}

/* device_memory.c - a process's device memory as NVML reports it (device_memory.h). */
#include "device_memory.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

/* The little of nvml.h used here, declared to match it (nvml.h is not installed everywhere):
 * nvmlProcessInfo_t as nvmlDeviceGetComputeRunningProcesses_v3 fills it. */
typedef struct nvml_process {
    unsigned int pid;
    unsigned long long used_gpu_memory;
    unsigned int gpu_instance_id, compute_instance_id;
} nvml_process;
typedef struct nvml_device_st *nvml_device;
#define NVML_SUCCESS 0
#define NVML_ERROR_INSUFFICIENT_SIZE 7
#define NVML_VALUE_NOT_AVAILABLE (~0ULL)

static struct {
    nvml_device device;
    int (*processes)(nvml_device, unsigned int *, nvml_process *);
    bool open;
    pthread_mutex_t lock;
} nvml = {NULL, NULL, false, PTHREAD_MUTEX_INITIALIZER};

static bool load(void *library, const char *name, void *function)
{
    void *symbol = dlsym(library, name);
    if (symbol != NULL)
        memcpy(function, &symbol, sizeof symbol); /* POSIX: a function's address as void * */
    return symbol != NULL;
}

bool device_memory_open(const char *pci_bus_id, char *why, size_t why_size)
{
    if (nvml.open)
        return true;
    void *library = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) {
        snprintf(why, why_size, "NVML is not installed (%s)", dlerror());
        return false;
    }
    int (*init)(void) = NULL;
    int (*by_bus_id)(const char *, nvml_device *) = NULL;
    if (!load(library, "nvmlInit_v2", &init) ||
        !load(library, "nvmlDeviceGetHandleByPciBusId_v2", &by_bus_id) ||
        !load(library, "nvmlDeviceGetComputeRunningProcesses_v3", &nvml.processes)) {
        snprintf(why, why_size, "this NVML lacks the calls that report a process's memory");
        return false;
    }
    if (init() != NVML_SUCCESS || by_bus_id(pci_bus_id, &nvml.device) != NVML_SUCCESS) {
        snprintf(why, why_size, "NVML does not know the device at %s", pci_bus_id);
        return false;
    }
    nvml.open = true; /* NVML stays open for the process's life: it is asked every few ms */
    return true;
}

bool device_memory_of(pid_t pid, unsigned long long *bytes)
{
    if (!nvml.open)
        return false;
    static nvml_process processes[256];
    unsigned int count = sizeof processes / sizeof processes[0];
    pthread_mutex_lock(&nvml.lock);
    const int result = nvml.processes(nvml.device, &count, processes);
    bool found = false;
    *bytes = 0;
    for (unsigned int i = 0; result == NVML_SUCCESS && i < count; i++)
        if (processes[i].pid == (unsigned int)pid &&
            processes[i].used_gpu_memory != NVML_VALUE_NOT_AVAILABLE) {
            *bytes = processes[i].used_gpu_memory;
            found = true;
        }
    pthread_mutex_unlock(&nvml.lock);
    return result == NVML_SUCCESS && (found || count < sizeof processes / sizeof processes[0]);
}

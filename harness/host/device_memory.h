/* device_memory.h - what the device itself says a process holds of its memory (NVML).
 *
 * The worker's ledger sees the device memory the learner's code allocates through the traced
 * calls; the device sees all of it: a stack size limit raised, a module's globals, memory
 * reached by a call the allowlist does not name. NVML (libnvidia-ml.so.1, opened at run time)
 * reports each process's device memory, by its pid in the caller's pid namespace. Where it is
 * missing (no driver, the stand-in runtime) every query says so and the ledger alone counts.
 */
#ifndef COURSE_DEVICE_MEMORY_H
#define COURSE_DEVICE_MEMORY_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Opens NVML for the device with this PCI bus id; false, with why, where it cannot. */
bool device_memory_open(const char *pci_bus_id, char *why, size_t why_size);
/* The device memory process pid holds, in bytes, into *bytes (0 when it holds none, or is not
 * on the device); false when NVML cannot say. Safe to call from any thread once opened. */
bool device_memory_of(pid_t pid, unsigned long long *bytes);

#endif

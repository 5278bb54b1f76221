/* host_memory.h - how much memory the host has, and how much it could hand out now. */
#ifndef COURSE_HOST_MEMORY_H
#define COURSE_HOST_MEMORY_H

#include <stddef.h>

typedef struct host_memory {
    size_t total_bytes;     /* MemTotal: the RAM the kernel manages */
    size_t available_bytes; /* MemAvailable: what it could give a program without swapping */
} host_memory;

/* From /proc/meminfo; without it (or without MemAvailable, before Linux 3.14), from sysconf,
 * whose "available" counts only free pages, not the page cache the kernel could drop. */
host_memory host_memory_query(void);

/* One field of /proc/meminfo in bytes ("MemTotal", "Mlocked"); 0 if it is missing. */
size_t meminfo_bytes(const char *field);

#endif

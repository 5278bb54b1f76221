/* host_memory.c - the host's memory, from /proc/meminfo. */
#include "host_memory.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

size_t meminfo_bytes(const char *field)
{
    FILE *meminfo = fopen("/proc/meminfo", "r");
    if (meminfo == NULL)
        return 0;
    char line[256];
    size_t field_length = strlen(field);
    unsigned long long kib = 0;
    while (fgets(line, sizeof line, meminfo))
        if (strncmp(line, field, field_length) == 0 && line[field_length] == ':') {
            sscanf(line + field_length + 1, "%llu", &kib);
            break;
        }
    fclose(meminfo);
    return (size_t)kib * 1024; /* the "kB" of /proc/meminfo is KiB */
}

host_memory host_memory_query(void)
{
    host_memory host = {meminfo_bytes("MemTotal"), meminfo_bytes("MemAvailable")};
    long page = sysconf(_SC_PAGE_SIZE);
    if (host.total_bytes == 0 && page > 0)
        host.total_bytes = (size_t)sysconf(_SC_PHYS_PAGES) * (size_t)page;
    if (host.available_bytes == 0 && page > 0)
        host.available_bytes = (size_t)sysconf(_SC_AVPHYS_PAGES) * (size_t)page;
    return host;
}

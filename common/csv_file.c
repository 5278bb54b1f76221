/* csv_file.c - CSV files with provenance lines, written under a temporary name. */
#include "csv_file.h"

#include "chapter.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

const char *utc_timestamp(char *buf, size_t size)
{
    time_t now = time(NULL);
    struct tm utc;
    if (gmtime_r(&now, &utc) == NULL || strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &utc) == 0)
        snprintf(buf, size, "unknown");
    return buf;
}

const char *host_cpu_name(char *name, size_t size)
{
    snprintf(name, size, "unknown CPU");
    FILE *file = fopen("/proc/cpuinfo", "r");
    if (file == NULL)
        return name;
    char line[512];
    while (fgets(line, sizeof line, file)) {
        char *colon = strchr(line, ':');
        if (strncmp(line, "model name", 10) == 0 && colon != NULL) {
            snprintf(name, size, "%s", colon + 2);
            name[strcspn(name, "\n")] = '\0';
            break;
        }
    }
    fclose(file);
    return name;
}

static _Noreturn void cannot_write(const char *path)
{
    fflush(stdout);
    fprintf(stderr, "cannot write %s: %s\n", path, strerror(errno));
    exit(EXIT_FAILURE);
}

void csv_file_open(csv_file *csv, const char *dir, const char *name, const char *what,
                   const char *made_by, const device_info *info, const char *date)
{
    if (mkdir(dir, 0777) != 0 && errno != EEXIST)
        cannot_write(dir);
    snprintf(csv->path, sizeof csv->path, "%s/%s", dir, name);
    snprintf(csv->partial, sizeof csv->partial, "%s/.%s.tmp", dir, name);
    csv->out = fopen(csv->partial, "w");
    if (csv->out == NULL)
        cannot_write(csv->partial);
    char cpu[256];
    csv_write_provenance(csv->out, what, info, date);
    fprintf(csv->out, "# host: %s\n# made by: %s\n", host_cpu_name(cpu, sizeof cpu), made_by);
}

void csv_file_close(csv_file *csv)
{
    if (fclose(csv->out) != 0 || rename(csv->partial, csv->path) != 0)
        cannot_write(csv->path);
    csv->out = NULL;
    printf("wrote %s\n", csv->path);
}

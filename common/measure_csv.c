/* measure_csv.c - the CSV files of `make measure`: their provenance, and written whole or not at
 * all. */
#include "measure_csv.h"

#include "chapter.h"
#include "cuda_check.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

void measure_date_now(char *date, size_t size)
{
    time_t now = time(NULL);
    struct tm utc;
    if (gmtime_r(&now, &utc) == NULL || strftime(date, size, "%Y-%m-%dT%H:%M:%SZ", &utc) == 0)
        snprintf(date, size, "unknown");
}

void host_cpu_name(char *name, size_t size)
{
    snprintf(name, size, "unknown CPU");
    FILE *file = fopen("/proc/cpuinfo", "r");
    if (file == NULL)
        return;
    char line[512];
    while (fgets(line, sizeof line, file)) {
        char *colon = strchr(line, ':');
        if (strncmp(line, "model name", 10) == 0 && colon != NULL) {
            snprintf(name, size, "%s", colon + 1 + (colon[1] == ' '));
            name[strcspn(name, "\n")] = '\0';
            break;
        }
    }
    fclose(file);
}

void measure_dir_create(const char *dir)
{
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
        fflush(stdout);
        fprintf(stderr, "cannot create %s: %s\n", dir, strerror(errno));
        exit(EXIT_FAILURE);
    }
}

FILE *measure_csv_open(measure_csv *csv, const char *dir, const char *name, const char *what,
                       const device_info *info, const char *date, const char *made_by)
{
    char cpu[256];
    snprintf(csv->path, sizeof csv->path, "%s/%s", dir, name);
    snprintf(csv->partial, sizeof csv->partial, "%s/.%s.tmp", dir, name);
    csv->file = fopen(csv->partial, "w");
    if (csv->file == NULL) {
        fflush(stdout);
        fprintf(stderr, "cannot write %s: %s\n", csv->partial, strerror(errno));
        exit(EXIT_FAILURE);
    }
    host_cpu_name(cpu, sizeof cpu);
    csv_write_provenance(csv->file, what, info, date);
    fprintf(csv->file, "# host: %s\n# made by: %s (make measure)\n", cpu, made_by);
    return csv->file;
}

FILE *measure_csv_create(measure_csv *csv, const char *dir, const char *name, const char *what,
                         const char *made_by)
{
    device_info info;
    char date[32];
    CUDA_CHECK(device_info_query(0, &info));
    measure_date_now(date, sizeof date);
    measure_dir_create(dir);
    return measure_csv_open(csv, dir, name, what, &info, date, made_by);
}

void measure_csv_close(measure_csv *csv)
{
    if (fclose(csv->file) != 0 || rename(csv->partial, csv->path) != 0) {
        fflush(stdout);
        fprintf(stderr, "cannot write %s: %s\n", csv->path, strerror(errno));
        exit(EXIT_FAILURE);
    }
    csv->file = NULL;
    printf("wrote %s\n", csv->path);
}

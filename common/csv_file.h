/* csv_file.h - the measured CSV files: written whole or not at all, each headed by its provenance.
 *
 * Every CSV file a chapter program writes for `make measure` opens with the same comment
 * lines (measurements/README.md): what it holds, the GPU, driver, runtime and date, the
 * host's CPU, and the program that made it. It is written under a temporary name in its
 * folder and renamed when complete, so a run that dies half-way leaves no truncated file.
 */
#ifndef COURSE_CSV_FILE_H
#define COURSE_CSV_FILE_H

#include "device_info.h"

#include <stddef.h>
#include <stdio.h>

typedef struct csv_file {
    FILE *out;          /* write the header row and the data here */
    char path[1024];    /* DIR/NAME, once complete */
    char partial[1040]; /* DIR/.NAME.tmp while it is written */
} csv_file;

/* The current time in UTC, "2026-11-29T19:45:41Z", into buf; returns buf. */
const char *utc_timestamp(char *buf, size_t size);

/* The host CPU's model name from /proc/cpuinfo, or "unknown CPU"; returns name. */
const char *host_cpu_name(char *name, size_t size);

/* Creates DIR if it is not there, opens DIR/NAME under its temporary name and writes the
 * provenance lines: "# WHAT", "# gpu: ..." (csv_write_provenance), "# host: CPU" and
 * "# made by: MADE_BY". On failure it says why on stderr and exits 1: a measuring program
 * that cannot keep its results has nothing to do. */
void csv_file_open(csv_file *csv, const char *dir, const char *name, const char *what,
                   const char *made_by, const device_info *info, const char *date);

/* Closes the file and gives it its name; prints "wrote PATH". Exits 1 on failure. */
void csv_file_close(csv_file *csv);

#endif

/* measure_csv.h - the CSV files `make measure` writes, each headed by where it was measured.
 *
 * Every file in measurements/NAME/ opens with the same comment lines, whichever
 * chapter program wrote it:
 *     # WHAT
 *     # gpu: NAME, driver X, runtime Y, date DATE
 *     # host: the CPU's model name
 *     # made by: PROGRAM (make measure)
 * then the program's own lines (a unit, a header row, the data). A file is
 * written under a hidden temporary name and renamed when complete, so a run
 * that dies half-way never leaves a truncated file where the book looks.
 * Every function here that fails says why on stderr and exits 1: a chapter
 * program that cannot write its results has nothing better to do.
 */
#ifndef COURSE_MEASURE_CSV_H
#define COURSE_MEASURE_CSV_H

#include "device_info.h"

#include <stddef.h>
#include <stdio.h>

typedef struct measure_csv {
    FILE *file;         /* write the program's lines here */
    char path[1024];    /* DIR/NAME */
    char partial[1024]; /* DIR/.NAME.tmp until measure_csv_close */
} measure_csv;

/* The current time in UTC, "2026-11-29T19:54:58Z", into date (32 bytes is enough). */
void measure_date_now(char *date, size_t size);

/* The host CPU's model name from /proc/cpuinfo, or "unknown CPU". */
void host_cpu_name(char *name, size_t size);

/* Creates DIR unless it exists. */
void measure_dir_create(const char *dir);

/* Opens DIR/NAME for writing (as DIR/.NAME.tmp) and writes the four comment lines; made_by
 * names the program, "chapters/ch02-pinned/01-staging-detour". Returns csv->file. */
FILE *measure_csv_open(measure_csv *csv, const char *dir, const char *name, const char *what,
                       const device_info *info, const char *date, const char *made_by);

/* measure_csv_open for a program that writes one file: device 0's details, the date now, and
 * DIR created if need be. */
FILE *measure_csv_create(measure_csv *csv, const char *dir, const char *name, const char *what,
                         const char *made_by);

/* Closes the file, renames it to DIR/NAME and prints "wrote DIR/NAME". */
void measure_csv_close(measure_csv *csv);

#endif

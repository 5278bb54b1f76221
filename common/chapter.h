/* chapter.h - what the chapter programs share: their command line, host buffers, the verdict.
 *
 * Every chapter program checks its own result and says so on its last line,
 * "PASSED" or "FAILED: reason". `make test` runs each with no arguments and
 * wants exit status 0. The statuses mean:
 *   0 the program's result was right;
 *   1 it was wrong, or a CUDA call failed (CUDA_CHECK's default handler exits 1);
 *   2 the command line was wrong (EXIT_USAGE), so nothing was measured;
 *  77 the machine lacks what the program needs (EXIT_SKIPPED: two GPUs, say), so it ran
 *     nothing and judged nothing; its last line is "SKIPPED: reason". 77 is the status that
 *     automake's tests and the course's own tools (the test host, dev/gpu_work_check) give
 *     for "skipped", and `make test` and `make run` count it so.
 */
#ifndef COURSE_CHAPTER_H
#define COURSE_CHAPTER_H

#include "device_info.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#define EXIT_USAGE 2
#define EXIT_SKIPPED 77

/* Writes "usage: NAME USAGE" to `to`, NAME being the last component of argv0. */
void usage_print(FILE *to, const char *argv0, const char *usage);

/* Writes "NAME: MESSAGE" and the usage line to stderr and exits with EXIT_USAGE. */
_Noreturn void usage_error(const char *argv0, const char *usage, const char *format, ...)
    __attribute__((format(printf, 3, 4)));

/* Prints the usage on stdout and exits 0 when arg asks for help ("-h" or "--help"). */
void usage_exit_on_help(const char *arg, const char *argv0, const char *usage);

/* The first two lines of every CSV file a chapter program writes: "# WHAT" and
 * "# gpu: NAME, driver X, runtime Y, date DATE". The book titles its plots from
 * the gpu line. */
void csv_write_provenance(FILE *csv, const char *what, const device_info *info, const char *date);

/* A program's named options, "--name VALUE", parsed from a table (options_parse):
 *   OPTION_SIZE   a size as parse_size reads it, into a size_t ("64K", "1G");
 *   OPTION_COUNT  a whole number from min to max, into an int;
 *   OPTION_TEXT   any text (a folder, a file), into a const char *;
 *   OPTION_FLAG   no value: sets a bool to true. */
typedef enum option_kind { OPTION_SIZE, OPTION_COUNT, OPTION_TEXT, OPTION_FLAG } option_kind;

typedef struct option_spec {
    const char *name; /* "--reps" */
    option_kind kind;
    void *value;  /* size_t *, int *, const char ** or bool *, by kind; keeps its default */
    int min, max; /* OPTION_COUNT's range */
} option_spec;

/* Parses argv against the table: the usage on -h or --help (exit 0); a usage error (exit 2)
 * naming the argument for an unknown argument, a missing or bad value, or an option given
 * twice. */
void options_parse(int argc, char **argv, const char *usage, const option_spec *specs,
                   size_t spec_count);

/* The command line of a program that measures sizes doubling from --min to --max:
 * "[--min SIZE] [--max SIZE] [--reps N] [--csv DIR]", --reps from 1 to 1000. The fields hold
 * the defaults on entry; --min larger than --max is a usage error. */
typedef struct sweep_options {
    size_t min_bytes, max_bytes;
    int reps;
    const char *csv_dir; /* NULL: no CSV file */
} sweep_options;

void sweep_options_parse(int argc, char **argv, const char *usage, sweep_options *options);

/* The sizes from min_bytes doubling while they stay within max_bytes, at most `most` of them;
 * returns how many it wrote. */
int doubling_sizes(size_t min_bytes, size_t max_bytes, size_t *sizes, int most);

/* Parses a count of elements the way parse_size reads sizes ("1000", "64K", "1M":
 * K and M multiply by 1024). Returns false for anything else, zero, or a count
 * whose count * element_size would not fit in a size_t. */
bool parse_count(const char *text, size_t element_size, size_t *count);

/* parse_count for a count of floats given on the command line: exits with the usage,
 * naming the text, when it is not one. */
size_t float_count_or_exit(const char *text, const char *argv0, const char *usage);

/* The one optional argument of a program that moves N floats: default_count without it;
 * the usage on -h or --help; a usage error on anything else. */
size_t float_count_argument(int argc, char **argv, const char *usage, size_t default_count);

/* Fills h_bytes with a pattern of no short period, so that a copy that is short or shifted
 * cannot match it, nor a destination that still holds the poison (every byte 0xFF). */
void fill_pattern(unsigned char *h_bytes, size_t bytes);

/* malloc that never returns NULL: on failure it says how much it wanted on
 * stderr and exits 1. A chapter program has nothing to do without its buffer. */
void *host_alloc(size_t bytes);

/* Loads the course's kernels (common/gpu_work.h) before a program relies on them; when this
 * CUDA runtime cannot run them it says so, with the reason and what `needed_for`, prints the
 * FAILED verdict and exits 1. (In chapter_kernels.c.) */
void gpu_work_require(const char *needed_for);

/* The number of CUDA devices when there are at least `needed`. Otherwise prints
 * "SKIPPED: NAME needs N GPUs and found M" (with the reason where the runtime found none)
 * and exits with EXIT_SKIPPED. */
int gpus_or_skip(int needed, const char *argv0);

/* Prints "PASSED" when failure is NULL, else "FAILED: failure"; returns the
 * exit status for main to return (0 or 1). */
int verdict(const char *failure);

/* Keeps the first thing a program found wrong in *failure, the one its verdict names: sets
 * *failure to `what` when `ok` is false and nothing was found wrong before. */
void verdict_require(bool ok, const char *what, const char **failure);

#endif

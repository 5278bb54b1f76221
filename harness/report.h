/* report.h - an exercise's results, for a person (the terminal) and for programs (JSON). */
#ifndef COURSE_REPORT_H
#define COURSE_REPORT_H

#include "harness.h"

#include <stdbool.h>
#include <stdio.h>

typedef struct test_outcome {
    char sentence[256];
    int points;
    bool timed; /* declared with COURSE_TIMED_TEST */
    bool ran;
    bool passed;
    char message[4096]; /* the diagnostic, in the learner's terms; empty when passed */
} test_outcome;

typedef struct report_options {
    const course_exercise *exercise;
    const char *source;     /* the learner's file, named in the report */
    const char *json_path;  /* where the machine-readable result goes, if anywhere */
    const char *tally_path; /* a line per exercise is appended here, for the summary */
    int result_fd;          /* >= 0: the JSON record is also written here (make grade's channel) */
    bool color;
    bool verbose;     /* list passing tests too */
    bool not_started; /* every test failed and the file still has its TODO */
    size_t printed_bytes; /* what the code under test printed while the tests ran */
} report_options;

/* Colour only on a terminal, and never when NO_COLOR is set (no-color.org). */
bool report_color_wanted(void);

void report_results(const report_options *options, const test_outcome *outcomes, int count);
void report_no_gpu(const report_options *options, const test_outcome *outcomes, int count,
                   const char *why);
/* The rubric the program was compiled with, in harness/rubric.awk's lines; with a JSON
 * destination also the record, status "rubric", title and hint included. */
void report_rubric(const report_options *options, const test_outcome *outcomes, int count);

/* Writes s as a JSON string, quotes included. */
void json_write_string(FILE *out, const char *s);

#endif

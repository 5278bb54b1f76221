/* report.h - an exercise's results, for a person (the terminal) and for programs (JSON). */
#ifndef COURSE_REPORT_H
#define COURSE_REPORT_H

#include "harness.h"

#include <stdbool.h>
#include <stdio.h>

typedef struct test_outcome {
    char sentence[256];
    int points;
    bool timed;     /* declared with COURSE_TIMED_TEST */
    bool host_only; /* declared with COURSE_HOST_TEST: it needs no GPU */
    bool needs_gpu; /* not run: there is no GPU, and it needs one */
    bool ran;
    bool passed;
    bool not_graded; /* something outside the code under test spoiled it: to be run again */
    bool evidence;   /* its verdict read what the worker says of itself (trace.h) */
    char message[4096]; /* the diagnostic, in the learner's terms; empty when passed */
} test_outcome;

/* Whether a test's points count: it passed, and either its verdict rests on results alone or a
 * test of the same exercise that rests on results alone passed too. So a submission that does
 * no work scores nothing, whatever it wrote into the record the worker keeps of its calls. */
bool test_counts(const test_outcome *outcomes, int count, int t);

typedef struct report_options {
    const course_exercise *exercise;
    int gpus_needed;        /* COURSE_EXERCISE_NEEDS_GPUS, where more than one */
    const char *source;     /* the learner's file, named in the report */
    const char *json_path;  /* where the machine-readable result goes, if anywhere */
    const char *fields_path; /* the same record as lines for the shell (report.c), if anywhere */
    const char *tally_path; /* a line per exercise is appended here, for the summary */
    int result_fd;          /* >= 0: the JSON record is also written here (make grade's channel) */
    bool color;
    bool verbose;     /* list passing tests too */
    bool not_started; /* every test failed and the file still has its TODO */
    size_t printed_bytes; /* what the code under test printed while the tests ran */
    double seconds;       /* how long the tests took, workers' starts included */
} report_options;

/* Colour only on a terminal, and never when NO_COLOR is set (no-color.org). */
bool report_color_wanted(void);

/* The one renderer of an exercise's block of the report, whatever became of it: the runner's
 * own results, and (through tools/report_block) make check's and the grader's exercises that
 * never ran. `status` is passed, failed, not_started, missing, does_not_compile, rejected,
 * not_run, timed_out or no_report; `details` say why the tests did not run (the first line,
 * then its particulars); `note` may be NULL. */
void report_block(const report_options *options, const test_outcome *outcomes, int count,
                  const char *status, const char *const *details, int detail_count,
                  const char *note);
/* The block, the JSON record and the tally line of a run; true when every test passed. */
bool report_results(const report_options *options, const test_outcome *outcomes, int count);
bool report_no_gpu(const report_options *options, const test_outcome *outcomes, int count,
                   const char *why);
/* The same for tests that did not run for want of something else the machine lacks: status
 * (too_few_gpus, say) unless the file is an untouched stub, `need` as the block says it ("2
 * GPUs"), `why` the note of the JSON record (NULL for none: the caller knows whether the
 * machine's lack is worth saying of this file). */
bool report_not_run(const report_options *options, const test_outcome *outcomes, int count,
                    const char *status_if_started, const char *need, const char *why);
/* An exercise whose learner module the worker could not load (status "unloadable" in JSON):
 * `why` is the whole sentence. */
void report_unloadable(const report_options *options, const char *why);
/* The rubric the program was compiled with, in harness/report/rubric.awk's lines; with a JSON
 * destination also the record, status "rubric", title and hint included. */
void report_rubric(const report_options *options, const test_outcome *outcomes, int count);
/* A line of the tally (tally_path) for an exercise reported elsewhere: make check's that did not
 * get as far as their tests (tools/report_block --tally). */
void report_tally(const report_options *options, const char *status, const test_outcome *outcomes,
                  int count);
/* make check's closing lines, from the tally: exercises done and points, then the tests' count.
 * Returns the exit status: 0 when every test passed. */
int report_progress(const char *tally_path, bool color);

/* --- Text (text.c) ------------------------------------------------------------------------ */

/* Writes s as a JSON string, quotes included; a byte that is not UTF-8 as the text \xNN. */
void json_write_string(FILE *out, const char *s);
/* Writes text as harness/report/rubric.awk writes it: a backslash, a tab and a newline escaped
 * (the rubric's lines, and the record's lines for the shell). */
void text_write_escaped(FILE *out, const char *text);
/* Rewrites text, in place and within size, so that it is valid UTF-8 with no control character
 * but a newline or a tab: any other byte is shown as \xNN. What the learner's code printed
 * reaches the reports and the result channel this way, whatever it was. */
void text_make_printable(char *text, size_t size);

#endif

/* report_block.c - prints an exercise's block of the report with the runner's own renderer
 * (harness/report/report.c), for the exercises whose tests never ran or ran elsewhere: make check's
 * missing and uncompiled ones, and every block of make grade's feedback.
 *
 * Usage: report_block [--color] [--verbose] [--tally FILE] < RECORD
 *        report_block [--color] --progress TALLY
 *
 * --tally FILE adds the exercise's line to make check's tally; --progress TALLY prints make
 * check's closing lines from it, and exits 0 only when every test passed.
 *
 * RECORD is lines of tab-separated fields, text escaped as harness/report/rubric.awk writes it (\\,
 * \t, \n): first the exercise's rubric, as `awk -f harness/report/rubric.awk tests/ID.c` prints it,
 *
 *   exercise  ID  TITLE  HINT
 *   test      ID  POINTS  SENTENCE  timed|untimed
 *
 * then what became of it:
 *
 *   status  STATUS            passed, failed, not_started, missing, does_not_compile, ...
 *   source  PATH              the learner's file, as the report names it
 *   detail  TEXT              why the tests did not run: the first line, then its particulars
 *   result  N  passed|failed|not_graded  MESSAGE   test N (from 1) of the rubric, where the
 *                                   tests ran; "passed" may be followed by ",uncounted" (it
 *                                   passed on the worker's record alone, harness/report/report.h)
 *   note    TEXT
 *
 * Exit status: 0, or 2 for a record it cannot read (said on standard error).
 */
#include "report.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_TESTS 64
#define MAX_DETAILS 32
#define MAX_LINE 65536

static _Noreturn void refuse(const char *why, long line)
{
    fprintf(stderr, "report_block: line %ld of the record: %s\n", line, why);
    exit(2);
}

/* Reads the escapes \\, \t and \n in place. */
static char *unescape(char *text)
{
    char *out = text;
    for (const char *in = text; *in; in++, out++) {
        if (*in == '\\' && (in[1] == '\\' || in[1] == 't' || in[1] == 'n')) {
            in++;
            *out = *in == 't' ? '\t' : *in == 'n' ? '\n' : '\\';
        } else {
            *out = *in;
        }
    }
    *out = '\0';
    return text;
}

/* Splits line at tabs into at most `most` fields; returns how many. */
static int split(char *line, char **fields, int most)
{
    int count = 0;
    fields[count++] = line;
    for (char *c = line; *c && count < most; c++)
        if (*c == '\t') {
            *c = '\0';
            fields[count++] = c + 1;
        }
    return count;
}

static char *copy_of(const char *text)
{
    char *copy = strdup(text);
    if (copy == NULL) {
        fprintf(stderr, "report_block: out of memory\n");
        exit(2);
    }
    return copy;
}

int main(int argc, char **argv)
{
    static course_exercise exercise;
    static test_outcome outcomes[MAX_TESTS];
    static char line[MAX_LINE];
    const char *details[MAX_DETAILS];
    const char *status = NULL, *note = NULL;
    int count = 0, detail_count = 0;
    report_options options = {.exercise = &exercise, .result_fd = -1};
    const char *progress = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--color") == 0)
            options.color = true;
        else if (strcmp(argv[i], "--verbose") == 0)
            options.verbose = true;
        else if (strcmp(argv[i], "--tally") == 0 && i + 1 < argc)
            options.tally_path = argv[++i];
        else if (strcmp(argv[i], "--progress") == 0 && i + 1 < argc)
            progress = argv[++i];
        else {
            fprintf(stderr,
                    "usage: %s [--color] [--verbose] [--tally FILE] < RECORD\n"
                    "       %s [--color] --progress TALLY\n",
                    argv[0], argv[0]);
            return 2;
        }
    }
    if (progress != NULL)
        return report_progress(progress, options.color);

    for (long number = 1; fgets(line, sizeof line, stdin) != NULL; number++) {
        line[strcspn(line, "\n")] = '\0';
        char *field[5];
        int fields = split(line, field, 5);
        if (strcmp(field[0], "exercise") == 0 && fields == 4) {
            exercise.id = copy_of(field[1]);
            exercise.title = copy_of(unescape(field[2]));
            exercise.hint = copy_of(unescape(field[3]));
        } else if (strcmp(field[0], "test") == 0 && fields == 5) {
            if (count == MAX_TESTS)
                refuse("more tests than an exercise has", number);
            snprintf(outcomes[count].sentence, sizeof outcomes[count].sentence, "%s", field[3]);
            outcomes[count].points = atoi(field[2]);
            outcomes[count].timed = strcmp(field[4], "timed") == 0;
            count++;
        } else if (strcmp(field[0], "status") == 0 && fields == 2) {
            status = copy_of(field[1]);
        } else if (strcmp(field[0], "source") == 0 && fields == 2) {
            options.source = copy_of(unescape(field[1]));
        } else if (strcmp(field[0], "detail") == 0 && fields == 2) {
            if (detail_count == MAX_DETAILS)
                refuse("too many detail lines", number);
            details[detail_count++] = copy_of(unescape(field[1]));
        } else if (strcmp(field[0], "note") == 0 && fields == 2) {
            note = copy_of(unescape(field[1]));
        } else if (strcmp(field[0], "result") == 0 && fields == 4) {
            int n = atoi(field[1]);
            if (n < 1 || n > count)
                refuse("a result for a test the rubric does not have", number);
            outcomes[n - 1].ran = true;
            outcomes[n - 1].passed = strncmp(field[2], "passed", 6) == 0;
            outcomes[n - 1].evidence = strcmp(field[2], "passed,uncounted") == 0;
            outcomes[n - 1].not_graded = strcmp(field[2], "not_graded") == 0;
            snprintf(outcomes[n - 1].message, sizeof outcomes[n - 1].message, "%s",
                     unescape(field[3]));
        } else {
            refuse("not a line of an exercise's record (see the header of tools/report_block.c)",
                   number);
        }
    }
    if (exercise.id == NULL || status == NULL)
        refuse("the record needs an exercise line and a status line", 0);
    report_block(&options, outcomes, count, status, details, detail_count, note);
    report_tally(&options, status, outcomes, count);
    return 0;
}

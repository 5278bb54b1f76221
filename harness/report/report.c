/* report.c - the report's exercise block, its tally line, and its records: JSON, and lines
 * for the shell. */
#include "report.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define GREEN "\033[32m"
#define RED "\033[31m"
#define YELLOW "\033[33m"
#define DIM "\033[2m"
#define BOLD "\033[1m"
#define RESET "\033[0m"

bool report_color_wanted(void)
{
    const char *no_color = getenv("NO_COLOR");
    if (no_color != NULL && no_color[0] != '\0')
        return false;
    return isatty(STDOUT_FILENO);
}

static const char *paint(const report_options *options, const char *code)
{
    return options->color ? code : "";
}

typedef struct totals {
    int passed, points, max_points;
} totals;

bool test_counts(const test_outcome *outcomes, int count, int t)
{
    if (!outcomes[t].passed)
        return false;
    if (!outcomes[t].evidence)
        return true;
    for (int other = 0; other < count; other++)
        if (outcomes[other].passed && !outcomes[other].evidence)
            return true;
    return false;
}

static totals add_up(const test_outcome *outcomes, int count)
{
    totals sum = {0, 0, 0};
    for (int t = 0; t < count; t++) {
        sum.max_points += outcomes[t].points;
        if (outcomes[t].passed)
            sum.passed++;
        if (test_counts(outcomes, count, t))
            sum.points += outcomes[t].points;
    }
    return sum;
}

static bool any_not_graded(const test_outcome *outcomes, int count)
{
    for (int t = 0; t < count; t++)
        if (outcomes[t].not_graded)
            return true;
    return false;
}

/* Prints text with every line after the first indented by `indent`. */
static void print_indented(const char *text, const char *indent)
{
    for (const char *c = text; *c; c++) {
        putchar(*c);
        if (*c == '\n' && c[1] != '\0')
            fputs(indent, stdout);
    }
    putchar('\n');
}


static const char *status_word(const report_options *options, const test_outcome *outcomes,
                               int count)
{
    if (any_not_graded(outcomes, count))
        return "not_graded";
    return add_up(outcomes, count).passed == count ? "passed"
           : options->not_started                  ? "not_started"
                                                   : "failed";
}


/* The record as lines a shell reads with `read` and no other process (make check's, make
 * list's, the self-test's), fields apart by tabs, text escaped as the rubric's:
 *   status  STATUS
 *   note    NOTE
 *   seconds SECONDS
 *   points  POINTS  MAX_POINTS
 *   test    1|0     NAME      (passed or not, one line a test) */
static void write_fields_record(FILE *out, const report_options *options,
                                const test_outcome *outcomes, int count, const char *status,
                                const char *note)
{
    totals sum = add_up(outcomes, count);
    fprintf(out, "status\t%s\nnote\t", status);
    text_write_escaped(out, note ? note : "");
    fprintf(out, "\nseconds\t%.2f\npoints\t%d\t%d\n", options->seconds, sum.points, sum.max_points);
    for (int t = 0; t < count; t++) {
        fprintf(out, "test\t%d\t", outcomes[t].passed ? 1 : 0);
        text_write_escaped(out, outcomes[t].sentence);
        fputc('\n', out);
    }
}

static void write_json_record(FILE *out, const report_options *options,
                              const test_outcome *outcomes, int count, const char *status,
                              const char *note)
{
    totals sum = add_up(outcomes, count);
    fputs("{\n  \"exercise\": ", out);
    json_write_string(out, options->exercise->id);
    fputs(",\n  \"title\": ", out);
    json_write_string(out, options->exercise->title);
    fputs(",\n  \"status\": ", out);
    json_write_string(out, status);
    fputs(",\n  \"note\": ", out);
    json_write_string(out, note ? note : "");
    fprintf(out,
            ",\n  \"points\": %d,\n  \"max_points\": %d,\n  \"printed_bytes\": %zu,\n"
            "  \"seconds\": %.2f,\n  \"hint\": ",
            sum.points, sum.max_points, options->printed_bytes, options->seconds);
    json_write_string(out, options->exercise->hint);
    fputs(",\n  \"tests\": [", out);
    for (int t = 0; t < count; t++) {
        fputs(t ? ",\n    {\"name\": " : "\n    {\"name\": ", out);
        json_write_string(out, outcomes[t].sentence);
        fprintf(out,
                ", \"points\": %d, \"passed\": %s, \"evidence\": %s, \"counts\": %s, "
                "\"not_graded\": %s, \"message\": ",
                outcomes[t].points, outcomes[t].passed ? "true" : "false",
                outcomes[t].evidence ? "true" : "false",
                test_counts(outcomes, count, t) ? "true" : "false",
                outcomes[t].not_graded ? "true" : "false");
        json_write_string(out, outcomes[t].message);
        fputc('}', out);
    }
    fputs("\n  ]\n}\n", out);
}

/* Each file is written to a temporary name and renamed, so a reader never sees
 * half a file. The result channel (--result-fd, make grade's) gets the same
 * record, one exercise's after another; the grader reads them to the channel's end. */
typedef void record_writer(FILE *out, const report_options *options, const test_outcome *outcomes,
                           int count, const char *status, const char *note);

static void write_record_file(const char *path, record_writer *writer,
                              const report_options *options, const test_outcome *outcomes,
                              int count, const char *status, const char *note)
{
    if (path == NULL)
        return;
    char temporary[4096];
    snprintf(temporary, sizeof temporary, "%s.tmp", path);
    FILE *out = fopen(temporary, "w");
    if (out == NULL) {
        perror(temporary);
        exit(2);
    }
    writer(out, options, outcomes, count, status, note);
    if (fclose(out) != 0 || rename(temporary, path) != 0) {
        perror(path);
        exit(2);
    }
}

static void write_json(const report_options *options, const test_outcome *outcomes, int count,
                       const char *status, const char *note)
{
    write_record_file(options->json_path, write_json_record, options, outcomes, count, status,
                      note);
    write_record_file(options->fields_path, write_fields_record, options, outcomes, count, status,
                      note);
    if (options->result_fd >= 0) {
        /* A copy of the descriptor, closed after the record: the next exercise's follows. */
        const int fd = dup(options->result_fd);
        FILE *channel = fd >= 0 ? fdopen(fd, "w") : NULL;
        if (channel == NULL) {
            perror("the result channel");
            exit(2);
        }
        write_json_record(channel, options, outcomes, count, status, note);
        if (fclose(channel) != 0) {
            perror("the result channel");
            exit(2);
        }
    }
}

void report_tally(const report_options *options, const char *status, const test_outcome *outcomes,
                  int count);

static void append_tally(const report_options *options, const char *status, totals sum, int count)
{
    if (options->tally_path == NULL)
        return;
    FILE *out = fopen(options->tally_path, "a");
    if (out == NULL) {
        perror(options->tally_path);
        exit(2);
    }
    fprintf(out, "%s\t%s\t%d\t%d\t%d\t%d\n", options->exercise->id, status, sum.passed, count,
            sum.points, sum.max_points);
    fclose(out);
}

/* What can become of an exercise (statuses.def): its block's label, whether its tests are
 * listed and its hint shown. */
typedef struct status_row {
    const char *name, *label;
    bool tests_shown, hint_offered;
} status_row;

static const status_row *status_of(const char *name)
{
    static const status_row rows[] = {
#define STATUS(name, label, words, tests_shown, hint_offered) {#name, label, tests_shown, hint_offered},
#include "statuses.def"
#undef STATUS
    };
    static const status_row unknown = {"failed", "FAIL", true, true};
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        if (strcmp(rows[i].name, name) == 0)
            return &rows[i];
    return &unknown;
}

void report_block(const report_options *options, const test_outcome *outcomes, int count,
                  const char *status, const char *const *details, int detail_count,
                  const char *note)
{
    totals sum = add_up(outcomes, count);
    const char *source = options->source ? options->source : "the exercise file";
    const status_row *row = status_of(status);
    const char *colour = strcmp(row->label, "PASS") == 0   ? GREEN BOLD
                         : strcmp(row->label, "FAIL") == 0 ? RED BOLD
                                                           : YELLOW BOLD;
    /* Tests that never ran have no count and no points yet: a dash, never a 0 to be read as one. */
    const bool unknown = strcmp(status, "not_run") == 0;
    char passed[16] = "\u2013", points[16] = "\u2013";
    if (!unknown) {
        snprintf(passed, sizeof passed, "%d", sum.passed);
        snprintf(points, sizeof points, "%d", sum.points);
    }
    printf("%s%s%s  ", paint(options, colour), row->label, paint(options, RESET));
    printf("%-28s %s/%d tests  %s/%d points  %s%s%s\n", options->exercise->id, passed, count,
           points, sum.max_points, paint(options, DIM), options->exercise->title,
           paint(options, RESET));

    /* Why the tests did not run, or did not all run: the first line, then its particulars. */
    for (int d = 0; d < detail_count; d++)
        printf("%s%s\n", d == 0 ? "      " : "        ", details[d]);
    if (strcmp(status, "not_started") == 0)
        printf("      not started: open %s and replace its TODO\n", source);

    /* The tests, where they ran: each failure with its diagnostic (every test, when verbose). */
    bool failures_shown =
        row->tests_shown && (sum.passed < count || options->verbose) &&
        (strcmp(status, "failed") == 0 || strcmp(row->label, "SKIP") == 0 || sum.passed > 0 ||
         options->verbose);
    /* A test that passed with a note (harness_note: how a measured speed compares, say) is
     * shown with it, failures or not. */
    for (int t = 0; row->tests_shown && t < count; t++) {
        if (outcomes[t].needs_gpu)
            continue; /* said once, above */
        const bool counted = test_counts(outcomes, count, t);
        bool noted = outcomes[t].passed && (outcomes[t].message[0] != '\0' || !counted);
        if (outcomes[t].passed ? !(options->verbose && failures_shown) && !noted
                               : !failures_shown && !outcomes[t].not_graded)
            continue;
        printf("      %s%s%s %s (%d point%s%s)\n",
               paint(options, outcomes[t].passed ? GREEN : outcomes[t].not_graded ? YELLOW : RED),
               outcomes[t].passed ? "ok  " : outcomes[t].not_graded ? "WAIT" : "FAIL",
               paint(options, RESET), outcomes[t].sentence, outcomes[t].points,
               outcomes[t].points == 1 ? "" : "s",
               outcomes[t].passed && !counted ? ", not counted yet" : "");
        if (outcomes[t].passed && !counted)
            printf("           it passed on the record the code's own process keeps of its calls, "
                   "which counts once a test of what the code delivered passes too\n");
        if (!outcomes[t].passed || outcomes[t].message[0] != '\0') {
            fputs("           ", stdout);
            print_indented(outcomes[t].message[0] ? outcomes[t].message : "(no message)",
                           "           ");
        }
    }
    /* The hint, on request only (as rustlings gives it): most say how the solution goes, which
     * a learner who has just made a typo does not want to read unasked. */
    if (row->hint_offered && options->exercise->hint[0] != '\0') {
        const char *id = options->exercise->id, *name = strrchr(id, '/');
        printf("      %shint:%s make hint EX=%s\n", paint(options, YELLOW), paint(options, RESET),
               name ? name + 1 : id);
    }
    if (note != NULL && note[0] != '\0') {
        printf("      %snote:%s ", paint(options, DIM), paint(options, RESET));
        print_indented(note, "            ");
    }
    fflush(stdout);
}

bool report_results(const report_options *options, const test_outcome *outcomes, int count)
{
    totals sum = add_up(outcomes, count);
    const char *status = status_word(options, outcomes, count);
    char note[256] = "";
    if (options->printed_bytes > 0)
        snprintf(note, sizeof note,
                 "the code printed %zu bytes while the tests ran (what a failing test printed is "
                 "shown under it)",
                 options->printed_bytes);
    const char *not_graded[] = {"not graded: something outside this code spoiled a test (see "
                                "below); it is run again"};
    report_block(options, outcomes, count, status, not_graded,
                 strcmp(status, "not_graded") == 0 ? 1 : 0, note);
    write_json(options, outcomes, count, status, NULL);
    append_tally(options, status, sum, count);
    return strcmp(status, "passed") == 0;
}

bool report_no_gpu(const report_options *options, const test_outcome *outcomes, int count,
                   const char *why)
{
    return report_not_run(options, outcomes, count, "no_gpu", "a GPU", why);
}

bool report_not_run(const report_options *options, const test_outcome *outcomes, int count,
                    const char *status_if_started, const char *need, const char *why)
{
    int ran = 0;
    for (int t = 0; t < count; t++)
        ran += !outcomes[t].needs_gpu;
    if (ran == count) /* every test needs no GPU: a result like any other */
        return report_results(options, outcomes, count);
    /* The block says once what did not run; the reason, which is the machine's, make check
     * says once for all (the JSON record's note). */
    char what[160];
    if (ran == 0)
        snprintf(what, sizeof what, "not run: %s tests need %s", count == 1 ? "its" : "all its",
                 need);
    else
        snprintf(what, sizeof what, "%d of its %d tests need %s and did not run; the other %d did",
                 count - ran, count, need, ran);
    const char *details[] = {what};
    const char *status = options->not_started ? "not_started" : status_if_started;
    report_block(options, outcomes, count, status, details, options->not_started ? 0 : 1, NULL);
    write_json(options, outcomes, count, status, why);
    /* The tally counts the tests that ran: those that did not are neither passed nor failed. */
    append_tally(options, status, add_up(outcomes, count), ran);
    return false;
}

void report_unloadable(const report_options *options, const char *why)
{
    const char *details[] = {why};
    report_block(options, NULL, 0, "does_not_compile", details, 1, NULL);
    write_json(options, NULL, 0, "unloadable", why);
    append_tally(options, "does_not_compile", add_up(NULL, 0), 0);
}


void report_rubric(const report_options *options, const test_outcome *outcomes, int count)
{
    /* The lines harness/report/rubric.awk reads from the test file: the self-test compares them. */
    printf("exercise\t%s\t", options->exercise->id);
    text_write_escaped(stdout, options->exercise->title);
    putchar('\t');
    text_write_escaped(stdout, options->exercise->hint);
    putchar('\n');
    if (options->gpus_needed > 1)
        printf("gpus\t%s\t%d\n", options->exercise->id, options->gpus_needed);
    for (int t = 0; t < count; t++)
        printf("test\t%s\t%d\t%s\t%s\n", options->exercise->id, outcomes[t].points,
               outcomes[t].sentence,
               outcomes[t].timed ? "timed" : outcomes[t].host_only ? "host" : "untimed");
    fflush(stdout);
    /* With --json or --result-fd, the same record a run writes, nothing passed. */
    write_json(options, outcomes, count, "rubric", NULL);
}

void report_tally(const report_options *options, const char *status, const test_outcome *outcomes,
                  int count)
{
    append_tally(options, status, add_up(outcomes, count), count);
}

/* The closing lines: how far the learner is, in exercises and points, then the tests of the
 * exercises they started (those of an untouched or missing file, or that needed a GPU and did
 * not run, are neither passed nor failed). 0 when every exercise passed, 1 when not. */
int report_progress(const char *tally_path, bool color)
{
    FILE *in = fopen(tally_path, "r");
    if (in == NULL) {
        perror(tally_path);
        return 2;
    }
    int exercises = 0, done = 0, not_started = 0, no_gpu = 0, too_few_gpus = 0, passed = 0,
        failed = 0, points = 0, max = 0;
    char id[256], only[256] = "", status[64];
    int p, t, pts, maxp;
    while (fscanf(in, "%255s %63s %d %d %d %d", id, status, &p, &t, &pts, &maxp) == 6) {
        exercises++;
        snprintf(only, sizeof only, "%s", id);
        done += strcmp(status, "passed") == 0;
        const bool untouched = strcmp(status, "not_started") == 0 || strcmp(status, "missing") == 0;
        not_started += untouched;
        no_gpu += strcmp(status, "no_gpu") == 0;
        too_few_gpus += strcmp(status, "too_few_gpus") == 0;
        if (!untouched) {
            passed += p;
            failed += t - p;
        }
        points += pts;
        max += maxp;
    }
    fclose(in);
    const report_options options = {.color = color};
    char others[128] = "";
    if (not_started > 0)
        snprintf(others, sizeof others, ", %d not started", not_started);
    if (no_gpu > 0)
        snprintf(others + strlen(others), sizeof others - strlen(others), ", %d waiting for a GPU",
                 no_gpu);
    if (too_few_gpus > 0)
        snprintf(others + strlen(others), sizeof others - strlen(others),
                 ", %d needing more GPUs than this machine has", too_few_gpus);
    if (exercises == 1)
        printf("\n%sProgress: %s %s, %d of %d points%s\n", paint(&options, BOLD), only,
               done          ? "done"
               : not_started ? "not started"
               : no_gpu      ? "waiting for a GPU"
               : too_few_gpus ? "not run: it needs more GPUs than this machine has"
                             : "not done yet",
               points, max, paint(&options, RESET));
    else
        printf("\n%sProgress: %d of %d exercises done%s; %d of %d points%s\n",
               paint(&options, BOLD), done, exercises, others, points, max,
               paint(&options, RESET));
    printf("%d passed, %d failed\n", passed, failed);
    return done == exercises && exercises > 0 ? 0 : 1;
}

/* report.c - the report's exercise block, its tally line and its JSON record. */
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

static totals add_up(const test_outcome *outcomes, int count)
{
    totals sum = {0, 0, 0};
    for (int t = 0; t < count; t++) {
        sum.max_points += outcomes[t].points;
        if (outcomes[t].passed) {
            sum.passed++;
            sum.points += outcomes[t].points;
        }
    }
    return sum;
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

void json_write_string(FILE *out, const char *s)
{
    fputc('"', out);
    for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
        switch (*c) {
        case '"': fputs("\\\"", out); break;
        case '\\': fputs("\\\\", out); break;
        case '\n': fputs("\\n", out); break;
        case '\t': fputs("\\t", out); break;
        case '\r': fputs("\\r", out); break;
        default:
            if (*c < 0x20)
                fprintf(out, "\\u%04x", *c);
            else
                fputc(*c, out);
        }
    }
    fputc('"', out);
}

static const char *status_word(const report_options *options, bool all_passed)
{
    return all_passed ? "passed" : options->not_started ? "not_started" : "failed";
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
        fprintf(out, ", \"points\": %d, \"passed\": %s, \"message\": ", outcomes[t].points,
                outcomes[t].passed ? "true" : "false");
        json_write_string(out, outcomes[t].message);
        fputc('}', out);
    }
    fputs("\n  ]\n}\n", out);
}

/* The file is written to a temporary name and renamed, so a reader never sees
 * half a file. The result channel (--result-fd, make grade's) gets the same
 * record, one exercise's after another; the grader reads them to the channel's end. */
static void write_json(const report_options *options, const test_outcome *outcomes, int count,
                       const char *status, const char *note)
{
    if (options->json_path != NULL) {
        char temporary[4096];
        snprintf(temporary, sizeof temporary, "%s.tmp", options->json_path);
        FILE *out = fopen(temporary, "w");
        if (out == NULL) {
            perror(temporary);
            exit(2);
        }
        write_json_record(out, options, outcomes, count, status, note);
        if (fclose(out) != 0 || rename(temporary, options->json_path) != 0) {
            perror(options->json_path);
            exit(2);
        }
    }
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

static bool one_of(const char *status, const char *const *statuses)
{
    for (; *statuses; statuses++)
        if (strcmp(status, *statuses) == 0)
            return true;
    return false;
}

void report_block(const report_options *options, const test_outcome *outcomes, int count,
                  const char *status, const char *const *details, int detail_count,
                  const char *note)
{
    totals sum = add_up(outcomes, count);
    const char *source = options->source ? options->source : "the exercise file";
    if (strcmp(status, "passed") == 0)
        printf("%sPASS%s  ", paint(options, GREEN BOLD), paint(options, RESET));
    else if (strcmp(status, "not_started") == 0)
        printf("%sTODO%s  ", paint(options, YELLOW BOLD), paint(options, RESET));
    else
        printf("%sFAIL%s  ", paint(options, RED BOLD), paint(options, RESET));
    printf("%-28s %d/%d tests  %d/%d points  %s%s%s\n", options->exercise->id, sum.passed, count,
           sum.points, sum.max_points, paint(options, DIM), options->exercise->title,
           paint(options, RESET));

    /* Why the tests did not run, or did not all run: the first line, then its particulars. */
    for (int d = 0; d < detail_count; d++)
        printf("%s%s\n", d == 0 ? "      " : "        ", details[d]);
    if (strcmp(status, "not_started") == 0)
        printf("      not started: open %s and replace its TODO\n", source);

    /* The tests, where they ran: each failure with its diagnostic (every test, when verbose). */
    static const char *const ran[] = {"passed", "failed", "timed_out", "no_report", NULL};
    bool failures_shown = one_of(status, ran) && (sum.passed < count || options->verbose) &&
                          (strcmp(status, "failed") == 0 || sum.passed > 0 || options->verbose);
    /* A test that passed with a note (harness_note: how a measured speed compares, say) is
     * shown with it, failures or not. */
    for (int t = 0; one_of(status, ran) && t < count; t++) {
        bool noted = outcomes[t].passed && outcomes[t].message[0] != '\0';
        if (outcomes[t].passed ? !(options->verbose && failures_shown) && !noted
                               : !failures_shown)
            continue;
        printf("      %s%s%s %s (%d point%s)\n", paint(options, outcomes[t].passed ? GREEN : RED),
               outcomes[t].passed ? "ok  " : "FAIL", paint(options, RESET), outcomes[t].sentence,
               outcomes[t].points, outcomes[t].points == 1 ? "" : "s");
        if (!outcomes[t].passed || noted) {
            fputs("           ", stdout);
            print_indented(outcomes[t].message[0] ? outcomes[t].message : "(no message)",
                           "           ");
        }
    }
    static const char *const no_hint[] = {"passed", "not_started", "not_run", "missing", NULL};
    if (!one_of(status, no_hint) && options->exercise->hint[0] != '\0') {
        printf("      %shint:%s ", paint(options, YELLOW), paint(options, RESET));
        print_indented(options->exercise->hint, "            ");
    }
    if (note != NULL && note[0] != '\0') {
        printf("      %snote:%s ", paint(options, DIM), paint(options, RESET));
        print_indented(note, "            ");
    }
    fflush(stdout);
}

void report_results(const report_options *options, const test_outcome *outcomes, int count)
{
    totals sum = add_up(outcomes, count);
    const char *status = status_word(options, sum.passed == count);
    char note[256] = "";
    if (options->printed_bytes > 0)
        snprintf(note, sizeof note,
                 "the code printed %zu bytes while the tests ran (what a failing test printed is "
                 "shown under it)",
                 options->printed_bytes);
    report_block(options, outcomes, count, status, NULL, 0, note);
    write_json(options, outcomes, count, status, NULL);
    append_tally(options, status, sum, count);
}

void report_no_gpu(const report_options *options, const test_outcome *outcomes, int count,
                   const char *why)
{
    printf("%sSKIP%s  %-28s no CUDA device: %s\n", paint(options, YELLOW BOLD),
           paint(options, RESET), options->exercise->id, why);
    fflush(stdout);
    /* Nothing ran, so nothing passed: report every test as not passed. */
    test_outcome *unrun = calloc((size_t)count, sizeof *unrun);
    for (int t = 0; unrun && t < count; t++) {
        unrun[t] = outcomes[t];
        snprintf(unrun[t].message, sizeof unrun[t].message, "not run: no CUDA device (%s)", why);
    }
    write_json(options, unrun ? unrun : outcomes, count, "no_gpu", why);
    append_tally(options, "no_gpu", add_up(outcomes, count), count);
    free(unrun);
}

void report_unloadable(const report_options *options, const char *why)
{
    const char *details[] = {"it compiles, but the test program could not load it:", why};
    report_block(options, NULL, 0, "does_not_compile", details, 2, NULL);
    write_json(options, NULL, 0, "unloadable", why);
    append_tally(options, "does_not_compile", add_up(NULL, 0), 0);
}

/* Text as harness/rubric.awk writes it: a backslash, a tab and a newline escaped. */
static void print_escaped(const char *text)
{
    for (const char *c = text; *c; c++)
        if (*c == '\\')
            fputs("\\\\", stdout);
        else if (*c == '\t')
            fputs("\\t", stdout);
        else if (*c == '\n')
            fputs("\\n", stdout);
        else
            putchar(*c);
}

void report_rubric(const report_options *options, const test_outcome *outcomes, int count)
{
    /* The lines harness/rubric.awk reads from the test file: the self-test compares them. */
    printf("exercise\t%s\t", options->exercise->id);
    print_escaped(options->exercise->title);
    putchar('\t');
    print_escaped(options->exercise->hint);
    putchar('\n');
    for (int t = 0; t < count; t++)
        printf("test\t%s\t%d\t%s\t%s\n", options->exercise->id, outcomes[t].points,
               outcomes[t].sentence, outcomes[t].timed ? "timed" : "untimed");
    fflush(stdout);
    /* With --json or --result-fd, the same record a run writes, nothing passed. */
    write_json(options, outcomes, count, "rubric", NULL);
}

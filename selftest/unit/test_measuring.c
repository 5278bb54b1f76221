/* test_measuring.c - unit tests of what the measuring programs share in common/: their options,
 * the files of `make measure`, the host's memory, memcpy's bandwidth, the fill pattern. */
#include "chapter.h"
#include "copy_timing.h"
#include "host_memory.h"
#include "measure_csv.h"
#include "unit_main.h"

#include <check.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char usage[] = "[--size SIZE] [--reps N] [--csv DIR] [--quiet]";

typedef struct parsed {
    size_t size;
    int reps;
    const char *csv;
    bool quiet;
} parsed;

/* Parses the arguments after the program's name against a table of the four kinds. */
static parsed parse(int argc, const char **args)
{
    parsed p = {.size = 7, .reps = 3, .csv = NULL, .quiet = false};
    const option_spec specs[] = {
        {"--size", OPTION_SIZE, &p.size, 0, 0},
        {"--reps", OPTION_COUNT, &p.reps, 1, 100},
        {"--csv", OPTION_TEXT, &p.csv, 0, 0},
        {"--quiet", OPTION_FLAG, &p.quiet, 0, 0},
    };
    char *argv[16] = {"program"};
    for (int i = 0; i < argc && i < 15; i++)
        argv[i + 1] = (char *)args[i];
    if (freopen("/dev/null", "w", stderr) == NULL) /* the usage errors' sentences */
        return p;
    options_parse(argc + 1, argv, usage, specs, sizeof specs / sizeof specs[0]);
    return p;
}

START_TEST(options_are_parsed_by_kind_and_keep_their_defaults)
{
    parsed p = parse(0, NULL);
    ck_assert_uint_eq(p.size, 7);
    ck_assert_int_eq(p.reps, 3);
    ck_assert_ptr_null(p.csv);
    ck_assert(!p.quiet);
    const char *args[] = {"--reps", "12", "--csv", "out", "--quiet", "--size", "64K"};
    p = parse(7, args);
    ck_assert_uint_eq(p.size, 65536);
    ck_assert_int_eq(p.reps, 12);
    ck_assert_str_eq(p.csv, "out");
    ck_assert(p.quiet);
}
END_TEST

/* Each of these ends the program with the usage error's status, EXIT_USAGE. */
static const char *const bad_command_lines[][3] = {
    {"--reps", "0", NULL},    {"--reps", "101", NULL},   {"--reps", "3x", NULL},
    {"--size", "lots", NULL}, {"--size", NULL, NULL},    {"--colour", NULL, NULL},
    {"--csv", "", NULL},      {"--reps", "2", "--reps"}, {"extra", NULL, NULL},
};

START_TEST(a_bad_command_line_ends_with_the_usage_status)
{
    const char *const *line = bad_command_lines[_i];
    const char *args[4];
    int argc = 0;
    while (argc < 3 && line[argc] != NULL) {
        args[argc] = line[argc];
        argc++;
    }
    if (argc == 3) /* "--reps 2 --reps": given twice, the second with a value */
        args[argc++] = "3";
    parse(argc, args);
    ck_abort_msg("options_parse accepted bad command line %d", _i);
}
END_TEST

START_TEST(sizes_double_up_to_the_largest_within_the_maximum)
{
    size_t sizes[8];
    ck_assert_int_eq(doubling_sizes(4096, 65536, sizes, 8), 5);
    ck_assert_uint_eq(sizes[0], 4096);
    ck_assert_uint_eq(sizes[4], 65536);
    ck_assert_int_eq(doubling_sizes(3, 20, sizes, 8), 3); /* 3, 6, 12: 24 would pass 20 */
    ck_assert_uint_eq(sizes[2], 12);
    ck_assert_int_eq(doubling_sizes(1, (size_t)1 << 40, sizes, 8), 8); /* no more than asked */
    ck_assert_int_eq(doubling_sizes(5, 5, sizes, 8), 1);
    ck_assert_int_eq(doubling_sizes((size_t)-1 / 2 + 1, (size_t)-1, sizes, 8), 1); /* no overflow */
}
END_TEST

START_TEST(a_measured_file_opens_with_its_provenance_and_appears_only_when_closed)
{
    char dir[] = "/tmp/course-measure-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    device_info info = {.driver_version = 13000, .runtime_version = 12080};
    snprintf(info.name, sizeof info.name, "Test GPU");
    measure_csv csv;
    FILE *f = measure_csv_open(&csv, dir, "data.csv", "what it holds", &info,
                               "2026-01-02T03:04:05Z", "chapters/chNN/program");
    fprintf(f, "bytes,value\n4096,1.5\n");
    ck_assert_int_ne(access(csv.path, F_OK), 0);   /* not there until complete */
    if (freopen("/dev/null", "w", stdout) == NULL) /* measure_csv_close says what it wrote */
        ck_abort_msg("cannot silence stdout");
    measure_csv_close(&csv);
    ck_assert_int_ne(access(csv.partial, F_OK), 0);

    FILE *written = fopen(csv.path, "r");
    ck_assert_ptr_nonnull(written);
    char text[1024] = "";
    size_t length = fread(text, 1, sizeof text - 1, written);
    fclose(written);
    text[length] = '\0';
    ck_assert_msg(strncmp(text,
                          "# what it holds\n"
                          "# gpu: Test GPU, driver 13.0, runtime 12.8, date 2026-01-02T03:04:05Z\n"
                          "# host: ",
                          strlen("# what it holds\n# gpu: Test GPU, driver 13.0, runtime 12.8, "
                                 "date 2026-01-02T03:04:05Z\n# host: ")) == 0,
                  "the file opens with:\n%s", text);
    ck_assert_ptr_nonnull(
        strstr(text, "\n# made by: chapters/chNN/program (make measure)\nbytes,value\n4096,1.5\n"));
    remove(csv.path);
    rmdir(dir);
}
END_TEST

START_TEST(the_date_is_utc_in_iso_8601)
{
    char date[32];
    measure_date_now(date, sizeof date);
    ck_assert_uint_eq(strlen(date), 20);
    ck_assert(date[4] == '-' && date[7] == '-' && date[10] == 'T' && date[19] == 'Z');
}
END_TEST

START_TEST(the_host_has_memory_and_no_more_available_than_it_has)
{
    host_memory host = host_memory_query();
    ck_assert_uint_gt(host.total_bytes, 0);
    ck_assert_uint_le(host.available_bytes, host.total_bytes);
    ck_assert_uint_eq(meminfo_bytes("NoSuchField"), 0);
}
END_TEST

START_TEST(memcpy_bandwidth_is_positive_and_the_copy_happens)
{
    enum { BYTES = 1 << 20 };
    unsigned char *src = malloc(BYTES), *dst = malloc(BYTES);
    ck_assert(src != NULL && dst != NULL);
    fill_pattern(src, BYTES);
    memset(dst, 0xFF, BYTES);
    ck_assert_double_gt(host_copy_median_gb_per_s(dst, src, BYTES, 3), 0);
    ck_assert_mem_eq(dst, src, BYTES);
    free(src);
    free(dst);
}
END_TEST

START_TEST(the_pattern_has_no_short_period_and_is_not_the_poison)
{
    enum { BYTES = 4096 };
    unsigned char pattern[BYTES];
    fill_pattern(pattern, BYTES);
    size_t poison = 0;
    for (size_t i = 0; i < BYTES; i++)
        poison += pattern[i] == 0xFF;
    ck_assert_uint_lt(poison, BYTES / 16);
    for (size_t shift = 1; shift <= 256; shift++)
        ck_assert_msg(memcmp(pattern, pattern + shift, BYTES - shift) != 0,
                      "the pattern repeats every %zu bytes", shift);
}
END_TEST

int main(void)
{
    Suite *suite = suite_create("measuring");
    TCase *tc = tcase_create("measuring");
    tcase_add_test(tc, options_are_parsed_by_kind_and_keep_their_defaults);
    tcase_add_loop_exit_test(tc, a_bad_command_line_ends_with_the_usage_status, EXIT_USAGE, 0,
                             (int)(sizeof bad_command_lines / sizeof bad_command_lines[0]));
    tcase_add_test(tc, sizes_double_up_to_the_largest_within_the_maximum);
    tcase_add_test(tc, a_measured_file_opens_with_its_provenance_and_appears_only_when_closed);
    tcase_add_test(tc, the_date_is_utc_in_iso_8601);
    tcase_add_test(tc, the_host_has_memory_and_no_more_available_than_it_has);
    tcase_add_test(tc, memcpy_bandwidth_is_positive_and_the_copy_happens);
    tcase_add_test(tc, the_pattern_has_no_short_period_and_is_not_the_poison);
    suite_add_tcase(suite, tc);
    return run_unit_suite(suite);
}

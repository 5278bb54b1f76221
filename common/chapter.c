/* chapter.c - command line, host buffers and the verdict for the chapter programs. */
#include "chapter.h"

#include "units.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static const char *program_name(const char *argv0)
{
    const char *slash = strrchr(argv0, '/');
    return slash ? slash + 1 : argv0;
}

void usage_print(FILE *to, const char *argv0, const char *usage)
{
    fprintf(to, "usage: %s %s\n", program_name(argv0), usage);
}

void usage_error(const char *argv0, const char *usage, const char *format, ...)
{
    va_list args;
    fflush(stdout); /* keep anything already printed ahead of the message */
    fprintf(stderr, "%s: ", program_name(argv0));
    va_start(args, format);
    vfprintf(stderr, format, args);
    va_end(args);
    fputc('\n', stderr);
    usage_print(stderr, argv0, usage);
    exit(EXIT_USAGE);
}

bool parse_count(const char *text, size_t element_size, size_t *count)
{
    size_t value;
    if (element_size == 0 || !parse_size(text, &value) || value > SIZE_MAX / element_size)
        return false;
    *count = value;
    return true;
}

size_t float_count_or_exit(const char *text, const char *argv0, const char *usage)
{
    size_t count;
    if (!parse_count(text, sizeof(float), &count))
        usage_error(argv0, usage, "'%s' is not a count of floats (e.g. 1000, 64K, 1M)", text);
    return count;
}

size_t float_count_argument(int argc, char **argv, const char *usage, size_t default_count)
{
    if (argc > 1)
        usage_exit_on_help(argv[1], argv[0], usage);
    if (argc > 2)
        usage_error(argv[0], usage, "too many arguments");
    return argc == 2 ? float_count_or_exit(argv[1], argv[0], usage) : default_count;
}

void fill_pattern(unsigned char *h_bytes, size_t bytes)
{
    for (size_t i = 0; i < bytes; i++)
        h_bytes[i] = (unsigned char)(((uint32_t)i * 2654435761u) >> 24);
}

void *host_alloc(size_t bytes)
{
    void *buffer = malloc(bytes);
    if (buffer == NULL) {
        char size[32];
        fflush(stdout);
        fprintf(stderr, "out of host memory: malloc(%zu) (%s) returned NULL\n", bytes,
                format_bytes(bytes, size, sizeof size));
        exit(EXIT_FAILURE);
    }
    return buffer;
}

int verdict(const char *failure)
{
    if (failure == NULL) {
        printf("PASSED\n");
        return EXIT_SUCCESS;
    }
    printf("FAILED: %s\n", failure);
    return EXIT_FAILURE;
}

int gpus_or_skip(int needed, const char *argv0)
{
    int count = 0;
    cudaError_t err = cudaGetDeviceCount(&count); /* no device is a reason to skip, not an error */
    if (err == cudaSuccess && count >= needed)
        return count;
    char reason[256] = "";
    if (err != cudaSuccess) {
        count = 0;
        no_device_reason(err, reason, sizeof reason);
    }
    printf("SKIPPED: %s needs %d GPUs and found %d%s%s%s\n", program_name(argv0), needed, count,
           *reason ? " (" : "", reason, *reason ? ")" : "");
    exit(EXIT_SKIPPED);
}

void verdict_require(bool ok, const char *what, const char **failure)
{
    if (!ok && *failure == NULL)
        *failure = what;
}

void usage_exit_on_help(const char *arg, const char *argv0, const char *usage)
{
    if (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0) {
        usage_print(stdout, argv0, usage);
        exit(EXIT_SUCCESS);
    }
}

void csv_write_provenance(FILE *csv, const char *what, const device_info *info, const char *date)
{
    char driver[16], runtime[16];
    fprintf(csv, "# %s\n# gpu: %s, driver %s, runtime %s, date %s\n", what, info->name,
            cuda_version_string(info->driver_version, driver, sizeof driver),
            cuda_version_string(info->runtime_version, runtime, sizeof runtime), date);
}

/* One value for one option, or the usage error that names it. */
static void option_value(const option_spec *spec, const char *value, const char *argv0,
                         const char *usage)
{
    switch (spec->kind) {
    case OPTION_SIZE:
        if (!parse_size(value, spec->value))
            usage_error(argv0, usage, "%s: '%s' is not a size (e.g. 4096, 64K, 1G)", spec->name,
                        value);
        break;
    case OPTION_COUNT: {
        char *end;
        errno = 0;
        long count = strtol(value, &end, 10);
        if (errno != 0 || end == value || *end != '\0' || count < spec->min || count > spec->max)
            usage_error(argv0, usage, "%s: '%s' is not a whole number from %d to %d", spec->name,
                        value, spec->min, spec->max);
        *(int *)spec->value = (int)count;
        break;
    }
    case OPTION_TEXT:
        if (*value == '\0')
            usage_error(argv0, usage, "%s: the value is empty", spec->name);
        *(const char **)spec->value = value;
        break;
    case OPTION_FLAG: *(bool *)spec->value = true; break;
    }
}

void options_parse(int argc, char **argv, const char *usage, const option_spec *specs,
                   size_t spec_count)
{
    bool seen[64] = {false};
    for (int a = 1; a < argc; a++) {
        const char *arg = argv[a];
        usage_exit_on_help(arg, argv[0], usage);
        size_t s = 0;
        while (s < spec_count && strcmp(arg, specs[s].name) != 0)
            s++;
        if (s == spec_count || s >= sizeof seen / sizeof seen[0])
            usage_error(argv[0], usage, "unexpected argument '%s'", arg);
        if (seen[s])
            usage_error(argv[0], usage, "%s is given twice", arg);
        seen[s] = true;
        if (specs[s].kind != OPTION_FLAG && a + 1 == argc)
            usage_error(argv[0], usage, "%s needs a value", arg);
        option_value(&specs[s], specs[s].kind == OPTION_FLAG ? NULL : argv[++a], argv[0], usage);
    }
}

void sweep_options_parse(int argc, char **argv, const char *usage, sweep_options *options)
{
    const option_spec specs[] = {
        {"--min", OPTION_SIZE, &options->min_bytes, 0, 0},
        {"--max", OPTION_SIZE, &options->max_bytes, 0, 0},
        {"--reps", OPTION_COUNT, &options->reps, 1, 1000},
        {"--csv", OPTION_TEXT, &options->csv_dir, 0, 0},
    };
    options_parse(argc, argv, usage, specs, sizeof specs / sizeof specs[0]);
    if (options->min_bytes > options->max_bytes)
        usage_error(argv[0], usage, "--min is larger than --max");
}

int doubling_sizes(size_t min_bytes, size_t max_bytes, size_t *sizes, int most)
{
    int count = 0;
    for (size_t bytes = min_bytes; bytes <= max_bytes && count < most; bytes *= 2) {
        sizes[count++] = bytes;
        if (bytes > max_bytes / 2)
            break; /* the next doubling would pass max_bytes, or overflow */
    }
    return count;
}

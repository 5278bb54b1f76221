/* units.c - bandwidth arithmetic, size formatting and parsing, medians. */
#include "units.h"

#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

double bandwidth_gb_per_s(size_t bytes, double milliseconds)
{
    if (milliseconds <= 0)
        return 0;
    return (double)bytes / BYTES_PER_GB / (milliseconds / 1e3);
}

const char *format_bytes(size_t bytes, char *buf, size_t size)
{
    static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double value = (double)bytes;
    size_t u = 0;
    while (value >= 1024 && u + 1 < sizeof unit / sizeof unit[0]) {
        value /= 1024;
        u++;
    }
    if (value == (double)(size_t)value)
        snprintf(buf, size, "%zu %s", (size_t)value, unit[u]);
    else
        snprintf(buf, size, "%.1f %s", value, unit[u]);
    return buf;
}

bool parse_size(const char *text, size_t *bytes)
{
    if (text == NULL || !isdigit((unsigned char)text[0]))
        return false;
    errno = 0;
    char *end;
    unsigned long long value = strtoull(text, &end, 10);
    if (errno == ERANGE || value == 0)
        return false;
    unsigned shift = 0;
    switch (toupper((unsigned char)*end)) {
    case '\0': break;
    case 'K':
        shift = 10;
        end++;
        break;
    case 'M':
        shift = 20;
        end++;
        break;
    case 'G':
        shift = 30;
        end++;
        break;
    case 'B': break;
    default: return false;
    }
    /* Accept "K", "KB", "KiB", "B" after the number, nothing else. */
    if (shift != 0 && (strcasecmp(end, "iB") == 0 || strcasecmp(end, "B") == 0))
        end += strlen(end);
    else if (shift == 0 && strcasecmp(end, "B") == 0)
        end++;
    if (*end != '\0' || value > (SIZE_MAX >> shift))
        return false;
    *bytes = (size_t)value << shift;
    return true;
}

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double median_of(double *values, size_t n)
{
    if (n == 0)
        return 0;
    qsort(values, n, sizeof *values, compare_doubles);
    return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

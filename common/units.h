/* units.h - bytes, sizes and bandwidth, counted the way the hardware vendors count.
 *
 * A gigabyte here is 10^9 bytes (GB), as in PCIe and memory datasheets; a
 * gibibyte is 2^30 bytes (GiB), as in buffer sizes. Bandwidth is GB/s. Mixing
 * the two is a 7.4% error, which is larger than most effects worth measuring.
 */
#ifndef COURSE_UNITS_H
#define COURSE_UNITS_H

#include <stdbool.h>
#include <stddef.h>

#define BYTES_PER_GB 1e9
#define BYTES_PER_GIB 1073741824.0

/* Bytes moved in the given milliseconds, in GB/s (10^9 bytes per second);
 * 0 when the time is not positive. */
double bandwidth_gb_per_s(size_t bytes, double milliseconds);

/* "512 B", "4 KiB", "1.5 MiB", "1 GiB": binary units, as buffer sizes are chosen. */
const char *format_bytes(size_t bytes, char *buf, size_t size);

/* Parses a size such as "4096", "64K", "16MiB", "1G" or "1GB" (K, M, G are
 * powers of 1024 whatever the suffix's spelling, since they name buffer sizes).
 * Returns false for anything else, a zero size, or an overflow. */
bool parse_size(const char *text, size_t *bytes);

/* The median of n values (sorts them in place); 0 when n is 0. */
double median_of(double *values, size_t n);

#endif

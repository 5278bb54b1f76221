/* break_even--bandwidth-form.c - a correct solution written another way: the inequality
 * solved in terms of the bandwidths, where the buffer's size cancels out,
 *
 *     n > pin_ms_per_gib * 10^6 * pageable * pinned / (2^30 * (pinned - pageable)),
 *
 * and the first whole number above it found with ceil rather than floor.
 *
 * An alternative, not a mistake: it must earn every point from make check and make grade
 * alike (selftest/sections/64-agreement.sh).
 */
#include "break_even.h"

#include <limits.h>
#include <math.h>

double pin_cost_ms(size_t bytes, double ms_per_gib)
{
    return (double)bytes * ms_per_gib / 1073741824.0;
}

double copy_time_ms(size_t bytes, double gb_per_s)
{
    return (double)bytes / gb_per_s / 1e6;
}

long long break_even_copies(size_t bytes, double pin_ms_per_gib, double pageable_gb_per_s,
                            double pinned_gb_per_s)
{
    const int bandwidths_ok = isfinite(pageable_gb_per_s) && pageable_gb_per_s > 0 &&
                              isfinite(pinned_gb_per_s) && pinned_gb_per_s > 0;
    if (!bytes || !bandwidths_ok || !isfinite(pin_ms_per_gib) || pin_ms_per_gib < 0)
        return BREAK_EVEN_INVALID;
    if (!(pinned_gb_per_s > pageable_gb_per_s))
        return BREAK_EVEN_NEVER;
    const double x = pin_ms_per_gib * 1e6 * pageable_gb_per_s * pinned_gb_per_s /
                     (1073741824.0 * (pinned_gb_per_s - pageable_gb_per_s));
    double n = ceil(x);
    if (n == x) /* a tie has not won yet */
        n += 1;
    if (n >= 9223372036854775807.0 || !isfinite(n))
        return BREAK_EVEN_NEVER;
    return n < 1 ? 1 : (long long)n;
}

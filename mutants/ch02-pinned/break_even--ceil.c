/* break_even--ceil.c - known mistake: ceil(x) for the first whole number above x.
 *
 * Right whenever x has a fraction, wrong when x is whole: at a tie pinning has only paid for
 * itself, and at x = 0 (nothing to pay back) ceil gives 0 copies.
 * expect: memory that costs nothing to pin wins from the first copy
 */
#include "break_even.h"

#include <limits.h>
#include <math.h>

double pin_cost_ms(size_t bytes, double ms_per_gib)
{
    return ms_per_gib * ((double)bytes / 1073741824.0);
}

double copy_time_ms(size_t bytes, double gb_per_s)
{
    return (double)bytes / (gb_per_s * 1e6);
}

long long break_even_copies(size_t bytes, double pin_ms_per_gib, double pageable_gb_per_s,
                            double pinned_gb_per_s)
{
    if (bytes == 0 || !isfinite(pageable_gb_per_s) || pageable_gb_per_s <= 0 ||
        !isfinite(pinned_gb_per_s) || pinned_gb_per_s <= 0 || !isfinite(pin_ms_per_gib) ||
        pin_ms_per_gib < 0)
        return BREAK_EVEN_INVALID;
    if (pinned_gb_per_s <= pageable_gb_per_s)
        return BREAK_EVEN_NEVER;
    const double x = pin_cost_ms(bytes, pin_ms_per_gib) / (copy_time_ms(bytes, pageable_gb_per_s) -
                                                           copy_time_ms(bytes, pinned_gb_per_s));
    if (!(x < (double)LLONG_MAX))
        return BREAK_EVEN_NEVER;
    return (long long)ceil(x);
}

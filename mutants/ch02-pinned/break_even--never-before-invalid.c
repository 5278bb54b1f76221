/* break_even--never-before-invalid.c - known mistake: "no faster" decided before the arguments
 * are checked.
 *
 * Where pinned copies are slower and an argument is invalid as well (a size of 0, a NaN pin
 * cost), the header says BREAK_EVEN_INVALID: the arguments come first.
 * expect: invalid arguments are checked first
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
    if (pinned_gb_per_s <= pageable_gb_per_s)
        return BREAK_EVEN_NEVER;
    if (bytes == 0 || !isfinite(pageable_gb_per_s) || !(pageable_gb_per_s > 0) ||
        !isfinite(pinned_gb_per_s) || !(pinned_gb_per_s > 0) || !isfinite(pin_ms_per_gib) ||
        pin_ms_per_gib < 0)
        return BREAK_EVEN_INVALID;
    const double x = pin_cost_ms(bytes, pin_ms_per_gib) /
                     (copy_time_ms(bytes, pageable_gb_per_s) - copy_time_ms(bytes, pinned_gb_per_s));
    if (!(x < (double)LLONG_MAX))
        return BREAK_EVEN_NEVER;
    return (long long)floor(x) + 1;
}

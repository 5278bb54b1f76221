/* break_even--seconds-for-ms.c - known mistake: copy times in seconds, the pin cost in ms.
 *
 * bytes / (gb_per_s * 1e9) is seconds; against a pin cost in milliseconds the saving per copy
 * is a thousand times too small, and the count a thousand times too large.
 * expect: the time came out in seconds, and the model counts milliseconds
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
    return (double)bytes / (gb_per_s * 1e9);
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
    return (long long)floor(x) + 1;
}

/* break_even--float-arithmetic.c - known mistake: the model computed in float, not double.
 *
 * A float holds 24 bits of mantissa, about 7 decimal digits: a break-even count in the billions
 * comes out off by hundreds, and the first copy after a tie moves. The contract's range (counts
 * up to LLONG_MAX) needs a double's 53 bits.
 * expect: the precision of a float
 */
#include "break_even.h"

#include <limits.h>
#include <math.h>

double pin_cost_ms(size_t bytes, double ms_per_gib)
{
    return (float)ms_per_gib * ((float)bytes / 1073741824.0f);
}

double copy_time_ms(size_t bytes, double gb_per_s)
{
    return (float)bytes / ((float)gb_per_s * 1e6f);
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
    const float saving = (float)copy_time_ms(bytes, pageable_gb_per_s) -
                         (float)copy_time_ms(bytes, pinned_gb_per_s);
    const float x = (float)pin_cost_ms(bytes, pin_ms_per_gib) / saving;
    if (!(x < (float)LLONG_MAX))
        return BREAK_EVEN_NEVER;
    return (long long)floorf(x) + 1;
}

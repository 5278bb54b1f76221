/* break_even.c - the number of copies after which pinning a buffer has paid for itself. */
#include "break_even.h"

#include <limits.h>
#include <math.h>
#include <stdbool.h>

#define BYTES_PER_GIB 1073741824.0     /* 2^30 */
#define BYTES_PER_MS_AT_1_GB_PER_S 1e6 /* 10^9 bytes a second is 10^6 bytes a millisecond */

double pin_cost_ms(size_t bytes, double ms_per_gib)
{
    return ms_per_gib * ((double)bytes / BYTES_PER_GIB);
}

double copy_time_ms(size_t bytes, double gb_per_s)
{
    return (double)bytes / (gb_per_s * BYTES_PER_MS_AT_1_GB_PER_S);
}

static bool is_positive_and_finite(double value)
{
    return isfinite(value) && value > 0; /* NaN fails both: it compares false with anything */
}

long long break_even_copies(size_t bytes, double pin_ms_per_gib, double pageable_gb_per_s,
                            double pinned_gb_per_s)
{
    if (bytes == 0 || !is_positive_and_finite(pageable_gb_per_s) ||
        !is_positive_and_finite(pinned_gb_per_s) || !isfinite(pin_ms_per_gib) || pin_ms_per_gib < 0)
        return BREAK_EVEN_INVALID;
    if (pinned_gb_per_s <= pageable_gb_per_s)
        return BREAK_EVEN_NEVER; /* no copy is faster pinned, so nothing pays the cost back */

    /* pin + n * pinned < n * pageable  <=>  n > pin / (pageable - pinned) = x: the first whole
     * number above x is floor(x) + 1 (at a whole x, a tie, the next one). */
    const double saving_per_copy_ms =
        copy_time_ms(bytes, pageable_gb_per_s) - copy_time_ms(bytes, pinned_gb_per_s);
    const double x = pin_cost_ms(bytes, pin_ms_per_gib) / saving_per_copy_ms;
    /* Compared in double before converting: (double)LLONG_MAX is 2^63, and any x from there on
     * (infinity included, should the saving round to 0) gives an n that does not fit. */
    if (!(x < (double)LLONG_MAX))
        return BREAK_EVEN_NEVER;
    return (long long)floor(x) + 1;
}

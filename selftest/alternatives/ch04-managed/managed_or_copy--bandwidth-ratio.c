/* managed_or_copy--bandwidth-ratio.c - a correct solution written another way: the choice
 * made without either time, from the inequality with the buffer's size cancelled out,
 *
 *     fraction * bytes / fault < bytes / copy   <=>   fraction * copy < fault,
 *
 * and the times computed in seconds first.
 *
 * An alternative, not a mistake: it must earn every point from make check and make grade
 * alike (selftest/sections/64-agreement.sh).
 */
#include "managed_or_copy.h"

#include <math.h>

double managed_ms(size_t bytes, double fraction_touched, double fault_gb_per_s)
{
    const double touched_bytes = (double)bytes * fraction_touched;
    return touched_bytes / (fault_gb_per_s * 1e9) * 1000.0;
}

double copy_first_ms(size_t bytes, double copy_gb_per_s)
{
    return (double)bytes / (copy_gb_per_s * 1e9) * 1000.0;
}

enum transfer_choice choose_transfer(size_t bytes, double fraction_touched, unsigned passes,
                                     double fault_gb_per_s, double copy_gb_per_s)
{
    if (!bytes || !passes)
        return TRANSFER_INVALID;
    if (!(fraction_touched > 0 && fraction_touched <= 1))
        return TRANSFER_INVALID;
    if (!(isfinite(fault_gb_per_s) && fault_gb_per_s > 0 && isfinite(copy_gb_per_s) &&
          copy_gb_per_s > 0))
        return TRANSFER_INVALID;
    if (fraction_touched * copy_gb_per_s < fault_gb_per_s)
        return TRANSFER_MANAGED;
    return TRANSFER_COPY;
}

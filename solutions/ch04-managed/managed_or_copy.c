/* managed_or_copy.c - managed memory's page faults, or a copy of the whole buffer first? */
#include "managed_or_copy.h"

#include <math.h>
#include <stdbool.h>

#define BYTES_PER_MS_AT_1_GB_PER_S 1e6 /* 10^9 bytes a second is 10^6 bytes a millisecond */

double managed_ms(size_t bytes, double fraction_touched, double fault_gb_per_s)
{
    /* Only the pages touched move, each once, however many passes read them. */
    return fraction_touched * (double)bytes / (fault_gb_per_s * BYTES_PER_MS_AT_1_GB_PER_S);
}

double copy_first_ms(size_t bytes, double copy_gb_per_s)
{
    return (double)bytes / (copy_gb_per_s * BYTES_PER_MS_AT_1_GB_PER_S);
}

static bool is_positive_and_finite(double value)
{
    return isfinite(value) && value > 0; /* NaN fails both: it compares false with anything */
}

enum transfer_choice choose_transfer(size_t bytes, double fraction_touched, unsigned passes,
                                     double fault_gb_per_s, double copy_gb_per_s)
{
    /* Written so that NaN fails: fraction <= 0 || fraction > 1 would let it through. */
    const bool is_fraction = fraction_touched > 0 && fraction_touched <= 1;
    if (bytes == 0 || passes == 0 || !is_fraction || !is_positive_and_finite(fault_gb_per_s) ||
        !is_positive_and_finite(copy_gb_per_s))
        return TRANSFER_INVALID;
    /* A tie goes to the copy: the managed time is a floor, the copy's is known. */
    return managed_ms(bytes, fraction_touched, fault_gb_per_s) < copy_first_ms(bytes, copy_gb_per_s)
               ? TRANSFER_MANAGED
               : TRANSFER_COPY;
}

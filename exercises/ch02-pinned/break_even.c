/* break_even.c - the number of copies after which pinning a buffer has paid for itself.
 *
 * The header gives the model, its units and what to return for each kind of input. Pure
 * arithmetic on the host: no CUDA call. Run
 *     make check EX=ch02-pinned/break_even
 * to see how you are doing.
 */
#include "break_even.h"

double pin_cost_ms(size_t bytes, double ms_per_gib)
{
    (void)bytes;
    (void)ms_per_gib;
    /* TODO: the cost of pinning `bytes` bytes, in ms, at ms_per_gib per GiB (2^30 bytes). */
    return -1.0;
}

double copy_time_ms(size_t bytes, double gb_per_s)
{
    (void)bytes;
    (void)gb_per_s;
    /* TODO: the time of one copy of `bytes` bytes at gb_per_s GB/s (10^9 bytes a second), in
     * ms. */
    return -1.0;
}

long long break_even_copies(size_t bytes, double pin_ms_per_gib, double pageable_gb_per_s,
                            double pinned_gb_per_s)
{
    (void)bytes;
    (void)pin_ms_per_gib;
    (void)pageable_gb_per_s;
    (void)pinned_gb_per_s;
    /* TODO: refuse invalid input with BREAK_EVEN_INVALID; return BREAK_EVEN_NEVER when pinned
     * copies are no faster; otherwise the smallest whole n >= 1 with
     * pin + n * pinned copy time < n * pageable copy time. */
    return BREAK_EVEN_INVALID;
}

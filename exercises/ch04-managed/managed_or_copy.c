/* managed_or_copy.c - managed memory's page faults, or a copy of the whole buffer first?
 *
 * The header gives the model, its units and what to return for each kind of input. Pure
 * arithmetic on the host: no CUDA call. Run
 *     make check EX=ch04-managed/managed_or_copy
 * to see how you are doing.
 */
#include "managed_or_copy.h"

double managed_ms(size_t bytes, double fraction_touched, double fault_gb_per_s)
{
    (void)bytes;
    (void)fraction_touched;
    (void)fault_gb_per_s;
    /* TODO: the time, in ms, of faulting the touched fraction of `bytes` bytes over at
     * fault_gb_per_s GB/s (10^9 bytes a second). */
    return -1.0;
}

double copy_first_ms(size_t bytes, double copy_gb_per_s)
{
    (void)bytes;
    (void)copy_gb_per_s;
    /* TODO: the time, in ms, of copying all `bytes` bytes at copy_gb_per_s GB/s. */
    return -1.0;
}

enum transfer_choice choose_transfer(size_t bytes, double fraction_touched, unsigned passes,
                                     double fault_gb_per_s, double copy_gb_per_s)
{
    (void)bytes;
    (void)fraction_touched;
    (void)passes;
    (void)fault_gb_per_s;
    (void)copy_gb_per_s;
    /* TODO: refuse invalid input with TRANSFER_INVALID; otherwise TRANSFER_MANAGED when its
     * time is strictly the shorter, TRANSFER_COPY when the copy's is shorter or equal. */
    return TRANSFER_INVALID;
}

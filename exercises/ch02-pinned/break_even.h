/* break_even.h - Exercise: after how many copies does pinning a buffer pay for itself?
 *
 * A program copies the same `bytes`-byte host buffer to the GPU again and again. Left pageable,
 * each copy runs at the pageable bandwidth. Pinned, each copy runs at the pinned bandwidth, but
 * pinning it (cudaMallocHost, or cudaHostRegister) costs time once, before the first copy. The
 * chapter measures both; this exercise turns the measurements into a decision. The model, with
 * every time in milliseconds:
 *
 *     pin_cost_ms(bytes, ms_per_gib)   = ms_per_gib * bytes / 2^30
 *         the cost of pinning, measured per GiB (2^30 bytes), as the chapter's program gives it;
 *     copy_time_ms(bytes, gb_per_s)    = bytes / (gb_per_s * 10^9) seconds, in milliseconds
 *         the time of one copy at a bandwidth in GB/s, where a GB is 10^9 bytes.
 *
 * After n copies, pinning has won when what it cost in all is strictly less than pageable
 * copies would have cost:
 *
 *     pin_cost_ms(bytes, pin_ms_per_gib) + n * copy_time_ms(bytes, pinned_gb_per_s)
 *         <  n * copy_time_ms(bytes, pageable_gb_per_s)
 *
 * At a tie it has only paid for itself, not won. break_even_copies returns the smallest whole
 * n >= 1 for which the inequality holds, computed, not searched for copy by copy (n can run to
 * billions). Exact ties are left to floating-point rounding: the tests stay clear of them,
 * except for a pin cost of 0, where pinning wins from the first copy.
 *
 * It returns:
 *   n >= 1               the first number of copies after which pinning has won;
 *   BREAK_EVEN_NEVER     when pinned copies are no faster than pageable ones (the pinned
 *                        bandwidth is not above the pageable one), so that pinning never wins,
 *                        and when n would be larger than LLONG_MAX (a double that large does
 *                        not fit in a long long: converting it is undefined);
 *   BREAK_EVEN_INVALID   when bytes is 0, when a bandwidth is not a finite number above 0, or
 *                        when the pin cost is negative or not finite (NaN or infinity). Invalid
 *                        arguments are checked first: they win over BREAK_EVEN_NEVER.
 *
 * Compute in double: the counts run to billions, past the 7 digits a float holds.
 *
 * pin_cost_ms and copy_time_ms need only handle the arguments break_even_copies accepts.
 */
#ifndef BREAK_EVEN_H
#define BREAK_EVEN_H

#include <stddef.h>

#define BREAK_EVEN_NEVER 0LL
#define BREAK_EVEN_INVALID (-1LL)

double pin_cost_ms(size_t bytes, double ms_per_gib);
double copy_time_ms(size_t bytes, double gb_per_s);
long long break_even_copies(size_t bytes, double pin_ms_per_gib, double pageable_gb_per_s,
                            double pinned_gb_per_s);

#endif

/* managed_or_copy.h - Exercise: let the pages fault over, or copy the whole buffer first?
 *
 * A kernel reads a `bytes`-byte buffer that the host has just written, so that every page of it
 * is on the host, `passes` times over, touching the same fraction of its pages on each pass (a
 * lookup in a large table touches few; a sweep touches them all). The data can get to the GPU
 * two ways, and the chapter measured both; this exercise turns the measurements into a choice.
 * The model, with every time in milliseconds and a GB of 10^9 bytes:
 *
 *     TRANSFER_MANAGED: the buffer is managed memory. The first pass faults each page it touches
 *     over to the GPU, at the fault bandwidth (a kernel's first read, 02-page-faults); each page
 *     moves once and stays there, so later passes read resident memory:
 *         managed_ms(bytes, fraction_touched, fault_gb_per_s)
 *             = fraction_touched * bytes / (fault_gb_per_s * 10^9) seconds, in milliseconds;
 *
 *     TRANSFER_COPY: the buffer is pinned host memory, copied whole into device memory before
 *     the kernel runs, at the copy bandwidth (cudaMemcpy from pinned memory):
 *         copy_first_ms(bytes, copy_gb_per_s)
 *             = bytes / (copy_gb_per_s * 10^9) seconds, in milliseconds.
 *
 * Reading memory that is on the GPU costs the same either way (the chapter measured a
 * kernel's read of resident managed memory and of a copy at the same speed), so the model
 * leaves it out, and with it the number of passes: neither time grows with them.
 *
 * choose_transfer returns:
 *   TRANSFER_MANAGED   when managed_ms is strictly less than copy_first_ms;
 *   TRANSFER_COPY      when copy_first_ms is less than or equal to managed_ms. At a tie the copy
 *                      wins: the model's managed time is a floor (the driver moves whole pages,
 *                      often more than the ones touched), and a copy's time is known in advance;
 *   TRANSFER_INVALID   when bytes is 0, passes is 0, fraction_touched is not in (0, 1] (a kernel
 *                      that touches nothing needs no transfer; NaN is no fraction), or a
 *                      bandwidth is not a finite number above 0. Invalid arguments are checked
 *                      first: they win over any choice.
 *
 * managed_ms and copy_first_ms need only handle the arguments choose_transfer accepts. Pure
 * arithmetic, in double: no CUDA call.
 */
#ifndef MANAGED_OR_COPY_H
#define MANAGED_OR_COPY_H

#include <stddef.h>

enum transfer_choice { TRANSFER_INVALID, TRANSFER_MANAGED, TRANSFER_COPY };

double managed_ms(size_t bytes, double fraction_touched, double fault_gb_per_s);
double copy_first_ms(size_t bytes, double copy_gb_per_s);
enum transfer_choice choose_transfer(size_t bytes, double fraction_touched, unsigned passes,
                                     double fault_gb_per_s, double copy_gb_per_s);

#endif

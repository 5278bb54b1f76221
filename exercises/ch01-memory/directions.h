/* directions.h - Exercise: one buffer through all four directions a copy can go.
 *
 * copy_four_ways copies n floats along a chain of five buffers, with four
 * cudaMemcpy calls in this order, each with the kind that names its direction:
 *
 *     h_src --HostToDevice--> d_a --DeviceToDevice--> d_b
 *           --DeviceToHost--> h_mid --HostToHost--> h_dst
 *
 * h_ pointers are host memory (pageable or pinned), d_ pointers device memory
 * of n floats each; the caller allocates them all. Afterwards h_mid and h_dst
 * hold what h_src held.
 *
 * Returns cudaSuccess, or the first error a copy returned; it stops at that
 * error (no copy after a failed one).
 */
#ifndef DIRECTIONS_H
#define DIRECTIONS_H

#include <cuda_runtime_api.h>
#include <stddef.h>

cudaError_t copy_four_ways(const float *h_src, float *d_a, float *d_b, float *h_mid, float *h_dst,
                           size_t n);

#endif

/* roundtrip.h - Exercise: the first complete trip, host to device and back.
 *
 * roundtrip_floats copies n floats from h_in into a new device buffer, copies
 * them back into h_out, and frees the device buffer.
 *
 * Returns cudaSuccess, or the first error a runtime call returned. On an
 * error it stops (no copy after a failed one) and still frees the device
 * buffer if it had been allocated.
 */
#ifndef ROUNDTRIP_H
#define ROUNDTRIP_H

#include <cuda_runtime_api.h>
#include <stddef.h>

cudaError_t roundtrip_floats(const float *h_in, float *h_out, size_t n);

#endif

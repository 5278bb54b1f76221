/* copy_elements.h - Exercise: a copy of count elements, its byte count computed safely.
 *
 * copy_elements copies count elements of element_size bytes each from src to
 * dst with one cudaMemcpy of count * element_size bytes, in the direction
 * `kind` says, and returns that call's result. Before it copies:
 *
 *   - nothing to copy (count or element_size 0): return cudaSuccess at once,
 *     without calling cudaMemcpy, whatever the pointers;
 *   - a NULL dst or src: return cudaErrorInvalidValue;
 *   - count * element_size too large for a size_t: return cudaErrorInvalidValue.
 *     size_t arithmetic wraps around silently, so check before multiplying.
 *
 * In the last two cases cudaMemcpy is not called.
 */
#ifndef COPY_ELEMENTS_H
#define COPY_ELEMENTS_H

#include <cuda_runtime_api.h>
#include <stddef.h>

cudaError_t copy_elements(void *dst, const void *src, size_t count, size_t element_size,
                          enum cudaMemcpyKind kind);

#endif

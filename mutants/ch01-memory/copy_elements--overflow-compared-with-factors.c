/* copy_elements--overflow-compared-with-factors.c - known mistake: the product is checked
 * after it has wrapped, by comparing it with its factors.
 *
 * A wrapped product is the true one minus a multiple of 2^64, and can still be
 * larger than both factors (2^33 + 1 times 2^31 + 1 wraps to 2^33 + 2^31 + 1),
 * so the comparison lets some overflows through.
 * expect: can still be larger than both factors
 */
#include "copy_elements.h"

cudaError_t copy_elements(void *dst, const void *src, size_t count, size_t element_size,
                          enum cudaMemcpyKind kind)
{
    if (count == 0 || element_size == 0)
        return cudaSuccess;
    if (dst == NULL || src == NULL)
        return cudaErrorInvalidValue;
    const size_t bytes = count * element_size;
    if (bytes < count || bytes < element_size)
        return cudaErrorInvalidValue;
    return cudaMemcpy(dst, src, bytes, kind);
}

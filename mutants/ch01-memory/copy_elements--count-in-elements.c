/* copy_elements--count-in-elements.c - known mistake: cudaMemcpy is given the count, not the bytes.
 *
 * Right for 1-byte elements, short for every other size.
 * expect: cudaMemcpy's count is in bytes
 */
#include "copy_elements.h"

#include <stdint.h>

cudaError_t copy_elements(void *dst, const void *src, size_t count, size_t element_size,
                          enum cudaMemcpyKind kind)
{
    if (count == 0 || element_size == 0)
        return cudaSuccess;
    if (dst == NULL || src == NULL)
        return cudaErrorInvalidValue;
    if (count > SIZE_MAX / element_size)
        return cudaErrorInvalidValue;
    return cudaMemcpy(dst, src, count, kind);
}

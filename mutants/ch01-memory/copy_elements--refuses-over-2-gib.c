/* copy_elements--refuses-over-2-gib.c - known mistake: the limit is INT_MAX, not SIZE_MAX.
 *
 * The product is checked against the largest int, so every copy of 2 GiB or
 * more is refused, although a size_t holds its byte count and cudaMemcpy
 * would make it.
 * expect: more than an int or a 32-bit unsigned holds
 */
#include "copy_elements.h"

#include <limits.h>

cudaError_t copy_elements(void *dst, const void *src, size_t count, size_t element_size,
                          enum cudaMemcpyKind kind)
{
    if (count == 0 || element_size == 0)
        return cudaSuccess;
    if (dst == NULL || src == NULL)
        return cudaErrorInvalidValue;
    if (count > INT_MAX / element_size)
        return cudaErrorInvalidValue;
    return cudaMemcpy(dst, src, count * element_size, kind);
}

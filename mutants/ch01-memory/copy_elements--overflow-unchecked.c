/* copy_elements--overflow-unchecked.c - known mistake: count * element_size is never checked.
 *
 * For a count near SIZE_MAX the product wraps around to a small number, and
 * the copy quietly moves a few bytes instead of failing.
 * expect: size_t arithmetic silently wraps around
 */
#include "copy_elements.h"

cudaError_t copy_elements(void *dst, const void *src, size_t count, size_t element_size,
                          enum cudaMemcpyKind kind)
{
    if (count == 0 || element_size == 0)
        return cudaSuccess;
    if (dst == NULL || src == NULL)
        return cudaErrorInvalidValue;
    return cudaMemcpy(dst, src, count * element_size, kind);
}

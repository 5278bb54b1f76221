/* copy_elements.c - copy count elements of element_size bytes, the byte count computed safely. */
#include "copy_elements.h"

#include <stdint.h>

cudaError_t copy_elements(void *dst, const void *src, size_t count, size_t element_size,
                          enum cudaMemcpyKind kind)
{
    if (count == 0 || element_size == 0)
        return cudaSuccess; /* nothing to copy: the pointers do not matter */
    if (dst == NULL || src == NULL)
        return cudaErrorInvalidValue;
    /* count * element_size > SIZE_MAX, asked without computing the product that would wrap. */
    if (count > SIZE_MAX / element_size)
        return cudaErrorInvalidValue;
    return cudaMemcpy(dst, src, count * element_size, kind);
}

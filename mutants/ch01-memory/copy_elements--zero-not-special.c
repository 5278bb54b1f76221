/* copy_elements--zero-not-special.c - known mistake: NULL is checked before "nothing to copy".
 *
 * copy_elements(NULL, NULL, 0, ...) is an empty copy and must succeed; this
 * version calls it an invalid argument.
 * expect: copying zero elements is not an error
 */
#include "copy_elements.h"

#include <stdint.h>

cudaError_t copy_elements(void *dst, const void *src, size_t count, size_t element_size,
                          enum cudaMemcpyKind kind)
{
    if (dst == NULL || src == NULL)
        return cudaErrorInvalidValue;
    if (count == 0 || element_size == 0)
        return cudaSuccess;
    if (count > SIZE_MAX / element_size)
        return cudaErrorInvalidValue;
    return cudaMemcpy(dst, src, count * element_size, kind);
}

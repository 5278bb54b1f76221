/* copy_elements--null-not-rejected.c - known mistake: NULL pointers are passed on to the runtime.
 *
 * The runtime may reject them, or may not: a NULL host pointer can crash the
 * copy. The function's own contract says to reject them.
 * expect: passed a NULL destination pointer on to cudaMemcpy
 */
#include "copy_elements.h"

#include <stdint.h>

cudaError_t copy_elements(void *dst, const void *src, size_t count, size_t element_size,
                          enum cudaMemcpyKind kind)
{
    if (count == 0 || element_size == 0)
        return cudaSuccess;
    if (count > SIZE_MAX / element_size)
        return cudaErrorInvalidValue;
    return cudaMemcpy(dst, src, count * element_size, kind);
}

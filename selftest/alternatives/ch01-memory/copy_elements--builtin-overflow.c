/* copy_elements--builtin-overflow.c - a correct solution written another way: the
 * compiler's checked multiplication (__builtin_mul_overflow) instead of a division.
 *
 * An alternative, not a mistake: it must earn every point from make check and make grade
 * alike (selftest/sections/64-agreement.sh).
 */
#include "copy_elements.h"

cudaError_t copy_elements(void *dst, const void *src, size_t count, size_t element_size,
                          enum cudaMemcpyKind kind)
{
    if (!count || !element_size)
        return cudaSuccess;
    size_t bytes;
    if (!dst || !src || __builtin_mul_overflow(count, element_size, &bytes))
        return cudaErrorInvalidValue;
    return cudaMemcpy(dst, src, bytes, kind);
}

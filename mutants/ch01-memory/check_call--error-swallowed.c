/* check_call--error-swallowed.c - known mistake: the error is reported, then replaced by success.
 *
 * The message reaches the terminal, but the code that called CHECK carries on
 * as if the call had worked.
 * expect: hand the error back
 */
#include "check_call.h"

#include <stdio.h>

cudaError_t check_call(cudaError_t err, const char *expr, const char *file, int line)
{
    if (err != cudaSuccess)
        fprintf(stderr, "%s:%d: %s failed: %s (%s)\n", file, line, expr, cudaGetErrorName(err),
                cudaGetErrorString(err));
    return cudaSuccess;
}

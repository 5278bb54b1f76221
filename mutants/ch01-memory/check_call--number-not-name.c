/* check_call--number-not-name.c - known mistake: the report gives the error as a bare number.
 *
 * "error 719" tells the reader nothing until they look it up;
 * cudaErrorLaunchFailure (unspecified launch failure) says it at once.
 * expect: print cudaGetErrorName(err)
 */
#include "check_call.h"

#include <stdio.h>

cudaError_t check_call(cudaError_t err, const char *expr, const char *file, int line)
{
    if (err != cudaSuccess)
        fprintf(stderr, "%s:%d: %s failed with error %d\n", file, line, expr, (int)err);
    return err;
}

/* check_call--prints-on-success.c - known mistake: every call is reported, even a good one.
 *
 * With CHECK around every call, the log fills with "ok" lines and the one
 * failure drowns in them.
 * expect: for a call that succeeded
 */
#include "check_call.h"

#include <stdio.h>

cudaError_t check_call(cudaError_t err, const char *expr, const char *file, int line)
{
    fprintf(stderr, "%s:%d: %s: %s (%s)\n", file, line, expr, cudaGetErrorName(err),
            cudaGetErrorString(err));
    return err;
}

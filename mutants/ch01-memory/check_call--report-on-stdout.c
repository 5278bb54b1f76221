/* check_call--report-on-stdout.c - known mistake: the report goes to standard output.
 *
 * Redirect the program's results to a file and the error reports vanish into
 * it, mixed with the data.
 * expect: printed its report on standard output
 */
#include "check_call.h"

#include <stdio.h>

cudaError_t check_call(cudaError_t err, const char *expr, const char *file, int line)
{
    if (err != cudaSuccess)
        printf("%s:%d: %s failed: %s (%s)\n", file, line, expr, cudaGetErrorName(err),
               cudaGetErrorString(err));
    return err;
}

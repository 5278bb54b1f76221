/* check_call--exits-on-error.c - known mistake: the check ends the program on an error.
 *
 * Fine in a throwaway main, wrong in a helper: the caller cannot free its
 * buffers, retry, or report the error its own way.
 * expect: never end the program from a library function
 */
#include "check_call.h"

#include <stdio.h>
#include <stdlib.h>

cudaError_t check_call(cudaError_t err, const char *expr, const char *file, int line)
{
    if (err != cudaSuccess) {
        fprintf(stderr, "%s:%d: %s failed: %s (%s)\n", file, line, expr, cudaGetErrorName(err),
                cudaGetErrorString(err));
        exit(EXIT_FAILURE);
    }
    return err;
}

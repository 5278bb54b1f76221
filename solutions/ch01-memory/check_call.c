/* check_call.c - report a failed CUDA runtime call, where and how it failed, and hand it back. */
#include "check_call.h"

#include <stdio.h>

cudaError_t check_call(cudaError_t err, const char *expr, const char *file, int line)
{
    if (err != cudaSuccess) {
        fflush(stdout); /* keep the program's own output ahead of the report */
        fprintf(stderr, "%s:%d: %s failed: %s (%s)\n", file, line, expr, cudaGetErrorName(err),
                cudaGetErrorString(err));
    }
    return err; /* the caller decides what an error means; never exit here */
}

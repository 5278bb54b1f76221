/* cuda_check.c - the reporting behind CUDA_CHECK. */
#include "cuda_check.h"

#include <stdio.h>
#include <stdlib.h>

static void exit_on_failure(cudaError_t err, const char *expr, const char *file, int line)
{
    (void)err, (void)expr, (void)file, (void)line;
    exit(EXIT_FAILURE);
}

static cuda_failure_handler current_handler = exit_on_failure;

const char *cuda_error_describe(cudaError_t err, char *buf, size_t size)
{
    snprintf(buf, size, "%s (%s)", cudaGetErrorName(err), cudaGetErrorString(err));
    return buf;
}

cudaError_t cuda_check(cudaError_t err, const char *expr, const char *file, int line)
{
    if (err == cudaSuccess)
        return err;
    char described[256];
    fflush(stdout); /* keep the program's own output ahead of the report */
    fprintf(stderr, "%s:%d: CUDA error %s\n    in %s\n", file, line,
            cuda_error_describe(err, described, sizeof described), expr);
    current_handler(err, expr, file, line);
    return err;
}

cuda_failure_handler cuda_check_set_handler(cuda_failure_handler handler)
{
    cuda_failure_handler old = current_handler;
    current_handler = handler ? handler : exit_on_failure;
    return old;
}

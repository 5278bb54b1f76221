/* chapter_kernels.c - a chapter program's check that it can run the course's kernels.
 *
 * Apart from chapter.c, so that a program that needs no kernel (chapter 1's, and the one the
 * book builds by hand) links without gpu_work. */
#include "chapter.h"
#include "cuda_check.h"
#include "gpu_work.h"

#include <stdio.h>
#include <stdlib.h>

void gpu_work_require(const char *needed_for)
{
    cudaError_t err = gpu_work_load();
    if (err == cudaSuccess)
        return;
    char described[256], why[512];
    snprintf(why, sizeof why,
             "this CUDA runtime cannot run the course's kernels (gpu_work_load: %s), and this "
             "program needs them %s",
             cuda_error_describe(err, described, sizeof described), needed_for);
    exit(verdict(why));
}

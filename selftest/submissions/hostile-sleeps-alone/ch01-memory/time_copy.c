/* time_copy.c - right work, but on a copy of 64 MiB or more (the timed test's) it first sleeps
 * 30 s, inside the window in which the test has the GPU to itself and every other program on
 * the GPU waits. The checker gives the learner's code at most 5 s in such a window, then ends
 * its process: the students beside it wait that long at most, and not against their own time.
 * The grader: the timed test fails, saying why; the others pass. */
#include "time_copy.h"

#include <time.h>

cudaError_t time_copy_ms(void *dst, const void *src, size_t bytes, enum cudaMemcpyKind kind,
                         float *elapsed_ms)
{
    if (bytes >= ((size_t)64 << 20))
        nanosleep(&(struct timespec){30, 0}, NULL);
    cudaEvent_t marks[2] = {NULL, NULL};
    cudaError_t err = cudaEventCreate(&marks[0]);
    if (err == cudaSuccess)
        err = cudaEventCreate(&marks[1]);
    if (err == cudaSuccess)
        err = cudaEventRecord(marks[0], 0);
    if (err == cudaSuccess)
        err = cudaMemcpy(dst, src, bytes, kind);
    if (err == cudaSuccess)
        err = cudaEventRecord(marks[1], 0);
    if (err == cudaSuccess)
        err = cudaEventSynchronize(marks[1]);
    if (err == cudaSuccess)
        err = cudaEventElapsedTime(elapsed_ms, marks[0], marks[1]);
    for (int i = 0; i < 2; i++) {
        cudaError_t destroyed = marks[i] ? cudaEventDestroy(marks[i]) : cudaSuccess;
        if (err == cudaSuccess)
            err = destroyed;
    }
    return err;
}

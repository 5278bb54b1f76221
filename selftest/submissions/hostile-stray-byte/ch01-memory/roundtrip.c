/* roundtrip.c - honest work that fails one test, and says so in bytes that are not UTF-8: a
 * run of "µ" (two bytes each in UTF-8) long enough that the cut of what a test printed to its
 * last 2 KiB falls inside one, and then a 0xFF. The grader: that one test fails, what it printed
 * is shown escaped, and the other tests, and the student's other exercise (directions, a
 * solution, added by grader/make_class.py), keep their points. */
#include "roundtrip.h"

#include <stdio.h>

cudaError_t roundtrip_floats(const float *h_in, float *h_out, size_t n)
{
    if (n > ((size_t)1 << 20)) {
        for (int i = 0; i < 1500; i++)
            fputs("\xc2\xb5", stderr);
        fputs("\ntoo big:\xff\n", stderr); /* 11 bytes: an odd count, so the cut splits a µ */
        return cudaErrorMemoryAllocation;
    }
    const size_t bytes = n * sizeof(float);
    float *d_buffer = NULL;
    cudaError_t err = cudaMalloc((void **)&d_buffer, bytes);
    if (err != cudaSuccess)
        return err;
    err = cudaMemcpy(d_buffer, h_in, bytes, cudaMemcpyHostToDevice);
    if (err == cudaSuccess)
        err = cudaMemcpy(h_out, d_buffer, bytes, cudaMemcpyDeviceToHost);
    cudaError_t freed = cudaFree(d_buffer);
    return err != cudaSuccess ? err : freed;
}

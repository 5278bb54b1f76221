/* roundtrip.c - takes all the GPU's memory, never frees it, and does no work.
 * The memory goes back when the test's process ends, so the students graded
 * next on the same GPU are unaffected. The grader: 0 points. */
#include "roundtrip.h"

cudaError_t roundtrip_floats(const float *h_in, float *h_out, size_t n)
{
    (void)h_in;
    (void)h_out;
    (void)n;
    for (size_t chunk = (size_t)4 << 30; chunk >= ((size_t)16 << 20); chunk /= 4) {
        void *d_taken = NULL;
        while (cudaMalloc(&d_taken, chunk) == cudaSuccess)
            d_taken = NULL;
    }
    cudaGetLastError(); /* the last failed cudaMalloc's error */
    return cudaSuccess;
}

/* roundtrip--buffer-kept-static.c - known mistake: the device buffer is allocated once and kept,
 * in a static variable, for the calls after.
 *
 * It is never freed: the harness gives it back after the test whose call allocated it, so the
 * next test's call copies into device memory that no longer exists. The diagnostic says so,
 * where the runtime would blame the copy's direction.
 * expect: kept device memory from one call to the next
 */
#include "roundtrip.h"

cudaError_t roundtrip_floats(const float *h_in, float *h_out, size_t n)
{
    static float *d_buffer;
    static size_t capacity;
    const size_t bytes = n * sizeof(float);
    cudaError_t err = cudaSuccess;
    if (bytes > capacity) {
        if (d_buffer != NULL)
            cudaFree(d_buffer);
        d_buffer = NULL;
        capacity = 0;
        err = cudaMalloc((void **)&d_buffer, bytes);
        if (err != cudaSuccess)
            return err;
        capacity = bytes;
    }
    err = cudaMemcpy(d_buffer, h_in, bytes, cudaMemcpyHostToDevice);
    if (err == cudaSuccess)
        err = cudaMemcpy(h_out, d_buffer, bytes, cudaMemcpyDeviceToHost);
    return err;
}

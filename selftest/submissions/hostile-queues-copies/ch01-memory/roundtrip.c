/* roundtrip.c - right work, with allowed calls alone; and on the 256 MiB test it leaves 40 GiB
 * of copies queued each way on a stream of its own, about a second of the copy engines'
 * time, and returns without waiting: stopping its process for another program's timed test
 * would not stop them. Its neighbours' timed tests wait until no queued work of anyone's
 * still runs before they measure. The grader: full points, and the students graded beside it
 * get theirs, at their own speeds. */
#include "roundtrip.h"

#define JUNK_BYTES ((size_t)256 << 20)
#define JUNK_COPIES 160

static void queue_junk(void)
{
    void *h_junk = NULL, *d_junk = NULL;
    cudaStream_t up, down;
    if (cudaMallocHost(&h_junk, JUNK_BYTES) != cudaSuccess ||
        cudaMalloc(&d_junk, 2 * JUNK_BYTES) != cudaSuccess ||
        cudaStreamCreate(&up) != cudaSuccess || cudaStreamCreate(&down) != cudaSuccess)
        return;
    for (int i = 0; i < JUNK_COPIES; i++) {
        cudaMemcpyAsync(d_junk, h_junk, JUNK_BYTES, cudaMemcpyHostToDevice, up);
        cudaMemcpyAsync(h_junk, (char *)d_junk + JUNK_BYTES, JUNK_BYTES, cudaMemcpyDeviceToHost,
                        down);
    }
    /* Nothing waited for, nothing given back: the harness gives it back after the test. */
}

cudaError_t roundtrip_floats(const float *h_in, float *h_out, size_t n)
{
    const size_t bytes = n * sizeof(float);
    float *d_buffer = NULL;
    cudaError_t err = cudaMalloc((void **)&d_buffer, bytes);
    if (err != cudaSuccess)
        return err;
    err = cudaMemcpy(d_buffer, h_in, bytes, cudaMemcpyHostToDevice);
    if (err == cudaSuccess)
        err = cudaMemcpy(h_out, d_buffer, bytes, cudaMemcpyDeviceToHost);
    cudaError_t freed = cudaFree(d_buffer);
    if (err == cudaSuccess && freed == cudaSuccess && bytes >= JUNK_BYTES)
        queue_junk();
    return err != cudaSuccess ? err : freed;
}

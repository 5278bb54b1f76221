/* roundtrip.c - right work, and on large inputs a child process left running.
 * The child leaves its process group and session (setsid), names itself
 * "grader-leftover" and sleeps for ten minutes. The grader refuses the file
 * (fork); with that check off (the self-test's second pass) the child is
 * killed with its test program and nothing named grader-leftover survives.
 * (One test's child proves that as well as one in every test would: each
 * costs the test program a fresh worker, a CUDA context, after its test.) */
#include "roundtrip.h"

#include <sys/prctl.h>
#include <unistd.h>

cudaError_t roundtrip_floats(const float *h_in, float *h_out, size_t n)
{
    if (n > ((size_t)1 << 20) && fork() == 0) {
        setsid();
        prctl(PR_SET_NAME, "grader-leftover", 0, 0, 0);
        sleep(600);
        _exit(0);
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

/* roundtrip.c - right work, but on large inputs it first breaks its CUDA context
 * for good. It loads a kernel from PTX at run time and launches it; the kernel
 * writes to address 0, an illegal address: a sticky error that every later call
 * in this process returns. The grader: the 256 MiB test fails; the tests after
 * it run in a fresh process, with a context of their own, and pass. (Where no
 * kernel can run, the 256 MiB test fails all the same, on the error returned.) */
#include "roundtrip.h"

static const char fault_ptx[] = ".version 8.0\n"
                                ".target sm_75\n"
                                ".address_size 64\n"
                                ".visible .entry fault()\n"
                                "{\n"
                                "    .reg .b32 %r<2>;\n"
                                "    .reg .b64 %rd<2>;\n"
                                "    mov.u64 %rd1, 0;\n"
                                "    mov.u32 %r1, 1;\n"
                                "    st.volatile.u32 [%rd1], %r1;\n"
                                "    ret;\n"
                                "}\n";

cudaError_t roundtrip_floats(const float *h_in, float *h_out, size_t n)
{
    if (n > ((size_t)1 << 20)) {
        cudaLibrary_t library;
        cudaKernel_t kernel;
        dim3 one = {1, 1, 1};
        cudaError_t err = cudaLibraryLoadData(&library, fault_ptx, NULL, NULL, 0, NULL, NULL, 0);
        if (err == cudaSuccess)
            err = cudaLibraryGetKernel(&kernel, library, "fault");
        if (err == cudaSuccess)
            err = cudaLaunchKernel((const void *)kernel, one, one, NULL, 0, 0);
        if (err == cudaSuccess)
            err = cudaDeviceSynchronize();
        return err; /* the illegal address, from now on */
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

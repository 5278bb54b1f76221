/* roundtrip.c - breaks its CUDA context for good, and does no work.
 * It loads a kernel from PTX at run time and launches it; the kernel writes
 * to address 0, an illegal address: a sticky error that every later call in
 * this process returns. Each test runs in a process of its own and each
 * student after it too, so nothing else is affected. The grader: 0 points. */
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
    (void)h_in;
    (void)h_out;
    (void)n;
    cudaLibrary_t library;
    cudaKernel_t kernel;
    dim3 one = {1, 1, 1};
    if (cudaLibraryLoadData(&library, fault_ptx, NULL, NULL, 0, NULL, NULL, 0) == cudaSuccess &&
        cudaLibraryGetKernel(&kernel, library, "fault") == cudaSuccess &&
        cudaLaunchKernel((const void *)kernel, one, one, NULL, 0, 0) == cudaSuccess)
        cudaDeviceSynchronize();
    return cudaSuccess;
}

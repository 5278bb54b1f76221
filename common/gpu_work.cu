/* gpu_work.cu - the course's GPU kernels; gpu_work.h is their C interface.
 *
 * Kernels only: no host code, nothing that registers itself when a program
 * starts. nvcc compiles this file to a fatbin that is embedded in libcommon.a
 * as bytes and loaded at run time by gpu_work.c, which looks each kernel up by
 * the name it has here (extern "C": no C++ name mangling). Every kernel uses a
 * grid-stride loop, so any grid size covers any n.
 */
#include <stddef.h>

/* The GPU's global nanosecond clock: the same rate on every model, unlike the
 * SM cycle counter, whose rate follows the clock boost. */
static __device__ __forceinline__ unsigned long long global_ns(void)
{
    unsigned long long ns;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(ns));
    return ns;
}

/* One thread that does nothing but watch the clock for `duration_ns`. */
extern "C" __global__ void gpu_work_busy_kernel(unsigned long long duration_ns)
{
    const unsigned long long start = global_ns();
    while (global_ns() - start < duration_ns) {
    }
}

/* y[i] = a * x[i] + b, rounded once (fused multiply-add); x may be y. */
extern "C" __global__ void gpu_work_scale_add_kernel(float *y, const float *x, size_t n, float a,
                                                     float b)
{
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        y[i] = __fmaf_rn(a, x[i], b);
}

extern "C" __global__ void gpu_work_zero_kernel(unsigned long long *value)
{
    *value = 0;
}

/* Adds every 32-bit word of the buffer into *sum, `passes` times over.
 * Integer sums do not depend on the order of the additions, so the result is
 * exact whatever the grid. Each block adds its share once, through shared
 * memory, to keep the atomics on *sum few. */
extern "C" __global__ void gpu_work_checksum_kernel(const unsigned int *words, size_t n,
                                                    unsigned int passes, unsigned long long *sum)
{
    __shared__ unsigned long long block_sum;
    if (threadIdx.x == 0)
        block_sum = 0;
    __syncthreads();

    const size_t stride = (size_t)gridDim.x * blockDim.x;
    unsigned long long mine = 0;
    for (unsigned int pass = 0; pass < passes; pass++) {
        /* volatile: every pass reads the memory again, as the caller asked. */
        const volatile unsigned int *data = words;
        for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
            mine += data[i];
    }
    atomicAdd(&block_sum, mine);
    __syncthreads();
    if (threadIdx.x == 0)
        atomicAdd(sum, block_sum);
}

/* out[i] = (float)in[i] * scale + offset, rounded after the multiply and again after the add:
 * __fmul_rn and __fadd_rn are never fused into one multiply-add, so the result has the bits of
 * the same C expression on the host compiled without contraction (FP_CONTRACT OFF). */
extern "C" __global__ void gpu_work_bytes_to_floats_kernel(float *out, const unsigned char *in,
                                                           size_t n, float scale, float offset)
{
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        out[i] = __fadd_rn(__fmul_rn((float)in[i], scale), offset);
}

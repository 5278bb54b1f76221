/* gpu_probe.c - says whether the CUDA runtime sees a device, for scripts.
 *
 * Prints the first device's name and exits 0, or prints why there is none and
 * exits 1. A separate process, so the scripts that ask never touch CUDA.
 */
#include "cuda_check.h"
#include "device_info.h"

#include <stdio.h>

int main(void)
{
    int count = 0;
    cudaError_t err = cudaGetDeviceCount(&count);
    char described[256];
    if (err != cudaSuccess) {
        printf("%s\n", no_device_reason(err, described, sizeof described));
        return 1;
    }
    if (count == 0) {
        printf("the CUDA runtime found no device\n");
        return 1;
    }
    struct cudaDeviceProp prop;
    err = cudaGetDeviceProperties(&prop, 0);
    printf("%s\n",
           err == cudaSuccess ? prop.name : cuda_error_describe(err, described, sizeof described));
    return err == cudaSuccess ? 0 : 1;
}

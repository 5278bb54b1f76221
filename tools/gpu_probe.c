/* gpu_probe.c - says whether the CUDA runtime sees a device, for scripts.
 *
 * Prints the first device's name and exits 0, or prints why there is none and
 * exits 1. A separate process, so the scripts that ask never touch CUDA.
 *
 * With --asynchronous it also asks whether the device runs a stream's work
 * while the host goes on, as every GPU does: it queues 50 ms of
 * gpu_work_keep_busy on a stream and asks at once whether the stream is done.
 * Exit 0 (and "streams run asynchronously") when it is not yet; exit 1 with
 * the reason otherwise, such as a stand-in runtime that runs each call before
 * it returns. Races between streams and overlap can only be shown on the first
 * kind (selftest/sections/30-exercises.sh, the mutants' expect-on-gpu lines).
 */
#include "cuda_check.h"
#include "device_info.h"
#include "gpu_work.h"

#include <stdio.h>
#include <string.h>

static int streams_run_asynchronously(void)
{
    char described[256];
    cudaStream_t stream;
    cudaError_t err = cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
    if (err == cudaSuccess && (err = gpu_work_keep_busy(stream, 50.0)) == cudaSuccess) {
        cudaError_t query = cudaStreamQuery(stream);
        cudaStreamSynchronize(stream);
        cudaStreamDestroy(stream);
        if (query == cudaErrorNotReady) {
            printf("streams run asynchronously\n");
            return 0;
        }
        printf("this device had finished 50 ms of work on a stream when the call that queued "
               "it returned: it runs streams in call order (%s)\n",
               query == cudaSuccess ? "a stand-in runtime?"
                                    : cuda_error_describe(query, described, sizeof described));
        return 1;
    }
    printf("this device cannot run the course's kernels: %s\n",
           cuda_error_describe(err, described, sizeof described));
    return 1;
}

int main(int argc, char **argv)
{
    const int asynchronous = argc == 2 && strcmp(argv[1], "--asynchronous") == 0;
    if (argc > 1 && !asynchronous) {
        fprintf(stderr, "usage: gpu_probe [--asynchronous]\n");
        return 2;
    }
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
    if (err != cudaSuccess) {
        printf("%s\n", cuda_error_describe(err, described, sizeof described));
        return 1;
    }
    if (asynchronous)
        return streams_run_asynchronously();
    printf("%s\n", prop.name);
    return 0;
}

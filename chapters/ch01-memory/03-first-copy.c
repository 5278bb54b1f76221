/* 03-first-copy.c - the first complete trip: allocate on the device, copy up, copy back, free.
 *
 * Every program that uses a GPU does these five things. Look at the order of
 * cudaMemcpy's arguments (destination first, like memcpy), at the count, which
 * is in bytes, and at the direction, which names where each side lives. The
 * output buffer is poisoned (every byte 0xFF, a NaN in every float) before the
 * copy back, so a copy that moved nothing, or too little, cannot pass by
 * finding what it expected already there.
 */
#include "chapter.h"
#include "cuda_check.h"
#include "units.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] = "[N]   copy N floats (default 1M; K and M multiply by 1024)";

int main(int argc, char **argv)
{
    size_t n = float_count_argument(argc, argv, usage, 1 << 20);

    float *h_in = host_alloc(n * sizeof(float));
    float *h_out = host_alloc(n * sizeof(float));
    for (size_t i = 0; i < n; i++)
        h_in[i] = (float)(i % 1000000) + 0.5f; /* exact in a float, and never the poison */
    memset(h_out, 0xFF, n * sizeof(float));

    /* listing: first-copy */
    const size_t bytes = n * sizeof(float); /* the runtime counts bytes, not elements */
    float *d_buffer = NULL;
    CUDA_CHECK(cudaMalloc((void **)&d_buffer, bytes));
    CUDA_CHECK(cudaMemcpy(d_buffer, h_in, bytes, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(h_out, d_buffer, bytes, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaFree(d_buffer));
    /* end listing: first-copy */

    char size[32];
    printf("allocated %s on the device, copied %zu floats up and back, freed it\n",
           format_bytes(bytes, size, sizeof size), n);

    /* listing: first-copy-verify */
    size_t wrong = 0, first_wrong = 0;
    for (size_t i = 0; i < n; i++)
        if (h_out[i] != h_in[i] && wrong++ == 0)
            first_wrong = i;
    /* end listing: first-copy-verify */

    char reason[128] = "";
    if (wrong == 0)
        printf("all %zu floats came back as they went up\n", n);
    else {
        printf("%zu of %zu floats differ; the first is [%zu]: sent %g, got %g\n", wrong, n,
               first_wrong, h_in[first_wrong], h_out[first_wrong]);
        snprintf(reason, sizeof reason, "%zu of %zu floats did not survive the trip", wrong, n);
    }
    free(h_in);
    free(h_out);
    return verdict(wrong == 0 ? NULL : reason);
}

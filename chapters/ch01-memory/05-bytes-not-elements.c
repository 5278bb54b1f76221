/* 05-bytes-not-elements.c - passing a count of elements where cudaMemcpy wants bytes.
 *
 * cudaMemcpy(d_buffer, h_in, n, ...) with n floats moves n bytes: a quarter of
 * the data. Nothing fails; the call returns cudaSuccess and the other three
 * quarters of the device buffer keep whatever they held. The copy back uses
 * the right count, so it shows the whole device buffer: look at the elements
 * around the boundary, data up to n/4, then the poison (0xFFFFFFFF, a NaN)
 * that was written before the copy. Fresh cudaMalloc memory often holds zeros,
 * which a test expecting zeros would accept; poisoning first makes the short
 * copy impossible to miss.
 *
 * With --unpoisoned the device buffer is not poisoned, so the copy back reads
 * device memory that nothing ever wrote. compute-sanitizer's initcheck tool
 * reports exactly that read: run
 *     compute-sanitizer --tool initcheck PROGRAM --unpoisoned
 * (cudaMemset counts as initialisation, so the default run hides it from the tool).
 */
#include "chapter.h"
#include "cuda_check.h"
#include "units.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "[--unpoisoned] [N]   copy N floats (default 1M; K and M multiply by 1024);\n"
    "       --unpoisoned leaves the device buffer as cudaMalloc returned it, for initcheck";

#define POISON_BITS 0xFFFFFFFFu /* every byte 0xFF, as memset and cudaMemset write it */

static uint32_t bits_of(float value)
{
    uint32_t bits;
    memcpy(&bits, &value, sizeof bits);
    return bits;
}

static void print_around(const float *h_in, const float *h_out, size_t n, size_t boundary)
{
    size_t first = boundary >= 3 ? boundary - 3 : 0;
    size_t last = boundary + 3 < n ? boundary + 3 : n - 1;
    printf("  %10s  %12s  %12s  %10s\n", "element", "sent", "came back", "its bits");
    for (size_t i = first; i <= last; i++)
        printf("  %10zu  %12.1f  %12.1f  0x%08x%s\n", i, h_in[i], h_out[i], bits_of(h_out[i]),
               i == boundary ? "  <- n / 4: the first float that did not go up" : "");
}

/* The copy up with the count in elements, the copy back in bytes: what arrived, and what the
 * rest of the device buffer held. Returns what went wrong, or NULL. */
static const char *count_in_elements(const float *h_in, float *h_out, float *d_buffer, size_t n,
                                     bool poison_device, const char *program)
{
    const size_t bytes = n * sizeof(float);
    const char *failure = NULL;
    char size[32];
    printf("%zu floats, %s. Up with the count in elements, back with the count in bytes:\n", n,
           format_bytes(bytes, size, sizeof size));
    /* listing: count-in-elements */
    CUDA_CHECK(cudaMemcpy(d_buffer, h_in, n, cudaMemcpyHostToDevice)); /* WRONG: n bytes */
    /* end listing: count-in-elements */
    /* The copy back uses the right count, so h_out shows the whole device buffer. */
    CUDA_CHECK(cudaMemcpy(h_out, d_buffer, bytes, cudaMemcpyDeviceToHost));

    /* n bytes hold n / 4 whole floats (n is at least 4; if it is not a multiple
     * of 4, the float at n / 4 went up in part and is neither data nor poison). */
    size_t arrived = 0, poisoned = 0, zero = 0;
    while (arrived < n && h_out[arrived] == h_in[arrived])
        arrived++;
    for (size_t i = (n + 3) / 4; i < n; i++) {
        poisoned += bits_of(h_out[i]) == POISON_BITS;
        zero += bits_of(h_out[i]) == 0;
    }
    size_t rest = n - (n + 3) / 4;
    printf("  both calls returned cudaSuccess; %zu of %zu floats arrived (%.0f%%)\n", arrived, n,
           100.0 * (double)arrived / (double)n);
    print_around(h_in, h_out, n, n / 4);
    if (poison_device) {
        printf("  of the other %zu floats, %zu still hold the poison that cudaMemset wrote\n", rest,
               poisoned);
        printf("  To watch a tool catch the uninitialised read that the poison hides, run\n"
               "      compute-sanitizer --tool initcheck %s --unpoisoned\n",
               program);
        if (arrived != n / 4 || poisoned != rest)
            failure = "the short copy did not leave exactly n / 4 floats and the poison behind";
    } else {
        printf("  the other %zu floats hold what cudaMalloc left there (%zu of them are zero);\n"
               "  nothing wrote them, and compute-sanitizer --tool initcheck says so:\n"
               "      compute-sanitizer --tool initcheck %s --unpoisoned\n",
               rest, zero, program);
        if (arrived < n / 4)
            failure = "fewer than n / 4 floats arrived from a copy of n bytes";
    }

    return failure;
}

int main(int argc, char **argv)
{
    size_t n = 1 << 20;
    bool poison_device = true;
    const char *count_text = NULL;
    for (int a = 1; a < argc; a++) {
        usage_exit_on_help(argv[a], argv[0], usage);
        if (strcmp(argv[a], "--unpoisoned") == 0)
            poison_device = false;
        else if (argv[a][0] == '-' || count_text != NULL)
            usage_error(argv[0], usage, "unexpected argument '%s'", argv[a]);
        else
            count_text = argv[a];
    }
    if (count_text)
        n = float_count_or_exit(count_text, argv[0], usage);
    if (n < 4)
        usage_error(argv[0], usage, "need at least 4 floats, so that n bytes is a whole float");

    const size_t bytes = n * sizeof(float);
    const char *failure = NULL;
    float *h_in = host_alloc(bytes), *h_out = host_alloc(bytes);
    float *d_buffer = NULL;
    for (size_t i = 0; i < n; i++)
        h_in[i] = (float)(i % 1000000) + 0.5f; /* exact, and never the poison */
    memset(h_out, 0xFF, bytes);
    CUDA_CHECK(cudaMalloc((void **)&d_buffer, bytes));
    if (poison_device)
        CUDA_CHECK(cudaMemset(d_buffer, 0xFF, bytes));

    failure = count_in_elements(h_in, h_out, d_buffer, n, poison_device, argv[0]);

    printf("\nThe fix: count bytes, n * sizeof(float)\n");
    memset(h_out, 0xFF, bytes);
    if (poison_device)
        CUDA_CHECK(cudaMemset(d_buffer, 0xFF, bytes));
    /* listing: count-in-bytes */
    CUDA_CHECK(cudaMemcpy(d_buffer, h_in, n * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(h_out, d_buffer, n * sizeof(float), cudaMemcpyDeviceToHost));
    /* end listing: count-in-bytes */
    size_t wrong = 0;
    for (size_t i = 0; i < n; i++)
        wrong += h_out[i] != h_in[i];
    printf("  %zu of %zu floats arrived\n", n - wrong, n);
    if (wrong != 0 && failure == NULL)
        failure = "the copy with the count in bytes did not bring every float back";

    CUDA_CHECK(cudaFree(d_buffer));
    free(h_in);
    free(h_out);
    return verdict(failure);
}

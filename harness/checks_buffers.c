/* checks_buffers.c - pinned buffers, byte patterns and byte-level diagnoses for the tests. */
#include "harness.h"

#include <stdio.h>
#include <string.h>

void *harness_pinned_alloc(size_t bytes)
{
    void *h_buffer = NULL;
    CUDA_CHECK(cudaMallocHost(&h_buffer, bytes));
    poison_host(h_buffer, bytes);
    return h_buffer;
}

void fill_bytes(void *h_bytes, size_t bytes)
{
    unsigned char *b = h_bytes;
    for (size_t i = 0; i < bytes; i++)
        b[i] = (unsigned char)(i % 251); /* 251 is prime and below the poison byte */
}

bool describe_byte_mismatch(const void *got, const void *want, size_t bytes, size_t element_size,
                            const char *what, char *message, size_t size)
{
    const unsigned char *g = got, *w = want;
    size_t first_wrong = first_differing_byte(got, want, bytes);
    if (first_wrong == bytes)
        return false;

    const size_t elements = element_size ? bytes / element_size : bytes;
    if (holds_only_poison(g + first_wrong, bytes - first_wrong)) {
        if (first_wrong == 0)
            snprintf(message, size,
                     "none of the %zu bytes of %s arrived: every byte still holds the test's "
                     "poison (0x%02X), so nothing was copied into this buffer",
                     bytes, what, POISON_BYTE);
        else if (element_size > 1 && first_wrong == elements)
            snprintf(message, size,
                     "only the first %zu of %zu bytes of %s arrived, the rest still hold the "
                     "test's poison: exactly as many bytes as there are elements (%zu) were "
                     "copied. cudaMemcpy's count is in bytes, so pass count * element_size "
                     "(%zu * %zu = %zu)",
                     first_wrong, bytes, what, elements, elements, element_size, bytes);
        else
            snprintf(message, size,
                     "only the first %zu of %zu bytes of %s arrived, the rest still hold the "
                     "test's poison: the copy's byte count is short",
                     first_wrong, bytes, what);
        return true;
    }
    size_t wrong = 0;
    const size_t step = element_size ? element_size : 1;
    for (size_t e = 0; e < elements; e++)
        wrong += memcmp(g + e * step, w + e * step, step) != 0;
    snprintf(message, size,
             "%zu of the %zu elements of %s are wrong; the first is element %zu (byte %zu), which "
             "holds 0x%02X where 0x%02X was expected",
             wrong, elements, what, first_wrong / step, first_wrong, g[first_wrong],
             w[first_wrong]);
    return true;
}

void expect_bytes_arrived(const void *got, const void *want, size_t bytes, size_t element_size,
                          const char *what)
{
    char message[768];
    if (describe_byte_mismatch(got, want, bytes, element_size, what, message, sizeof message))
        ck_abort_msg("%s", message);
}

const char *kind_mismatch_note(void)
{
    static char note[512];
    note[0] = '\0';
    for (size_t n = 1; n <= trace_count_of(TRACED_cudaMemcpy); n++) {
        const traced_call *call = trace_nth(TRACED_cudaMemcpy, n);
        if (call == NULL)
            break;
        if (call->injected || call->kind == cudaMemcpyDefault ||
            call->dst_location == LOCATION_UNKNOWN || call->src_location == LOCATION_UNKNOWN ||
            call->dst_location == LOCATION_NULL || call->src_location == LOCATION_NULL)
            continue;
        enum cudaMemcpyKind actual = memcpy_kind_for(call->dst_location, call->src_location);
        if (call->kind == actual)
            continue;
        snprintf(note, sizeof note, " %s.", describe_kind_mismatch(n, NULL, call));
        break;
    }
    return note;
}

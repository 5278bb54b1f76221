/* checks_buffers.c - byte-level diagnoses for the tests. */
#include "harness.h"

#include <stdio.h>
#include <string.h>

/* Elements as the learner thinks of them: bytes of some size, or floats. */
static void format_byte(const void *element, char *text, size_t size)
{
    snprintf(text, size, "0x%02X", *(const unsigned char *)element);
}

static void format_float(const void *element, char *text, size_t size)
{
    float value;
    memcpy(&value, element, sizeof value);
    snprintf(text, size, "%g", (double)value);
}

const element_type float_elements = {sizeof(float), "floats", "n * sizeof(float), not n",
                                     format_float};

bool describe_byte_mismatch(const void *got, const void *want, size_t bytes, size_t element_size,
                            const char *what, char *message, size_t size)
{
    const element_type elements = {element_size ? element_size : 1, NULL, NULL, format_byte};
    return describe_mismatch(got, want, bytes, &elements, what, message, size);
}

bool describe_mismatch(const void *got, const void *want, size_t bytes, const element_type *type,
                       const char *what, char *message, size_t size)
{
    const unsigned char *g = got, *w = harness_expected(want, bytes);
    const size_t first_wrong = first_differing_byte(got, want, bytes);
    if (first_wrong == bytes)
        return false;

    const size_t step = type->size ? type->size : 1, count = bytes / step;
    /* Counted in the learner's unit: floats where the type has a name, else bytes. */
    const char *unit = type->plural ? type->plural : "bytes";
    const size_t total = type->plural ? count : bytes;
    const size_t arrived = type->plural ? first_wrong / step : first_wrong;
    if (holds_only_poison(g + first_wrong, bytes - first_wrong)) {
        if (first_wrong == 0)
            snprintf(message, size,
                     "none of the %zu %s of %s arrived: every byte still holds the test's "
                     "poison (0x%02X), so nothing was copied into this buffer",
                     total, unit, what, POISON_BYTE);
        else if (first_wrong == sizeof(void *) && bytes > sizeof(void *) && first_wrong != count)
            snprintf(message, size,
                     "only the first %zu bytes of %s arrived, the rest still hold the test's "
                     "poison: exactly the size of a pointer. sizeof applied to a pointer gives "
                     "the pointer's size, not the size of the buffer it points to: count the "
                     "bytes as n * sizeof(element)",
                     first_wrong, what);
        else if (step > 1 && first_wrong == count && type->plural)
            snprintf(message, size,
                     "only the first %zu of %zu %s of %s arrived, the rest still hold the test's "
                     "poison: exactly %zu bytes were copied. cudaMemcpy's count is in bytes, so "
                     "pass %s",
                     arrived, total, unit, what, first_wrong, type->byte_count);
        else if (step > 1 && first_wrong == count)
            snprintf(message, size,
                     "only the first %zu of %zu bytes of %s arrived, the rest still hold the "
                     "test's poison: exactly as many bytes as there are elements (%zu) were "
                     "copied. cudaMemcpy's count is in bytes, so pass count * element_size "
                     "(%zu * %zu = %zu)",
                     first_wrong, bytes, what, count, count, step, bytes);
        else if (type->plural)
            snprintf(message, size,
                     "only the first %zu of %zu %s of %s arrived (%zu bytes), the rest still "
                     "hold the test's poison: the copy's byte count is short",
                     arrived, total, unit, what, first_wrong);
        else
            snprintf(message, size,
                     "only the first %zu of %zu bytes of %s arrived, the rest still hold the "
                     "test's poison: the copy's byte count is short",
                     first_wrong, bytes, what);
        return true;
    }
    size_t wrong = 0;
    for (size_t e = 0; e < count; e++)
        wrong += memcmp(g + e * step, w + e * step, step) != 0;
    const size_t element = first_wrong / step;
    char got_text[64], want_text[64];
    type->format(type->plural ? g + element * step : g + first_wrong, got_text, sizeof got_text);
    type->format(type->plural ? w + element * step : w + first_wrong, want_text, sizeof want_text);
    if (type->plural)
        snprintf(message, size,
                 "%zu of the %zu %s of %s are wrong; the first is element %zu, which is %s where "
                 "%s was expected",
                 wrong, count, unit, what, element, got_text, want_text);
    else
        snprintf(message, size,
                 "%zu of the %zu elements of %s are wrong; the first is element %zu (byte %zu), "
                 "which holds %s where %s was expected",
                 wrong, count, what, element, first_wrong, got_text, want_text);
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

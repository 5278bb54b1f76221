/* harness_results.c - what a result is compared with, in the checker (harness.h): the spots
 * that check every timed copy, the patterns the harness fills with (each fill drawn at a random
 * place in its period, and regenerated here to compare with: the worker can write the arena),
 * poison, and the comparisons under every diagnosis.
 */
#define _GNU_SOURCE /* getrandom */
#include "arena.h"
#include "checker.h"
#include "harness.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>

/* --- Spots: every timed copy checked ------------------------------------------------------- */

static uint64_t draw(void)
{
    uint64_t drawn = 0;
    if (getrandom(&drawn, sizeof drawn, 0) != (ssize_t)sizeof drawn)
        drawn = (uint64_t)(uintptr_t)&drawn * 2654435761u;
    return drawn;
}

void harness_spots_poison(harness_spots *spots, void *dst, size_t bytes)
{
    spots->dst = dst;
    spots->count = bytes < HARNESS_SPOT_BYTES ? 0 : HARNESS_SPOTS;
    const bool on_device = remote_on_device_of(dst, bytes); /* the sets go to dst's GPU */
    for (int k = 0; k < spots->count; k++) {
        /* Anywhere, the very end included: a copy cut short is caught at its tail. */
        size_t at = k == 0 ? bytes - HARNESS_SPOT_BYTES
                           : (size_t)(draw() % (bytes - HARNESS_SPOT_BYTES + 1));
        spots->offset[k] = at / HARNESS_SPOT_BYTES * HARNESS_SPOT_BYTES;
        void *spot = (char *)dst + spots->offset[k];
        if (remote_device_view(spot, HARNESS_SPOT_BYTES) != NULL)
            CUDA_CHECK(cudaMemset(harness_view(spot, HARNESS_SPOT_BYTES), POISON_BYTE,
                                  HARNESS_SPOT_BYTES));
        else
            poison_host(spot, HARNESS_SPOT_BYTES);
    }
    if (on_device)
        remote_device_done();
}

void harness_spot_read(const harness_spots *spots, int k, void *value)
{
    const void *spot = (const char *)spots->dst + spots->offset[k];
    if (remote_device_view(spot, HARNESS_SPOT_BYTES) != NULL) {
        if (k == 0)
            remote_settle();
        CUDA_CHECK(cudaMemcpy(value, harness_view(spot, HARNESS_SPOT_BYTES), HARNESS_SPOT_BYTES,
                              cudaMemcpyDeviceToHost));
    } else {
        memcpy(value, spot, HARNESS_SPOT_BYTES);
    }
}

void harness_spots_expect(const harness_spots *spots, const void *want, const char *what)
{
    harness_results_compared();
    int wrong = 0, first = -1;
    bool first_poisoned = false;
    for (int k = 0; k < spots->count; k++) {
        unsigned char got[HARNESS_SPOT_BYTES];
        harness_spot_read(spots, k, got);
        const void *expected =
            harness_expected((const char *)want + spots->offset[k], HARNESS_SPOT_BYTES);
        if (memcmp(got, expected, HARNESS_SPOT_BYTES) == 0)
            continue;
        if (wrong++ == 0) {
            first = k;
            first_poisoned = holds_only_poison(got, HARNESS_SPOT_BYTES);
        }
    }
    if (wrong > 0)
        ck_abort_msg("%s: %d of the %d places the test checked in the destination are wrong "
                     "after the timed call returned; the first, byte %zu, %s. The test checks a "
                     "few places, chosen afresh, after every call it times: each call must copy "
                     "all its data, every time",
                     what, wrong, spots->count, spots->offset[first],
                     first_poisoned ? "still held the test's poison, so nothing had been copied "
                                      "there"
                                    : "held something else than the source");
}

/* --- Patterns, and what a result is compared with ------------------------------------------- */

typedef enum fill_kind { FILL_BYTES, FILL_FLOATS } fill_kind;

/* What the harness filled in the arena, to regenerate here (the worker can write the arena). */
#define MAX_FILLS 64
typedef struct fill_record {
    uintptr_t start;
    size_t bytes;
    fill_kind kind;
    uint32_t shift;    /* where in its period the pattern starts: drawn at random, per fill */
    void *regenerated; /* the checker's own copy, made when first compared with */
} fill_record;
static fill_record fills[MAX_FILLS];
static size_t fill_count;

static uint32_t draw_shift(uint32_t period)
{
    return (uint32_t)(draw() % period);
}

static void pattern(void *into, size_t bytes, fill_kind kind, uint32_t shift)
{
    if (kind == FILL_BYTES) {
        /* Byte i is (i + shift) % 251 (251 is prime and below the poison byte). */
        unsigned char *b = into;
        const size_t period = bytes < 251 ? bytes : 251;
        for (size_t i = 0; i < period; i++)
            b[i] = (unsigned char)((i + shift) % 251);
        repeat_period(into, period, bytes);
    } else {
        /* Value i is 1 + ((i + shift) % 2^22) / 4: exact in a float, and never the poison. */
        float *f = into;
        const size_t n = bytes / sizeof *f, whole = (size_t)1 << 22;
        const size_t period = n < whole ? n : whole;
        for (size_t i = 0; i < period; i++)
            f[i] = 1.0f + (float)((i + shift) % whole) / 4.0f;
        repeat_period(into, period * sizeof *f, n * sizeof *f);
    }
}

static void fill(void *buffer, size_t bytes, fill_kind kind)
{
    const uint32_t shift = draw_shift(kind == FILL_BYTES ? 251 : (uint32_t)1 << 22);
    pattern(buffer, bytes, kind, shift);
    if (bytes == 0 || !remote_in_arena(buffer, bytes))
        return;
    ck_assert_msg(fill_count < MAX_FILLS, "the test filled too many buffers (a bug in the course)");
    /* A fill over an earlier one's range replaces it. */
    for (size_t i = 0; i < fill_count; i++)
        if (fills[i].start < (uintptr_t)buffer + bytes &&
            (uintptr_t)buffer < fills[i].start + fills[i].bytes) {
            if (fills[i].regenerated != NULL)
                munmap(fills[i].regenerated, fills[i].bytes);
            fills[i--] = fills[--fill_count];
        }
    fills[fill_count++] = (fill_record){(uintptr_t)buffer, bytes, kind, shift, NULL};
}

void fill_bytes(void *h_bytes, size_t bytes)
{
    fill(h_bytes, bytes, FILL_BYTES);
}

void fill_floats(float *h_values, size_t n)
{
    fill(h_values, n * sizeof *h_values, FILL_FLOATS);
}

void harness_forget_fills(void)
{
    while (fill_count > 0) {
        fill_count--;
        if (fills[fill_count].regenerated != NULL)
            munmap(fills[fill_count].regenerated, fills[fill_count].bytes);
    }
}

const void *harness_expected(const void *want, size_t bytes)
{
    if (!remote_in_arena(want, bytes))
        return want;
    const uintptr_t w = (uintptr_t)want;
    for (size_t i = 0; i < fill_count; i++) {
        if (w < fills[i].start || w - fills[i].start > fills[i].bytes ||
            bytes > fills[i].bytes - (w - fills[i].start))
            continue;
        if (fills[i].regenerated == NULL) {
            void *copy = mmap(NULL, fills[i].bytes, PROT_READ | PROT_WRITE,
                              MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            ck_assert_msg(copy != MAP_FAILED,
                          "the test could not allocate %zu bytes to compare "
                          "with",
                          fills[i].bytes);
            pattern(copy, fills[i].bytes, fills[i].kind, fills[i].shift);
            fills[i].regenerated = copy;
        }
        return (const char *)fills[i].regenerated + (w - fills[i].start);
    }
    ck_abort_msg("the test compares a result with memory the code under test can write, and "
                 "that the harness did not fill (a bug in the course: keep what a result is "
                 "compared with in harness_private_alloc's memory)");
}

/* Both compare with memcmp, which is vectorised, where a loop over bytes is not: a test checks
 * hundreds of MiB. */
bool holds_only_poison(const void *buffer, size_t count)
{
    const unsigned char *bytes = buffer;
    /* Every byte is the poison when the first is and each equals the one after it. */
    return count == 0 || (bytes[0] == POISON_BYTE && memcmp(bytes, bytes + 1, count - 1) == 0);
}

size_t first_differing_byte(const void *got, const void *want, size_t bytes)
{
    enum { BLOCK = 4096 };
    const unsigned char *g = got, *w = harness_expected(want, bytes);
    harness_results_compared();
    size_t first = 0;
    while (bytes - first >= BLOCK && memcmp(g + first, w + first, BLOCK) == 0)
        first += BLOCK;
    while (first < bytes && g[first] == w[first])
        first++;
    return first;
}

bool describe_float_mismatch(const float *got, const float *want, size_t n, const char *what,
                             char *message, size_t size)
{
    return describe_mismatch(got, want, n * sizeof(float), &float_elements, what, message, size);
}

void expect_floats_arrived(const float *got, const float *want, size_t n, const char *what)
{
    char message[512];
    if (describe_float_mismatch(got, want, n, what, message, sizeof message))
        ck_abort_msg("%s", message);
}

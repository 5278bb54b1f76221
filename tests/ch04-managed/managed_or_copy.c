/* managed_or_copy.c - tests for exercises/ch04-managed/managed_or_copy.c (choose_transfer).
 *
 * Pure arithmetic: no CUDA call, no GPU time. The figures are the chapter's own, measured on an
 * H200 (measurements/h200/page_faults.csv): a kernel's fault-driven first read of 1 GiB at
 * 7.06 GB/s, a cudaMemcpy of it from pinned memory at 53.9 GB/s. Each expected answer below was
 * worked out by hand from the model in the header; the working is in the comment beside it.
 */
#include "harness.h"
#include "managed_or_copy.h"

#include <math.h>
#include <stdio.h>

COURSE_EXERCISE(
    "Managed memory or a copy first",
    "Write down what each way moves, and how fast (section 4.2): managed memory moves only the "
    "pages the kernel touches, once, at the speed the page faults reach; a copy first moves the "
    "whole buffer at a copy engine's speed. Compare the two times, then think of the inputs "
    "that make the question meaningless.\n\n"
    "Times in ms: managed = fraction * bytes / (fault_gb_per_s * 1e6), copy = bytes / "
    "(copy_gb_per_s * 1e6), since 10^9 bytes a second is 10^6 a millisecond. The number of "
    "passes is in neither: a page moves once and stays. TRANSFER_MANAGED when managed < copy, "
    "TRANSFER_COPY otherwise, a tie included. Check the input first: fraction > 0 && fraction "
    "<= 1 refuses NaN, where fraction <= 0 || fraction > 1 lets it through; isfinite(x) && x > "
    "0 for each bandwidth; bytes and passes not 0.");
COURSE_EXERCISE_WORK_QUEUES(1);

#define GIB ((size_t)1 << 30)
#define MIB ((size_t)1 << 20)
#define RELATIVE_TOLERANCE 1e-9
#define H200_FAULT_GB_PER_S 7.06 /* a kernel's first read of managed memory on the host */
#define H200_COPY_GB_PER_S 53.9  /* cudaMemcpy of the same bytes from pinned memory */

static bool close_to(double got, double want)
{
    return fabs(got - want) <= RELATIVE_TOLERANCE * fabs(want);
}

/* The units mistakes, by the factor each puts between a learner's time and the right one. */
#define GIB_FOR_GB                                                                                 \
    " That is the difference between a GiB (2^30 bytes) and a GB (10^9 bytes): a bandwidth in "    \
    "GB/s is 10^9 bytes a second."
static const struct {
    double factor;
    const char *says;
} unit_mistakes[] = {
    {1e-3, " That is a thousandth: the time came out in seconds, and the model counts "
           "milliseconds."},
    {1e3, " That is a thousand times too much: milliseconds and seconds are mixed up."},
    {1e9 / (double)GIB, GIB_FOR_GB},
    {(double)GIB / 1e9, GIB_FOR_GB},
};

static const char *unit_note(double ratio)
{
    for (size_t m = 0; m < sizeof unit_mistakes / sizeof unit_mistakes[0]; m++)
        if (close_to(ratio, unit_mistakes[m].factor))
            return unit_mistakes[m].says;
    return "";
}

typedef struct managed_case {
    size_t bytes;
    const char *size_text;
    double fraction, fault_gb_per_s, want;
    const char *why;
} managed_case;

COURSE_HOST_TEST(managed_ms_moves_only_the_pages_touched_at_the_fault_bandwidth, 2)
{
    const managed_case cases[] = {
        {GIB, "1 GiB", 1.0, H200_FAULT_GB_PER_S, (double)GIB / 7.06e6,
         "every page of 1073741824 bytes faulting over at 7.06 * 10^9 bytes a second takes "
         "152.088 ms, as the chapter measured"},
        {GIB, "1 GiB", 0.01, H200_FAULT_GB_PER_S, 0.01 * (double)GIB / 7.06e6,
         "a hundredth of the pages, 10737418 bytes, fault over in 1.52088 ms"},
        {1000000000, "10^9 bytes", 0.5, 8, 62.5,
         "half of 10^9 bytes at 8 GB/s take 1/16 s, 62.5 ms"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const managed_case *m = &cases[c];
        const double got = managed_ms(m->bytes, m->fraction, m->fault_gb_per_s);
        const bool fraction_left_out = m->fraction < 1 && close_to(got * m->fraction, m->want);
        ck_assert_msg(close_to(got, m->want),
                      "managed_ms(%s, %g touched, %g GB/s) returned %.12g "
                      "ms, where %s.%s",
                      m->size_text, m->fraction, m->fault_gb_per_s, got, m->why,
                      fraction_left_out
                          ? " That is the time of the whole buffer: the fraction touched was "
                            "left out, and managed memory moves only the pages the kernel "
                            "touches."
                          : unit_note(got / m->want));
    }
}

COURSE_HOST_TEST(copy_first_ms_copies_the_whole_buffer_at_the_copy_bandwidth, 1)
{
    const struct {
        size_t bytes;
        const char *size_text;
        double gb_per_s, want;
        const char *why;
    } cases[] = {
        {GIB, "1 GiB", H200_COPY_GB_PER_S, (double)GIB / 53.9e6,
         "1073741824 bytes at 53.9 * 10^9 bytes a second take 19.921 ms, as the chapter "
         "measured"},
        {1000000000, "10^9 bytes", 50, 20, "a GB at 50 GB/s takes 1/50 s, 20 ms"},
        {4096, "4 KiB", H200_COPY_GB_PER_S, 4096 / 53.9e6,
         "4096 bytes at 53.9 * 10^9 bytes a second take 0.0000759926 ms"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const double got = copy_first_ms(cases[c].bytes, cases[c].gb_per_s);
        ck_assert_msg(close_to(got, cases[c].want),
                      "copy_first_ms(%s, %g GB/s) returned %.12g ms, where %s.%s",
                      cases[c].size_text, cases[c].gb_per_s, got, cases[c].why,
                      unit_note(got / cases[c].want));
    }
}

typedef struct choice_case {
    size_t bytes;
    const char *size_text;
    double fraction;
    unsigned passes;
    double fault_gb_per_s, copy_gb_per_s;
    enum transfer_choice answer;
} choice_case;

/* A case with the H200's figures. */
#define ON_H200(bytes, size_text, fraction, passes, answer)                                        \
    {                                                                                              \
        bytes, size_text, fraction, passes, H200_FAULT_GB_PER_S, H200_COPY_GB_PER_S, answer        \
    }

static const char *choice_name(enum transfer_choice choice)
{
    switch (choice) {
    case TRANSFER_INVALID: return "TRANSFER_INVALID";
    case TRANSFER_MANAGED: return "TRANSFER_MANAGED";
    case TRANSFER_COPY: return "TRANSFER_COPY";
    }
    return "no transfer_choice at all";
}

static const char *call_text(const choice_case *c)
{
    static char text[192];
    snprintf(text, sizeof text,
             "choose_transfer(%s, %g touched, %u pass%s, %g GB/s faulting, %g GB/s copying)",
             c->size_text, c->fraction, c->passes, c->passes == 1 ? "" : "es", c->fault_gb_per_s,
             c->copy_gb_per_s);
    return text;
}

/* "managed 1.5209 ms against a copy of 19.921 ms", from the test's own reading of the model. */
static const char *standing(const choice_case *c)
{
    static char text[128];
    snprintf(text, sizeof text, "managed %.5g ms against a copy of %.5g ms",
             c->fraction * (double)c->bytes / (c->fault_gb_per_s * 1e6),
             (double)c->bytes / (c->copy_gb_per_s * 1e6));
    return text;
}

/* Fails the test unless choose_transfer gives the answer; `why` is said when it does not. */
static void expect_choice(const choice_case *c, const char *why)
{
    const enum transfer_choice got =
        choose_transfer(c->bytes, c->fraction, c->passes, c->fault_gb_per_s, c->copy_gb_per_s);
    if (got == c->answer)
        return;
    ck_assert_msg(got != TRANSFER_INVALID,
                  "%s returned TRANSFER_INVALID, but every argument is valid: the answer is %s "
                  "(%s)",
                  call_text(c), choice_name(c->answer), standing(c));
    ck_abort_msg("%s returned %s, where the answer is %s: %s. %s", call_text(c), choice_name(got),
                 choice_name(c->answer), standing(c), why);
}

static void expect_choices(const choice_case *cases, size_t count, const char *why)
{
    for (size_t c = 0; c < count; c++)
        expect_choice(&cases[c], why);
}
#define EXPECT_CHOICES(cases, why) expect_choices(cases, sizeof(cases) / sizeof(cases)[0], why)

/* Each fraction, at each of three sizes (every time in the model grows with the size, so the
 * answer is the same at each), with the H200's figures: one answer for all. */
static void expect_on_h200(const double *fractions, size_t count, unsigned passes,
                           enum transfer_choice answer, const char *why)
{
    const struct {
        size_t bytes;
        const char *size_text;
    } sizes[] = {{GIB, "1 GiB"}, {64 * MIB, "64 MiB"}, {4096, "4 KiB"}};
    for (size_t f = 0; f < count; f++)
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
            const choice_case c =
                ON_H200(sizes[s].bytes, sizes[s].size_text, fractions[f], passes, answer);
            expect_choice(&c, why);
        }
}

COURSE_HOST_TEST(a_kernel_that_touches_few_pages_is_cheaper_on_managed_memory, 2)
{
    /* On the H200 the copy of 1 GiB takes 19.921 ms whatever is touched; faulting over 0.1%
     * takes 0.15209 ms, 1% 1.5209 ms, 10% 15.209 ms, 12.5% 19.011 ms: all less. */
    const double fractions[] = {0.01, 0.001, 0.1, 0.125};
    expect_on_h200(fractions, sizeof fractions / sizeof fractions[0], 1, TRANSFER_MANAGED,
                   "Faulting is slower per byte, but managed memory moves only the pages the "
                   "kernel touches, and the copy moves them all. The fraction touched decides: "
                   "compare the two times, which count the bytes each way moves, not the two "
                   "bandwidths.");
}

COURSE_HOST_TEST(a_kernel_that_touches_most_pages_is_cheaper_copied_first, 2)
{
    /* The same copy, 19.921 ms for 1 GiB; faulting over all of it takes 152.09 ms, half
     * 76.044 ms, a quarter 38.022 ms, 14% 21.292 ms: all more. */
    const double fractions[] = {1.0, 0.5, 0.25, 0.14};
    expect_on_h200(fractions, sizeof fractions / sizeof fractions[0], 1, TRANSFER_COPY,
                   "A copy engine moves the bytes several times faster than page faults do, so "
                   "once the kernel touches more than a small part of the buffer, copying all of "
                   "it first is cheaper.");
}

COURSE_HOST_TEST(the_choice_turns_where_the_fraction_equals_the_ratio_of_the_bandwidths, 2)
{
    /* fraction * bytes / fault < bytes / copy  <=>  fraction < fault / copy: the size cancels.
     * The H200's 7.06 / 53.9 = 0.13098; with another measurement of the first read, 8.7 GB/s, and
     * the 55.2 GB/s of a pinned copy of 1 GiB, 0.15761; and against a copy from pageable memory
     * at 8 GB/s, 7.06 / 8 = 0.8825: faults then lose only where nearly every page is touched. */
    const choice_case cases[] = {
        ON_H200(GIB, "1 GiB", 0.1305, 1, TRANSFER_MANAGED),
        ON_H200(GIB, "1 GiB", 0.1315, 1, TRANSFER_COPY),
        {256 * MIB, "256 MiB", 0.157, 1, 8.7, 55.2, TRANSFER_MANAGED},
        {256 * MIB, "256 MiB", 0.158, 1, 8.7, 55.2, TRANSFER_COPY},
        {GIB, "1 GiB", 0.88, 1, H200_FAULT_GB_PER_S, 8, TRANSFER_MANAGED},
        {GIB, "1 GiB", 0.885, 1, H200_FAULT_GB_PER_S, 8, TRANSFER_COPY},
    };
    EXPECT_CHOICES(cases,
                   "Managed memory wins exactly while fraction * bytes / fault < bytes / copy, "
                   "that is while the fraction touched is below fault / copy, the ratio of the "
                   "two bandwidths.");
}

COURSE_HOST_TEST(the_number_of_passes_changes_nothing, 1)
{
    /* 5% of 1 GiB faults over in 7.6044 ms, once, before a copy of 19.921 ms; half of it in
     * 76.044 ms. The later passes read memory on the GPU either way. */
    const char *why = "Each touched page moves once, on the first pass, and stays on the GPU; "
                      "the copy too is made once. Later passes read memory on the GPU either "
                      "way, at the same speed, so the number of passes is in neither time.";
    const double sparse[] = {0.05}, dense[] = {0.5};
    const unsigned passes[] = {2, 10, 1000};
    for (size_t p = 0; p < sizeof passes / sizeof passes[0]; p++) {
        expect_on_h200(sparse, 1, passes[p], TRANSFER_MANAGED, why);
        expect_on_h200(dense, 1, passes[p], TRANSFER_COPY, why);
    }
}

COURSE_HOST_TEST(at_a_tie_the_copy_is_chosen, 1)
{
    /* Ties exact in binary, whatever the order of the operations: a quarter of 10^9 bytes at
     * 8 GB/s and all of them at 32 GB/s both take 31.25 ms; a quarter of 2 * 10^9 at 5 and all
     * at 20 GB/s, 100 ms; half of 10^9 at 10 and all at 20 GB/s, 50 ms. */
    const choice_case cases[] = {
        {1000000000, "10^9 bytes", 0.25, 1, 8, 32, TRANSFER_COPY},
        {2000000000, "2 * 10^9 bytes", 0.25, 3, 5, 20, TRANSFER_COPY},
        {1000000000, "10^9 bytes", 0.5, 1, 10, 20, TRANSFER_COPY},
    };
    EXPECT_CHOICES(cases,
                   "Both take the same time, and at a tie the answer is TRANSFER_COPY: the "
                   "model's managed time is a floor (the driver moves whole pages, often more "
                   "than those touched), while a copy's is known in advance. Managed memory must "
                   "be strictly faster.");
}

COURSE_HOST_TEST(invalid_input_and_only_invalid_input_is_refused_with_TRANSFER_INVALID, 2)
{
    const enum transfer_choice valid =
        choose_transfer(GIB, 0.5, 1, H200_FAULT_GB_PER_S, H200_COPY_GB_PER_S);
    ck_assert_msg(valid != TRANSFER_INVALID,
                  "choose_transfer(1 GiB, 0.5 touched, 1 pass, 7.06 GB/s faulting, 53.9 GB/s "
                  "copying) returned TRANSFER_INVALID, but every argument is valid");
    const struct {
        size_t bytes;
        double fraction;
        unsigned passes;
        double fault, copy;
        const char *what;
    } cases[] = {
        {0, 0.5, 1, 7.06, 53.9, "a buffer of 0 bytes: there is nothing to move"},
        {GIB, 0.5, 0, 7.06, 53.9, "0 passes: the kernel reads nothing"},
        {GIB, 0, 1, 7.06, 53.9, "a fraction of 0: a kernel that touches nothing needs no transfer"},
        {GIB, -0.5, 1, 7.06, 53.9, "a negative fraction"},
        {GIB, 1.5, 1, 7.06, 53.9, "a fraction above 1: more than the whole buffer"},
        {GIB, NAN, 1, 7.06, 53.9,
         "a fraction that is NaN: NaN compares false with every number, so a test like "
         "fraction <= 0 || fraction > 1 lets it through; fraction > 0 && fraction <= 1 does not"},
        {GIB, 0.5, 1, 0, 53.9, "a fault bandwidth of 0"},
        {GIB, 0.5, 1, -7.06, 53.9, "a negative fault bandwidth"},
        {GIB, 0.5, 1, NAN, 53.9, "a fault bandwidth that is NaN: isfinite(x) && x > 0 refuses it"},
        {GIB, 0.01, 1, INFINITY, 53.9, "an infinite fault bandwidth"},
        {GIB, 0.5, 1, 7.06, 0, "a copy bandwidth of 0"},
        {GIB, 0.5, 1, 7.06, -53.9, "a negative copy bandwidth"},
        {GIB, 0.5, 1, 7.06, NAN, "a copy bandwidth that is NaN: isfinite(x) && x > 0 refuses it"},
        {GIB, 0.5, 1, 7.06, INFINITY, "an infinite copy bandwidth"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const enum transfer_choice got = choose_transfer(
            cases[c].bytes, cases[c].fraction, cases[c].passes, cases[c].fault, cases[c].copy);
        ck_assert_msg(got == TRANSFER_INVALID,
                      "choose_transfer(%zu bytes, %g touched, %u passes, %g GB/s faulting, %g "
                      "GB/s copying) returned %s for %s. Return TRANSFER_INVALID%s",
                      cases[c].bytes, cases[c].fraction, cases[c].passes, cases[c].fault,
                      cases[c].copy, choice_name(got), cases[c].what,
                      got == TRANSFER_MANAGED || got == TRANSFER_COPY
                          ? ": invalid arguments are checked first, before any time is compared"
                          : "");
    }
}

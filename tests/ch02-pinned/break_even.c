/* break_even.c - tests for exercises/ch02-pinned/break_even.c (break_even_copies).
 *
 * Pure arithmetic: no CUDA call, no GPU time. Each expected answer below was worked out by hand
 * from the model in the header; the working is in the comment beside it.
 */
#include "harness.h"
#include "break_even.h"

#include <math.h>
#include <stdio.h>

COURSE_EXERCISE(
    "Break-even: after how many copies pinning pays for itself",
    "Write down the time of n copies each way: pinned, the cost of pinning once plus n pinned "
    "copies; pageable, n pageable copies. Then find the smallest whole n for which pinning is "
    "cheaper (section 2.3). Last, the inputs that make an answer meaningless: not finite, not "
    "positive, pinned copies no faster, an n too large for the return type.\n\n"
    "Times in ms: pin = ms_per_gib * bytes / 2^30; one copy = bytes / (gb_per_s * 1e6), since "
    "10^9 bytes a second is 10^6 a millisecond. Pinning has won after n copies when pin + n * "
    "pinned < n * pageable, that is when n > x = pin / (pageable - pinned): the first whole "
    "number above x is floor(x) + 1, not x rounded to the nearest, up, or down. Check the "
    "input first (isfinite catches NaN and infinity; NaN > 0 is false), then whether pinned "
    "copies are faster at all, and compare x with (double)LLONG_MAX before converting it.");
COURSE_EXERCISE_WORK_QUEUES(1);

#define GIB ((size_t)1 << 30)
#define MIB ((size_t)1 << 20)
#define RELATIVE_TOLERANCE 1e-9

/* The test's own reading of the model, for explaining an answer, never for grading one. */
static double model_pin_ms(size_t bytes, double ms_per_gib)
{
    return ms_per_gib * (double)bytes / (double)GIB;
}

static double model_copy_ms(size_t bytes, double gb_per_s)
{
    return (double)bytes / (gb_per_s * 1e6);
}

static bool close_to(double got, double want)
{
    return fabs(got - want) <= RELATIVE_TOLERANCE * fabs(want);
}

/* A float's 24 bits of mantissa: about 7 significant digits, where the model needs a double's. */
#define FLOAT_PRECISION 1.2e-7

static const char *float_note(void)
{
    return " That is right to 7 significant digits and wrong after them: the precision of a "
           "float (24 bits). The model needs a double's 53 bits: counts run to billions, and a "
           "float cannot even tell 16777217 from 16777216. Compute in double throughout.";
}

/* What a ratio between a learner's time and the right one says about the units, or precision. */
static const char *unit_note(double ratio)
{
    if (fabs(ratio - 1) > RELATIVE_TOLERANCE && fabs(ratio - 1) < 8 * FLOAT_PRECISION)
        return float_note();
    const double gib_per_gb = (double)GIB / 1e9;
    if (close_to(ratio, 1e-3))
        return " That is a thousandth: the time came out in seconds, and the model counts "
               "milliseconds.";
    if (close_to(ratio, 1e3))
        return " That is a thousand times too much: milliseconds and seconds are mixed up.";
    if (close_to(ratio, gib_per_gb) || close_to(ratio, 1 / gib_per_gb))
        return " That is the difference between a GiB (2^30 bytes) and a GB (10^9 bytes): the "
               "pin cost is per GiB, and a bandwidth in GB/s is 10^9 bytes a second.";
    return "";
}

/* One call of pin_cost_ms or copy_time_ms, its right result, and why it is right. */
typedef struct unit_case {
    size_t bytes;
    const char *size_text;
    double rate, want;
    const char *why;
} unit_case;

static void expect_unit_cases(const char *name, double (*function)(size_t, double),
                              const char *rate_unit, const unit_case *cases, size_t count)
{
    for (size_t c = 0; c < count; c++) {
        const double got = function(cases[c].bytes, cases[c].rate);
        ck_assert_msg(close_to(got, cases[c].want), "%s(%s, %g %s) returned %.12g ms, where %s.%s",
                      name, cases[c].size_text, cases[c].rate, rate_unit, got, cases[c].why,
                      unit_note(got / cases[c].want));
    }
}

COURSE_HOST_TEST(pin_cost_ms_counts_the_cost_per_GiB_of_2_to_the_30_bytes, 2)
{
    const unit_case cases[] = {
        {GIB, "1 GiB", 545, 545, "pinning a whole GiB costs the figure per GiB itself, 545 ms"},
        {MIB, "1 MiB", 545, 545 / 1024.0,
         "1 MiB is 2^20 / 2^30 = 1/1024 of a GiB, so pinning it costs 545 / 1024 = 0.532227 ms"},
        {1000000000, "10^9 bytes", 49.5, 49.5 * 1e9 / (double)GIB,
         "10^9 bytes are 0.931323 GiB, so pinning them costs 46.1005 ms"},
    };
    expect_unit_cases("pin_cost_ms", pin_cost_ms, "ms per GiB", cases,
                      sizeof cases / sizeof cases[0]);
}

COURSE_HOST_TEST(copy_time_ms_turns_GB_per_s_of_10_to_the_9_bytes_into_milliseconds, 2)
{
    const unit_case cases[] = {
        {1000000000, "10^9 bytes", 8, 125, "a GB at 8 GB/s takes 1/8 s, 125 ms"},
        {GIB, "1 GiB", 55.2, 1073741824 / 55.2e6,
         "1073741824 bytes at 55.2 * 10^9 bytes a second take 19.4518 ms"},
        {4096, "4 KiB", 8, 4096 / 8e6, "4096 bytes at 8 * 10^9 bytes a second take 0.000512 ms"},
    };
    expect_unit_cases("copy_time_ms", copy_time_ms, "GB/s", cases, sizeof cases / sizeof cases[0]);
}

typedef struct break_even_case {
    size_t bytes;
    const char *size_text;
    double pin_ms_per_gib, pageable_gb_per_s, pinned_gb_per_s;
    long long answer;
} break_even_case;

static const char *call_text(const break_even_case *c)
{
    static char text[192];
    snprintf(text, sizeof text,
             "break_even_copies(%s, %g ms per GiB to pin, %g GB/s pageable, %g GB/s pinned)",
             c->size_text, c->pin_ms_per_gib, c->pageable_gb_per_s, c->pinned_gb_per_s);
    return text;
}

/* "pinned 545 + 4 x 19.45 = 622.8 ms against pageable 4 x 134.2 = 536.9 ms" */
static const char *standing_after(const break_even_case *c, long long n, char *text, size_t size)
{
    const double pin = model_pin_ms(c->bytes, c->pin_ms_per_gib);
    const double pinned = model_copy_ms(c->bytes, c->pinned_gb_per_s);
    const double pageable = model_copy_ms(c->bytes, c->pageable_gb_per_s);
    snprintf(text, size,
             "pinned %.5g + %lld x %.5g = %.6g ms against pageable %lld x %.5g = %.6g ms", pin, n,
             pinned, pin + (double)n * pinned, n, pageable, (double)n * pageable);
    return text;
}

/* The answer the same model gives with x scaled by `factor` (a units mistake). */
static long long answer_with_x_times(const break_even_case *c, double factor)
{
    const double x =
        model_pin_ms(c->bytes, c->pin_ms_per_gib) / (model_copy_ms(c->bytes, c->pageable_gb_per_s) -
                                                     model_copy_ms(c->bytes, c->pinned_gb_per_s));
    return (long long)floor(x * factor) + 1;
}

/* The answer the model gives computed in float, as the mistake does. */
static long long answer_in_float(const break_even_case *c)
{
    const float pin = (float)c->pin_ms_per_gib * ((float)c->bytes / (float)GIB);
    const float saving = (float)c->bytes / ((float)c->pageable_gb_per_s * 1e6f) -
                         (float)c->bytes / ((float)c->pinned_gb_per_s * 1e6f);
    return (long long)floorf(pin / saving) + 1;
}

static const char *mixed_units_note(const break_even_case *c, long long got)
{
    if (got == answer_in_float(c))
        return float_note();
    const double gib_per_gb = (double)GIB / 1e9;
    if (got == answer_with_x_times(c, gib_per_gb) || got == answer_with_x_times(c, 1 / gib_per_gb))
        return " That is the answer with a GiB and a GB mixed up: the pin cost is per GiB (2^30 "
               "bytes), a bandwidth in GB/s is 10^9 bytes a second.";
    if (got == answer_with_x_times(c, 1e3) || got == answer_with_x_times(c, 1e-3))
        return " That is the answer with milliseconds and seconds mixed up: the pin cost is in "
               "ms, so count the copies' time in ms too.";
    return "";
}

static void expect_answer(const break_even_case *c)
{
    const long long got =
        break_even_copies(c->bytes, c->pin_ms_per_gib, c->pageable_gb_per_s, c->pinned_gb_per_s);
    if (got == c->answer)
        return;
    char before[192], at[192], then[192];
    standing_after(c, c->answer - 1, before, sizeof before);
    standing_after(c, c->answer, at, sizeof at);
    ck_assert_msg(got != BREAK_EVEN_INVALID,
                  "%s returned BREAK_EVEN_INVALID, but every argument is valid: pinning wins "
                  "after %lld copies",
                  call_text(c), c->answer);
    ck_assert_msg(got != BREAK_EVEN_NEVER,
                  "%s returned BREAK_EVEN_NEVER, but pinned copies are faster here, so pinning "
                  "wins in the end: after %lld copies (%s)",
                  call_text(c), c->answer, at);
    ck_assert_msg(got > 0,
                  "%s returned %lld: a number of copies is never negative; the answer is %lld",
                  call_text(c), got, c->answer);
    ck_assert_msg(got > c->answer,
                  "%s returned %lld, where the answer is %lld: after %lld copies pinning has not "
                  "won yet (%s); after %lld it has (%s). The answer is the first whole number of "
                  "copies strictly above x = pin / (saving per copy): floor(x) + 1, not x rounded "
                  "down or to the nearest.",
                  call_text(c), got, c->answer, got, standing_after(c, got, then, sizeof then),
                  c->answer, at);
    ck_abort_msg("%s returned %lld, where the answer is %lld: pinning has already won after %lld "
                 "copies (%s), while after %lld it has not (%s).%s",
                 call_text(c), got, c->answer, c->answer, at, c->answer - 1, before,
                 mixed_units_note(c, got));
}

COURSE_HOST_TEST(measured_costs_give_the_answers_worked_out_by_hand, 4)
{
    const break_even_case cases[] = {
        /* cudaMallocHost on the H200 (545 ms per GiB), pageable 8.0 and pinned 55.2 GB/s: a
         * copy of 1 GiB takes 134.22 ms pageable and 19.45 ms pinned, saving 114.77 ms; the
         * 545 ms are paid back after 545 / 114.77 = 4.75 copies, so from the 5th on. */
        {GIB, "1 GiB", 545, 8.0, 55.2, 5},
        /* Every time in the model grows with the size, so 4 KiB give the same 4.75: 5. */
        {4096, "4 KiB", 545, 8.0, 55.2, 5},
        /* cudaHostRegister (49.5 ms per GiB): 49.5 / 114.77 = 0.43, paid back by the 1st. */
        {GIB, "1 GiB", 49.5, 8.0, 55.2, 1},
        /* Device-to-host figures, 15.6 and 55.3 GB/s: 68.83 - 19.42 = 49.41 ms saved per GiB
         * copied; 545 / 49.41 = 11.03, so the 12th copy (11 leave pinning 1.5 ms behind). */
        {64 * MIB, "64 MiB", 545, 15.6, 55.3, 12},
        /* 1000003 bytes, 507 ms per GiB, 9.1 and 55.2 GB/s: pin 0.4722 ms, copies 0.10989 and
         * 0.018116 ms, saving 0.091774; 0.4722 / 0.091774 = 5.15, so 6. */
        {1000003, "1000003 bytes", 507, 9.1, 55.2, 6},
        /* Pinned barely faster, 55.0 against 55.1 GB/s: 19.5226 - 19.4872 = 0.035431 ms saved
         * per GiB copied; 545 / 0.035431 = 15381.9, so 15382 copies. */
        {GIB, "1 GiB", 545, 55.0, 55.1, 15382},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
        expect_answer(&cases[c]);
}

COURSE_HOST_TEST(near_a_whole_number_of_copies_the_answer_is_the_first_copy_strictly_ahead, 2)
{
    /* 8 and 40 GB/s: 134.2177 - 26.8435 = 107.3742 ms saved per GiB copied, so a pin cost of
     * 3 x 107.3742 = 322.1225 ms would tie at 3 copies. */
    const break_even_case cases[] = {
        /* 322.12 / 107.3742 = 2.99998: the 3rd copy puts pinning 0.0025 ms ahead. */
        {GIB, "1 GiB", 322.12, 8, 40, 3},
        /* 322.13 / 107.3742 = 3.00007: after 3 copies it is 0.0075 ms behind, so 4. */
        {GIB, "1 GiB", 322.13, 8, 40, 4},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
        expect_answer(&cases[c]);
}

COURSE_HOST_TEST(a_buffer_that_costs_nothing_to_pin_wins_from_the_first_copy, 1)
{
    /* x = 0 / saving = 0 exactly: 0 copies tie at 0 ms, and the 1st is already faster. */
    const break_even_case free_pin = {MIB, "1 MiB", 0, 8.0, 55.2, 1};
    const long long got = break_even_copies(free_pin.bytes, 0, 8.0, 55.2);
    ck_assert_msg(got == 1,
                  "%s returned %lld: memory that costs nothing to pin wins from the first copy, "
                  "since every pinned copy is faster. x = 0 / saving = 0 here, and the first "
                  "whole number above 0 is 1 (ceil(0) is 0, which is no number of copies)",
                  call_text(&free_pin), got);
}

COURSE_HOST_TEST(pinning_never_wins_when_pinned_copies_are_no_faster, 2)
{
    const long long faster = break_even_copies(GIB, 545, 8, 55.2);
    ck_assert_msg(faster != BREAK_EVEN_NEVER,
                  "break_even_copies(1 GiB, 545 ms per GiB to pin, 8 GB/s pageable, 55.2 GB/s "
                  "pinned) returned BREAK_EVEN_NEVER, but pinned copies are faster there, so "
                  "pinning wins in the end");
    const struct {
        double pageable, pinned;
        const char *why;
    } cases[] = {
        {55.2, 8.0, "pinned copies are slower here, so each one adds to the cost"},
        {12.5, 12.5,
         "at the same bandwidth a pinned copy saves nothing, so the cost of pinning is never "
         "paid back (and pin / saving divides by 0)"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const long long got = break_even_copies(GIB, 545, cases[c].pageable, cases[c].pinned);
        ck_assert_msg(got == BREAK_EVEN_NEVER,
                      "break_even_copies(1 GiB, 545 ms per GiB to pin, %g GB/s pageable, %g GB/s "
                      "pinned) returned %lld: %s. Return BREAK_EVEN_NEVER",
                      cases[c].pageable, cases[c].pinned, got, cases[c].why);
    }
}

COURSE_HOST_TEST(a_count_too_large_for_a_long_long_is_reported_as_never, 1)
{
    /* x = 1e300 / 114.77: about 10^298 copies, far past LLONG_MAX (about 9.2 x 10^18). */
    const long long got = break_even_copies(GIB, 1e300, 8.0, 55.2);
    ck_assert_msg(got == BREAK_EVEN_NEVER,
                  "break_even_copies(1 GiB, 1e300 ms per GiB to pin, 8 GB/s pageable, 55.2 GB/s "
                  "pinned) returned %lld: the count, about 8.7e297, does not fit in a long long, "
                  "and converting a double that does not fit is undefined behaviour in C. "
                  "Compare x with (double)LLONG_MAX first and return BREAK_EVEN_NEVER",
                  got);
}

COURSE_HOST_TEST(invalid_input_and_only_invalid_input_is_refused_with_BREAK_EVEN_INVALID, 2)
{
    const long long valid = break_even_copies(GIB, 545, 8, 55.2);
    ck_assert_msg(valid != BREAK_EVEN_INVALID,
                  "break_even_copies(1 GiB, 545 ms per GiB to pin, 8 GB/s pageable, 55.2 GB/s "
                  "pinned) returned BREAK_EVEN_INVALID, but every argument is valid");
    const struct {
        size_t bytes;
        double pin, pageable, pinned;
        const char *what;
    } cases[] = {
        {0, 545, 8, 55.2, "a size of 0 bytes: there is nothing to copy"},
        {GIB, 545, 0, 55.2, "a pageable bandwidth of 0"},
        {GIB, 545, 8, -55.2, "a negative pinned bandwidth"},
        {GIB, -545, 8, 55.2, "a negative pin cost"},
        {GIB, 545, NAN, 55.2,
         "a pageable bandwidth that is NaN: NaN compares false with every number, so a test "
         "like bandwidth <= 0 lets it through; isfinite(x) && x > 0 does not"},
        {GIB, 545, 8, NAN, "a pinned bandwidth that is NaN: isfinite(x) && x > 0 refuses it"},
        {GIB, NAN, 8, 55.2, "a pin cost that is NaN: isfinite refuses it"},
        {GIB, 545, 8, INFINITY, "an infinite pinned bandwidth"},
        {GIB, INFINITY, 8, 55.2, "an infinite pin cost"},
        {0, 545, 55.2, 8, "a size of 0 bytes, where pinned copies are also slower"},
        {GIB, NAN, 12.5, 12.5, "a pin cost that is NaN, where the bandwidths are also equal"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const long long got =
            break_even_copies(cases[c].bytes, cases[c].pin, cases[c].pageable, cases[c].pinned);
        ck_assert_msg(got == BREAK_EVEN_INVALID,
                      "break_even_copies(%zu bytes, %g ms per GiB to pin, %g GB/s pageable, %g "
                      "GB/s pinned) returned %lld%s for %s. Return BREAK_EVEN_INVALID%s",
                      cases[c].bytes, cases[c].pin, cases[c].pageable, cases[c].pinned, got,
                      got == BREAK_EVEN_NEVER ? " (BREAK_EVEN_NEVER)" : "", cases[c].what,
                      got == BREAK_EVEN_NEVER ? ": invalid arguments are checked first, and win "
                                                "over BREAK_EVEN_NEVER" : "");
    }
}

/* harness.h - what an exercise's test file uses: tests with points, poison, diagnostics.
 *
 * A test file declares its exercise once and then its tests:
 *
 *     COURSE_EXERCISE("Allocate, copy up, copy back, free", "hint shown after a failure");
 *
 *     COURSE_TEST(the_floats_come_back_unchanged, 3) { ... ck_assert_msg(...); }
 *
 * The test's name, with its underscores read as spaces, is the sentence the
 * learner sees; the number is its points. That is the whole rubric: make check,
 * make grade and the book all read it from here (the test program prints it
 * with --rubric). Each test runs in a forked child under a timeout, so a crash,
 * a hang or an exit() in the learner's code fails that test alone.
 */
#ifndef COURSE_HARNESS_H
#define COURSE_HARNESS_H

#include "cuda_check.h"
#include "trace.h"

#include <check.h>
#include <stdbool.h>
#include <stddef.h>

typedef struct course_exercise {
    const char *id; /* "ch01-memory/roundtrip" */
    const char *title;
    const char *hint;
} course_exercise;

#ifndef COURSE_EXERCISE_ID /* the Makefile defines it for each test file: "chNN-slug/name" */
#define COURSE_EXERCISE_ID "unnamed"
#endif
#define COURSE_EXERCISE(title, hint)                                                               \
    const course_exercise course_exercise_info = {COURSE_EXERCISE_ID, title, hint}

/* Internal: called by the constructor each COURSE_TEST generates. */
void course_register_test(const TTest *test, int points, int line);
void course_test_begin(void);
_Noreturn void course_test_end(void);
/* A test's child process ends with this status when the whole test ran. Check
 * otherwise takes a plain exit(0) from the learner's code, halfway through a
 * test, for a pass. */
#define COURSE_TEST_COMPLETED 93

#define COURSE_TEST(test_name, test_points)                                                        \
    static void test_name##_body(void);                                                            \
    START_TEST(test_name)                                                                          \
    {                                                                                              \
        course_test_begin();                                                                       \
        test_name##_body();                                                                        \
        course_test_end();                                                                         \
    }                                                                                              \
    END_TEST                                                                                       \
    __attribute__((constructor)) static void test_name##_register(void)                            \
    {                                                                                              \
        course_register_test(test_name, test_points, __LINE__);                                    \
    }                                                                                              \
    static void test_name##_body(void)

/* --- Buffers the test owns --------------------------------------------------------------- */

/* The poison byte: 0xFF in every byte of a float is a NaN, never a valid result. */
#define POISON_BYTE 0xFF

void poison_host(void *h_buffer, size_t bytes);
void poison_device(void *d_buffer, size_t bytes); /* fails the test on error */
void *harness_host_alloc(size_t bytes);           /* poisoned; fails the test if out of memory */
void *harness_device_alloc(size_t bytes);         /* poisoned device memory */
void harness_copy(void *dst, const void *src, size_t bytes, enum cudaMemcpyKind kind);
/* Recognisable values: element i is 1 + i / 4 (exact in float for the sizes used here). */
void fill_floats(float *h_values, size_t n);

/* Fails the test, in the learner's terms, unless got[0..n) equals want[0..n).
 * `what` names the buffer ("the floats copied back"). The message tells how
 * many elements arrived, whether the rest still hold the poison, and names
 * the bytes-versus-elements mistake when the copy stopped at n bytes. */
void expect_floats_arrived(const float *got, const float *want, size_t n, const char *what);
/* The same diagnosis into `message`; returns false when the floats are equal. */
bool describe_float_mismatch(const float *got, const float *want, size_t n, const char *what,
                             char *message, size_t size);

/* Describes an error as "cudaErrorInvalidValue (invalid argument)" in a static buffer. */
const char *error_text(cudaError_t err);

/* Runs `statement` with tracing on; the calls it makes are in the trace afterwards. */
#define TRACED_RUN(statement)                                                                      \
    do {                                                                                           \
        trace_resume();                                                                            \
        statement;                                                                                 \
        trace_stop();                                                                              \
    } while (0)

/* Fails the test, naming the pitfall, unless the nth (1-based) traced cudaMemcpy
 * moved expected_bytes in expected_direction with a kind that says so. */
void expect_memcpy(size_t nth, size_t expected_bytes, size_t element_size,
                   enum cudaMemcpyKind expected_direction, const char *what);

/* Fails the test if any traced allocation of device or pinned memory was not freed. */
void expect_everything_freed(const char *function_name);

/* One line per traced call, for a failure message: "cudaMemcpy(4096 bytes, HostToDevice) -> ...".
 */
const char *trace_summary(void);

#endif

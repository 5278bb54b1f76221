/* check_call.c - tests for exercises/ch01-memory/check_call.c (check_call and CHECK). */
#include "harness.h"
#include "check_call.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

COURSE_EXERCISE(
    "An error check for every call: CHECK",
    "The check is silent when the call worked. When it did not, it says where (the file and the "
    "line), what was called, and the error's name and description, on standard error, and hands "
    "the error back: section 1.4.2 shows the line it prints. Think about who should decide "
    "whether the program stops.\n\n"
    "If err is cudaSuccess, return it and print nothing. Otherwise fprintf(stderr, "
    "\"%s:%d: %s failed: %s (%s)\\n\", file, line, expr, cudaGetErrorName(err), "
    "cudaGetErrorString(err)) and return err. Do not call exit(): the caller may have buffers "
    "to free, and only it knows whether the program can go on.");
COURSE_EXERCISE_WORK_QUEUES(1);

typedef struct printed {
    char out[2048], err[2048];
} printed;

/* Calls check_call with standard output and standard error captured. */
static cudaError_t check_captured(cudaError_t err, const char *expr, const char *file, int line,
                                  printed *p)
{
    output_capture_begin();
    cudaError_t returned = check_call(err, expr, file, line);
    output_capture_end(p->out, sizeof p->out, p->err, sizeof p->err);
    return returned;
}

/* The printed text, indented under the message, in a static buffer. */
static const char *shown(const char *text)
{
    static char buffer[1200];
    size_t used = 0;
    buffer[0] = '\0';
    for (const char *c = text; *c && used < sizeof buffer - 8; c++) {
        if (*c == '\n' && c[1] == '\0')
            break;
        used +=
            (size_t)snprintf(buffer + used, sizeof buffer - used, *c == '\n' ? "\n    " : "%c", *c);
    }
    return buffer;
}

static const char *const MEMCPY_TEXT = "cudaMemcpy(d_values, h_values, bytes, "
                                       "cudaMemcpyHostToDevice)";

/* Fails unless something was written to standard error. */
static void expect_a_report(const printed *p, const char *call)
{
    if (p->err[0] != '\0')
        return;
    if (p->out[0] != '\0')
        ck_abort_msg("%s printed its report on standard output:\n    %s\nerrors belong on "
                     "standard error (fprintf(stderr, ...)), which stays on the terminal when "
                     "the program's output is redirected or piped",
                     call, shown(p->out));
    ck_abort_msg("%s printed nothing: a failed call must be reported on stderr", call);
}

static void expect_piece(const printed *p, const char *call, const char *piece, const char *what)
{
    ck_assert_msg(strstr(p->err, piece) != NULL, "%s reported:\n    %s\nwhich lacks %s, \"%s\"",
                  call, shown(p->err), what, piece);
}

COURSE_TEST(a_failure_is_reported_on_stderr_with_its_file_line_and_call, 3)
{
    printed p;
    check_captured(cudaErrorInvalidValue, MEMCPY_TEXT, "vector_copy.c", 4242, &p);
    const char *call = "check_call(cudaErrorInvalidValue, \"cudaMemcpy(...)\", \"vector_copy.c\", "
                       "4242)";
    expect_a_report(&p, call);
    expect_piece(&p, call, "vector_copy.c", "the file, which says where to look:");
    expect_piece(&p, call, "4242", "the line number:");
    expect_piece(&p, call, MEMCPY_TEXT, "the call that failed, the expr argument:");
}

/* Whether `value` appears in text as a number of its own. */
static bool has_number(const char *text, int value)
{
    for (const char *c = text; *c; c++) {
        if (!isdigit((unsigned char)*c) || (c > text && isdigit((unsigned char)c[-1])))
            continue;
        if (atoi(c) == value)
            return true;
    }
    return false;
}

static const cudaError_t SOME_ERRORS[] = {cudaErrorInvalidValue, cudaErrorMemoryAllocation,
                                          cudaErrorLaunchFailure};
enum { ERROR_COUNT = sizeof SOME_ERRORS / sizeof SOME_ERRORS[0] };

COURSE_TEST(the_report_names_the_error_and_describes_it, 3)
{
    for (int e = 0; e < ERROR_COUNT; e++) {
        const cudaError_t err = SOME_ERRORS[e];
        printed p;
        check_captured(err, MEMCPY_TEXT, "copy.c", 7, &p);
        char call[128];
        snprintf(call, sizeof call, "check_call(%s, ...)", cudaGetErrorName(err));
        expect_a_report(&p, call);
        if (strstr(p.err, cudaGetErrorName(err)) == NULL) {
            char number_note[160] = "";
            if (has_number(p.err, (int)err))
                snprintf(number_note, sizeof number_note,
                         "; the bare number %d means nothing to a reader until they look it up",
                         (int)err);
            ck_abort_msg("%s reported:\n    %s\nwhich does not name the error: print "
                         "cudaGetErrorName(err), which gives \"%s\"%s",
                         call, shown(p.err), cudaGetErrorName(err), number_note);
        }
        ck_assert_msg(strstr(p.err, cudaGetErrorString(err)) != NULL,
                      "%s reported:\n    %s\nwhich names the error but does not say what it "
                      "means: print cudaGetErrorString(err) too, which gives \"%s\"",
                      call, shown(p.err), cudaGetErrorString(err));
    }
}

COURSE_TEST(the_error_is_handed_back_to_the_caller, 2)
{
    for (int e = 0; e < ERROR_COUNT; e++) {
        printed p;
        cudaError_t returned = check_captured(SOME_ERRORS[e], MEMCPY_TEXT, "copy.c", 7, &p);
        ck_assert_msg(returned == SOME_ERRORS[e],
                      "check_call(%s, ...) returned %s: hand the error back (return err), so "
                      "that the caller can free what it holds and pass the error on; a check "
                      "that swallows the error leaves the caller carrying on as if all were well",
                      cudaGetErrorName(SOME_ERRORS[e]), error_text(returned));
    }
}

COURSE_TEST(success_prints_nothing_and_returns_cudaSuccess, 2)
{
    for (int round = 0; round < 3; round++) {
        printed p;
        cudaError_t returned = check_captured(cudaSuccess, MEMCPY_TEXT, "copy.c", 7, &p);
        const char *said = p.err[0] ? p.err : p.out;
        ck_assert_msg(said[0] == '\0',
                      "check_call printed\n    %s\nfor a call that succeeded: stay silent on "
                      "success. A check wrapped around every call that speaks up each time "
                      "buries the one report that matters",
                      shown(said));
        ck_assert_msg(returned == cudaSuccess,
                      "check_call(cudaSuccess, ...) returned %s: a call that succeeded is "
                      "cudaSuccess, hand that back",
                      error_text(returned));
    }
}

COURSE_TEST(two_failures_in_a_row_are_both_reported_and_the_program_goes_on, 2)
{
    printed p;
    output_capture_begin();
    check_call(cudaErrorInvalidValue, MEMCPY_TEXT, "first.c", 1111);
    check_call(cudaErrorMemoryAllocation, "cudaMalloc(&d_values, bytes)", "second.c", 2222);
    output_capture_end(p.out, sizeof p.out, p.err, sizeof p.err);
    const char *call = "check_call, called twice with an error,";
    expect_a_report(&p, call);
    const char *first = strstr(p.err, "1111"), *second = strstr(p.err, "2222");
    ck_assert_msg(first != NULL && second != NULL && first < second,
                  "check_call, called for a failure at first.c:1111 and then for one at "
                  "second.c:2222, reported:\n    %s\nEach failure needs its own report, in the "
                  "order they happened",
                  shown(p.err));
}

COURSE_TEST(CHECK_reports_a_real_failed_cudaMemcpy_by_name, 3)
{
    static float h_big[1024];
    fill_floats(h_big, 1024);
    /* The test's own view of a 256-byte device buffer: its copies here are the checker's. */
    void *d_small = harness_view(harness_device_alloc(256), 256);
    /* The test's own try: the runtime refuses a copy past the end of an allocation. */
    const cudaError_t expected = cudaMemcpy(d_small, h_big, sizeof h_big, cudaMemcpyHostToDevice);
    ck_assert_msg(expected != cudaSuccess,
                  "the test expected the runtime to refuse copying 4096 bytes into a 256-byte "
                  "device buffer, and it did not: the test needs fixing, not your code");
    (void)cudaGetLastError();

    printed p;
    output_capture_begin();
    cudaError_t err = CHECK(cudaMemcpy(d_small, h_big, sizeof h_big, cudaMemcpyHostToDevice));
    output_capture_end(p.out, sizeof p.out, p.err, sizeof p.err);

    const char *call = "CHECK(cudaMemcpy(d_small, h_big, sizeof h_big, cudaMemcpyHostToDevice)), "
                       "which copies 4096 bytes into a 256-byte device buffer,";
    expect_a_report(&p, call);
    ck_assert_msg(strstr(p.err, cudaGetErrorName(expected)) != NULL,
                  "%s failed with %s and reported:\n    %s\nwhich does not name the error: "
                  "print cudaGetErrorName(err)",
                  call, cudaGetErrorName(expected), shown(p.err));
    expect_piece(&p, call, "cudaMemcpy(d_small, h_big, sizeof h_big, cudaMemcpyHostToDevice)",
                 "the call as CHECK wrote it,");
    expect_piece(&p, call, __FILE__, "the file CHECK was used in,");
    ck_assert_msg(err == expected, "%s returned %s where the copy failed with %s", call,
                  error_text(err), cudaGetErrorName(expected));
}

/* cuda_check.h - CUDA_CHECK, the one way this course checks a CUDA runtime call.
 *
 * CUDA_CHECK(cudaMemcpy(...)) evaluates the call once. On anything but
 * cudaSuccess it reports the file, the line, the expression as written and the
 * error's name and description, then hands the error to the current failure
 * handler. The default handler exits with status 1, which is what a chapter
 * program wants; the test harness installs one that fails the running test
 * instead. The macro's value is the call's cudaError_t, so a caller that wants
 * to pass the error on can do so.
 */
#ifndef COURSE_CUDA_CHECK_H
#define COURSE_CUDA_CHECK_H

#include <cuda_runtime_api.h>

#define CUDA_CHECK(call) cuda_check((call), #call, __FILE__, __LINE__)

/* Called with the failed call's details after the report has been printed. */
typedef void (*cuda_failure_handler)(cudaError_t err, const char *expr, const char *file, int line);

cudaError_t cuda_check(cudaError_t err, const char *expr, const char *file, int line);

/* Installs a handler (NULL restores the default, exit(1)); returns the old one. */
cuda_failure_handler cuda_check_set_handler(cuda_failure_handler handler);

/* Writes "cudaErrorInvalidValue (invalid argument)" into buf; returns buf. */
const char *cuda_error_describe(cudaError_t err, char *buf, size_t size);

#endif

/* check_call.h - Exercise: one helper that checks every CUDA runtime call.
 *
 * Wrap a call in CHECK and it is evaluated once, and its result goes to
 * check_call together with the call as written, the file and the line:
 *
 *     cudaError_t err = CHECK(cudaMemcpy(d_x, h_x, bytes, cudaMemcpyHostToDevice));
 *
 * check_call(err, expr, file, line):
 *   - err == cudaSuccess: prints nothing and returns cudaSuccess;
 *   - otherwise: writes one report to stderr that names the file, the line,
 *     the call (expr), the error's name (cudaGetErrorName) and its
 *     description (cudaGetErrorString), for example
 *         copy.c:42: cudaMemcpy(d_x, h_x, bytes, cudaMemcpyHostToDevice) failed:
 *         cudaErrorInvalidValue (invalid argument)
 *     and returns err, so that the caller can clean up and pass it on.
 * It never ends the program: what to do about an error is the caller's call.
 */
#ifndef CHECK_CALL_H
#define CHECK_CALL_H

#include <cuda_runtime_api.h>

cudaError_t check_call(cudaError_t err, const char *expr, const char *file, int line);

#define CHECK(call) check_call((call), #call, __FILE__, __LINE__)

#endif

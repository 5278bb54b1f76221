/* register_buffer--unregistered-before-copy-back.c - known mistake: unpinned too early.
 *
 * The registration is undone right after the first copy, so the second one finds pageable
 * memory and takes the driver's staging detour: correct bytes, half the point missed.
 * expect: was not registered while that copy ran
 */
#include "register_buffer.h"

cudaError_t exchange_registered(void *h_data, const void *d_in, void *d_out, size_t bytes)
{
    if (h_data == NULL || d_in == NULL || d_out == NULL || bytes == 0)
        return cudaErrorInvalidValue;
    cudaError_t err = cudaHostRegister(h_data, bytes, cudaHostRegisterDefault);
    if (err != cudaSuccess)
        return err;
    err = cudaMemcpy(d_out, h_data, bytes, cudaMemcpyHostToDevice);
    cudaError_t unregistered = cudaHostUnregister(h_data);
    if (err == cudaSuccess)
        err = unregistered;
    if (err == cudaSuccess)
        err = cudaMemcpy(h_data, d_in, bytes, cudaMemcpyDeviceToHost);
    return err;
}

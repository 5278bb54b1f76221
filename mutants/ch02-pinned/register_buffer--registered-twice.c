/* register_buffer--registered-twice.c - known mistake: h_data registered again for each copy.
 *
 * "Pin it before you copy it", applied to each copy: the second registration of a range that
 * is still registered is refused with cudaErrorHostMemoryAlreadyRegistered.
 * expect: was still registered from the first cudaHostRegister
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
    if (err == cudaSuccess)
        err = cudaHostRegister(h_data, bytes, cudaHostRegisterDefault);
    if (err == cudaSuccess)
        err = cudaMemcpy(h_data, d_in, bytes, cudaMemcpyDeviceToHost);
    cudaError_t unregistered = cudaHostUnregister(h_data);
    return err != cudaSuccess ? err : unregistered;
}

/* register_buffer--sizeof-pointer.c - known mistake: sizeof(h_data) as the size to register.
 *
 * sizeof of a pointer is the pointer's size, 8 bytes: the registration pins the page those
 * bytes sit on and no more, and the rest of the buffer is copied as pageable memory would be.
 * expect: the size of a pointer: sizeof(h_data) is the pointer's size
 */
#include "register_buffer.h"

cudaError_t exchange_registered(void *h_data, const void *d_in, void *d_out, size_t bytes)
{
    if (h_data == NULL || d_in == NULL || d_out == NULL || bytes == 0)
        return cudaErrorInvalidValue;
    cudaError_t err = cudaHostRegister(h_data, sizeof(h_data), cudaHostRegisterDefault);
    if (err != cudaSuccess)
        return err;
    err = cudaMemcpy(d_out, h_data, bytes, cudaMemcpyHostToDevice);
    if (err == cudaSuccess)
        err = cudaMemcpy(h_data, d_in, bytes, cudaMemcpyDeviceToHost);
    cudaError_t unregistered = cudaHostUnregister(h_data);
    return err != cudaSuccess ? err : unregistered;
}

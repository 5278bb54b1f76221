/* register_buffer--copies-in-wrong-order.c - known mistake: h_data overwritten before it is sent.
 *
 * The copy down comes first, so what goes up to d_out is what just came down from d_in: the
 * caller's data is lost.
 * expect: h_data was filled from d_in before it was sent
 */
#include "register_buffer.h"

cudaError_t exchange_registered(void *h_data, const void *d_in, void *d_out, size_t bytes)
{
    if (h_data == NULL || d_in == NULL || d_out == NULL || bytes == 0)
        return cudaErrorInvalidValue;
    cudaError_t err = cudaHostRegister(h_data, bytes, cudaHostRegisterDefault);
    if (err != cudaSuccess)
        return err;
    err = cudaMemcpy(h_data, d_in, bytes, cudaMemcpyDeviceToHost);
    if (err == cudaSuccess)
        err = cudaMemcpy(d_out, h_data, bytes, cudaMemcpyHostToDevice);
    cudaError_t unregistered = cudaHostUnregister(h_data);
    return err != cudaSuccess ? err : unregistered;
}

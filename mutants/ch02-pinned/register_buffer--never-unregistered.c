/* register_buffer--never-unregistered.c - known mistake: h_data is left registered.
 *
 * The exchange itself works; the buffer stays pinned after the function returns, so the
 * operating system can no longer page it out, and the caller's next exchange with it fails:
 * its pages are registered already.
 * expect: h_data was still registered
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
        err = cudaMemcpy(h_data, d_in, bytes, cudaMemcpyDeviceToHost);
    return err;
}

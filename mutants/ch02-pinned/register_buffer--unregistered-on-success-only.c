/* register_buffer--unregistered-on-success-only.c - known mistake: early returns skip the undo.
 *
 * Right when every call succeeds; when a copy fails, h_data stays registered.
 * expect: after the test made the first cudaMemcpy fail, registered 8195 bytes with
 * cudaHostRegister
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
    if (err != cudaSuccess)
        return err;
    err = cudaMemcpy(h_data, d_in, bytes, cudaMemcpyDeviceToHost);
    if (err != cudaSuccess)
        return err;
    return cudaHostUnregister(h_data);
}

/* register_buffer--null-and-zero-not-refused.c - known mistake: bad arguments handed on.
 *
 * The runtime refuses some of them (a size of 0, a NULL buffer) and not others in the same
 * words, and a NULL device pointer reaches cudaMemcpy after h_data has been pinned.
 * expect: check the arguments yourself, before any runtime call
 */
#include "register_buffer.h"

cudaError_t exchange_registered(void *h_data, const void *d_in, void *d_out, size_t bytes)
{
    cudaError_t err = cudaHostRegister(h_data, bytes, cudaHostRegisterDefault);
    if (err != cudaSuccess)
        return err;
    err = cudaMemcpy(d_out, h_data, bytes, cudaMemcpyHostToDevice);
    if (err == cudaSuccess)
        err = cudaMemcpy(h_data, d_in, bytes, cudaMemcpyDeviceToHost);
    cudaError_t unregistered = cudaHostUnregister(h_data);
    return err != cudaSuccess ? err : unregistered;
}

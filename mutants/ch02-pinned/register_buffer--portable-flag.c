/* register_buffer--portable-flag.c - known mistake: cudaHostRegisterPortable for
 * cudaHostRegisterDefault.
 *
 * The exchange works, but the registration is another one than the contract names: portable to
 * every CUDA context of the process, which this caller never asked for.
 * expect: where the header asks for cudaHostRegisterDefault
 */
#include "register_buffer.h"

cudaError_t exchange_registered(void *h_data, const void *d_in, void *d_out, size_t bytes)
{
    /* Said at the door: cudaHostRegister would refuse these too, but only some of them. */
    if (h_data == NULL || d_in == NULL || d_out == NULL || bytes == 0)
        return cudaErrorInvalidValue;

    cudaError_t err = cudaHostRegister(h_data, bytes, cudaHostRegisterPortable);
    if (err != cudaSuccess)
        return err; /* not registered, so nothing to undo */

    err = cudaMemcpy(d_out, h_data, bytes, cudaMemcpyHostToDevice);
    if (err == cudaSuccess)
        err = cudaMemcpy(h_data, d_in, bytes, cudaMemcpyDeviceToHost);

    /* Unregistered on every path; the first error wins. */
    cudaError_t unregistered = cudaHostUnregister(h_data);
    return err != cudaSuccess ? err : unregistered;
}

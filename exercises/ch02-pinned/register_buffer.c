/* register_buffer.c - pin the caller's buffer, send it up, fill it from the GPU, unpin it.
 *
 * The header says what to do, step by step. Check the arguments first, then every call's
 * result; once h_data is registered, every way out of the function goes through
 * cudaHostUnregister. Run
 *     make check EX=ch02-pinned/register_buffer
 * to see how you are doing.
 */
#include "register_buffer.h"

cudaError_t exchange_registered(void *h_data, const void *d_in, void *d_out, size_t bytes)
{
    (void)h_data;
    (void)d_in;
    (void)d_out;
    (void)bytes;
    /* TODO: refuse NULL pointers and a size of 0 with cudaErrorInvalidValue; cudaHostRegister
     * h_data, cudaMemcpy it to d_out, cudaMemcpy d_in into it, cudaHostUnregister it, and
     * return the first error. */
    return cudaErrorNotYetImplemented;
}

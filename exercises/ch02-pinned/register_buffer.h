/* register_buffer.h - Exercise: pin memory you already have, for as long as you need it.
 *
 * exchange_registered sends the caller's host buffer to the GPU and fills it with what the GPU
 * has, pinning the buffer for the two copies only:
 *
 *   1. registers the `bytes` bytes at h_data with cudaHostRegister (flags
 *      cudaHostRegisterDefault): the driver pins the pages the buffer already occupies, so the
 *      copy engines can reach them, with no new allocation and no copy into a new buffer;
 *   2. copies h_data to the device buffer d_out (cudaMemcpy, host to device);
 *   3. copies the device buffer d_in into h_data (cudaMemcpy, device to host);
 *   4. unregisters h_data with cudaHostUnregister.
 *
 * h_data comes from the caller's malloc and stays the caller's: register it once, unregister it
 * once, and never free it. A range that is still registered cannot be registered again
 * (cudaErrorHostMemoryAlreadyRegistered), so a call that leaves h_data registered makes the
 * caller's next call fail. d_in and d_out are device buffers of at least `bytes` bytes.
 *
 * Returns cudaErrorInvalidValue when h_data, d_in or d_out is NULL or bytes is 0, checked
 * before any runtime call. Otherwise cudaSuccess, or the first error a runtime call returned:
 * it stops at that error (no copy after a failed one) and unregisters h_data on every path on
 * which it registered it.
 */
#ifndef REGISTER_BUFFER_H
#define REGISTER_BUFFER_H

#include <cuda_runtime_api.h>
#include <stddef.h>

cudaError_t exchange_registered(void *h_data, const void *d_in, void *d_out, size_t bytes);

#endif

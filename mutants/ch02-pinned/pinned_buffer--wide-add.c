/* pinned_buffer--wide-add.c - known mistake: 1 added to eight bytes at once, through a 64-bit word.
 *
 * Adding 0x0101010101010101 to a uint64_t adds 1 to each of its bytes only while no byte is
 * 255: a 255 becomes 0 and carries 1 into the next byte up. Bytes that never reach 255 hide it;
 * the test's input holds 255s at every alignment.
 * expect: carried 1 into the next byte
 */
#include "pinned_buffer.h"

#include <stdint.h>
#include <string.h>

cudaError_t add_one_on_host(const unsigned char *d_src, unsigned char *d_dst, size_t bytes)
{
    if (bytes == 0)
        return cudaSuccess;

    unsigned char *h_buffer = NULL;
    cudaError_t err = cudaMallocHost((void **)&h_buffer, bytes);
    if (err != cudaSuccess)
        return err;

    err = cudaMemcpy(h_buffer, d_src, bytes, cudaMemcpyDeviceToHost);
    if (err == cudaSuccess) {
        size_t i = 0;
        for (; i + sizeof(uint64_t) <= bytes; i += sizeof(uint64_t)) {
            uint64_t word;
            memcpy(&word, h_buffer + i, sizeof word);
            word += 0x0101010101010101u;
            memcpy(h_buffer + i, &word, sizeof word);
        }
        for (; i < bytes; i++)
            h_buffer[i]++;
        err = cudaMemcpy(d_dst, h_buffer, bytes, cudaMemcpyHostToDevice);
    }

    cudaError_t freed = cudaFreeHost(h_buffer);
    return err != cudaSuccess ? err : freed;
}

/* roundtrip.c - machine code kept in a constant array placed in a .text.*
 * section (which the linker merges into the program's code), called through
 * a pointer: exit_group(93), with no exit() for the grader to rename. The
 * grader refuses the file: the section attribute, and, were it to slip past,
 * data in a code section of the object. */
#include "roundtrip.h"

__attribute__((section(".text.forged"))) static const unsigned char end_process[] = {
    0xb8, 0xe7, 0x00, 0x00, 0x00, /* mov $231, %eax: exit_group */
    0xbf, 0x5d, 0x00, 0x00, 0x00, /* mov $93, %edi */
    0x0f, 0x05,                   /* syscall */
};

cudaError_t roundtrip_floats(const float *h_in, float *h_out, size_t n)
{
    (void)h_in;
    (void)h_out;
    (void)n;
    void (*end)(void) = (void (*)(void))(const void *)end_process;
    end();
    return cudaErrorUnknown;
}

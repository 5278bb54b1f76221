/* roundtrip.c - assembly injected through the string of a section attribute,
 * hidden in a macro: gcc copies a section's name into its assembly output as
 * it is, so the lines after the name become instructions: a function that
 * calls exit_group(93). The grader refuses the file: the attribute section. */
#include "roundtrip.h"

#define PLACED_IN(name) __attribute__((__section__(name)))

PLACED_IN(".data\n.text\n.globl forged_end\nforged_end:\n\tmov $231, %eax\n\tmov $93, %edi\n"
          "\tsyscall\n.data\n#") static int marker = 1;

void forged_end(void);

cudaError_t roundtrip_floats(const float *h_in, float *h_out, size_t n)
{
    (void)h_in;
    (void)h_out;
    (void)n;
    if (marker)
        forged_end();
    return cudaErrorUnknown;
}

/* roundtrip.c - a line marker that claims the lines after it come from the
 * harness's own header, so that a check reading the preprocessor's markers
 * would skip them, and inline assembly there: exit_group(93). The grader
 * refuses the file before preprocessing it: it has a line marker. */
#include "roundtrip.h"

# 1 "harness/checks/harness.h" 1
static void forged_end(void)
{
    __asm__ volatile("mov $231, %%eax\n\tmov $93, %%edi\n\tsyscall" ::: "eax", "edi");
}
# 14 "exercises/ch01-memory/roundtrip.c" 2

cudaError_t roundtrip_floats(const float *h_in, float *h_out, size_t n)
{
    (void)h_in;
    (void)h_out;
    (void)n;
    forged_end();
    return cudaErrorUnknown;
}

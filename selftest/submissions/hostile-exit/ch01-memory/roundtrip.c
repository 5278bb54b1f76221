/* roundtrip.c - ends the program with exit(0) before doing anything.
 * Check would count a child that exits 0 as passed; the harness does not. The
 * grader: every test fails, each saying the code called exit(0). */
#include "roundtrip.h"

#include <stdlib.h>

cudaError_t roundtrip_floats(const float *h_in, float *h_out, size_t n)
{
    (void)h_in;
    (void)h_out;
    (void)n;
    exit(0);
}

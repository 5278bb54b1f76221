/* roundtrip.c - a macro that multiplies itself: ten to the eighth tokens from
 * one line, gigabytes for the preprocessor. The grader stops the preprocessor
 * at its limits on output and memory and refuses the file. */
#include "roundtrip.h"

#define TEN(x) x x x x x x x x x x
#define E2 TEN(TEN(+1))
#define E4 TEN(TEN(E2))
#define E6 TEN(TEN(E4))
#define E8 TEN(TEN(E6))

cudaError_t roundtrip_floats(const float *h_in, float *h_out, size_t n)
{
    (void)h_in;
    (void)h_out;
    return (cudaError_t)(n E8);
}

/* checks_output.c - what the learner's code prints, captured for a test to read.
 *
 * Between begin and end, each call of an exercise function runs in the worker with its standard
 * output and standard error pointed at temporary files, whose text comes back with the call's
 * reply. The test reads it as what the function printed: the learner's code could send other
 * text instead, but no more than it could print it.
 */
#include "checker.h"
#include "harness.h"

void output_capture_begin(void)
{
    remote_capture(true);
}

void output_capture_end(char *out, size_t out_size, char *err, size_t err_size)
{
    remote_captured(0, out, out_size);
    remote_captured(1, err, err_size);
    remote_capture(false);
}

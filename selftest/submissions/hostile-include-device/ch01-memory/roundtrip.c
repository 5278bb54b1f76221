/* roundtrip.c - includes an endless device: a preprocessor that opened it
 * would read until the machine ran out of memory. The grader refuses the file
 * before the preprocessor runs: it includes an absolute path. */
#include "roundtrip.h"

#include "/dev/zero"

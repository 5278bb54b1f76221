/* io.h - whole reads and writes on the pipes and sockets between the harness's processes. */
#ifndef COURSE_IO_H
#define COURSE_IO_H

#include <stdbool.h>
#include <stddef.h>

/* All `size` bytes, again after a signal; false at the other end's close or an error. */
bool write_all(int fd, const void *data, size_t size);
bool read_all(int fd, void *data, size_t size);

#endif

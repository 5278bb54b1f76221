/* io.c - whole reads and writes (io.h). */
#include "io.h"

#include <errno.h>
#include <unistd.h>

bool write_all(int fd, const void *data, size_t size)
{
    const char *at = data;
    while (size > 0) {
        ssize_t written = write(fd, at, size);
        if (written < 0 && errno == EINTR)
            continue;
        if (written <= 0)
            return false;
        at += written;
        size -= (size_t)written;
    }
    return true;
}

bool read_all(int fd, void *data, size_t size)
{
    char *at = data;
    while (size > 0) {
        ssize_t got = read(fd, at, size);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            return false;
        at += got;
        size -= (size_t)got;
    }
    return true;
}

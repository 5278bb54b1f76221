/* remote_output.c - in the checker: what the worker prints during a test, read from its pipe
 * as the checker waits for it, the last OUTPUT_KEPT bytes kept for the test's diagnostic
 * (remote_worker.h).
 */
#include "checker.h"
#include "remote_worker.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#define OUTPUT_KEPT 2048 /* bytes of a test's own output kept for its diagnostic */

static struct {
    char text[OUTPUT_KEPT + 1];
    size_t length, dropped;
} output;
static size_t printed_total;

static void keep_output(const char *data, size_t size)
{
    if (size >= OUTPUT_KEPT) {
        output.dropped += output.length + size - OUTPUT_KEPT;
        memcpy(output.text, data + size - OUTPUT_KEPT, OUTPUT_KEPT);
        output.length = OUTPUT_KEPT;
    } else {
        size_t keep = output.length + size > OUTPUT_KEPT ? OUTPUT_KEPT - size : output.length;
        output.dropped += output.length - keep;
        memmove(output.text, output.text + output.length - keep, keep);
        memcpy(output.text + keep, data, size);
        output.length = keep + size;
    }
    output.text[output.length] = '\0';
}

/* Reads what the worker printed that is there now; false at its end. */
bool remote_drain_output(void)
{
    char buffer[65536];
    while (worker.output >= 0) {
        ssize_t got = read(worker.output, buffer, sizeof buffer);
        if (got > 0) {
            printed_total += (size_t)got;
            keep_output(buffer, (size_t)got);
            continue;
        }
        return !(got == 0 || (got < 0 && errno != EAGAIN && errno != EINTR));
    }
    return false;
}

const char *remote_test_output(size_t *dropped)
{
    (void)remote_drain_output();
    *dropped = output.dropped;
    /* The kept end may begin inside a character: from the next one on. */
    size_t skip = 0;
    while (output.dropped && skip < 3 && ((unsigned char)output.text[skip] & 0xC0) == 0x80)
        skip++;
    return output.text + skip;
}

size_t remote_printed_bytes(void)
{
    return printed_total;
}

void remote_test_begin(void)
{
    printed_total = 0;
    output.length = output.dropped = 0;
    output.text[0] = '\0';
}

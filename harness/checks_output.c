/* checks_output.c - capturing what the learner's code prints, in the test's child process.
 *
 * Standard output and standard error are pointed at temporary files (dup2)
 * for the duration, so the test can read what was printed and the terminal
 * sees none of it. Only a test's child process does this; the runner's own
 * output goes elsewhere.
 */
#include "harness.h"

#include <stdio.h>
#include <unistd.h>

static struct {
    FILE *file;
    int saved_fd;
} captured[2] = {{NULL, -1}, {NULL, -1}}; /* [0] standard output, [1] standard error */

static const int captured_fd[2] = {STDOUT_FILENO, STDERR_FILENO};

void output_capture_begin(void)
{
    fflush(stdout);
    fflush(stderr);
    for (int s = 0; s < 2; s++) {
        captured[s].file = tmpfile();
        captured[s].saved_fd = captured[s].file ? dup(captured_fd[s]) : -1;
        ck_assert_msg(captured[s].saved_fd >= 0 &&
                          dup2(fileno(captured[s].file), captured_fd[s]) >= 0,
                      "the test could not capture the program's output in a temporary file");
    }
}

static void read_back(FILE *file, char *text, size_t size)
{
    size_t got = 0;
    if (fseek(file, 0, SEEK_SET) == 0)
        got = fread(text, 1, size - 1, file);
    text[got] = '\0';
    fclose(file);
}

void output_capture_end(char *out, size_t out_size, char *err, size_t err_size)
{
    fflush(stdout);
    fflush(stderr);
    char *text[2] = {out, err};
    size_t size[2] = {out_size, err_size};
    for (int s = 0; s < 2; s++) {
        dup2(captured[s].saved_fd, captured_fd[s]);
        close(captured[s].saved_fd);
        captured[s].saved_fd = -1;
        read_back(captured[s].file, text[s], size[s]);
        captured[s].file = NULL;
    }
}

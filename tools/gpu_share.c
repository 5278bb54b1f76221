/* gpu_share.c - run a program that uses the GPU beside test programs, sharing it as they do.
 *
 *   gpu_share shared|alone COMMAND [ARG...]
 *
 * Test programs share a GPU through lock files that the environment names (harness/host/gpu_share.h):
 * a test that times the GPU has it alone, the others share it and step aside for a moment when
 * a timed test waits. This holds the GPU the same way for a program that is not a test program
 * (make test runs the chapter programs and dev/gpu_work_check beside the exercises' tests):
 * `alone` as a timed test does, `shared` as an untimed one, stopping COMMAND while a timed test
 * waiting for the GPU runs. Without the lock files it just runs COMMAND.
 *
 * Exit status: COMMAND's (128 + the signal that ended it), 127 when it cannot be run, 2 for a
 * usage error or when no process could be started.
 */
#define _GNU_SOURCE
#include "gpu_share.h"

#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static pid_t child;

/* Ctrl-C or a timeout that ends this ends COMMAND too, stopped or not. */
static void pass_on(int signal_number)
{
    if (child > 0) {
        kill(-child, signal_number);
        kill(-child, SIGCONT);
    }
}

int main(int argc, char **argv)
{
    if (argc < 3 || (strcmp(argv[1], "shared") != 0 && strcmp(argv[1], "alone") != 0)) {
        fprintf(stderr, "usage: %s shared|alone COMMAND [ARG...]\n", argv[0]);
        return 2;
    }
    const bool alone = strcmp(argv[1], "alone") == 0;
    gpu_share_open();
    gpu_share_take(alone);
    child = fork();
    if (child < 0) {
        fprintf(stderr, "gpu_share: cannot start %s: %s\n", argv[2], strerror(errno));
        return 2;
    }
    if (child == 0) {
        setpgid(0, 0); /* a group of its own, which a yield stops whole */
        gpu_share_close();
        execvp(argv[2], argv + 2);
        fprintf(stderr, "gpu_share: cannot run %s: %s\n", argv[2], strerror(errno));
        _exit(127);
    }
    setpgid(child, child);
    struct sigaction action = {.sa_handler = pass_on};
    sigaction(SIGINT, &action, NULL);
    sigaction(SIGTERM, &action, NULL);
    sigaction(SIGHUP, &action, NULL);

    const struct timespec check = {0, (long)(GPU_SHARE_CHECK_S * 1e9)};
    int status = 0;
    for (;;) {
        pid_t done = waitpid(child, &status, WNOHANG);
        if (done == child)
            break;
        if (done < 0 && errno != EINTR) {
            status = 2 << 8;
            break;
        }
        if (gpu_share_should_yield())
            (void)gpu_share_yield(child);
        nanosleep(&check, NULL);
    }
    gpu_share_give_back();
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

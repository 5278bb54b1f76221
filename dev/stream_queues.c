/* stream_queues.c - which of a context's hardware work queues the streams a program makes get:
 * how many of four streams run side by side, after other streams were made before them.
 *
 *   stream_queues [--busy MS] [--patterns N]   (CUDA_DEVICE_MAX_CONNECTIONS from the environment)
 *
 * A context has CUDA_DEVICE_MAX_CONNECTIONS hardware work queues (8 by default); streams that
 * share one wait on each other's work. A context of fewer queues is quicker to make, for this
 * program and every other on the GPU (docs/performance.md, "What a context costs"), but a test
 * host's worker runs a student's exercises one after another, and stop 45 saw a pipeline of
 * four streams lose its overlap with four queues under make grade, where the streams of earlier
 * exercises had been made (and destroyed) before it. This says how the queues are handed out:
 * for each way of making streams before them, a child process makes four streams and keeps each
 * busy MS milliseconds, as two kernels of MS / 2 queued one stream after another
 * (gpu_work_keep_busy, one thread on one SM), and times the four together, the best of three:
 * 4 side by side take MS, four in one queue 4 * MS. Two kernels a stream, because a queue holds
 * up only what is queued behind work that waits: one kernel a stream ran four side by side on an
 * H100 even with one queue (docs/performance.md, stop 52), while a stream's second kernel waits
 * for its first, and in a shared queue so does everything queued after it. --patterns N runs
 * the first N ways alone (a context each; make test runs one).
 *
 * Like the harness, the parent never touches the CUDA runtime: only the children do.
 */
#include "chapter.h"
#include "gpu_work.h"
#include "timing.h"

#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static const char usage[] = "[--busy MS] [--patterns N]";

enum { STREAMS = 4, MOST_BEFORE = 8 };

/* What is made before the four streams: `before` streams, kept or destroyed; or, with
 * `interleaved`, one more stream made after each of the four and kept. */
typedef struct pattern {
    const char *words;
    int before;
    bool keep, interleaved;
} pattern;

static const pattern patterns[] = {
    {"made first", 0, false, false},
    {"after 1 made and destroyed", 1, false, false},
    {"after 2 made and destroyed", 2, false, false},
    {"after 3 made and destroyed", 3, false, false},
    {"after 1 made and kept", 1, true, false},
    {"after 2 made and kept", 2, true, false},
    {"after 3 made and kept", 3, true, false},
    {"each made beside another, kept", 0, false, true},
};

/* In a child: the pattern's streams, then the four timed; the best of three in ms, or < 0. */
static double time_four(const pattern *p, double busy_ms)
{
    cudaStream_t before[MOST_BEFORE], beside[STREAMS], timed[STREAMS];
    if (cudaFree(0) != cudaSuccess || gpu_work_load() != cudaSuccess)
        return -1;
    for (int i = 0; i < p->before; i++)
        if (cudaStreamCreate(&before[i]) != cudaSuccess)
            return -1;
    if (!p->keep)
        for (int i = 0; i < p->before; i++)
            (void)cudaStreamDestroy(before[i]);
    for (int i = 0; i < STREAMS; i++) {
        if (cudaStreamCreate(&timed[i]) != cudaSuccess)
            return -1;
        if (p->interleaved && cudaStreamCreate(&beside[i]) != cudaSuccess)
            return -1;
    }
    double best = -1;
    for (int round = 0; round < 3; round++) {
        const double began = host_clock_ms();
        for (int i = 0; i < STREAMS; i++)
            for (int half = 0; half < 2; half++)
                if (gpu_work_keep_busy(timed[i], busy_ms / 2) != cudaSuccess)
                    return -1;
        if (cudaDeviceSynchronize() != cudaSuccess)
            return -1;
        const double took = host_clock_ms() - began;
        best = best < 0 || took < best ? took : best;
    }
    return best;
}

/* Runs the pattern in a child process; its best time in ms, or < 0 where it failed. */
static double in_a_child(const pattern *p, double busy_ms)
{
    int channel[2];
    if (pipe(channel) != 0)
        return -1;
    fflush(NULL);
    const pid_t pid = fork();
    if (pid == 0) {
        close(channel[0]);
        const double took = time_four(p, busy_ms);
        const ssize_t written = write(channel[1], &took, sizeof took);
        _exit(written == (ssize_t)sizeof took && took >= 0 ? 0 : 1);
    }
    close(channel[1]);
    double took = -1;
    if (pid < 0 || read(channel[0], &took, sizeof took) != (ssize_t)sizeof took)
        took = -1;
    close(channel[0]);
    if (pid > 0)
        (void)waitpid(pid, NULL, 0);
    return took;
}

int main(int argc, char **argv)
{
    enum { PATTERNS = sizeof patterns / sizeof patterns[0] };
    int busy = 20, count = PATTERNS;
    const option_spec specs[] = {{"--busy", OPTION_COUNT, &busy, 1, 1000},
                                 {"--patterns", OPTION_COUNT, &count, 1, PATTERNS}};
    options_parse(argc, argv, usage, specs, sizeof specs / sizeof specs[0]);
    const char *queues = getenv("CUDA_DEVICE_MAX_CONNECTIONS");
    printf("stream_queues: CUDA_DEVICE_MAX_CONNECTIONS %s; four streams each kept busy %d ms at "
           "once:\n",
           queues != NULL ? queues : "not set (the driver's 8)", busy);
    int failed = 0;
    for (int i = 0; i < count; i++) {
        const double took = in_a_child(&patterns[i], busy);
        if (took < 0) {
            printf("  %-32s failed (a CUDA call in the child did not succeed)\n",
                   patterns[i].words);
            failed = 1;
            continue;
        }
        printf("  %-32s %6.1f ms: %.1f side by side\n", patterns[i].words, took,
               STREAMS * busy / took);
    }
    return failed;
}

/* context_rate.c - how many CUDA contexts a second this machine creates, P processes at a time.
 *
 *   context_rate [--processes P] [--contexts N]
 *
 * Every test of an exercise runs in a process of its own (Check's fork mode),
 * and each creates a CUDA context, so grading a class costs one context per
 * test. This creates N contexts, each in a fresh child process that calls
 * cudaFree(0) and exits, P children at a time; child i uses device
 * i % (the devices CUDA_VISIBLE_DEVICES lets it see). Comparing P = 1 with
 * P = 8, and one visible GPU with two, says whether contexts are created side
 * by side or one at a time across the machine (dev/grade-benchmark.sh runs both).
 *
 * Like the harness, the parent never touches the CUDA runtime: only the
 * children do, each after its fork.
 */
#include "chapter.h"
#include "cuda_check.h"
#include "timing.h"
#include "units.h"

#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static const char usage[] = "[--processes P] [--contexts N]";

/* What a child sends back: its device, the devices it saw, and how long
 * cudaFree(0) took (the context's creation), or the error it met. */
typedef struct child_report {
    int device;
    int devices;
    double create_ms;
    cudaError_t err;
} child_report;

static void create_one(int index, int to_parent)
{
    child_report report = {.device = -1};
    report.err = cudaGetDeviceCount(&report.devices);
    if (report.err == cudaSuccess && report.devices == 0)
        report.err = cudaErrorNoDevice;
    if (report.err == cudaSuccess) {
        report.device = index % report.devices;
        double started = host_clock_ms();
        report.err = cudaSetDevice(report.device);
        if (report.err == cudaSuccess)
            report.err = cudaFree(0);
        report.create_ms = host_clock_ms() - started;
    }
    ssize_t written = write(to_parent, &report, sizeof report);
    _exit(written == (ssize_t)sizeof report && report.err == cudaSuccess ? 0 : 1);
}

/* A child still running: its pid, and the pipe its report comes through. */
typedef struct running_child {
    pid_t pid;
    int from_child;
} running_child;

/* Waits for one of the running children and reads its report; returns false on a failure,
 * said on stderr. */
static bool collect_one(running_child *children, size_t *running, child_report *report)
{
    int status;
    pid_t pid = waitpid(-1, &status, 0);
    if (pid < 0) {
        perror("context_rate: waitpid");
        return false;
    }
    size_t slot = 0;
    while (slot < *running && children[slot].pid != pid)
        slot++;
    if (slot == *running)
        return true; /* not one of ours */
    /* A report fits in a pipe's buffer, so it is there whole once the child is gone. */
    ssize_t got = read(children[slot].from_child, report, sizeof *report);
    close(children[slot].from_child);
    children[slot] = children[--*running];
    if (got != (ssize_t)sizeof *report) {
        fprintf(stderr, "context_rate: a child ended without a report (status %d)\n", status);
        return false;
    }
    if (report->err != cudaSuccess) {
        char described[256];
        fprintf(stderr, "context_rate: a child could not create a context: %s\n",
                cuda_error_describe(report->err, described, sizeof described));
        return false;
    }
    return true;
}

int main(int argc, char **argv)
{
    size_t processes = 8, contexts = 32;
    for (int i = 1; i < argc; i += 2) { /* each option takes a value */
        usage_exit_on_help(argv[i], argv[0], usage);
        size_t *target = !strcmp(argv[i], "--processes")  ? &processes
                         : !strcmp(argv[i], "--contexts") ? &contexts
                                                          : NULL;
        if (!target)
            usage_error(argv[0], usage, "unknown argument '%s'", argv[i]);
        if (i + 1 == argc || !parse_count(argv[i + 1], 1, target) || *target == 0)
            usage_error(argv[0], usage, "%s needs a positive count", argv[i]);
    }
    if (processes > contexts)
        processes = contexts;

    double *create_ms = calloc(contexts, sizeof *create_ms);
    running_child *children = calloc(processes, sizeof *children);
    if (!create_ms || !children) {
        fprintf(stderr, "context_rate: out of memory\n");
        return 1;
    }
    size_t started = 0, finished = 0, running = 0;
    int devices = 0;
    const double began = host_clock_ms();
    while (finished < contexts) {
        while (running < processes && started < contexts) {
            int channel[2];
            if (pipe(channel) != 0) {
                perror("context_rate: pipe");
                return 1;
            }
            fflush(NULL);
            pid_t pid = fork();
            if (pid < 0) {
                perror("context_rate: fork");
                return 1;
            }
            if (pid == 0) {
                close(channel[0]);
                create_one((int)started, channel[1]);
            }
            close(channel[1]);
            children[running++] = (running_child){.pid = pid, .from_child = channel[0]};
            started++;
        }
        child_report report;
        size_t before = running;
        if (!collect_one(children, &running, &report))
            return 1;
        if (running < before) {
            create_ms[finished++] = report.create_ms;
            devices = report.devices;
        }
    }
    const double seconds = (host_clock_ms() - began) / 1000.0;
    const double median_ms = median_of(create_ms, contexts);
    printf("context_rate: %zu contexts, %zu processes at a time, on %d device%s: %.1f s, "
           "%.1f contexts per second; each took %.0f ms to create (median)\n",
           contexts, processes, devices, devices == 1 ? "" : "s", seconds, contexts / seconds,
           median_ms);
    free(children);
    free(create_ms);
    return 0;
}

/* context_rate.c - how many CUDA contexts a second this machine creates, P processes at a time.
 *
 *   context_rate [--processes P] [--contexts N] [--queues Q] [--alive A] [--alive-queues Q]
 *
 * Every test of an exercise runs in a process of its own (Check's fork mode),
 * and each creates a CUDA context, so grading a class costs one context per
 * test. This creates N contexts, each in a fresh child process that calls
 * cudaFree(0) and exits, P children at a time; child i uses device
 * i % (the devices CUDA_VISIBLE_DEVICES lets it see). Comparing P = 1 with
 * P = 8, and one visible GPU with two, says whether contexts are created side
 * by side or one at a time across the machine (dev/grade-benchmark.sh runs both).
 *
 * --alive A keeps A other processes holding an idle context while it measures, as the
 * test programs of a class hold theirs; --queues and --alive-queues give the new contexts and
 * the idle ones that many hardware work queues (CUDA_DEVICE_MAX_CONNECTIONS; the driver's
 * default is 8). The more queues the GPU serves, the longer a context with many takes to make
 * (docs/performance.md, "What a context costs"), which is why the harness's checker asks for 1.
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

static const char usage[] =
    "[--processes P] [--contexts N] [--queues Q] [--alive A] [--alive-queues Q]";

/* What a child sends back: its device, the devices it saw, how long its first runtime call took
 * (the driver's start, cuInit) and cudaFree(0) after it (the context's creation), or the error
 * it met. */
typedef struct child_report {
    int device;
    int devices;
    double init_ms, create_ms;
    cudaError_t err;
} child_report;

/* In a child, before its first CUDA call: its context's hardware work queues (0: the default). */
static void ask_for_queues(size_t queues)
{
    if (queues > 0) {
        char text[32];
        snprintf(text, sizeof text, "%zu", queues);
        setenv("CUDA_DEVICE_MAX_CONNECTIONS", text, 1);
    }
}

/* A child that makes a context, says so with a byte, and waits until its parent goes. */
static _Noreturn void hold_one(int to_parent, int from_parent)
{
    char ready = cudaFree(0) == cudaSuccess ? 'y' : 'n';
    ssize_t written = write(to_parent, &ready, 1);
    char ignored;
    while (written == 1 && read(from_parent, &ignored, 1) < 0)
        ;
    _exit(0);
}

/* Starts `alive` children that each hold a context, and waits until all have one; the write end
 * of the pipe they wait on is *release (closing it ends them). False when one could not. */
static bool start_holders(size_t alive, size_t queues, int *release)
{
    int go[2];
    if (alive == 0 || pipe(go) != 0)
        return alive == 0;
    bool all = true;
    for (size_t i = 0; i < alive; i++) {
        int ready[2];
        if (pipe(ready) != 0)
            return false;
        fflush(NULL);
        pid_t pid = fork();
        if (pid == 0) {
            close(go[1]);
            close(ready[0]);
            ask_for_queues(queues);
            hold_one(ready[1], go[0]);
        }
        close(ready[1]);
        char said = 'n';
        all &= pid > 0 && read(ready[0], &said, 1) == 1 && said == 'y';
        close(ready[0]);
    }
    close(go[0]);
    *release = go[1];
    return all;
}

static void create_one(int index, int to_parent)
{
    child_report report = {.device = -1};
    const double init_began = host_clock_ms();
    report.err = cudaGetDeviceCount(&report.devices);
    report.init_ms = host_clock_ms() - init_began;
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

/* What the command line asks for. */
typedef struct options {
    size_t processes, contexts, queues, alive, alive_queues; /* queues 0: the driver's default */
} options;

static options read_options(int argc, char **argv)
{
    options o = {8, 32, 0, 0, 0};
    for (int i = 1; i < argc; i += 2) { /* each option takes a value */
        usage_exit_on_help(argv[i], argv[0], usage);
        size_t *target = !strcmp(argv[i], "--processes")      ? &o.processes
                         : !strcmp(argv[i], "--contexts")     ? &o.contexts
                         : !strcmp(argv[i], "--queues")       ? &o.queues
                         : !strcmp(argv[i], "--alive")        ? &o.alive
                         : !strcmp(argv[i], "--alive-queues") ? &o.alive_queues
                                                              : NULL;
        if (!target)
            usage_error(argv[0], usage, "unknown argument '%s'", argv[i]);
        if (i + 1 == argc || !parse_count(argv[i + 1], 1, target) || *target == 0)
            usage_error(argv[0], usage, "%s needs a positive count", argv[i]);
    }
    if (o.queues > 32 || o.alive_queues > 32)
        usage_error(argv[0], usage, "a context has at most 32 work queues");
    if (o.processes > o.contexts)
        o.processes = o.contexts;
    return o;
}

int main(int argc, char **argv)
{
    const options o = read_options(argc, argv);
    const size_t processes = o.processes, contexts = o.contexts;
    int release = -1;
    if (!start_holders(o.alive, o.alive_queues, &release)) {
        fprintf(stderr, "context_rate: a process could not make a context to hold\n");
        return 1;
    }

    double *create_ms = calloc(contexts, sizeof *create_ms);
    double *init_ms = calloc(contexts, sizeof *init_ms);
    running_child *children = calloc(processes, sizeof *children);
    if (!create_ms || !init_ms || !children) {
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
                if (release >= 0)
                    close(release);
                ask_for_queues(o.queues);
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
            init_ms[finished] = report.init_ms;
            create_ms[finished++] = report.create_ms;
            devices = report.devices;
        }
    }
    const double seconds = (host_clock_ms() - began) / 1000.0;
    const double median_ms = median_of(create_ms, contexts);
    char beside[128] = "", own[64] = "";
    if (o.alive > 0 && o.alive_queues > 0)
        snprintf(beside, sizeof beside, ", beside %zu idle contexts (%zu queues each)", o.alive,
                 o.alive_queues);
    else if (o.alive > 0)
        snprintf(beside, sizeof beside, ", beside %zu idle contexts", o.alive);
    if (o.queues > 0)
        snprintf(own, sizeof own, " with %zu queues", o.queues);
    printf("context_rate: %zu contexts%s, %zu processes at a time, on %d device%s%s: %.1f s, "
           "%.1f contexts per second; each took %.0f ms to create (median), after %.0f ms "
           "starting the driver\n",
           contexts, own, processes, devices, devices == 1 ? "" : "s", beside, seconds,
           contexts / seconds, median_ms, median_of(init_ms, contexts));
    if (release >= 0) {
        close(release);
        while (wait(NULL) > 0)
            ;
    }
    free(children);
    free(create_ms);
    free(init_ms);
    return 0;
}

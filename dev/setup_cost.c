/* setup_cost.c - what a test's buffers cost before anything is copied, P processes at once.
 *
 *   setup_cost [--size SIZE] [--processes P]
 *
 * A test of a copy first gets its memory: pageable buffers it fills, pinned
 * buffers from cudaMallocHost, registrations. On a virtual machine the kernel's
 * first touch of fresh pages can cost more than the copy itself, and the driver
 * pins memory for one process at a time, so what a test costs alone says little
 * about its cost beside the others of make grade. Each of P children makes its
 * CUDA context, waits until all have, then times each step on SIZE bytes (256
 * MiB by default); the parent prints each step's median over the children.
 * grader/README.md quotes it, and the harness's choices follow from it
 * (harness/worker/worker_pinned_pool.c, harness_host_alloc).
 *
 * Like the harness, the parent never touches the CUDA runtime.
 */
#define _GNU_SOURCE /* MADV_HUGEPAGE */
#include "chapter.h"
#include "cuda_check.h"
#include "timing.h"
#include "units.h"

#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

static const char usage[] = "[--size SIZE] [--processes P]";

#define STEPS(X)                                                                                   \
    X(PIN, "cudaMallocHost")                                                                       \
    X(FILL_PINNED, "fill the pinned memory")                                                       \
    X(UNPIN, "cudaFreeHost")                                                                       \
    X(MALLOC_FILL, "malloc and fill (first touch)")                                                \
    X(FILL_AGAIN, "fill it again")                                                                 \
    X(REGISTER, "cudaHostRegister it")                                                             \
    X(UNREGISTER, "cudaHostUnregister it")                                                         \
    X(HUGE_FILL, "map with MADV_HUGEPAGE and fill")                                                \
    X(REGISTER_HUGE, "cudaHostRegister that")                                                      \
    X(UNREGISTER_HUGE, "cudaHostUnregister that")
#define AS_ENUM(name, words) STEP_##name,
#define AS_WORDS(name, words) words,
enum { STEPS(AS_ENUM) STEP_COUNT };
static const char *const step_words[] = {STEPS(AS_WORDS)};

typedef struct child_report {
    double ms[STEP_COUNT];
    bool ok;
} child_report;

/* Runs `statement` and keeps how long it took, in ms[step]. */
#define TIMED(step, statement)                                                                     \
    do {                                                                                           \
        const double started_ = host_clock_ms();                                                   \
        statement;                                                                                 \
        ms[step] = host_clock_ms() - started_;                                                     \
    } while (0)

/* Fresh memory, touched once: what a test's new buffer costs before it holds anything. NULL
 * when there is none. */
static void *touched_malloc(size_t bytes)
{
    void *memory = malloc(bytes);
    if (memory != NULL)
        memset(memory, 2, bytes);
    return memory;
}

static void *touched_huge_pages(size_t bytes)
{
    void *memory = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (memory == MAP_FAILED)
        return NULL;
    (void)madvise(memory, bytes, MADV_HUGEPAGE); /* a hint, as harness_host_alloc gives it */
    memset(memory, 4, bytes);
    return memory;
}

/* The steps, in order, on `bytes`; CUDA_CHECK's handler ends the child on an error. */
static void measure(size_t bytes, double *ms)
{
    void *pinned = NULL, *pageable = NULL, *huge = NULL;
    TIMED(STEP_PIN, CUDA_CHECK(cudaMallocHost(&pinned, bytes)));
    TIMED(STEP_FILL_PINNED, memset(pinned, 1, bytes));
    TIMED(STEP_UNPIN, CUDA_CHECK(cudaFreeHost(pinned)));

    TIMED(STEP_MALLOC_FILL, pageable = touched_malloc(bytes));
    if (pageable == NULL)
        exit(1);
    TIMED(STEP_FILL_AGAIN, memset(pageable, 3, bytes));
    TIMED(STEP_REGISTER, CUDA_CHECK(cudaHostRegister(pageable, bytes, cudaHostRegisterDefault)));
    TIMED(STEP_UNREGISTER, CUDA_CHECK(cudaHostUnregister(pageable)));
    free(pageable);

    TIMED(STEP_HUGE_FILL, huge = touched_huge_pages(bytes));
    if (huge == NULL)
        exit(1);
    TIMED(STEP_REGISTER_HUGE, CUDA_CHECK(cudaHostRegister(huge, bytes, cudaHostRegisterDefault)));
    TIMED(STEP_UNREGISTER_HUGE, CUDA_CHECK(cudaHostUnregister(huge)));
    munmap(huge, bytes);
}

/* A child: its context, a byte to the parent, a byte back once all are ready, the steps. */
static _Noreturn void child(size_t bytes, int ready, int go, int report_fd)
{
    child_report report = {.ok = false};
    CUDA_CHECK(cudaFree(0));
    char byte = 0;
    if (write(ready, &byte, 1) == 1 && read(go, &byte, 1) == 1) {
        measure(bytes, report.ms);
        report.ok = true;
    }
    _exit(write(report_fd, &report, sizeof report) == (ssize_t)sizeof report && report.ok ? 0 : 1);
}

int main(int argc, char **argv)
{
    size_t bytes = (size_t)256 << 20;
    int processes = 1;
    const option_spec specs[] = {{"--size", OPTION_SIZE, &bytes, 0, 0},
                                 {"--processes", OPTION_COUNT, &processes, 1, 64}};
    options_parse(argc, argv, usage, specs, sizeof specs / sizeof specs[0]);
    if (bytes == 0)
        usage_error(argv[0], usage, "--size must be more than 0 bytes");

    int ready[2], go[2], reports[2];
    if (pipe(ready) != 0 || pipe(go) != 0 || pipe(reports) != 0) {
        perror("setup_cost: pipe");
        return 1;
    }
    fflush(NULL);
    for (int p = 0; p < processes; p++) {
        pid_t pid = fork();
        if (pid < 0) {
            perror("setup_cost: fork");
            return 1;
        }
        if (pid == 0)
            child(bytes, ready[1], go[0], reports[1]);
    }
    close(ready[1]);
    close(reports[1]);
    char byte;
    int ready_count = 0;
    while (ready_count < processes && read(ready[0], &byte, 1) == 1)
        ready_count++;
    for (int p = 0; p < ready_count; p++)
        if (write(go[1], &byte, 1) != 1)
            break;
    close(go[1]);

    /* A report is smaller than PIPE_BUF, so each arrives whole. */
    double *ms[STEP_COUNT];
    for (int s = 0; s < STEP_COUNT; s++)
        ms[s] = calloc((size_t)processes, sizeof *ms[s]);
    int reported = 0;
    child_report report;
    while (reported < processes && read(reports[0], &report, sizeof report) == sizeof report)
        if (report.ok) {
            for (int s = 0; s < STEP_COUNT; s++)
                ms[s][reported] = report.ms[s];
            reported++;
        }
    int failed = 0, status;
    while (wait(&status) > 0)
        failed += !WIFEXITED(status) || WEXITSTATUS(status) != 0;
    if (reported == 0 || failed) {
        fprintf(stderr, "setup_cost: %d of %d children failed\n", failed, processes);
        return 1;
    }
    printf("setup_cost: %.0f MiB, %d process%s at once, median ms:\n", bytes / 1048576.0,
           processes, processes == 1 ? "" : "es");
    for (int s = 0; s < STEP_COUNT; s++) {
        printf("  %-34s %8.1f\n", step_words[s], median_of(ms[s], (size_t)reported));
        free(ms[s]);
    }
    return 0;
}

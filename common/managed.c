/* managed.c - what chapter 4's programs share (managed.h). */
#include "managed.h"

#include "chapter.h"
#include "cuda_check.h"
#include "gpu_work.h"
#include "units.h"

#include <stdio.h>
#include <stdlib.h>

managed_options managed_options_parse(int argc, char **argv, const char *usage)
{
    managed_options opt = {.bytes = (size_t)256 << 20, .reps = 5, .csv_dir = NULL};
    const option_spec specs[] = {
        {"--size", OPTION_SIZE, &opt.bytes, 0, 0},
        {"--reps", OPTION_COUNT, &opt.reps, 1, MANAGED_MAX_REPS},
        {"--csv", OPTION_TEXT, &opt.csv_dir, 0, 0},
    };
    options_parse(argc, argv, usage, specs, sizeof specs / sizeof specs[0]);
    if (opt.bytes < MANAGED_PAGE_BYTES || opt.bytes % MANAGED_PAGE_BYTES != 0)
        usage_error(argv[0], usage, "--size: %zu bytes is not a whole number of 4K pages",
                    opt.bytes);
    return opt;
}

void managed_fill_words(uint32_t *words, size_t count, uint32_t round)
{
    for (size_t i = 0; i < count; i++)
        words[i] = ((uint32_t)i + round) * 2654435761u;
}

double managed_touch_pages(const uint32_t *words, size_t bytes)
{
    const size_t step = MANAGED_PAGE_BYTES / sizeof(uint32_t), count = bytes / sizeof(uint32_t);
    volatile uint32_t sink = 0;
    const double start = host_clock_ms();
    for (size_t i = 0; i < count; i += step)
        sink += words[i];
    (void)sink;
    return host_clock_ms() - start;
}

bool managed_timed_checksum(cudaStream_t stream, const void *d_data, size_t bytes,
                            unsigned long long *d_sum, unsigned long long want, event_timer *timer,
                            double *ms)
{
    float elapsed = 0;
    CUDA_CHECK(event_timer_start(timer, stream));
    CUDA_CHECK(gpu_work_checksum(stream, d_data, bytes, 1, d_sum));
    CUDA_CHECK(event_timer_stop(timer, stream, &elapsed));
    *ms = elapsed;
    unsigned long long sum = 0;
    CUDA_CHECK(cudaMemcpy(&sum, d_sum, sizeof sum, cudaMemcpyDeviceToHost));
    return sum == want;
}

void managed_refuse_oversubscription(size_t bytes, const char *argv0)
{
    size_t free_bytes = 0, total_bytes = 0;
    CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    if (bytes <= free_bytes / 4)
        return;
    char want[32], free_text[32];
    fprintf(stderr,
            "%s: %s is more than a quarter of the device's free memory (%s): managed memory "
            "beyond what the GPU holds would evict other programs' pages; ask for less\n",
            argv0, format_bytes(bytes, want, sizeof want),
            format_bytes(free_bytes, free_text, sizeof free_text));
    exit(verdict("the buffer would not fit well inside the device's free memory"));
}

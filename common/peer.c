/* peer.c - peer access, a pair of GPUs' buffers and timed peer copies, for chapter 6. */
#include "peer.h"

#include "chapter.h"
#include "cuda_check.h"
#include "nvml_link.h"
#include "units.h"

#include <stdlib.h>
#include <string.h>

enum { POISON = 0xFF };

void peer_options_parse(int argc, char **argv, const char *usage, peer_options *options,
                        size_t min_bytes, int max_reps)
{
    const option_spec specs[] = {
        {"--size", OPTION_SIZE, &options->bytes, 0, 0},
        {"--reps", OPTION_COUNT, &options->reps, 1, max_reps},
        {"--csv", OPTION_TEXT, &options->csv_dir, 0, 0},
    };
    options_parse(argc, argv, usage, specs, sizeof specs / sizeof specs[0]);
    if (options->bytes < min_bytes)
        usage_error(argv[0], usage, "--size must be %zu bytes at least", min_bytes);
    (void)gpus_or_skip(2, argv[0]);
}

/* listing: peer-access-set */
bool peer_access_set(int device, int peer, bool enabled)
{
    int can_access = 0;
    CUDA_CHECK(cudaDeviceCanAccessPeer(&can_access, device, peer));
    CUDA_CHECK(cudaSetDevice(device));
    if (!can_access)
        return false;
    /* The one error each call may give that means "already so": expected, so not checked,
     * but cleared, since the runtime also keeps it as the thread's last error. */
    const cudaError_t already =
        enabled ? cudaErrorPeerAccessAlreadyEnabled : cudaErrorPeerAccessNotEnabled;
    cudaError_t err =
        enabled ? cudaDeviceEnablePeerAccess(peer, 0) : cudaDeviceDisablePeerAccess(peer);
    if (err == already)
        (void)cudaGetLastError();
    else
        CUDA_CHECK(err);
    return true;
}
/* end listing: peer-access-set */

bool gpu_pair_peer_access(gpu_pair *p, bool enabled)
{
    bool there = peer_access_set(p->gpu[0], p->gpu[1], enabled);
    bool back = peer_access_set(p->gpu[1], p->gpu[0], enabled);
    return there && back;
}

void gpu_pair_create(gpu_pair *p, int first, int second, size_t bytes)
{
    *p = (gpu_pair){.gpu = {first, second}, .bytes = bytes};
    p->h_scratch = host_alloc(bytes);
    for (int side = 1; side >= 0; side--) { /* side 0 last: it stays current */
        p->h_pattern[side] = host_alloc(bytes);
        fill_pattern(p->h_pattern[side], bytes);
        if (side == 1) /* another pattern, so that a copy from the wrong side cannot match */
            for (size_t i = 0; i < bytes; i++)
                p->h_pattern[side][i] = (unsigned char)~p->h_pattern[side][i];
        CUDA_CHECK(cudaSetDevice(p->gpu[side]));
        CUDA_CHECK(cudaMalloc((void **)&p->d_source[side], bytes));
        CUDA_CHECK(cudaMalloc((void **)&p->d_received[side], bytes));
        CUDA_CHECK(
            cudaMemcpy(p->d_source[side], p->h_pattern[side], bytes, cudaMemcpyHostToDevice));
        CUDA_CHECK(cudaStreamCreate(&p->stream[side]));  /* streams and events are the */
        CUDA_CHECK(event_timer_create(&p->timer[side])); /* current device's */
    }
}

void gpu_pair_destroy(gpu_pair *p)
{
    for (int side = 0; side < 2; side++) {
        CUDA_CHECK(cudaSetDevice(p->gpu[side]));
        CUDA_CHECK(event_timer_destroy(&p->timer[side]));
        CUDA_CHECK(cudaStreamDestroy(p->stream[side]));
        CUDA_CHECK(cudaFree(p->d_source[side]));
        CUDA_CHECK(cudaFree(p->d_received[side]));
        free(p->h_pattern[side]);
    }
    free(p->h_scratch);
    CUDA_CHECK(cudaSetDevice(p->gpu[0]));
}

void gpu_pair_fill_floats(gpu_pair *p, int side, const float *h_values, size_t n)
{
    const size_t bytes = n * sizeof *h_values;
    if (bytes > p->bytes) {
        fprintf(stderr, "gpu_pair_fill_floats: %zu floats do not fit in %zu bytes\n", n, p->bytes);
        exit(1);
    }
    memcpy(p->h_pattern[side], h_values, bytes);
    CUDA_CHECK(cudaSetDevice(p->gpu[side]));
    CUDA_CHECK(cudaMemcpy(p->d_source[side], h_values, bytes, cudaMemcpyHostToDevice));
}

void gpu_pair_poison(gpu_pair *p, int side)
{
    CUDA_CHECK(cudaSetDevice(p->gpu[side]));
    CUDA_CHECK(cudaMemset(p->d_received[side], POISON, p->bytes));
    /* Before any copy queued next on the other GPU's stream, which would not wait for it. */
    CUDA_CHECK(cudaDeviceSynchronize());
}

bool gpu_pair_arrived(gpu_pair *p, int side, size_t bytes)
{
    memset(p->h_scratch, POISON, bytes);
    CUDA_CHECK(cudaSetDevice(p->gpu[side]));
    CUDA_CHECK(cudaMemcpy(p->h_scratch, p->d_received[side], bytes, cudaMemcpyDeviceToHost));
    return memcmp(p->h_scratch, p->h_pattern[1 - side], bytes) == 0;
}

/* listing: timed-peer-copy */
double gpu_pair_copy_median_gb_per_s(gpu_pair *p, int from, size_t bytes, int reps)
{
    const int to = 1 - from;
    void *dst = p->d_received[to];
    const void *src = p->d_source[from];
    cudaStream_t stream = p->stream[from];
    double *gb_per_s = host_alloc((size_t)reps * sizeof *gb_per_s);
    CUDA_CHECK(cudaSetDevice(p->gpu[from])); /* its stream's and events' device */
    CUDA_CHECK(cudaMemcpyPeerAsync(dst, p->gpu[to], src, p->gpu[from], bytes, stream));
    for (int r = 0; r < reps; r++) {
        float elapsed_ms;
        CUDA_CHECK(event_timer_start(&p->timer[from], stream));
        CUDA_CHECK(cudaMemcpyPeerAsync(dst, p->gpu[to], src, p->gpu[from], bytes, stream));
        CUDA_CHECK(event_timer_stop(&p->timer[from], stream, &elapsed_ms));
        gb_per_s[r] = bandwidth_gb_per_s(bytes, elapsed_ms);
    }
    double median = median_of(gb_per_s, (size_t)reps);
    free(gb_per_s);
    return median;
}
/* end listing: timed-peer-copy */

void peer_medians(peer_run run, void *context, int reps, int count, double *medians)
{
    double *figures = host_alloc((size_t)count * sizeof *figures);
    double *samples = host_alloc((size_t)count * (size_t)reps * sizeof *samples); /* by figure */
    run(context, figures);
    for (int r = 0; r < reps; r++) {
        run(context, figures);
        for (int k = 0; k < count; k++)
            samples[k * reps + r] = figures[k];
    }
    for (int k = 0; k < count; k++)
        medians[k] = median_of(samples + k * reps, (size_t)reps);
    free(samples);
    free(figures);
}

const char *gpu_pair_link_words(int first, int second, char *buf, size_t size)
{
    gpu_pair_link link;
    char why[256];
    if (gpu_pair_link_query(first, second, &link, why, sizeof why))
        return gpu_pair_link_describe(&link, buf, size);
    snprintf(buf, size, "unknown");
    return buf;
}

FILE *gpu_pair_csv_create(measure_csv *csv, int first, int second, bool peer_possible,
                          const char *dir, const char *name, const char *what, const char *made_by)
{
    device_info info;
    char link[64];
    CUDA_CHECK(device_info_query(second, &info));
    FILE *f = measure_csv_create(csv, dir, name, what, made_by);
    fprintf(f, "# second gpu: %s; link: %s; peer access: %s\n", info.name,
            gpu_pair_link_words(first, second, link, sizeof link),
            peer_possible ? "enabled" : "impossible, the driver staged every copy");
    return f;
}

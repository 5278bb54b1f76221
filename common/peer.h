/* peer.h - copies between two GPUs: peer access, a pair of GPUs' buffers, timed peer copies.
 *
 * Peer access lets one GPU read and write another's memory over the link between them (NVLink,
 * or PCIe through a switch), and lets a peer copy go straight across. Without it the driver
 * still copies between them, staged through host memory. Access is granted per ordered pair
 * (device to peer), by the device whose context asks, and lasts until disabled.
 * A CUDA error goes through CUDA_CHECK, which ends a chapter program.
 */
#ifndef COURSE_PEER_H
#define COURSE_PEER_H

#include "measure_csv.h"
#include "timing.h"

#include <cuda_runtime_api.h>
#include <stdbool.h>
#include <stddef.h>

/* The command line of a program that times one size between GPUs 0 and 1:
 * "[--size SIZE] [--reps N] [--csv DIR]", --reps from 1 to max_reps, --size below min_bytes a
 * usage error (exit 2). The fields hold the defaults on entry. Then, on a machine with fewer
 * than two GPUs, the program says so and exits 77 (gpus_or_skip). */
typedef struct peer_options {
    size_t bytes;
    int reps;
    const char *csv_dir; /* NULL: no CSV file */
} peer_options;

void peer_options_parse(int argc, char **argv, const char *usage, peer_options *options,
                        size_t min_bytes, int max_reps);

/* Lets `device` reach `peer`'s memory (enabled true) or stops it; true when the pair can have
 * peer access at all (cudaDeviceCanAccessPeer), false otherwise, when it changes nothing.
 * Enabling what is already enabled, or disabling what is not, is not an error: the runtime's
 * cudaErrorPeerAccessAlreadyEnabled or cudaErrorPeerAccessNotEnabled is cleared with
 * cudaGetLastError, so that no later check finds it. Leaves `device` the current device. */
bool peer_access_set(int device, int peer, bool enabled);

/* Two GPUs, called side 0 and side 1, each with a buffer it sends from (holding a pattern of
 * its own, of no short period), a buffer the other side's copies arrive in, a stream and an
 * event timer of its own. The streams are blocking: a cudaMemset or cudaMemcpy on a GPU's
 * default stream waits for that GPU's stream, not for the other GPU's. */
typedef struct gpu_pair {
    int gpu[2]; /* the CUDA devices */
    size_t bytes;
    unsigned char *d_source[2];   /* on gpu[side]: what it sends */
    unsigned char *d_received[2]; /* on gpu[side]: what the other side sent it */
    unsigned char *h_pattern[2];  /* what d_source[side] holds */
    unsigned char *h_scratch;     /* for reading a buffer back */
    cudaStream_t stream[2];
    event_timer timer[2];
} gpu_pair;

/* Allocates and fills everything for copies of up to `bytes`; leaves gpu[0] current. */
void gpu_pair_create(gpu_pair *p, int first, int second, size_t bytes);
void gpu_pair_destroy(gpu_pair *p);

/* Makes side's source hold `n` floats (n * sizeof(float) no more than p->bytes) instead of its
 * pattern: h_values into d_source[side] and into h_pattern[side], so that gpu_pair_arrived
 * checks copies of them. For a kernel's input: the pattern's bytes, read as floats, include
 * NaNs, whose bits a kernel need not keep. Leaves gpu[side] current. */
void gpu_pair_fill_floats(gpu_pair *p, int side, const float *h_values, size_t n);

/* Peer access both ways between the two (peer_access_set twice); true when both could. */
bool gpu_pair_peer_access(gpu_pair *p, bool enabled);

/* Fills d_received[side] with 0xFF bytes, which neither pattern is, and waits for it, so that a
 * copy that stops short cannot match. */
void gpu_pair_poison(gpu_pair *p, int side);

/* Whether the first `bytes` of d_received[side] hold what the other side sends. The copies into
 * it must have ended: the caller waited for them (they ran on a stream of either GPU). */
bool gpu_pair_arrived(gpu_pair *p, int side, size_t bytes);

/* cudaMemcpyPeerAsync of `bytes` from side `from` to the other, on from's stream, reps times,
 * each timed by from's events, after one untimed copy; leaves gpu[from] current. Returns the
 * median in GB/s (10^9 bytes per second). */
double gpu_pair_copy_median_gb_per_s(gpu_pair *p, int from, size_t bytes, int reps);

/* One run of a measurement, which writes its `count` figures into figures[0..count-1]. */
typedef void (*peer_run)(void *context, double *figures);
/* Runs `run` once untimed (first touches, lazy set-up, a kernel's first load in a context), then
 * reps times; medians[k] is the median of figure k over the timed runs. */
void peer_medians(peer_run run, void *context, int reps, int count, double *medians);

/* How GPUs `first` and `second` are linked, as gpu_pair_link_describe says it, or "unknown"
 * where NVML cannot say; into buf, returned. */
const char *gpu_pair_link_words(int first, int second, char *buf, size_t size);

/* measure_csv_create for figures of copies from GPU `first` (whose details head the file) to
 * `second`, then the line "# second gpu: NAME; link: LINK; peer access: enabled" (or
 * "impossible, the driver staged every copy"). Returns csv->file. */
FILE *gpu_pair_csv_create(measure_csv *csv, int first, int second, bool peer_possible,
                          const char *dir, const char *name, const char *what, const char *made_by);

#endif

/* feed.h - what chapter 5's programs share: a data set of images on disk, the batches a training
 * loop reads from it, and the loops that feed those batches to a GPU.
 *
 * A sample is an RGB image of 256 x 256 8-bit pixels; a batch is --batch samples read from
 * one place in the file. A training loop reads a batch (pread), converts its bytes to the
 * normalised floats a network wants, sends them to the GPU and runs a training step there (a
 * kernel that keeps the GPU busy for --step-ms, then a checksum of the batch, which proves
 * what arrived). The variants differ in what they overlap and where they convert:
 *   naive          each stage after the other, waiting for each: pageable cudaMemcpy;
 *   pinned_async   two pinned buffers: the host prepares the next batch while the GPU
 *                  copies and steps this one;
 *   loader_ring    --loaders threads read and convert ahead into a ring of pinned buffers;
 *   compact        the loaders only read: the bytes cross the link (a quarter of the floats)
 *                  and the GPU converts them.
 *
 * The data set's content is a function of the sample's index, so a program can say what each
 * batch must hold without reading the file: its expected checksums are computed on the host
 * from the same bytes, converted the same way, before any loop runs.
 *
 * In three files: feed.c (the options, the data set, the conversion, the expected sums),
 * feed_ring.c (the loader threads and their ring of buffers), feed_loops.c (the GPU side: the
 * stages timed alone, the four loops, the ideal). Every function that fails for a reason the
 * program cannot mend (a file it cannot write, memory it cannot get) says why on stderr and
 * exits 1 with the FAILED verdict; CUDA calls go through CUDA_CHECK.
 */
#ifndef COURSE_FEED_H
#define COURSE_FEED_H

#include "chapter.h"
#include "host_pool.h"

#include <cuda_runtime_api.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

/* --- The data -------------------------------------------------------------------------------- */

#define FEED_SAMPLE_BYTES ((size_t)256 * 256 * 3)
/* Normalisation of x / 255 with mean 0.5 and standard deviation 0.25: (x / 255 - 0.5) / 0.25,
 * written as one multiply and one add. */
#define FEED_SCALE ((float)(1.0 / (255.0 * 0.25)))
#define FEED_OFFSET ((float)(-0.5 / 0.25))

/* out[i] = (float)in[i] * FEED_SCALE + FEED_OFFSET, rounded after the multiply and again after
 * the add, as gpu_work_bytes_to_floats rounds on the GPU: the two give the same bits. */
void feed_convert(float *out, const unsigned char *in, size_t n);

/* Sample `index`'s bytes, the same on every run: what the data set's file holds there. */
void feed_sample_fill(unsigned char *bytes, size_t index);

/* An open data set: `samples` samples back to back in one file. */
typedef struct feed_data {
    int fd;
    size_t samples;
    char path[1024]; /* for messages; the temporary file's name once it is gone */
} feed_data;

/* Opens the data set of `bytes` (whole samples of it) at `path`: reuses the file when it has
 * the right size and a few samples checked hold what they should, else writes it there (under
 * a temporary name, renamed once complete). NULL: a temporary file in $TMPDIR (or /tmp), removed
 * at once, so that nothing is left behind however the program ends. `pool` writes in parallel.
 * Prints one line saying which it did. */
void feed_data_open(feed_data *data, const char *path, size_t bytes, host_pool *pool);
void feed_data_close(feed_data *data);

/* The data set's first `samples` samples read once, so that the loops find them in the page
 * cache as the file's writer left them, whoever ran before. */
void feed_data_warm(const feed_data *data, size_t samples, host_pool *pool);

/* Batches run through the file in order, and start again at its beginning after the last whole
 * batch it holds: batch b's first sample. */
size_t feed_batch_first_sample(const feed_data *data, size_t batch_samples, size_t batch);

/* Reads batch `batch` (batch_samples * FEED_SAMPLE_BYTES bytes) into `bytes` with pread.
 * False when the read failed or came short (errno says why, 0 for short). */
bool feed_read_batch(const feed_data *data, size_t batch_samples, size_t batch,
                     unsigned char *bytes);

/* The checksum each of batches [0, batches) must have on the GPU, gpu_work_checksum of its
 * converted floats, from the samples' own bytes (not the file): a malloc'd array. */
unsigned long long *feed_expected_sums(const feed_data *data, size_t batch_samples, size_t batches,
                                       host_pool *pool);

/* --- The command line ------------------------------------------------------------------------ */

#define FEED_MAX_BATCH 1024 /* samples: 192 MiB of bytes, 768 MiB of floats */
#define FEED_MAX_LOADERS 64
#define FEED_MAX_STEP_MS 1000.0
#define FEED_MAX_BATCHES 10000 /* a loop's */

/* The options every chapter 5 program takes, for its usage text, in three parts: the data
 * set's, the batch's (not 04-sweep's, which has sizes of its own) and the loop's, whose last
 * line the program ends with its CSV file's name. */
#define FEED_USAGE_DATA "[--data FILE] [--data-size SIZE]"
#define FEED_USAGE_BATCH "[--batch N]"
#define FEED_USAGE_LOOP "[--step-ms MS] [--loaders N] [--csv DIR]"
#define FEED_WORDS_DATA                                                                            \
    "       --data         the data set's file: reused when it holds --data-size, else written\n"  \
    "                      (default: a temporary file, removed at exit)\n"                         \
    "       --data-size    bytes of samples of 256x256x3 bytes; K, M, G multiply by 1024\n"        \
    "                      (default 192M; make measure uses 4G)\n"
#define FEED_WORDS_BATCH                                                                           \
    "       --batch        samples a batch, 1 to 1024 (default 64: 12 MiB of bytes)\n"
#define FEED_WORDS_LOOP                                                                            \
    "       --step-ms      the training step's milliseconds on the GPU, 0 to 1000 (default 8)\n"   \
    "       --loaders      threads that read and convert ahead, 1 to 64 (default 4)\n"             \
    "       --csv          also write DIR/"

typedef struct feed_options {
    const char *data_path; /* NULL: a temporary file */
    size_t data_bytes;
    int batch_samples;
    double step_ms;
    int loaders;
    const char *csv_dir; /* NULL: no CSV file */
} feed_options;

/* The common options a program leaves out, where it has its own in their place: `without` of
 * feed_options_parse, or'ed together. Left out, an option is an unexpected argument, and its
 * field keeps its default. */
enum feed_options_left_out {
    FEED_ALL_OPTIONS = 0,
    FEED_WITHOUT_BATCH = 1 << 0,   /* no --batch: the program has batch sizes of its own */
    FEED_WITHOUT_STEP_MS = 1 << 1, /* no --step-ms: the program has step times of its own */
};

/* Parses the common options but those left out (`without`) and the program's own (`extra`,
 * options_parse's table, extra_count rows; NULL and 0 for none) with options_parse's rules: a
 * usage error (exit 2) names a bad one. With --batch, a data set too small for one batch is a
 * usage error too. */
#define FEED_MAX_EXTRA_OPTIONS 8
feed_options feed_options_parse(int argc, char **argv, const char *usage, unsigned without,
                                const option_spec *extra, size_t extra_count);

/* A number of milliseconds from 0 to FEED_MAX_STEP_MS ("8", "0.5"), or a usage error naming
 * `option`. */
double feed_parse_ms(const char *text, const char *option, const char *argv0, const char *usage);

/* The batches a loop runs unless told: one pass over the data set, at most `most`, at least 2
 * (a loop needs two step starts to have a period). */
size_t feed_default_batches(const feed_data *data, size_t batch_samples, size_t most);

/* What chapter 5's loops do before they run: the data set opened (or written) as the options
 * say, the batches they run chosen (batch_count, or when it is 0 feed_default_batches up to
 * `most`), those batches read once into the page cache, and their checksums worked out
 * (feed_expected_sums, into *expected, malloc'd). Returns the number of batches. */
size_t feed_prepare_batches(const feed_options *opt, size_t batch_count, size_t most,
                            feed_data *data, unsigned long long **expected);

/* Worker threads for the set-up work (writing the data set, the expected sums): the CPUs. */
host_pool *feed_pool_create(void);

/* --- The loader ring (feed_ring.c) ----------------------------------------------------------- */

/* What a slot holds at a time. A slot goes FREE -> FILLING (a loader reads into it) -> READY
 * (the loop may send it) -> SENT (its copy is queued; its event marks the copy's end) -> FREE
 * once that event has completed, and not before: the copy reads the buffer until then. */
typedef enum feed_slot_state { SLOT_FREE, SLOT_FILLING, SLOT_READY, SLOT_SENT } feed_slot_state;

typedef struct feed_slot {
    void *h_buffer;     /* pinned: floats, or the batch's bytes when the loaders do not convert */
    cudaEvent_t copied; /* recorded after the copy out of h_buffer */
    feed_slot_state state;
    size_t batch;
} feed_slot;

typedef struct feed_ring feed_ring;

/* A loader thread, and the byte buffer it reads into before it converts into a slot. */
typedef struct feed_loader {
    feed_ring *ring;
    unsigned char *scratch; /* NULL when the loaders read straight into the slots */
    pthread_t thread;
} feed_loader;

struct feed_ring {
    pthread_mutex_t lock;
    pthread_cond_t changed; /* a slot changed state, or the ring is stopping */
    feed_slot *slots;
    unsigned slot_count;
    size_t next_batch, batches; /* the next batch a loader claims, and how many the loop runs */
    size_t released;            /* batches [0, released) are done with: their slots are free */
    bool stopping, failed;
    size_t failed_batch;
    int read_errno; /* the failed read's errno, 0 for a short read */
    const feed_data *data;
    size_t batch_samples;
    bool convert; /* the loaders convert to floats (else they only read the bytes) */
    feed_loader *loaders;
    unsigned loader_count, started;
};

/* `slot_count` slots of pinned buffers for batches up to max_batch_samples, of floats (the
 * loaders convert) or of bytes (they only read), and `loader_count` loaders' worth of scratch
 * memory, touched now so that no loop pays for its first use. */
void feed_ring_init(feed_ring *ring, unsigned slot_count, unsigned loader_count,
                    size_t max_batch_samples, bool floats);
void feed_ring_destroy(feed_ring *ring);

/* Starts the loader threads, which fill the slots with batches [0, batches) of `data`, in
 * order, each as soon as its slot is free; false (none left running) when a thread could not
 * start. Every slot must be free: no copy out of one may still be queued. Until
 * feed_ring_stop, a failed CUDA call stops and joins the loaders before the program exits. */
bool feed_ring_start(feed_ring *ring, const feed_data *data, size_t batch_samples, size_t batches);

/* Waits until batch `batch` is READY and returns its slot; NULL when a loader failed. Batches
 * are taken in order. First frees the slots of the batches whose copies are done, and waits for
 * the copy that holds the slot this batch needs. */
feed_slot *feed_ring_take(feed_ring *ring, size_t batch);

/* The loop queued the copy out of the slot of `batch` and recorded its event. */
void feed_ring_sent(feed_ring *ring, feed_slot *slot);

/* Stops the loaders (those reading finish their batch first) and joins them. Safe at any point
 * after feed_ring_start, and more than once; the caller waits for its queued copies itself. */
void feed_ring_stop(feed_ring *ring);

/* --- The loops (feed_loops.c) ---------------------------------------------------------------- */

typedef enum feed_variant {
    FEED_NAIVE,
    FEED_PINNED_ASYNC,
    FEED_LOADER_RING,
    FEED_COMPACT,
    FEED_VARIANTS
} feed_variant;
extern const char *const feed_variant_names[FEED_VARIANTS];

/* The stages of a batch, each timed alone (feed_measure_stages). */
typedef enum feed_stage {
    STAGE_READ,
    STAGE_CONVERT,
    STAGE_COPY_PAGEABLE,
    STAGE_COPY_PINNED,
    STAGE_COPY_COMPACT,
    STAGE_GPU_CONVERT,
    STAGE_STEP,
    FEED_STAGES
} feed_stage;
extern const char *const feed_stage_names[FEED_STAGES];

/* The GPU's buffers and streams, and the host's, sized once for the largest batch and the
 * longest loop a program runs, reused by every loop. */
typedef struct feed_rig {
    size_t max_batch_samples, max_batches;
    unsigned loaders;
    cudaStream_t copy_stream, step_stream;
    float *d_floats[2];         /* a step reads one while the next batch arrives in the other */
    unsigned char *d_bytes[2];  /* compact: the bytes the GPU converts into d_floats */
    unsigned long long *d_sums; /* the step's checksum of each batch */
    cudaEvent_t stepped[2];     /* the last step that read d_floats[i] (and d_bytes[i]) ended */
    cudaEvent_t *step_start, *step_end; /* each batch's step */
    unsigned char *h_bytes;             /* malloc'd: the naive loop's */
    float *h_floats;                    /* malloc'd: the naive loop's pageable floats */
    feed_ring float_ring, byte_ring;    /* pinned; pinned_async uses two of float_ring's slots */
    bool has_float_ring, has_byte_ring;
} feed_rig;

/* Allocates what the given variants need (uses[v]), for batches up to max_batch_samples and
 * loops up to max_batches long, with `loaders` loader threads. */
void feed_rig_create(feed_rig *rig, size_t max_batch_samples, size_t max_batches, unsigned loaders,
                     const bool uses[FEED_VARIANTS]);
void feed_rig_destroy(feed_rig *rig);

/* What one loop measured. */
typedef struct feed_run {
    size_t batches;
    double wall_ms; /* host clock, from the first read to the last synchronisation */
    double step_ms; /* the steps' event times, summed */
    double utilisation;
    /* The naive loop's host clock for each stage, summed over its batches. */
    double read_ms, convert_ms, copy_ms;
    const char *failure; /* NULL, or what went wrong (a read that failed, a wrong batch) */
    char failure_text[160];
} feed_run;

/* One loop of `batches` batches of `batch_samples` from `data`, as `variant` does it, with a
 * step of step_ms; then the GPU's checksums compared with `expected` (feed_expected_sums). */
void feed_run_loop(feed_rig *rig, feed_variant variant, const feed_data *data, size_t batch_samples,
                   size_t batches, double step_ms, const unsigned long long *expected,
                   feed_run *run);

/* Batch b's period, from its step's start to the next one's, and its step's time, in ms, of the
 * last loop run (b + 1 < its batches). */
void feed_batch_times(const feed_rig *rig, size_t batch, double *period_ms, double *step_ms);

/* Each stage alone on a batch of batch_samples (the data set's first `reps` batches, which the
 * page cache holds), ms[s] the median of `reps` timings. */
void feed_measure_stages(feed_rig *rig, const feed_data *data, size_t batch_samples, double step_ms,
                         int reps, double ms[FEED_STAGES]);

/* The bytes each stage moves for a batch (stages.csv's column). */
size_t feed_stage_bytes(feed_stage stage, size_t batch_samples);

/* The ideal ms a batch for a variant, from its stages alone: the longest stage of the work
 * spread as a machine with `loaders` loader threads would, max(step, copy_pinned, (read +
 * convert) / loaders) where the host converts, max(step + gpu_convert, copy_compact, read /
 * loaders) for compact. */
double feed_ideal_ms(feed_variant variant, const double ms[FEED_STAGES], unsigned loaders);

/* The bytes a variant moves across the link a batch. */
size_t feed_link_bytes(feed_variant variant, size_t batch_samples);

#endif

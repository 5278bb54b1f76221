/* feed.c - chapter 5's data set, its conversion and the command line (feed.h). */
#include "feed.h"

#include "chapter.h"
#include "gpu_work.h"
#include "timing.h"
#include "units.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Samples written or read by one call: 3 MiB, few calls and little memory per thread. */
#define SAMPLES_A_CALL 16

/* --- The conversion -------------------------------------------------------------------------- */

/* C lets a compiler fuse a multiply and an add into one rounding only within one expression;
 * clang does by default (GCC in ISO C mode never does, and does not know this pragma). Two
 * statements and the pragma keep the host's floats bit for bit the GPU kernel's, which rounds
 * after each operation. */
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#endif

/* listing: convert */
void feed_convert(float *out, const unsigned char *in, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const float scaled = (float)in[i] * FEED_SCALE; /* rounded here, */
        out[i] = scaled + FEED_OFFSET;                  /* and again here */
    }
}
/* end listing: convert */

/* xorshift64 seeded from the index: a few instructions for 8 bytes, so writing a data set of
 * gigabytes costs the disk's time, not the generator's. */
void feed_sample_fill(unsigned char *bytes, size_t index)
{
    uint64_t state = ((uint64_t)index + 1) * 0x9E3779B97F4A7C15ull;
    for (size_t at = 0; at < FEED_SAMPLE_BYTES; at += sizeof state) {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        memcpy(bytes + at, &state, sizeof state);
    }
}

/* --- Failures -------------------------------------------------------------------------------- */

static _Noreturn void data_failure(const char *doing, const char *path, int err)
{
    fflush(stdout);
    fprintf(stderr, "feed: %s %s: %s\n", doing, path, err != 0 ? strerror(err) : "came short");
    char why[1200];
    snprintf(why, sizeof why, "the data set could not be used (%s %s)", doing, path);
    exit(verdict(why));
}

static void *alloc_or_fail(size_t bytes)
{
    return host_alloc(bytes); /* says how much it wanted and exits 1 */
}

/* pread and pwrite until every byte is moved: both may move fewer than asked. */
static bool read_all(int fd, void *to, size_t bytes, off_t at)
{
    for (size_t done = 0; done < bytes;) {
        ssize_t got = pread(fd, (char *)to + done, bytes - done, at + (off_t)done);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0) {
            if (got == 0)
                errno = 0;
            return false;
        }
        done += (size_t)got;
    }
    return true;
}

static bool write_all(int fd, const void *from, size_t bytes, off_t at)
{
    for (size_t done = 0; done < bytes;) {
        ssize_t put = pwrite(fd, (const char *)from + done, bytes - done, at + (off_t)done);
        if (put < 0 && errno == EINTR)
            continue;
        if (put <= 0)
            return false;
        done += (size_t)put;
    }
    return true;
}

/* --- Writing and checking the data set ------------------------------------------------------- */

/* One part's share of samples [0, samples), SAMPLES_A_CALL at a time; err[part] gets the first
 * error. Used both to write the file and to read it back into the page cache. */
typedef struct file_job {
    int fd;
    size_t samples;
    bool writing;
    int *err;
} file_job;

static void file_part(void *arg, unsigned part, unsigned parts)
{
    const file_job *job = arg;
    size_t begin, end;
    host_share(job->samples, 1, part, parts, &begin, &end);
    unsigned char *chunk = alloc_or_fail(SAMPLES_A_CALL * FEED_SAMPLE_BYTES);
    job->err[part] = 0;
    for (size_t first = begin; first < end && job->err[part] == 0; first += SAMPLES_A_CALL) {
        const size_t count = end - first < SAMPLES_A_CALL ? end - first : SAMPLES_A_CALL;
        const off_t at = (off_t)(first * FEED_SAMPLE_BYTES);
        bool moved;
        if (job->writing) {
            for (size_t s = 0; s < count; s++)
                feed_sample_fill(chunk + s * FEED_SAMPLE_BYTES, first + s);
            moved = write_all(job->fd, chunk, count * FEED_SAMPLE_BYTES, at);
        } else {
            moved = read_all(job->fd, chunk, count * FEED_SAMPLE_BYTES, at);
        }
        if (!moved)
            job->err[part] = errno != 0 ? errno : EIO;
    }
    free(chunk);
}

/* Runs file_part on every thread of the pool; the first error, or 0. */
static int file_job_run(host_pool *pool, int fd, size_t samples, bool writing)
{
    int err[HOST_POOL_MAX_THREADS] = {0};
    file_job job = {fd, samples, writing, err};
    host_pool_run(pool, file_part, &job);
    for (unsigned t = 0; t < host_pool_threads(pool); t++)
        if (err[t] != 0)
            return err[t];
    return 0;
}

/* Whether the file at `path` is the data set asked for: its size, and its first, middle and
 * last samples. Says why not on stdout when it is there but is not. */
static bool reusable(const char *path, size_t samples)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return false;
    if (!S_ISREG(st.st_mode))
        data_failure("cannot use", path, S_ISDIR(st.st_mode) ? EISDIR : EINVAL);
    if ((size_t)st.st_size != samples * FEED_SAMPLE_BYTES) {
        printf("data set: %s holds %lld bytes, not %zu samples: writing it anew\n", path,
               (long long)st.st_size, samples);
        return false;
    }
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        data_failure("cannot open", path, errno);
    unsigned char *want = alloc_or_fail(FEED_SAMPLE_BYTES), *got = alloc_or_fail(FEED_SAMPLE_BYTES);
    const size_t checked[] = {0, samples / 2, samples - 1};
    bool same = true;
    for (size_t c = 0; c < sizeof checked / sizeof checked[0] && same; c++) {
        feed_sample_fill(want, checked[c]);
        same = read_all(fd, got, FEED_SAMPLE_BYTES, (off_t)(checked[c] * FEED_SAMPLE_BYTES)) &&
               memcmp(want, got, FEED_SAMPLE_BYTES) == 0;
    }
    free(got);
    free(want);
    close(fd);
    if (!same)
        printf("data set: %s holds other samples than this program writes: writing it anew\n",
               path);
    return same;
}

/* Writes the samples into `fd`, in parallel; exits naming `path` when that fails. */
static void write_samples(int fd, const char *path, size_t samples, host_pool *pool)
{
    if (ftruncate(fd, (off_t)(samples * FEED_SAMPLE_BYTES)) != 0)
        data_failure("cannot size", path, errno);
    const int err = file_job_run(pool, fd, samples, true);
    if (err != 0)
        data_failure("cannot write", path, err);
}

/* The file at `path` written anew: under a name of its own until it is complete, so that a run
 * that dies half-way leaves no file that looks like a data set. Returns its descriptor. */
static int write_named(const char *path, size_t samples, host_pool *pool)
{
    char partial[1100];
    snprintf(partial, sizeof partial, "%s.partial-%ld", path, (long)getpid());
    int fd = open(partial, O_RDWR | O_CREAT | O_TRUNC, 0644);
    if (fd < 0)
        data_failure("cannot create", partial, errno);
    write_samples(fd, partial, samples, pool);
    if (rename(partial, path) != 0) {
        const int err = errno;
        unlink(partial);
        data_failure("cannot rename the data set to", path, err);
    }
    return fd;
}

/* A file in $TMPDIR (or /tmp), removed from its folder as soon as it is open: the system frees
 * it when the program ends, however it ends. */
static int write_temporary(feed_data *data, size_t samples, host_pool *pool)
{
    const char *dir = getenv("TMPDIR");
    if (dir == NULL || *dir == '\0')
        dir = "/tmp";
    snprintf(data->path, sizeof data->path, "%s/feed-data-XXXXXX", dir);
    int fd = mkstemp(data->path);
    if (fd < 0)
        data_failure("cannot create a temporary file like", data->path, errno);
    unlink(data->path);
    write_samples(fd, data->path, samples, pool);
    snprintf(data->path, sizeof data->path, "a temporary file in %s", dir);
    return fd;
}

void feed_data_open(feed_data *data, const char *path, size_t bytes, host_pool *pool)
{
    data->samples = bytes / FEED_SAMPLE_BYTES;
    char size[32];
    format_bytes(data->samples * FEED_SAMPLE_BYTES, size, sizeof size);
    if (path != NULL && reusable(path, data->samples)) {
        snprintf(data->path, sizeof data->path, "%s", path);
        data->fd = open(path, O_RDONLY);
        if (data->fd < 0)
            data_failure("cannot open", path, errno);
        printf("data set: %s, %zu samples (%s), reused\n", data->path, data->samples, size);
        return;
    }
    const double start = host_clock_ms();
    if (path == NULL) {
        data->fd = write_temporary(data, data->samples, pool);
    } else {
        snprintf(data->path, sizeof data->path, "%s", path);
        data->fd = write_named(path, data->samples, pool);
    }
    printf("data set: %s, %zu samples (%s), written in %.2f s\n", data->path, data->samples, size,
           (host_clock_ms() - start) / 1e3);
}

void feed_data_close(feed_data *data)
{
    if (data->fd >= 0)
        close(data->fd);
    data->fd = -1;
}

void feed_data_warm(const feed_data *data, size_t samples, host_pool *pool)
{
    if (samples > data->samples)
        samples = data->samples;
    const int err = file_job_run(pool, data->fd, samples, false);
    if (err != 0)
        data_failure("cannot read", data->path, err);
}

size_t feed_batch_first_sample(const feed_data *data, size_t batch_samples, size_t batch)
{
    const size_t batches_in_file = data->samples / batch_samples;
    return (batch % batches_in_file) * batch_samples;
}

bool feed_read_batch(const feed_data *data, size_t batch_samples, size_t batch,
                     unsigned char *bytes)
{
    const size_t first = feed_batch_first_sample(data, batch_samples, batch);
    return read_all(data->fd, bytes, batch_samples * FEED_SAMPLE_BYTES,
                    (off_t)(first * FEED_SAMPLE_BYTES));
}

/* --- What each batch must sum to ------------------------------------------------------------- */

typedef struct expected_job {
    const feed_data *data;
    size_t batch_samples, distinct; /* batches [0, distinct) are all different */
    unsigned long long *sums;
} expected_job;

/* One part's share of the distinct batches: each sample made from its index, converted, and
 * summed as the GPU's checksum sums the floats it was sent. */
static void expected_part(void *arg, unsigned part, unsigned parts)
{
    const expected_job *job = arg;
    size_t begin, end;
    host_share(job->distinct, 1, part, parts, &begin, &end);
    unsigned char *bytes = alloc_or_fail(FEED_SAMPLE_BYTES);
    float *floats = alloc_or_fail(FEED_SAMPLE_BYTES * sizeof(float));
    for (size_t b = begin; b < end; b++) {
        const size_t first = feed_batch_first_sample(job->data, job->batch_samples, b);
        unsigned long long sum = 0; /* modulo 2^64, as the GPU's: sums of samples add */
        for (size_t s = first; s < first + job->batch_samples; s++) {
            feed_sample_fill(bytes, s);
            feed_convert(floats, bytes, FEED_SAMPLE_BYTES);
            sum += gpu_work_checksum_host(floats, FEED_SAMPLE_BYTES * sizeof(float), 1);
        }
        job->sums[b] = sum;
    }
    free(floats);
    free(bytes);
}

unsigned long long *feed_expected_sums(const feed_data *data, size_t batch_samples, size_t batches,
                                       host_pool *pool)
{
    unsigned long long *sums = alloc_or_fail(batches * sizeof *sums);
    const size_t in_file = data->samples / batch_samples;
    expected_job job = {data, batch_samples, batches < in_file ? batches : in_file, sums};
    host_pool_run(pool, expected_part, &job);
    for (size_t b = job.distinct; b < batches; b++)
        sums[b] = sums[b % in_file]; /* the file read again from its start */
    return sums;
}

/* --- The command line ------------------------------------------------------------------------ */

double feed_parse_ms(const char *text, const char *option, const char *argv0, const char *usage)
{
    char *end;
    errno = 0;
    const double ms = strtod(text, &end);
    if (errno != 0 || end == text || *end != '\0' || !isfinite(ms) || ms < 0 ||
        ms > FEED_MAX_STEP_MS)
        usage_error(argv0, usage, "%s: '%s' is not a number of milliseconds from 0 to %g", option,
                    text, FEED_MAX_STEP_MS);
    return ms;
}

feed_options feed_options_parse(int argc, char **argv, const char *usage, unsigned without,
                                const option_spec *extra, size_t extra_count)
{
    const bool takes_batch = (without & FEED_WITHOUT_BATCH) == 0;
    const bool takes_step_ms = (without & FEED_WITHOUT_STEP_MS) == 0;
    feed_options opt = {.data_path = NULL,
                        .data_bytes = (size_t)192 << 20,
                        .batch_samples = 64,
                        .step_ms = 8,
                        .loaders = 4,
                        .csv_dir = NULL};
    const char *step_text = NULL;
    option_spec specs[6 + FEED_MAX_EXTRA_OPTIONS];
    size_t count = 0;
    specs[count++] = (option_spec){"--data", OPTION_TEXT, &opt.data_path, 0, 0};
    specs[count++] = (option_spec){"--data-size", OPTION_SIZE, &opt.data_bytes, 0, 0};
    if (takes_batch)
        specs[count++] =
            (option_spec){"--batch", OPTION_COUNT, &opt.batch_samples, 1, FEED_MAX_BATCH};
    if (takes_step_ms)
        specs[count++] = (option_spec){"--step-ms", OPTION_TEXT, &step_text, 0, 0};
    specs[count++] = (option_spec){"--loaders", OPTION_COUNT, &opt.loaders, 1, FEED_MAX_LOADERS};
    specs[count++] = (option_spec){"--csv", OPTION_TEXT, &opt.csv_dir, 0, 0};
    for (size_t e = 0; e < extra_count && e < FEED_MAX_EXTRA_OPTIONS; e++)
        specs[count++] = extra[e];
    options_parse(argc, argv, usage, specs, count);
    if (step_text != NULL)
        opt.step_ms = feed_parse_ms(step_text, "--step-ms", argv[0], usage);
    const size_t samples = opt.data_bytes / FEED_SAMPLE_BYTES;
    if (takes_batch && samples < (size_t)opt.batch_samples) {
        char size[32];
        usage_error(argv[0], usage,
                    "--data-size: %s holds %zu samples of %zu bytes, fewer than a batch of %d "
                    "(--batch)",
                    format_bytes(opt.data_bytes, size, sizeof size), samples, FEED_SAMPLE_BYTES,
                    opt.batch_samples);
    }
    return opt;
}

size_t feed_default_batches(const feed_data *data, size_t batch_samples, size_t most)
{
    size_t batches = data->samples / batch_samples;
    if (batches > most)
        batches = most;
    return batches < 2 ? 2 : batches;
}

host_pool *feed_pool_create(void)
{
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    const unsigned threads = cpus < 1 ? 1 : cpus > 16 ? 16 : (unsigned)cpus;
    host_pool *pool = host_pool_create(threads);
    if (pool == NULL) {
        fflush(stdout);
        fprintf(stderr, "feed: cannot start %u threads to write and check the data set\n", threads);
        exit(verdict("no threads for the data set"));
    }
    return pool;
}

size_t feed_prepare_batches(const feed_options *opt, size_t batch_count, size_t most,
                            feed_data *data, unsigned long long **expected)
{
    const size_t batch = (size_t)opt->batch_samples;
    host_pool *pool = feed_pool_create();
    feed_data_open(data, opt->data_path, opt->data_bytes, pool);
    const size_t batches = batch_count > 0 ? batch_count : feed_default_batches(data, batch, most);
    feed_data_warm(data, batches * batch, pool);
    *expected = feed_expected_sums(data, batch, batches, pool);
    host_pool_destroy(pool);
    return batches;
}

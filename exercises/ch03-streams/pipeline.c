/* pipeline.c - copy up, compute, copy back, chunk after chunk over several streams.
 *
 * One stream runs its work in order: a chunk's copy back waits for its
 * kernel, which waits for its copy up. Spread the chunks over several
 * streams and the GPU overlaps them: copies up, kernels and copies back of
 * different chunks at once. Run
 *     make check EX=ch03-streams/pipeline
 * to see how you are doing.
 */
#include "gpu_work.h"
#include "pipeline.h"

cudaError_t pipeline_scale_add(const float *h_in, float *h_out, size_t n, size_t chunk, float a,
                               float b, float *const *d_buffers, int streams)
{
    (void)h_in;
    (void)h_out;
    (void)n;
    (void)chunk;
    (void)a;
    (void)b;
    (void)d_buffers;
    (void)streams;
    /* TODO: create `streams` streams; for each chunk c, on stream c % streams with its buffer
     * d_buffers[c % streams]: cudaMemcpyAsync the chunk up, gpu_work_scale_add in place,
     * cudaMemcpyAsync it back. Only then wait for every stream, destroy them all (on the error
     * paths too), and return the first error. */
    return cudaErrorNotYetImplemented;
}

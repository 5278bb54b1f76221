/* loop_utilisation.c - how busy the GPU is in a loop that loads, then steps.
 *
 * Events stamp the GPU's clock where the GPU gets to them: two around each step tell how long
 * it worked, two around the whole loop how long it could have. Run
 *     make check EX=ch05-training-loop/loop_utilisation
 * to see how you are doing.
 */
#include "loop_utilisation.h"

#include "gpu_work.h"

cudaError_t loop_utilisation(cudaStream_t stream, int steps, double host_ms, double step_ms,
                             double *utilisation)
{
    (void)stream;
    (void)steps;
    (void)host_ms;
    (void)step_ms;
    (void)utilisation;
    /* TODO: create the events; record loop_start; for each step sleep host_ms, record
     * step_start, gpu_work_keep_busy(stream, step_ms), record step_stop, synchronise it and add
     * its elapsed time; record loop_stop, synchronise it, read the loop's time; store the sum
     * over the loop's time; destroy every event, on the error paths too. */
    return cudaErrorNotYetImplemented;
}

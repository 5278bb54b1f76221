/* peer_access.c - enable peer access between every pair of GPUs that can have it.
 *
 * On a machine with one GPU the tests of this exercise do not run: they need two. Run
 *     make check EX=ch06-two-gpus/peer_access
 * on a machine with two or more to see how you are doing.
 */
#include "peer_access.h"

cudaError_t enable_peer_access(int *pairs_enabled)
{
    *pairs_enabled = 0;
    /* TODO: remember the current device (cudaGetDevice); count the devices (cudaGetDeviceCount);
     * for each ordered pair (from, to) with from != to, ask cudaDeviceCanAccessPeer, and where
     * it says yes, make `from` current and call cudaDeviceEnablePeerAccess(to, 0), counting each
     * success; cudaErrorPeerAccessAlreadyEnabled is fine (clear it with cudaGetLastError), any
     * other error stops the loop. Make the remembered device current again on every path, and
     * return the first error. */
    return cudaErrorNotYetImplemented;
}

/* peer_access--pair-index-goto - a correct enable_peer_access written another way: the ordered
 * pairs numbered from * count + to and walked in one loop, a switch on what enabling returned,
 * and the first error jumping to the label that makes the caller's device current again. */
#include "peer_access.h"

cudaError_t enable_peer_access(int *pairs_enabled)
{
    int caller = 0, gpus = 0;
    cudaError_t err;
    *pairs_enabled = 0;
    if ((err = cudaGetDevice(&caller)) != cudaSuccess)
        return err;
    if ((err = cudaGetDeviceCount(&gpus)) != cudaSuccess)
        goto back_to_caller;
    for (int pair = 0; pair < gpus * gpus; pair++) {
        const int from = pair / gpus, to = pair % gpus;
        int able = 0;
        if (from == to)
            continue;
        if ((err = cudaDeviceCanAccessPeer(&able, from, to)) != cudaSuccess)
            goto back_to_caller;
        if (!able)
            continue;
        if ((err = cudaSetDevice(from)) != cudaSuccess)
            goto back_to_caller;
        switch (err = cudaDeviceEnablePeerAccess(to, 0)) {
        case cudaSuccess: ++*pairs_enabled; break;
        case cudaErrorPeerAccessAlreadyEnabled:
            (void)cudaGetLastError(); /* clears what the runtime kept of it */
            err = cudaSuccess;
            break;
        default: goto back_to_caller;
        }
    }
back_to_caller:;
    const cudaError_t restored = cudaSetDevice(caller);
    return err != cudaSuccess ? err : restored;
}

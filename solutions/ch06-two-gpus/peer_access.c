/* peer_access.c - peer access for every pair of GPUs that can have it, enabled once. */
#include "peer_access.h"

/* Enables `from`'s access to `to` if the pair can have it; *enabled says whether this call did. */
static cudaError_t enable_pair(int from, int to, int *enabled)
{
    int can_access = 0;
    *enabled = 0;
    cudaError_t err = cudaDeviceCanAccessPeer(&can_access, from, to);
    if (err != cudaSuccess || !can_access)
        return err;
    err = cudaSetDevice(from); /* access is enabled for the current device */
    if (err == cudaSuccess)
        err = cudaDeviceEnablePeerAccess(to, 0);
    if (err == cudaErrorPeerAccessAlreadyEnabled) {
        (void)cudaGetLastError(); /* expected; the runtime keeps it as the last error too */
        return cudaSuccess;
    }
    *enabled = err == cudaSuccess;
    return err;
}

cudaError_t enable_peer_access(int *pairs_enabled)
{
    *pairs_enabled = 0;
    int current = 0, count = 0;
    cudaError_t err = cudaGetDevice(&current);
    if (err != cudaSuccess)
        return err;
    err = cudaGetDeviceCount(&count);
    for (int from = 0; err == cudaSuccess && from < count; from++) {
        for (int to = 0; err == cudaSuccess && to < count; to++) {
            int enabled = 0;
            if (to != from)
                err = enable_pair(from, to, &enabled);
            *pairs_enabled += enabled;
        }
    }
    /* The caller's device again, on every path. */
    cudaError_t restored = cudaSetDevice(current);
    return err != cudaSuccess ? err : restored;
}

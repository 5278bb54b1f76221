/* peer.c - what chapter 6 needs of the stand-in runtime and the shared one lacks (built in by
 * build.sh with devices.c and multi-device.patch): peer access between the devices, peer
 * copies, and the link between two devices, as the CUDA runtime's reference
 * (https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__PEER.html) and the programming
 * guide ("Multi-Device System": https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html
 * #stream-and-event-behavior, and "Peer-to-Peer Memory Access") say:
 *
 *   - cudaDeviceCanAccessPeer(&can, a, b): 1 for two different devices, 0 for a device and
 *     itself, and 0 for every pair with FAKE_CUDA_PEER=none (a machine whose GPUs' PCIe paths
 *     meet only across CPU sockets, say);
 *   - cudaDeviceEnablePeerAccess(peer, flags), from the current device: flags other than 0,
 *     cudaErrorInvalidValue; the device itself or no device, cudaErrorInvalidDevice; a pair that
 *     cannot, cudaErrorPeerAccessUnsupported (what real GPUs that cannot answer: "CUDA error
 *     217 ... peer access is not supported between these two devices", ggml-org/llama.cpp issue
 *     3230; the reference's text still says cudaErrorInvalidDevice); a second time,
 *     cudaErrorPeerAccessAlreadyEnabled, which is also
 *     left as the thread's last error. Access is one way: enabling 0 -> 1 lets device 0's
 *     kernels reach device 1's memory, not the other way round;
 *   - cudaDeviceDisablePeerAccess(peer): not enabled, cudaErrorPeerAccessNotEnabled;
 *   - cudaMemcpyPeer / cudaMemcpyPeerAsync: dst must be device memory of dstDevice and src of
 *     srcDevice, count bytes of it (the reference lists cudaErrorInvalidValue and says no more;
 *     the stand-in's choice: cudaErrorInvalidValue), with or without peer access: without it
 *     the driver stages the copy through host memory, slower. cudaMemcpyPeer returns at once,
 *     "serialized with respect to all pending and future asynchronous work" of the current
 *     device and both ends', as a cudaMemcpy between two devices is (fc_enqueue_between).
 *
 * The link model (streams.c has the host's): a copy between two devices crosses a PCIe-class
 * link, as fast as the host's (FAKE_CUDA_LINK_GBPS, 6 GB/s) unless FAKE_CUDA_PEER_GBPS says
 * otherwise, with the same fixed cost per copy, when the device that runs it (its stream's)
 * may reach both ends; staged by the driver through the host it crosses PCIe twice, down and
 * up, so it takes twice that. It keeps the source device's outbound copy engine and the
 * destination's inbound one, so a copy each way between two devices, or copies between two
 * other pairs, run side by side. A kernel that reads or writes a peer's memory takes at least
 * the direct time for the bytes it names there (kernels.c).
 */
#include "fakecuda.h"

#include <string.h>

/* Peer access enabled, [from][to]; under fc_lock. */
static bool enabled[FC_MAX_DEVICES][FC_MAX_DEVICES];

static bool known_device(int device)
{
    return device >= 0 && device < fc_device_count();
}

/* Whether the pair could have peer access: two devices of a machine whose GPUs reach each
 * other (not FAKE_CUDA_PEER=none). */
static bool peer_capable(int device, int peer)
{
    static int connected = -1;
    if (connected < 0) {
        const char *setting = getenv("FAKE_CUDA_PEER");
        connected = setting == NULL || strcmp(setting, "none") != 0;
    }
    return device != peer && connected;
}

bool fc_device_reaches(int from, int to)
{
    return from == to || enabled[from][to];
}

void fc_peer_enable_lazily(int from, int to)
{
    if (peer_capable(from, to))
        enabled[from][to] = true;
}

void fc_peer_forget(int device)
{
    for (int other = 0; other < FC_MAX_DEVICES; other++)
        enabled[device][other] = enabled[other][device] = false;
}

double fc_peer_ms(size_t bytes, bool direct)
{
    static double peer_gbps = -1; /* 0: as fast as the host's link */
    if (peer_gbps < 0)
        peer_gbps = fc_setting("FAKE_CUDA_PEER_GBPS", 0, 1e6);
    const double crossing = peer_gbps > 0 ? fc_link_ms(0, false) + (double)bytes / (peer_gbps * 1e6)
                                          : fc_link_ms(bytes, false);
    return direct ? crossing : 2 * crossing;
}

uint64_t fc_enqueue_between(fc_stream *s, const fc_op *op, int device_a, int device_b)
{
    const int own = fc_stream_device(s);
    const int others[2] = {device_a, device_b == device_a ? -1 : device_b};
    if (!fc_stream_is_legacy(s))
        return fc_enqueue(s, op);
    /* Before it: a mark on each other device's legacy default stream, which waits for what
     * that device has queued, the marks and the copy one after the other. */
    const fc_op mark = {.kind = OP_WAIT};
    fc_stream *previous = NULL;
    uint64_t seq = 0;
    for (int i = 0; i < 2; i++) {
        if (others[i] < 0 || others[i] == own)
            continue;
        fc_stream *legacy = fc_legacy_stream(others[i]);
        if ((seq = fc_enqueue_after(legacy, &mark, previous, seq)) == 0)
            return 0;
        previous = legacy;
    }
    const uint64_t copy = fc_enqueue_after(s, op, previous, seq);
    /* After it: a mark that waits for the copy on each, which their later work waits for. */
    for (int i = 0; copy != 0 && i < 2; i++)
        if (others[i] >= 0 && others[i] != own &&
            fc_enqueue_after(fc_legacy_stream(others[i]), &mark, s, copy) == 0)
            return 0;
    return copy;
}

API cudaError_t cudaDeviceCanAccessPeer(int *canAccessPeer, int device, int peerDevice)
{
    cudaError_t err = fc_enter();
    if (err != cudaSuccess)
        return fc_ret(err);
    if (canAccessPeer == NULL)
        return fc_ret(cudaErrorInvalidValue);
    if (!known_device(device) || !known_device(peerDevice))
        return fc_ret(cudaErrorInvalidDevice);
    *canAccessPeer = peer_capable(device, peerDevice);
    return cudaSuccess;
}

/* What enabling (or disabling) access from the current device to peerDevice may not do. */
static cudaError_t peer_change_refused(int peerDevice, unsigned int flags)
{
    cudaError_t err = fc_enter();
    if (err != cudaSuccess)
        return err;
    if (flags != 0)
        return cudaErrorInvalidValue;
    return known_device(peerDevice) && peerDevice != fc_current_device() ? cudaSuccess
                                                                         : cudaErrorInvalidDevice;
}

API cudaError_t cudaDeviceEnablePeerAccess(int peerDevice, unsigned int flags)
{
    cudaError_t err = peer_change_refused(peerDevice, flags);
    if (err != cudaSuccess)
        return fc_ret(err);
    const int device = fc_current_device();
    pthread_mutex_lock(&fc_lock);
    bool *access = &enabled[device][peerDevice];
    err = !peer_capable(device, peerDevice) ? cudaErrorPeerAccessUnsupported
          : *access                         ? cudaErrorPeerAccessAlreadyEnabled
                                            : cudaSuccess;
    *access = *access || err == cudaSuccess;
    pthread_mutex_unlock(&fc_lock);
    FC_LOG("cudaDeviceEnablePeerAccess %d -> %d: %d\n", device, peerDevice, (int)err);
    return fc_ret(err);
}

API cudaError_t cudaDeviceDisablePeerAccess(int peerDevice)
{
    cudaError_t err = peer_change_refused(peerDevice, 0);
    if (err != cudaSuccess)
        return fc_ret(err);
    pthread_mutex_lock(&fc_lock);
    bool *access = &enabled[fc_current_device()][peerDevice];
    err = *access ? cudaSuccess : cudaErrorPeerAccessNotEnabled;
    *access = false;
    pthread_mutex_unlock(&fc_lock);
    return fc_ret(err);
}

/* count bytes at p: device memory of `device`? With fc_lock held. */
static bool memory_of(const void *p, size_t count, int device)
{
    const allocation *a = p != NULL ? fc_find_range(p, count) : NULL;
    return a != NULL && a->kind == MEM_DEVICE && a->device == device;
}

/* The checks of a peer copy; the copy itself is the stand-in's copy between device memory,
 * which says how long it takes and orders it. */
static cudaError_t peer_endpoints(void *dst, int dstDevice, const void *src, int srcDevice,
                                  size_t count)
{
    cudaError_t err = fc_enter();
    if (err != cudaSuccess)
        return err;
    if (!known_device(dstDevice) || !known_device(srcDevice))
        return cudaErrorInvalidDevice;
    if (count == 0)
        return cudaSuccess;
    pthread_mutex_lock(&fc_lock);
    const bool ends = memory_of(dst, count, dstDevice) && memory_of(src, count, srcDevice);
    pthread_mutex_unlock(&fc_lock);
    return ends ? cudaSuccess : cudaErrorInvalidValue;
}

API cudaError_t cudaMemcpyPeer(void *dst, int dstDevice, const void *src, int srcDevice,
                               size_t count)
{
    cudaError_t err = peer_endpoints(dst, dstDevice, src, srcDevice, count);
    if (err != cudaSuccess)
        return fc_ret(err);
    return count == 0 ? cudaSuccess : cudaMemcpy(dst, src, count, cudaMemcpyDeviceToDevice);
}

API cudaError_t cudaMemcpyPeerAsync(void *dst, int dstDevice, const void *src, int srcDevice,
                                    size_t count, cudaStream_t stream)
{
    cudaError_t err = peer_endpoints(dst, dstDevice, src, srcDevice, count);
    if (err != cudaSuccess)
        return fc_ret(err);
    return count == 0 ? cudaSuccess
                      : cudaMemcpyAsync(dst, src, count, cudaMemcpyDeviceToDevice, stream);
}

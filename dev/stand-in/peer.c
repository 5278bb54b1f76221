/* peer.c - what chapter 6 needs of the stand-in runtime and the shared one lacks (built in by
 * build.sh): peer access and peer copies. The stand-in has one device, so it answers as the
 * real runtime does on a machine with one GPU: no device can access a peer (device 0 is not
 * its own peer), enabling or disabling peer access to the current device itself is
 * cudaErrorInvalidDevice, and a peer copy from device 0 to device 0 is a device-to-device
 * copy. Any other device number is cudaErrorInvalidDevice. */
#include "fakecuda.h"

/* The stand-in's only device; any other is none. */
static cudaError_t known_device(int device)
{
    return device == 0 ? cudaSuccess : cudaErrorInvalidDevice;
}

API cudaError_t cudaDeviceCanAccessPeer(int *canAccessPeer, int device, int peerDevice)
{
    cudaError_t err = fc_enter();
    if (err != cudaSuccess)
        return fc_ret(err);
    if (canAccessPeer == NULL)
        return fc_ret(cudaErrorInvalidValue);
    if ((err = known_device(device)) != cudaSuccess ||
        (err = known_device(peerDevice)) != cudaSuccess)
        return fc_ret(err);
    *canAccessPeer = 0; /* a device is never its own peer */
    return cudaSuccess;
}

/* The current device is 0, the only one, so its only candidate peer is itself: refused. */
API cudaError_t cudaDeviceEnablePeerAccess(int peerDevice, unsigned int flags)
{
    cudaError_t err = fc_enter();
    if (err != cudaSuccess)
        return fc_ret(err);
    if (flags != 0)
        return fc_ret(cudaErrorInvalidValue);
    (void)peerDevice;
    return fc_ret(cudaErrorInvalidDevice);
}

API cudaError_t cudaDeviceDisablePeerAccess(int peerDevice)
{
    cudaError_t err = fc_enter();
    if (err != cudaSuccess)
        return fc_ret(err);
    (void)peerDevice;
    return fc_ret(cudaErrorInvalidDevice);
}

/* Both ends must be device memory of the named devices: here, allocations of device 0. The
 * copy itself is the stand-in's device-to-device copy, with its checks and pacing. */
static cudaError_t peer_endpoints(void *dst, int dstDevice, const void *src, int srcDevice,
                                  size_t count)
{
    cudaError_t err = fc_enter();
    if (err != cudaSuccess)
        return err;
    if ((err = known_device(dstDevice)) != cudaSuccess ||
        (err = known_device(srcDevice)) != cudaSuccess)
        return err;
    if (count == 0)
        return cudaSuccess;
    pthread_mutex_lock(&fc_lock);
    const allocation *to = fc_find_range(dst, count), *from = fc_find_range(src, count);
    bool device_memory =
        to != NULL && from != NULL && to->kind == MEM_DEVICE && from->kind == MEM_DEVICE;
    pthread_mutex_unlock(&fc_lock);
    return device_memory ? cudaSuccess : cudaErrorInvalidValue;
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

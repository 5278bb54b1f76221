/* worker_wrappers_gpus.c - the link-time wrappers for the calls about several GPUs (chapter 6):
 * which one is current, peer access between them, and the copies from one to another. Each
 * records the devices it names (traced_call.devices), as BEGIN records the current one.
 */
#include "worker.h"
#include "wrappers.h"

#include <string.h>

DECLARE_REAL(cudaError_t, cudaSetDevice, (int))
cudaError_t __wrap_cudaSetDevice(int device)
{
    BEGIN(cudaSetDevice);
    call.devices[0] = device;
    FINISH(__real_cudaSetDevice(device));
}

DECLARE_REAL(cudaError_t, cudaDeviceCanAccessPeer, (int *, int, int))
cudaError_t __wrap_cudaDeviceCanAccessPeer(int *can_access, int device, int peer)
{
    BEGIN(cudaDeviceCanAccessPeer);
    call.devices[0] = device;
    call.devices[1] = peer;
    if (!fail) {
        error = __real_cudaDeviceCanAccessPeer(can_access, device, peer);
        if (error == cudaSuccess && can_access != NULL && trace_delay.peers_unreachable)
            *can_access = 0; /* trace_deny_peer_access: as on a machine whose GPUs cannot */
    }
    FINISH(error);
}

DECLARE_REAL(cudaError_t, cudaDeviceEnablePeerAccess, (int, unsigned int))
cudaError_t __wrap_cudaDeviceEnablePeerAccess(int peer, unsigned int flags)
{
    BEGIN(cudaDeviceEnablePeerAccess);
    call.devices[0] = peer;
    call.flags = flags;
    FINISH(__real_cudaDeviceEnablePeerAccess(peer, flags));
}

DECLARE_REAL(cudaError_t, cudaDeviceDisablePeerAccess, (int))
cudaError_t __wrap_cudaDeviceDisablePeerAccess(int peer)
{
    BEGIN(cudaDeviceDisablePeerAccess);
    call.devices[0] = peer;
    FINISH(__real_cudaDeviceDisablePeerAccess(peer));
}

DECLARE_REAL(cudaError_t, cudaMemcpyPeer, (void *, int, const void *, int, size_t))
cudaError_t __wrap_cudaMemcpyPeer(void *dst, int dst_device, const void *src, int src_device,
                                  size_t bytes)
{
    BEGIN(cudaMemcpyPeer);
    locate_ends(&call, tracing, dst, src, bytes);
    call.devices[0] = dst_device;
    call.devices[1] = src_device;
    FINISH(__real_cudaMemcpyPeer(dst, dst_device, src, src_device, bytes));
}

DECLARE_REAL(cudaError_t, cudaMemcpyPeerAsync,
             (void *, int, const void *, int, size_t, cudaStream_t))
cudaError_t __wrap_cudaMemcpyPeerAsync(void *dst, int dst_device, const void *src, int src_device,
                                       size_t bytes, cudaStream_t stream)
{
    BEGIN(cudaMemcpyPeerAsync);
    locate_ends(&call, tracing, dst, src, bytes);
    call.devices[0] = dst_device;
    call.devices[1] = src_device;
    call.stream = stream;
    if (!fail)
        trace_delay_copy(&call); /* trace_delay_async_copies holds peer copies up too */
    FINISH(__real_cudaMemcpyPeerAsync(dst, dst_device, src, src_device, bytes, stream));
}

/* peer_access.h - Exercise: let each GPU reach the others' memory, once, and only where it can.
 *
 * enable_peer_access gives every GPU that can have peer access to another GPU that access: for
 * each ordered pair of different devices (from, to) of the cudaGetDeviceCount the program sees,
 *
 *     ask whether `from` can reach `to`      cudaDeviceCanAccessPeer(&can, from, to)
 *     only if it can: make `from` current    cudaSetDevice(from)
 *     and enable its access to `to`          cudaDeviceEnablePeerAccess(to, 0)
 *
 * Access has a direction, and is enabled for the current device: (0, 1) and (1, 0) are two
 * pairs, each enabled with its own `from` current. A pair that cannot have access (GPUs whose
 * PCIe paths meet only across CPU sockets, say) is left alone: enabling it would fail.
 *
 * Calling it again must do no harm. A pair already enabled (by an earlier call, or by the
 * caller) makes cudaDeviceEnablePeerAccess return cudaErrorPeerAccessAlreadyEnabled: that is not
 * an error here, but the runtime also keeps it as the thread's last error, so clear it with
 * cudaGetLastError before going on; otherwise the caller's next cudaGetLastError (after a kernel
 * launch, say) would report it.
 *
 * The device that was current when the function was called is current again when it returns,
 * on every path: the caller's next cudaMalloc must land where the caller expects.
 *
 * *pairs_enabled receives how many pairs this call enabled (pairs already enabled are not
 * counted); it is set on error too, to the pairs enabled before the error. Returns cudaSuccess
 * or the first error, at which it stops (cudaErrorPeerAccessAlreadyEnabled aside).
 */
#ifndef PEER_ACCESS_H
#define PEER_ACCESS_H

#include <cuda_runtime_api.h>

cudaError_t enable_peer_access(int *pairs_enabled);

#endif

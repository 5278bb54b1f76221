/* multi_device_queues.c - the stand-in's device check (multi_device_check.c says how it runs):
 * streams, events and kernels on either device, copies between and within devices, what the
 * link's model makes them take, CUDA IPC across devices, and cudaDeviceReset. */
#include "multi_device_check.h"

#include <stdlib.h>
#include <string.h>

/* --- Streams, events, kernels ---------------------------------------------------------------- */

void streams_and_events(void)
{
    cudaStream_t s0, s1;
    cudaEvent_t e0, e1;
    int device = -1;
    float ms;
    cudaError_t e;
    cudaSetDevice(1);
    cudaStreamCreate(&s1);
    cudaEventCreate(&e1);
    cudaSetDevice(0);
    cudaStreamCreate(&s0);
    cudaEventCreate(&e0);
    EXPECT(cudaStreamGetDevice(s1, &device) == cudaSuccess && device == 1,
           "a stream made with device 1 current is device 1's");
    EXPECT((e = cudaEventRecord(e0, s1)) == cudaErrorInvalidResourceHandle,
           "recording device 0's event on device 1's stream -> %s", NAME(e));
    EXPECT(cudaGetLastError() == cudaErrorInvalidResourceHandle &&
               cudaGetLastError() == cudaSuccess,
           "... which is the thread's last error once, not sticky");
    EXPECT(cudaEventRecord(e1, s1) == cudaSuccess && cudaEventRecord(e0, s0) == cudaSuccess,
           "each device's event on its own stream, from device 0");
    EXPECT(cudaStreamWaitEvent(s0, e1, 0) == cudaSuccess &&
               cudaEventSynchronize(e1) == cudaSuccess && cudaEventQuery(e1) == cudaSuccess,
           "cudaStreamWaitEvent, cudaEventSynchronize, cudaEventQuery across devices");
    cudaDeviceSynchronize();
    EXPECT((e = cudaEventElapsedTime(&ms, e0, e1)) == cudaErrorInvalidResourceHandle,
           "cudaEventElapsedTime between two devices' events -> %s", NAME(e));
    float *d = NULL;
    cudaMalloc((void **)&d, 4096);
    EXPECT((e = gpu_work_scale_add(s1, d, d, 1024, 1, 0)) == cudaErrorInvalidResourceHandle,
           "a kernel launched on device 1's stream, device 0 current -> %s", NAME(e));
    (void)cudaGetLastError();
    EXPECT(gpu_work_scale_add(s0, d, d, 1024, 1, 0) == cudaSuccess &&
               cudaDeviceSynchronize() == cudaSuccess,
           "... not sticky: the next launch, on device 0's, runs");
    EXPECT(cudaStreamGetDevice(cudaStreamPerThread, &device) == cudaSuccess && device == 0 &&
               cudaSetDevice(1) == cudaSuccess &&
               cudaStreamGetDevice(cudaStreamPerThread, &device) == cudaSuccess && device == 1,
           "cudaStreamPerThread is the thread's stream on the current device");
    cudaStreamDestroy(s1);
    cudaEventDestroy(e1);
    cudaSetDevice(0);
    cudaFree(d);
    cudaStreamDestroy(s0);
    cudaEventDestroy(e0);
}

/* cudaDeviceSynchronize waits for the current device's work; each device has its own legacy
 * default stream, which does not wait for another device's. */
void synchronisation(void)
{
    void *d0 = NULL;
    cudaMalloc(&d0, 4096);
    cudaSetDevice(1);
    double start = host_clock_ms();
    gpu_work_keep_busy(0, 300); /* device 1's legacy default stream */
    cudaSetDevice(0);
    cudaMemset(d0, 1, 4096);
    EXPECT(cudaStreamSynchronize(0) == cudaSuccess && cudaDeviceSynchronize() == cudaSuccess &&
               host_clock_ms() - start < 150,
           "device 0's legacy stream and cudaDeviceSynchronize do not wait for device 1's kernel "
           "(%.0f ms)",
           host_clock_ms() - start);
    cudaSetDevice(1);
    EXPECT(cudaDeviceSynchronize() == cudaSuccess && host_clock_ms() - start >= 290,
           "device 1's cudaDeviceSynchronize does (%.0f ms)", host_clock_ms() - start);
    cudaSetDevice(0);
    cudaFree(d0);
}

/* --- Copies ---------------------------------------------------------------------------------- */

static bool all_bytes(const unsigned char *p, size_t n, unsigned char value)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != value)
            return false;
    return true;
}

/* d1's bytes, read on device 1, all `value`? */
static bool device1_holds(const unsigned char *d1, unsigned char *h, unsigned char value)
{
    memset(h, 0, 4096);
    cudaSetDevice(1);
    bool read = cudaMemcpy(h, d1, 4096, cudaMemcpyDeviceToHost) == cudaSuccess;
    cudaSetDevice(0);
    return read && all_bytes(h, 4096, value);
}

void peer_copies(void)
{
    unsigned char *d0 = NULL, *d1 = NULL, h[4096];
    cudaStream_t s0;
    cudaError_t e;
    cudaMalloc((void **)&d0, 4096);
    cudaStreamCreate(&s0);
    cudaSetDevice(1);
    cudaMalloc((void **)&d1, 4096);
    cudaSetDevice(0);
    cudaMemset(d0, 0x11, 4096);
    EXPECT(cudaMemcpyPeer(d1, 1, d0, 0, 4096) == cudaSuccess && device1_holds(d1, h, 0x11),
           "cudaMemcpyPeer 0 -> 1 without peer access");
    cudaDeviceEnablePeerAccess(1, 0);
    cudaMemset(d0, 0x22, 4096);
    EXPECT(cudaMemcpyPeerAsync(d1, 1, d0, 0, 4096, s0) == cudaSuccess &&
               cudaStreamSynchronize(s0) == cudaSuccess && device1_holds(d1, h, 0x22),
           "cudaMemcpyPeerAsync 0 -> 1 with it");
    cudaDeviceDisablePeerAccess(1);
    cudaMemset(d0, 0x33, 4096);
    EXPECT(cudaMemcpy(d1, d0, 4096, cudaMemcpyDefault) == cudaSuccess && device1_holds(d1, h, 0x33),
           "cudaMemcpy between two devices, cudaMemcpyDefault (unified addressing)");
    cudaMemset(d0, 0x44, 4096);
    EXPECT(cudaMemcpyAsync(d1, d0, 4096, cudaMemcpyDeviceToDevice, s0) == cudaSuccess &&
               cudaStreamSynchronize(s0) == cudaSuccess && device1_holds(d1, h, 0x44),
           "cudaMemcpyAsync between two devices, cudaMemcpyDeviceToDevice");
    EXPECT((e = cudaMemcpyPeer(d1, 0, d0, 0, 4096)) == cudaErrorInvalidValue,
           "(stand-in) cudaMemcpyPeer naming device 0 for device 1's memory -> %s", NAME(e));
    EXPECT((e = cudaMemcpyPeer(d1, 1, d0, 0, 4097)) == cudaErrorInvalidValue,
           "... a count past the allocation -> %s", NAME(e));
    EXPECT((e = cudaMemcpyPeer(d1, 2, d0, 0, 4096)) == cudaErrorInvalidDevice, "... device 2 -> %s",
           NAME(e));
    (void)cudaGetLastError();
    /* Ordered with both devices: after device 1's memset, queued behind its kernel before the
     * copy, and before device 1's later work. */
    cudaSetDevice(1);
    gpu_work_keep_busy(0, 100);
    cudaMemsetAsync(d1, 0x66, 4096, 0);
    cudaSetDevice(0);
    cudaMemset(d0, 0x55, 4096);
    double start = host_clock_ms();
    e = cudaMemcpyPeer(d1, 1, d0, 0, 4096);
    const double returned = host_clock_ms() - start;
    EXPECT(e == cudaSuccess && returned < 50 && device1_holds(d1, h, 0x55),
           "cudaMemcpyPeer returns at once (%.1f ms), after device 1's earlier work, before its "
           "later reads",
           returned);
    cudaStreamDestroy(s0);
    cudaFree(d0);
    cudaSetDevice(1);
    cudaFree(d1);
    cudaSetDevice(0);
}

/* --- Timing ---------------------------------------------------------------------------------- */

typedef struct copy_job {
    int device; /* current, and its stream's */
    void *dst;
    const void *src;
    enum cudaMemcpyKind kind;
    cudaStream_t stream;
} copy_job;

/* Queues each job, then waits for them all; milliseconds. */
static double time_copies(copy_job *jobs, int count)
{
    double start = host_clock_ms();
    for (int i = 0; i < count; i++) {
        cudaSetDevice(jobs[i].device);
        cudaMemcpyAsync(jobs[i].dst, jobs[i].src, BYTES, jobs[i].kind, jobs[i].stream);
    }
    for (int i = 0; i < count; i++)
        cudaStreamSynchronize(jobs[i].stream);
    cudaSetDevice(0);
    return host_clock_ms() - start;
}

/* Each device has its own copy engines; a copy between devices keeps the source's outbound and
 * the destination's inbound engine; the peer link runs as fast as the host's with access,
 * half as fast staged. */
void timing(void)
{
    void *h[2], *d[2][2];
    cudaStream_t s[2];
    for (int dev = 0; dev < 2; dev++) {
        cudaMallocHost(&h[dev], BYTES);
        cudaSetDevice(dev);
        cudaStreamCreate(&s[dev]);
        cudaMalloc(&d[dev][0], BYTES);
        cudaMalloc(&d[dev][1], BYTES);
        cudaMemset(d[dev][0], 1, BYTES);
        cudaMemset(d[dev][1], 1, BYTES);
        cudaDeviceSynchronize();
    }
    copy_job up0 = {0, d[0][0], h[0], cudaMemcpyHostToDevice, s[0]};
    copy_job up1 = {1, d[1][0], h[1], cudaMemcpyHostToDevice, s[1]};
    copy_job there = {0, d[1][1], d[0][1], cudaMemcpyDeviceToDevice, s[0]};
    copy_job back = {1, d[0][1], d[1][1], cudaMemcpyDeviceToDevice, s[1]};
    const double one = time_copies(&up0, 1);
    copy_job ups[2] = {up0, up1}, both[2] = {there, back};
    const double two_ups = time_copies(ups, 2);
    EXPECT(two_ups < 1.5 * one, "copies to two devices run side by side: %.1f ms, one %.1f ms",
           two_ups, one);
    const double staged = time_copies(&there, 1);
    cudaDeviceEnablePeerAccess(1, 0);
    cudaSetDevice(1);
    cudaDeviceEnablePeerAccess(0, 0);
    const double direct = time_copies(&there, 1);
    EXPECT(direct >= 32 && direct < 1.3 * one,
           "a peer copy with access: %.1f ms, as the host's link (%.1f ms)", direct, one);
    EXPECT(staged > 1.7 * direct && staged < 2.5 * direct,
           "(stand-in) staged through the host without it: %.1f ms, twice", staged);
    const double two_ways = time_copies(both, 2);
    EXPECT(two_ways < 1.5 * direct, "0 -> 1 and 1 -> 0 at once run side by side: %.1f ms",
           two_ways);
    for (int dev = 0; dev < 2; dev++) {
        cudaSetDevice(dev);
        cudaStreamDestroy(s[dev]);
        cudaFree(d[dev][0]);
        cudaFree(d[dev][1]);
        cudaFreeHost(h[dev]);
    }
    cudaSetDevice(0);
}

/* --- IPC and reset --------------------------------------------------------------------------- */

/* `ipc-open HANDLE`: the other process opens device 1's memory, which holds 0x77. */
int ipc_open_scenario(const char *hex)
{
    cudaIpcMemHandle_t handle;
    unsigned char *p = NULL, h[4096];
    struct cudaPointerAttributes attr;
    for (size_t i = 0; i < sizeof handle.reserved; i++) {
        unsigned byte = 0;
        sscanf(hex + 2 * i, "%2x", &byte);
        handle.reserved[i] = (char)byte;
    }
    cudaError_t e = cudaIpcOpenMemHandle((void **)&p, handle, cudaIpcMemLazyEnablePeerAccess);
    EXPECT(e == cudaSuccess, "(other process) cudaIpcOpenMemHandle of device 1's memory: %s",
           NAME(e));
    EXPECT(cudaPointerGetAttributes(&attr, p) == cudaSuccess && attr.type == cudaMemoryTypeDevice &&
               attr.device == 1,
           "(other process) ... device memory of device 1: type %d, device %d", attr.type,
           attr.device);
    EXPECT(cudaMemcpy(h, p, sizeof h, cudaMemcpyDeviceToHost) == cudaSuccess &&
               all_bytes(h, sizeof h, 0x77),
           "(other process) ... it reads what the creator wrote");
    cudaIpcCloseMemHandle(p);
    return failures != 0;
}

void ipc(void)
{
    unsigned char *d1 = NULL;
    cudaIpcMemHandle_t handle;
    char hex[2 * sizeof handle.reserved + 1];
    cudaSetDevice(1);
    cudaMalloc((void **)&d1, 4096);
    cudaMemset(d1, 0x77, 4096);
    EXPECT(cudaIpcGetMemHandle(&handle, d1) == cudaSuccess, "cudaIpcGetMemHandle of device 1's");
    for (size_t i = 0; i < sizeof handle.reserved; i++)
        sprintf(hex + 2 * i, "%02x", (unsigned char)handle.reserved[i]);
    EXPECT(run_scenario(TWO_DEVICES, "ipc-open", hex, NULL, NULL),
           "another process opened and read it");
    cudaFree(d1);
    cudaSetDevice(0);
}

/* cudaDeviceReset drops the current device's allocations and peer access, not another's. */
void reset(void)
{
    void *d0 = NULL, *d1 = NULL;
    struct cudaPointerAttributes attr0, attr1;
    int can = 0;
    cudaMalloc(&d0, 4096);
    cudaSetDevice(1);
    cudaMalloc(&d1, 4096);
    cudaDeviceEnablePeerAccess(0, 0);
    cudaDeviceCanAccessPeer(&can, 1, 0);
    EXPECT(cudaDeviceReset() == cudaSuccess &&
               cudaPointerGetAttributes(&attr1, d1) == cudaSuccess &&
               attr1.type == cudaMemoryTypeUnregistered &&
               cudaPointerGetAttributes(&attr0, d0) == cudaSuccess &&
               attr0.type == cudaMemoryTypeDevice,
           "cudaDeviceReset on device 1 frees its memory, not device 0's");
    EXPECT(can == 1 && cudaDeviceEnablePeerAccess(0, 0) == cudaSuccess,
           "... and forgets its peer access");
    cudaSetDevice(0);
    cudaFree(d0);
}


/* multi_device_check.c - checks the stand-in runtime's devices (dev/stand-in/build.sh: devices.c,
 * peer.c, multi-device.patch): what FAKE_CUDA_DEVICES=2 models, and that the default is still
 * the one device the rest of the course knows.
 *
 *     dev/stand-in/check.sh PREFIX      (builds it against PREFIX and build/lib/libcommon.a)
 *
 * Each check is in a scenario that runs as a process of its own (this program again, fork +
 * exec, `multi_device_check SCENARIO [ARG...]`) with the environment it needs, since the runtime
 * reads FAKE_CUDA_DEVICES and CUDA_VISIBLE_DEVICES once and a kernel's fault poisons the
 * process for good. Each line says ok or FAIL and what was checked; the last PASSED or FAILED
 * (exit 1). The lines marked (stand-in) are the stand-in's own choices, not the real runtime's.
 */
#include "multi_device_check.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int failures;

/* What the scenarios set; each starts without them but for its own. */
static const char *const settings_read[] = {"FAKE_CUDA_DEVICES",   "CUDA_VISIBLE_DEVICES",
                                            "FAKE_CUDA_PEER",      "FAKE_CUDA_MEM_MB",
                                            "FAKE_CUDA_LINK_GBPS", "FAKE_CUDA_PEER_GBPS"};

bool run_scenario(const char *env, const char *scenario, const char *arg, const char *arg2,
                  FILE *errors)
{
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        for (size_t i = 0; i < sizeof settings_read / sizeof settings_read[0]; i++)
            unsetenv(settings_read[i]);
        char settings[256];
        snprintf(settings, sizeof settings, "%s", env);
        for (char *save = NULL, *s = strtok_r(settings, " ", &save); s;
             s = strtok_r(NULL, " ", &save))
            putenv(strdup(s));
        if (errors != NULL)
            dup2(fileno(errors), STDERR_FILENO);
        execl("/proc/self/exe", "multi_device_check", scenario, arg, arg2, (char *)NULL);
        _exit(127);
    }
    int status = 0;
    return pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
           WEXITSTATUS(status) == 0;
}

/* --- Devices and their properties ------------------------------------------------------------ */

static int pci_bus_of(int device)
{
    struct cudaDeviceProp prop;
    return cudaGetDeviceProperties(&prop, device) == cudaSuccess ? prop.pciBusID : -1;
}

/* `count EXPECTED BUS0`: cudaGetDeviceCount gives EXPECTED, and device 0 is the machine's device
 * on PCI bus BUS0 (hex), as CUDA_VISIBLE_DEVICES renumbers them. */
static void count_scenario(int expected, int bus0)
{
    int count = -1;
    cudaError_t e = cudaGetDeviceCount(&count);
    const char *visible = getenv("CUDA_VISIBLE_DEVICES");
    EXPECT((expected == 0 ? e == cudaErrorNoDevice : e == cudaSuccess) && count == expected,
           "FAKE_CUDA_DEVICES=%s CUDA_VISIBLE_DEVICES=%s%s%s: %d device(s) (%s)",
           getenv("FAKE_CUDA_DEVICES") ? getenv("FAKE_CUDA_DEVICES") : "(unset)",
           visible ? "\"" : "", visible ? visible : "(unset)", visible ? "\"" : "", count, NAME(e));
    if (expected > 0)
        EXPECT(pci_bus_of(0) == bus0, "... its device 0 is the machine's on bus %#x: %#x", bus0,
               pci_bus_of(0));
}

/* A device's UUID as CUDA_VISIBLE_DEVICES takes it: "GPU-" and hex. */
static void uuid_text(int device, char *text, size_t size)
{
    struct cudaDeviceProp prop;
    cudaGetDeviceProperties(&prop, device);
    const unsigned char *b = (const unsigned char *)prop.uuid.bytes;
    snprintf(text, size, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
             b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
             b[14], b[15]);
}

/* CUDA_VISIBLE_DEVICES over two devices (buses 0x1b and 0x3b); FAKE_CUDA_DEVICES's range. */
static void visibility(void)
{
    static const struct {
        const char *env;
        int count, bus0;
    } cases[] = {
        {"FAKE_CUDA_DEVICES=2", 2, 0x1b},
        {"FAKE_CUDA_DEVICES=8", 8, 0x1b},
        {"FAKE_CUDA_DEVICES=2 CUDA_VISIBLE_DEVICES=1", 1, 0x3b},
        {"FAKE_CUDA_DEVICES=2 CUDA_VISIBLE_DEVICES=0,1", 2, 0x1b},
        {"FAKE_CUDA_DEVICES=2 CUDA_VISIBLE_DEVICES=1,0", 2, 0x3b},
        {"FAKE_CUDA_DEVICES=2 CUDA_VISIBLE_DEVICES=", 0, 0},
        {"FAKE_CUDA_DEVICES=2 CUDA_VISIBLE_DEVICES=none", 0, 0},
        {"FAKE_CUDA_DEVICES=2 CUDA_VISIBLE_DEVICES=-1", 0, 0},
        {"FAKE_CUDA_DEVICES=2 CUDA_VISIBLE_DEVICES=0,2,1", 1, 0x1b}, /* 2: none, ends the list */
        {"FAKE_CUDA_DEVICES=2 CUDA_VISIBLE_DEVICES=1,-1,0", 1, 0x3b},
        {"FAKE_CUDA_DEVICES=2 CUDA_VISIBLE_DEVICES=1,1", 1, 0x3b}, /* (stand-in) a repeat ends it */
        {"FAKE_CUDA_DEVICES=2 CUDA_VISIBLE_DEVICES=MIG-1", 0, 0},  /* (stand-in) no MIG */
        {"CUDA_VISIBLE_DEVICES=0", 1, 0x1b},
        {"CUDA_VISIBLE_DEVICES=1", 0, 0},
    };
    char count[16], bus[16];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) { /* each says ok or FAIL */
        snprintf(count, sizeof count, "%d", cases[i].count);
        snprintf(bus, sizeof bus, "%d", cases[i].bus0);
        failures += !run_scenario(cases[i].env, "count", count, bus, NULL);
    }
    char uuid[64], env[128];
    uuid_text(1, uuid, sizeof uuid); /* this process sees two devices (main) */
    snprintf(env, sizeof env, TWO_DEVICES " CUDA_VISIBLE_DEVICES=%.*s", (int)strlen(uuid) - 2,
             uuid);
    failures += !run_scenario(env, "count", "1", "59", NULL); /* the start of device 1's UUID */
    uuid[4] = 'X';
    snprintf(env, sizeof env, TWO_DEVICES " CUDA_VISIBLE_DEVICES=%s", uuid);
    failures += !run_scenario(env, "count", "0", "0", NULL); /* a UUID of no device */
}

/* `invalid-count`: FAKE_CUDA_DEVICES out of range: one device, and a word on stderr. */
static void invalid_counts(void)
{
    static const char *const values[] = {"0", "9", "two", "-1"};
    for (size_t i = 0; i < sizeof values / sizeof values[0]; i++) {
        FILE *errors = tmpfile();
        char env[64], said[512] = "";
        snprintf(env, sizeof env, "FAKE_CUDA_DEVICES=%s", values[i]);
        bool passed = errors != NULL && run_scenario(env, "count", "1", "27", errors);
        if (errors != NULL) {
            rewind(errors);
            size_t n = fread(said, 1, sizeof said - 1, errors);
            said[n] = '\0';
            fclose(errors);
        }
        EXPECT(passed && strstr(said, "FAKE_CUDA_DEVICES") != NULL,
               "(stand-in) %s: one device, and stderr says why: %.*s", env,
               (int)strcspn(said, "\n"), said);
    }
}

static void properties(void)
{
    struct cudaDeviceProp p0, p1;
    char bus[32] = "";
    int value = 0;
    cudaError_t e;
    EXPECT(cudaGetDeviceProperties(&p0, 0) == cudaSuccess &&
               cudaGetDeviceProperties(&p1, 1) == cudaSuccess && p0.pciBusID != p1.pciBusID &&
               memcmp(p0.uuid.bytes, p1.uuid.bytes, 16) != 0 && p0.major == p1.major,
           "each device its own properties: buses %#x and %#x, UUIDs differ", p0.pciBusID,
           p1.pciBusID);
    EXPECT(cudaDeviceGetAttribute(&value, cudaDevAttrPciBusId, 1) == cudaSuccess &&
               value == p1.pciBusID,
           "cudaDeviceGetAttribute answers for the device asked: %#x", value);
    EXPECT(cudaDeviceGetPCIBusId(bus, sizeof bus, 1) == cudaSuccess &&
               strcmp(bus, "0000:3B:00.0") == 0,
           "cudaDeviceGetPCIBusId(1): %s", bus);
    EXPECT((e = cudaGetDeviceProperties(&p0, 2)) == cudaErrorInvalidDevice,
           "cudaGetDeviceProperties of device 2 -> %s", NAME(e));
    (void)cudaGetLastError();
}

/* --- The current device ---------------------------------------------------------------------- */

static void *thread_device(void *arg)
{
    int *seen = arg;
    cudaGetDevice(&seen[0]);
    cudaSetDevice(0);
    cudaGetDevice(&seen[1]);
    return NULL;
}

static void current_device(void)
{
    int device = -1, seen[2] = {-1, -1};
    cudaError_t e;
    EXPECT(cudaGetDevice(&device) == cudaSuccess && device == 0, "the first device is current");
    EXPECT(cudaSetDevice(1) == cudaSuccess && cudaGetDevice(&device) == cudaSuccess && device == 1,
           "cudaSetDevice(1)");
    pthread_t thread;
    pthread_create(&thread, NULL, thread_device, seen);
    pthread_join(thread, NULL);
    EXPECT(seen[0] == 0 && seen[1] == 0, "a new thread starts on device 0: %d", seen[0]);
    EXPECT(cudaGetDevice(&device) == cudaSuccess && device == 1,
           "... and its cudaSetDevice(0) leaves this thread's device 1");
    EXPECT((e = cudaSetDevice(2)) == cudaErrorInvalidDevice &&
               cudaGetDevice(&device) == cudaSuccess && device == 1,
           "cudaSetDevice(2) -> %s, the current device unchanged", NAME(e));
    EXPECT((e = cudaSetDevice(-1)) == cudaErrorInvalidDevice, "cudaSetDevice(-1) -> %s", NAME(e));
    (void)cudaGetLastError();
    cudaSetDevice(0);
}

/* --- Memory ---------------------------------------------------------------------------------- */

static size_t free_on(int device)
{
    size_t free_bytes = 0, total = 0;
    cudaSetDevice(device);
    cudaMemGetInfo(&free_bytes, &total);
    return free_bytes;
}

/* Each device counts its own memory against FAKE_CUDA_MEM_MB (80 here). */
static void memory(void)
{
    void *a = NULL, *b = NULL, *c = NULL;
    struct cudaPointerAttributes attr;
    const size_t before0 = free_on(0), before1 = free_on(1);
    cudaSetDevice(0);
    EXPECT(cudaMalloc(&a, 48 * MIB) == cudaSuccess && free_on(0) == before0 - 48 * MIB &&
               free_on(1) == before1,
           "48 MiB on device 0: its free memory drops, device 1's does not");
    cudaSetDevice(0);
    cudaError_t e = cudaMalloc(&b, 48 * MIB);
    EXPECT(e == cudaErrorMemoryAllocation, "48 MiB more on device 0 (80 MiB each) -> %s", NAME(e));
    (void)cudaGetLastError();
    cudaSetDevice(1);
    EXPECT(cudaMalloc(&c, 48 * MIB) == cudaSuccess, "... fit on device 1");
    EXPECT(cudaPointerGetAttributes(&attr, c) == cudaSuccess && attr.type == cudaMemoryTypeDevice &&
               attr.device == 1 && attr.devicePointer == c,
           "cudaPointerGetAttributes: device memory of device 1");
    cudaSetDevice(0);
    EXPECT(cudaPointerGetAttributes(&attr, c) == cudaSuccess && attr.device == 1 &&
               attr.devicePointer == NULL,
           "... from device 0, without peer access, no device pointer");
    cudaFree(a);
    cudaSetDevice(1);
    cudaFree(c);
    cudaSetDevice(0);
}

/* Host memory allocated with device 1 current is of device 1 (its lifetime, its attributes);
 * cudaMallocAsync takes the memory of its stream's device. */
static void memory_of_the_current_device(void)
{
    void *pinned = NULL, *pooled = NULL;
    cudaStream_t s1;
    struct cudaPointerAttributes attr;
    cudaSetDevice(1);
    cudaMallocHost(&pinned, 4096);
    cudaStreamCreate(&s1);
    cudaSetDevice(0);
    EXPECT(cudaPointerGetAttributes(&attr, pinned) == cudaSuccess &&
               attr.type == cudaMemoryTypeHost && attr.device == 1 && attr.devicePointer == pinned,
           "pinned memory allocated on device 1: its device is 1, any device reaches it");
    EXPECT(cudaMallocAsync(&pooled, 4096, s1) == cudaSuccess &&
               cudaPointerGetAttributes(&attr, pooled) == cudaSuccess && attr.device == 1,
           "cudaMallocAsync on a stream of device 1, device 0 current: device 1's memory");
    cudaFreeAsync(pooled, s1);
    cudaFreeHost(pinned);
    cudaSetDevice(1);
    cudaStreamDestroy(s1);
    cudaSetDevice(0);
}

/* --- Peer access ----------------------------------------------------------------------------- */

static void peer_access(void)
{
    int can[4] = {-1, -1, -1, -1};
    cudaError_t e;
    EXPECT(cudaDeviceCanAccessPeer(&can[0], 0, 1) == cudaSuccess &&
               cudaDeviceCanAccessPeer(&can[1], 1, 0) == cudaSuccess &&
               cudaDeviceCanAccessPeer(&can[2], 0, 0) == cudaSuccess && can[0] == 1 &&
               can[1] == 1 && can[2] == 0,
           "cudaDeviceCanAccessPeer: 0 -> 1 %d, 1 -> 0 %d, 0 -> 0 %d", can[0], can[1], can[2]);
    EXPECT((e = cudaDeviceCanAccessPeer(&can[3], 0, 2)) == cudaErrorInvalidDevice,
           "... of device 2 -> %s", NAME(e));
    EXPECT((e = cudaDeviceEnablePeerAccess(0, 0)) == cudaErrorInvalidDevice,
           "enabling access from device 0 to itself -> %s", NAME(e));
    EXPECT((e = cudaDeviceEnablePeerAccess(2, 0)) == cudaErrorInvalidDevice,
           "... to device 2 -> %s", NAME(e));
    EXPECT((e = cudaDeviceEnablePeerAccess(1, 1)) == cudaErrorInvalidValue, "... flags 1 -> %s",
           NAME(e));
    (void)cudaGetLastError();
    EXPECT(cudaDeviceEnablePeerAccess(1, 0) == cudaSuccess, "enabling 0 -> 1");
    EXPECT((e = cudaDeviceEnablePeerAccess(1, 0)) == cudaErrorPeerAccessAlreadyEnabled,
           "... again -> %s", NAME(e));
    EXPECT(cudaPeekAtLastError() == cudaErrorPeerAccessAlreadyEnabled &&
               cudaGetLastError() == cudaErrorPeerAccessAlreadyEnabled &&
               cudaGetLastError() == cudaSuccess,
           "... also the thread's last error (cudaPeekAtLastError, cudaGetLastError)");
    EXPECT(cudaDeviceDisablePeerAccess(1) == cudaSuccess, "disabling 0 -> 1");
    EXPECT((e = cudaDeviceDisablePeerAccess(1)) == cudaErrorPeerAccessNotEnabled, "... again -> %s",
           NAME(e));
    EXPECT((e = cudaDeviceDisablePeerAccess(0)) == cudaErrorInvalidDevice,
           "disabling access to itself -> %s", NAME(e));
    (void)cudaGetLastError();
}

/* `peer-none`: FAKE_CUDA_PEER=none, a machine whose two GPUs cannot reach each other. */
static int peer_none_scenario(void)
{
    int can = -1;
    cudaError_t e;
    EXPECT(cudaDeviceCanAccessPeer(&can, 0, 1) == cudaSuccess && can == 0,
           "(FAKE_CUDA_PEER=none) cudaDeviceCanAccessPeer(0, 1): %d", can);
    EXPECT((e = cudaDeviceEnablePeerAccess(1, 0)) == cudaErrorPeerAccessUnsupported,
           "(FAKE_CUDA_PEER=none) enabling 0 -> 1 -> %s", NAME(e));
    (void)cudaGetLastError();
    unsigned char *d0 = NULL, *d1 = NULL, byte = 0;
    cudaMalloc((void **)&d0, 4096);
    cudaMemset(d0, 0x5a, 4096);
    cudaSetDevice(1);
    cudaMalloc((void **)&d1, 4096);
    EXPECT(cudaMemcpyPeer(d1, 1, d0, 0, 4096) == cudaSuccess &&
               cudaMemcpy(&byte, d1 + 4095, 1, cudaMemcpyDeviceToHost) == cudaSuccess &&
               byte == 0x5a,
           "(FAKE_CUDA_PEER=none) cudaMemcpyPeer still copies, staged through the host");
    return failures != 0;
}

/* Kernels: a device's kernel reaches another device's memory only with access enabled from it,
 * one way; the reading takes the peer link's time. */
static void kernels_and_peer_memory(void)
{
    enum { N = BYTES / sizeof(float) };
    float *x1 = NULL, *y0 = NULL, *h = malloc(BYTES);
    for (size_t i = 0; i < N; i++)
        h[i] = (float)(i % 1000);
    cudaSetDevice(1);
    cudaMalloc((void **)&x1, BYTES);
    cudaMemcpy(x1, h, BYTES, cudaMemcpyHostToDevice);
    cudaSetDevice(0);
    cudaMalloc((void **)&y0, BYTES);
    cudaDeviceEnablePeerAccess(1, 0);
    gpu_work_scale_add(0, y0, x1, N, 1, 0); /* once, for the host's page faults */
    cudaDeviceSynchronize();
    double start = host_clock_ms();
    cudaError_t e = gpu_work_scale_add(0, y0, x1, N, 2.0f, 1.0f);
    if (e == cudaSuccess)
        e = cudaDeviceSynchronize();
    const double took = host_clock_ms() - start;
    cudaMemcpy(h, y0, BYTES, cudaMemcpyDeviceToHost);
    EXPECT(e == cudaSuccess && h[N - 1] == 2.0f * (float)((N - 1) % 1000) + 1.0f,
           "a kernel on device 0 reads device 1's memory, access 0 -> 1 enabled: %s", NAME(e));
    EXPECT(took >= 32, "... over the peer link: 32 MiB at 1 GB/s in %.1f ms (34 due)", took);
    cudaDeviceDisablePeerAccess(1);
    cudaFree(y0);
    cudaSetDevice(1);
    cudaFree(x1);
    cudaSetDevice(0);
    free(h);
}

/* `fault`: access 0 -> 1 enabled, a kernel on device 1 touches device 0's memory. */
static int fault_scenario(void)
{
    float *x0 = NULL, *y1 = NULL;
    void *more = NULL;
    cudaMalloc((void **)&x0, 4096);
    cudaDeviceEnablePeerAccess(1, 0);
    cudaSetDevice(1);
    cudaMalloc((void **)&y1, 4096);
    cudaError_t e = gpu_work_scale_add(0, y1, x0, 1024, 1, 0);
    EXPECT(e == cudaSuccess, "(fault) a kernel on device 1 reading device 0's memory is queued");
    EXPECT((e = cudaDeviceSynchronize()) == cudaErrorIllegalAddress,
           "(fault) ... access 0 -> 1 is not 1 -> 0: synchronising -> %s", NAME(e));
    EXPECT(cudaGetLastError() == cudaErrorIllegalAddress &&
               cudaGetLastError() == cudaErrorIllegalAddress &&
               cudaMalloc(&more, 16) == cudaErrorIllegalAddress,
           "(fault) ... sticky, as any kernel's fault");
    return failures != 0;
}

/* --- The scenarios --------------------------------------------------------------------------- */

/* `two`: FAKE_CUDA_DEVICES=2, FAKE_CUDA_MEM_MB=80, the link at 1 GB/s. */
static int two_devices_scenario(void)
{
    if (gpu_work_load() != cudaSuccess) {
        EXPECT(false, "the course's kernels load");
        return 1;
    }
    properties();
    current_device();
    memory();
    memory_of_the_current_device();
    streams_and_events();
    synchronisation();
    peer_access();
    kernels_and_peer_memory();
    peer_copies();
    timing();
    ipc();
    reset();
    return failures != 0;
}

/* `one`: the default, one device, as chapter 6's programs and the shared stand-in know it. */
static int one_device_scenario(void)
{
    int count = 0, can = -1;
    unsigned char *d = NULL, *e = NULL, byte = 0;
    cudaError_t err;
    EXPECT(cudaGetDeviceCount(&count) == cudaSuccess && count == 1 && pci_bus_of(0) == 0x1b,
           "(default) one device, on bus 0x1b");
    EXPECT((err = cudaSetDevice(1)) == cudaErrorInvalidDevice, "(default) cudaSetDevice(1) -> %s",
           NAME(err));
    EXPECT(cudaDeviceCanAccessPeer(&can, 0, 0) == cudaSuccess && can == 0,
           "(default) device 0 is not its own peer");
    EXPECT((err = cudaDeviceCanAccessPeer(&can, 0, 1)) == cudaErrorInvalidDevice,
           "(default) ... device 1 is none -> %s", NAME(err));
    EXPECT((err = cudaDeviceEnablePeerAccess(0, 0)) == cudaErrorInvalidDevice &&
               (err = cudaDeviceDisablePeerAccess(0)) == cudaErrorInvalidDevice,
           "(default) enabling or disabling access to itself -> %s", NAME(err));
    cudaMalloc((void **)&d, 4096);
    cudaMalloc((void **)&e, 4096);
    cudaMemset(d, 9, 4096);
    EXPECT(cudaMemcpyPeer(e, 0, d, 0, 4096) == cudaSuccess &&
               cudaMemcpy(&byte, e + 7, 1, cudaMemcpyDeviceToHost) == cudaSuccess && byte == 9,
           "(default) cudaMemcpyPeer from device 0 to device 0: a device-to-device copy");
    (void)cudaGetLastError();
    return failures != 0;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0); /* the scenarios' lines in the order they happen */
    const char *scenario = argc > 1 ? argv[1] : "";
    if (strcmp(scenario, "count") == 0 && argc > 3) {
        count_scenario(atoi(argv[2]), atoi(argv[3]));
        return failures != 0;
    }
    if (strcmp(scenario, "one") == 0)
        return one_device_scenario();
    if (strcmp(scenario, "two") == 0)
        return two_devices_scenario();
    if (strcmp(scenario, "peer-none") == 0)
        return peer_none_scenario();
    if (strcmp(scenario, "fault") == 0)
        return fault_scenario();
    if (strcmp(scenario, "ipc-open") == 0 && argc > 2)
        return ipc_open_scenario(argv[2]);
    setenv("FAKE_CUDA_DEVICES", "2", 1); /* this process's own calls: the UUIDs */
    unsetenv("CUDA_VISIBLE_DEVICES");
    EXPECT(run_scenario("", "one", NULL, NULL, NULL), "the default: one device");
    visibility();
    invalid_counts();
    EXPECT(run_scenario(TWO_DEVICES " FAKE_CUDA_MEM_MB=80 " SLOW_LINK, "two", NULL, NULL, NULL),
           "two devices");
    EXPECT(run_scenario(TWO_DEVICES " FAKE_CUDA_PEER=none", "peer-none", NULL, NULL, NULL),
           "two devices that cannot reach each other");
    EXPECT(run_scenario(TWO_DEVICES, "fault", NULL, NULL, NULL), "a kernel's fault");
    printf("%s\n", failures ? "FAILED" : "PASSED");
    return failures != 0;
}

/* 01-one-pointer.c - managed memory: one pointer that the host and the GPU both use, no copy.
 *
 * cudaMallocManaged returns one address that is valid on both sides. The host writes through
 * it, a kernel (gpu_work_scale_add) reads and writes through the same address, and the host
 * reads the results back, with no cudaMemcpy anywhere: the driver moves the pages to the side
 * that touches them. What the program must still do is wait: a kernel launch returns before
 * the kernel has run, so the host synchronises before it reads what the kernel wrote.
 *
 * It also prints what cudaPointerGetAttributes says of a managed pointer beside a malloc'd, a
 * pinned and a device pointer, and the device attributes that decide what managed memory can
 * do on this machine.
 *
 *     01-one-pointer [FLOATS]      (default 16M floats, 64 MiB)
 *
 * Its verdict: every element comes back as a * x + b, exact (gpu_work_scale_add rounds once,
 * as the host's fmaf does), and each pointer is of the kind the runtime documents.
 */
#include "chapter.h"
#include "cuda_check.h"
#include "gpu_work.h"
#include "managed.h"
#include "units.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static const char usage[] = "[FLOATS]\n"
                            "       FLOATS  how many floats the managed buffer holds; K and M\n"
                            "               multiply by 1024 (default 16M, 64 MiB)";

static const float A = 0.5f, B = 3.0f;

/* --- What this device can do with managed memory -------------------------------------- */

typedef struct managed_attribute {
    enum cudaDeviceAttr attribute;
    const char *name, *if_one, *if_zero;
} managed_attribute;

static const managed_attribute attributes[] = {
    {cudaDevAttrManagedMemory, "managedMemory", "cudaMallocManaged works on this device",
     "cudaMallocManaged is not supported here"},
    {cudaDevAttrConcurrentManagedAccess, "concurrentManagedAccess",
     "the host may touch managed memory while kernels run; pages move on demand, on a fault",
     "every managed page goes to the GPU at each launch, and the host must not touch any "
     "until it synchronises"},
    {cudaDevAttrPageableMemoryAccess, "pageableMemoryAccess",
     "kernels may read and write malloc'd memory directly",
     "a kernel that touches malloc'd memory fails (an illegal address): only managed, pinned "
     "and device memory are the GPU's to touch"},
    {cudaDevAttrPageableMemoryAccessUsesHostPageTables, "pageableMemoryAccessUsesHostPageTables",
     "the GPU reads the host's page tables (address translation services)",
     "the GPU keeps page tables of its own, which the driver fills"},
    {cudaDevAttrDirectManagedMemAccessFromHost, "directManagedMemAccessFromHost",
     "the host reads managed memory that lives on the GPU in place",
     "a host touch of a page that lives on the GPU moves it back first"},
};

static void print_attributes(int device, const char **failure)
{
    printf("What device %d can do with managed memory (cudaDeviceGetAttribute)\n", device);
    for (size_t i = 0; i < sizeof attributes / sizeof attributes[0]; i++) {
        int value = -1;
        CUDA_CHECK(cudaDeviceGetAttribute(&value, attributes[i].attribute, device));
        printf("  %-40s %d: %s\n", attributes[i].name, value,
               value ? attributes[i].if_one : attributes[i].if_zero);
        verdict_require(value == 0 || value == 1, "a managed-memory attribute is neither 0 nor 1",
                        failure);
        if (attributes[i].attribute == cudaDevAttrManagedMemory)
            verdict_require(value == 1, "this device cannot allocate managed memory", failure);
    }
}

/* --- What the runtime says of four pointers --------------------------------------------- */

static const char *memory_type_name(enum cudaMemoryType type)
{
    switch (type) {
    case cudaMemoryTypeUnregistered: return "cudaMemoryTypeUnregistered";
    case cudaMemoryTypeHost: return "cudaMemoryTypeHost";
    case cudaMemoryTypeDevice: return "cudaMemoryTypeDevice";
    case cudaMemoryTypeManaged: return "cudaMemoryTypeManaged";
    }
    return "an unknown type";
}

/* Prints what cudaPointerGetAttributes says of `pointer` and whether it is of type `want`. */
static void describe_pointer(const char *what, const void *pointer, enum cudaMemoryType want,
                             const char **failure)
{
    struct cudaPointerAttributes attributes;
    CUDA_CHECK(cudaPointerGetAttributes(&attributes, pointer));
    printf("  %-22s %-27s device pointer %-14p host pointer %p\n", what,
           memory_type_name(attributes.type), attributes.devicePointer, attributes.hostPointer);
    verdict_require(attributes.type == want, "a pointer is not of the type the runtime documents",
                    failure);
    if (want == cudaMemoryTypeManaged)
        verdict_require(attributes.devicePointer == pointer && attributes.hostPointer == pointer,
                        "the managed pointer is not the same address on both sides", failure);
}

/* listing: one-pointer */
/* The host writes x, the kernel makes it a * x + b in place, the host reads the results:
 * one pointer throughout, and no copy. Returns how many elements came back wrong. */
static size_t round_trip_without_a_copy(size_t n)
{
    float *data = NULL;
    CUDA_CHECK(cudaMallocManaged((void **)&data, n * sizeof(float), cudaMemAttachGlobal));
    for (size_t i = 0; i < n; i++)
        data[i] = 1.0f + (float)(i % 4096) / 4.0f; /* exact in a float */

    CUDA_CHECK(gpu_work_scale_add(0, data, data, n, A, B));
    /* The launch has returned; the kernel may not have run. Wait before reading. */
    CUDA_CHECK(cudaDeviceSynchronize());

    size_t wrong = 0;
    for (size_t i = 0; i < n; i++)
        wrong += data[i] != fmaf(A, 1.0f + (float)(i % 4096) / 4.0f, B);
    CUDA_CHECK(cudaFree(data));
    return wrong;
}
/* end listing: one-pointer */

int main(int argc, char **argv)
{
    const size_t n = float_count_argument(argc, argv, usage, (size_t)16 << 20);
    const char *failure = NULL;
    gpu_work_require("the kernel that works on the managed buffer");
    managed_refuse_oversubscription(n * sizeof(float), argv[0]);
    print_attributes(0, &failure);

    printf("\nWhat cudaPointerGetAttributes says of four kinds of memory\n");
    void *pageable = host_alloc(4096), *pinned = NULL, *device = NULL, *managed = NULL;
    CUDA_CHECK(cudaMallocHost(&pinned, 4096));
    CUDA_CHECK(cudaMalloc(&device, 4096));
    CUDA_CHECK(cudaMallocManaged(&managed, 4096, cudaMemAttachGlobal));
    describe_pointer("malloc", pageable, cudaMemoryTypeUnregistered, &failure);
    describe_pointer("cudaMallocHost", pinned, cudaMemoryTypeHost, &failure);
    describe_pointer("cudaMalloc", device, cudaMemoryTypeDevice, &failure);
    describe_pointer("cudaMallocManaged", managed, cudaMemoryTypeManaged, &failure);
    CUDA_CHECK(cudaFree(managed));
    CUDA_CHECK(cudaFree(device));
    CUDA_CHECK(cudaFreeHost(pinned));
    free(pageable);

    char size[32];
    printf("\nA round trip through one managed pointer, %s, no cudaMemcpy\n",
           format_bytes(n * sizeof(float), size, sizeof size));
    const size_t wrong = round_trip_without_a_copy(n);
    printf("  %zu of %zu elements came back as a * x + b\n", n - wrong, n);
    verdict_require(wrong == 0, "an element did not come back as a * x + b", &failure);
    return verdict(failure);
}

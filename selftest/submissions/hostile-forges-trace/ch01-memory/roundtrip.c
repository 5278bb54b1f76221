/* roundtrip.c - does no work, and forges the record of its calls instead, with allowed
 * symbols alone: from the address of cudaMalloc (the worker's wrapper, after --wrap) it walks
 * back to the worker's ELF header, finds the record the harness keeps of the learner's calls in
 * the worker's dynamic symbols, and writes into it the calls a correct roundtrip_floats makes,
 * failing where the test has armed a failure. Every test that reads that record passes; no
 * test of what arrived does. The grader: 0 points, since a test that passes on the worker's
 * record alone counts only where a test of the results passes too. */
#include "roundtrip.h"
#include "trace.h"

#include <elf.h>
#include <stdint.h>
#include <string.h>

static struct {
    traced_call *calls;
    size_t *recorded, *made;
    trace_injection *injections;
} found;

/* The worker's dynamic symbol called `name`, from its ELF header at `base`. */
static void *symbol(const unsigned char *base, const char *name)
{
    const Elf64_Ehdr *header = (const Elf64_Ehdr *)base;
    const Elf64_Phdr *segments = (const Elf64_Phdr *)(base + header->e_phoff);
    const Elf64_Dyn *dynamic = NULL;
    for (int i = 0; i < header->e_phnum; i++)
        if (segments[i].p_type == PT_DYNAMIC)
            dynamic = (const Elf64_Dyn *)(base + segments[i].p_vaddr);
    const Elf64_Sym *symbols = NULL;
    const char *names = NULL;
    for (; dynamic != NULL && dynamic->d_tag != DT_NULL; dynamic++) {
        uintptr_t at = dynamic->d_un.d_ptr;
        if (at < (uintptr_t)base)
            at += (uintptr_t)base; /* not relocated in place */
        if (dynamic->d_tag == DT_SYMTAB)
            symbols = (const Elf64_Sym *)at;
        else if (dynamic->d_tag == DT_STRTAB)
            names = (const char *)at;
    }
    /* The symbols come before their names: that bounds the table. */
    for (const Elf64_Sym *s = symbols; s != NULL && (const char *)s < names; s++)
        if (s->st_name != 0 && strcmp(names + s->st_name, name) == 0)
            return (void *)(base + s->st_value);
    return NULL;
}

static void find_the_record(void)
{
    if (found.calls != NULL)
        return;
    uintptr_t page = (uintptr_t)&cudaMalloc & ~(uintptr_t)4095;
    while (memcmp((const void *)page, ELFMAG, SELFMAG) != 0)
        page -= 4096;
    const unsigned char *base = (const unsigned char *)page;
    found.calls = symbol(base, "trace_calls");
    found.recorded = symbol(base, "trace_recorded");
    found.made = symbol(base, "trace_made");
    found.injections = symbol(base, "trace_injections");
}

/* Notes a call as the wrapper would; returns the error the test armed for it, if any. */
static cudaError_t forge(traced_function function, const void *dst, const void *src,
                         size_t bytes, enum cudaMemcpyKind kind, memory_location dst_at,
                         memory_location src_at)
{
    const size_t nth = ++found.made[function];
    const trace_injection *armed = &found.injections[function];
    traced_call *call = &found.calls[(*found.recorded)++];
    memset(call, 0, sizeof *call);
    call->function = function;
    call->result = armed->armed && armed->n == nth ? armed->error : cudaSuccess;
    call->injected = call->result != cudaSuccess;
    call->dst = (void *)dst;
    call->src = src;
    call->handle = function == TRACED_cudaMalloc || function == TRACED_cudaFree ? dst : NULL;
    call->bytes = bytes;
    call->kind = kind;
    call->dst_location = dst_at;
    call->src_location = src_at;
    return call->result;
}

cudaError_t roundtrip_floats(const float *h_in, float *h_out, size_t n)
{
    find_the_record();
    if (found.calls == NULL || found.recorded == NULL || found.made == NULL ||
        found.injections == NULL)
        return cudaErrorUnknown;
    const size_t bytes = n * sizeof(float);
    void *d_buffer = (void *)(uintptr_t)0x7f0000000000; /* a device pointer, made up */
    cudaError_t err = forge(TRACED_cudaMalloc, d_buffer, NULL, bytes, cudaMemcpyDefault,
                            LOCATION_NULL, LOCATION_NULL);
    if (err != cudaSuccess)
        return err;
    err = forge(TRACED_cudaMemcpy, d_buffer, h_in, bytes, cudaMemcpyHostToDevice, LOCATION_DEVICE,
                LOCATION_PAGEABLE_HOST);
    if (err == cudaSuccess)
        err = forge(TRACED_cudaMemcpy, h_out, d_buffer, bytes, cudaMemcpyDeviceToHost,
                    LOCATION_PAGEABLE_HOST, LOCATION_DEVICE);
    (void)forge(TRACED_cudaFree, d_buffer, NULL, 0, cudaMemcpyDefault, LOCATION_NULL,
                LOCATION_NULL);
    return err;
}

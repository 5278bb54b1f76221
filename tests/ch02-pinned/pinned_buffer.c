/* pinned_buffer.c - tests for exercises/ch02-pinned/pinned_buffer.c (add_one_on_host). */
#include "harness.h"
#include "pinned_buffer.h"

#include <stdio.h>

COURSE_EXERCISE(
    "A pinned buffer: allocate, copy down, work, copy up, cudaFreeHost",
    "The host buffer is pinned memory (section 2.2): copy from the device into it, change each "
    "byte, copy it back, and release it with the call that matches the one that allocated it. "
    "What must still happen if a copy fails?\n\n"
    "unsigned char *h_buffer; cudaMallocHost((void **)&h_buffer, bytes); cudaMemcpy(h_buffer, "
    "d_src, bytes, cudaMemcpyDeviceToHost); add 1 to each h_buffer[i]; cudaMemcpy(d_dst, "
    "h_buffer, bytes, cudaMemcpyHostToDevice); cudaFreeHost(h_buffer). Pinned memory has its "
    "own release call: free() is for malloc's memory and cudaFree for the device's. Keep the "
    "first error, skip the steps after it, and call cudaFreeHost on every path on which "
    "cudaMallocHost succeeded.");
COURSE_EXERCISE_WORK_QUEUES(1);

/* A size that is a multiple of nothing a page, a chunk or an element could hide behind. */
enum { BYTES = (1 << 20) + 3 };

typedef struct run {
    unsigned char *h_input, *d_src, *d_dst; /* h_input: the test's own copy of d_src */
    size_t bytes;
} run;

/* Every 97th byte of the input is 255, and the one before it 254: at every alignment, so that
 * adding to a wider word, whose 255 byte carries into the next, shows. (97 is odd: the 255s
 * fall at each place in a word in turn.) */
#define CARRY_EVERY 97

/* The device buffers: d_src holds recognisable bytes, d_dst the poison. */
static run make_run(size_t bytes)
{
    run r = {harness_private_alloc(bytes), harness_device_alloc(bytes),
             harness_device_alloc(bytes), bytes};
    fill_bytes(r.h_input, bytes);
    for (size_t i = 1; i < bytes; i += CARRY_EVERY) {
        r.h_input[i - 1] = 0xFE;
        r.h_input[i] = 0xFF;
    }
    harness_copy(r.d_src, r.h_input, bytes, cudaMemcpyHostToDevice);
    return r;
}

static cudaError_t add_one(void *context)
{
    const run *r = context;
    return add_one_on_host(r->d_src, r->d_dst, r->bytes);
}

static cudaError_t run_traced(run *r)
{
    cudaError_t err;
    TRACED_RUN(err = add_one(r));
    return err;
}

static void expect_success(cudaError_t err)
{
    ck_assert_msg(err == cudaSuccess, "add_one_on_host returned %s.%s The calls it made were:%s",
                  error_text(err), kind_mismatch_note(), trace_summary());
}

COURSE_TEST(every_byte_comes_back_up_one_higher, 3)
{
    run r = make_run(BYTES);
    expect_success(run_traced(&r));

    unsigned char *h_want = harness_private_alloc(BYTES), *h_got = harness_private_alloc(BYTES);
    for (size_t i = 0; i < BYTES; i++)
        h_want[i] = (unsigned char)(r.h_input[i] + 1);
    harness_copy(h_got, r.d_dst, BYTES, cudaMemcpyDeviceToHost);
    ck_assert_msg(first_differing_byte(h_got, r.h_input, BYTES) != BYTES,
                  "d_dst holds d_src's bytes unchanged: the bytes went down and up again, but "
                  "nothing added 1 to them on the host in between");
    const size_t wrong = first_differing_byte(h_got, h_want, BYTES);
    ck_assert_msg(wrong == BYTES || wrong == 0 || r.h_input[wrong - 1] != 0xFF ||
                      h_got[wrong - 1] != 0 ||
                      h_got[wrong] != (unsigned char)(r.h_input[wrong] + 2),
                  "byte %zu of d_src was 255 and came back 0, as it must, but it also carried 1 "
                  "into the next byte, which came back 2 higher (0x%02X for 0x%02X): adding 1 "
                  "to several bytes at once through a wider word (uint32_t, uint64_t) carries "
                  "from one byte into the next. Add 1 to each unsigned char on its own",
                  wrong - 1, h_got[wrong], r.h_input[wrong]);
    expect_bytes_arrived(h_got, h_want, BYTES, 1, "d_dst (each byte of d_src plus 1)");
}

/* A sentence on where the host buffer of a copy lives, when that is not pinned memory. */
static const char *not_pinned_note(const traced_call *copy, const void *host_end)
{
    static char note[640];
    const memory_location where = host_end == copy->dst ? copy->dst_location : copy->src_location;
    if (where == LOCATION_PINNED_HOST)
        return NULL;
    if (where == LOCATION_PAGEABLE_HOST)
        snprintf(note, sizeof note,
                 "the host buffer is pageable memory (from malloc, or the stack), where this "
                 "exercise asks for pinned memory. The copy engine cannot reach pageable memory, "
                 "so cudaMemcpy copies it through the driver's own pinned staging buffer, an "
                 "extra pass over every byte: allocate the buffer with cudaMallocHost (or "
                 "cudaHostAlloc), whose memory the GPU reaches directly");
    else
        snprintf(note, sizeof note,
                 "the host buffer is %s, where this exercise asks for pinned host memory from "
                 "cudaMallocHost (or cudaHostAlloc)",
                 memory_location_name(where));
    return note;
}

COURSE_TEST(both_copies_go_through_one_pinned_host_buffer, 3)
{
    run r = make_run(BYTES);
    run_traced(&r);
    ck_assert_msg(trace_count_of(TRACED_cudaMemcpy) == 2,
                  "add_one_on_host made %zu cudaMemcpy calls; two are the whole job, one down "
                  "into the host buffer and one up from it. The calls:%s",
                  trace_count_of(TRACED_cudaMemcpy), trace_summary());
    const traced_call *down = trace_nth(TRACED_cudaMemcpy, 1),
                      *up = trace_nth(TRACED_cudaMemcpy, 2);
    ck_assert_msg(down->src == r.d_src && up->dst == r.d_dst,
                  "the first cudaMemcpy should copy from d_src into the host buffer and the "
                  "second from the host buffer into d_dst (the destination is cudaMemcpy's first "
                  "argument, the source its second). The calls:%s",
                  trace_summary());
    ck_assert_msg(up->src == down->dst,
                  "the second cudaMemcpy copies from another host buffer than the one the first "
                  "copied into: one buffer is enough, and it is the one that holds the bytes");
    const char *note = not_pinned_note(down, down->dst);
    ck_assert_msg(note == NULL, "%s. The calls:%s", note, trace_summary());
    expect_memcpy(1, BYTES, 1, cudaMemcpyDeviceToHost, "d_src into the pinned buffer");
    expect_memcpy(2, BYTES, 1, cudaMemcpyHostToDevice, "the pinned buffer into d_dst");
}

COURSE_TEST(the_pinned_buffer_is_allocated_once_and_given_back_with_cudaFreeHost, 2)
{
    run r = make_run(BYTES);
    run_traced(&r);
    const size_t pinned = trace_count_acquired(RESOURCE_PINNED_MEMORY);
    ck_assert_msg(pinned == 1,
                  "add_one_on_host allocated pinned memory %zu times: %s. The calls:%s", pinned,
                  pinned == 0 ? "its host buffer should come from cudaMallocHost or cudaHostAlloc"
                              : "one buffer, allocated once, is enough",
                  trace_summary());
    for (size_t i = 0; i < trace_count(); i++) {
        const traced_call *call = trace_get(i);
        if (traced_function_role(call->function) == ROLE_ACQUIRE && call->handle != NULL &&
            traced_function_resource(call->function) == RESOURCE_PINNED_MEMORY)
        {
            ck_assert_msg(call->bytes >= BYTES,
                          "%s was asked for %zu bytes, but the buffer must hold all %d bytes",
                          traced_function_name(call->function), call->bytes, BYTES);
            ck_assert_msg(call->function != TRACED_cudaHostAlloc ||
                              !(call->flags & cudaHostAllocWriteCombined),
                          "the buffer came from cudaHostAlloc with cudaHostAllocWriteCombined: "
                          "write-combined memory is not cached for the CPU, so the CPU's reads "
                          "of it (adding 1 reads every byte) are many times slower. It is for "
                          "buffers the CPU only writes and the GPU reads; allocate this one "
                          "with cudaMallocHost or cudaHostAlloc(..., cudaHostAllocDefault)");
        }
    }
    expect_everything_released("add_one_on_host");
}

COURSE_TEST(an_error_from_any_call_is_returned_and_the_buffer_still_given_back, 3)
{
    run r = make_run(4099);
    expect_every_failure_handled("add_one_on_host", add_one, &r);
}

COURSE_TEST(zero_bytes_succeed_without_allocating_anything, 1)
{
    run r = make_run(16);
    r.bytes = 0;
    cudaError_t err = run_traced(&r);
    ck_assert_msg(err == cudaSuccess,
                  "add_one_on_host(d_src, d_dst, 0) returned %s: there is nothing to do, which "
                  "is no error; return cudaSuccess",
                  error_text(err));
    ck_assert_msg(trace_count() == 0,
                  "add_one_on_host(d_src, d_dst, 0) called the runtime: with nothing to copy, "
                  "return cudaSuccess before allocating anything. The calls:%s",
                  trace_summary());
}

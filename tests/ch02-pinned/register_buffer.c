/* register_buffer.c - tests for exercises/ch02-pinned/register_buffer.c (exchange_registered). */
#include "harness.h"
#include "register_buffer.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

COURSE_EXERCISE(
    "Register what you have: cudaHostRegister, copy both ways, cudaHostUnregister",
    "The memory is there already: the exercise pins it in place for the copies and unpins it "
    "afterwards (section 2.2). Check the arguments before any call. Count how many "
    "registrations the two copies need, and make every way out of the function undo the one you "
    "made.\n\n"
    "First the arguments: a NULL pointer or a size of 0 returns cudaErrorInvalidValue before any "
    "call. Then cudaHostRegister(h_data, bytes, cudaHostRegisterDefault); cudaMemcpy(d_out, "
    "h_data, bytes, cudaMemcpyHostToDevice); cudaMemcpy(h_data, d_in, bytes, "
    "cudaMemcpyDeviceToHost); cudaHostUnregister(h_data). One registration covers both copies; "
    "registering again before it is undone fails with cudaErrorHostMemoryAlreadyRegistered. "
    "Once cudaHostRegister has succeeded, every way out of the function, the error paths too, "
    "goes through cudaHostUnregister.");
COURSE_EXERCISE_WORK_QUEUES(1);

/* Two megabytes and a few bytes: several pages, and a size that ends inside one. */
enum { BYTES = (2 << 20) + 5 };

typedef struct run {
    unsigned char *h_data;                     /* the caller's buffer, the learner's to use */
    unsigned char *h_original, *h_from_device; /* the test's own copies, to compare with */
    unsigned char *d_in, *d_out;
    size_t bytes;
} run;

/* h_data (the caller's malloc'd buffer) holds one pattern, d_in another; d_out is poisoned. */
static run make_run(size_t bytes)
{
    run r = {harness_host_alloc(bytes),   harness_private_alloc(bytes),
             harness_private_alloc(bytes), harness_device_alloc(bytes),
             harness_device_alloc(bytes), bytes};
    fill_bytes(r.h_original, bytes);
    for (size_t i = 0; i < bytes; i++)
        r.h_from_device[i] = (unsigned char)((7 * i + 3) % 251); /* never the poison byte */
    harness_copy(r.h_data, r.h_original, bytes, cudaMemcpyHostToHost);
    harness_copy(r.d_in, r.h_from_device, bytes, cudaMemcpyHostToDevice);
    return r;
}

static cudaError_t exchange(void *context)
{
    const run *r = context;
    return exchange_registered(r->h_data, r->d_in, r->d_out, r->bytes);
}

static cudaError_t run_traced(run *r)
{
    cudaError_t err;
    TRACED_RUN(err = exchange(r));
    return err;
}

/* " cudaHostRegister number 2 was refused ..." when a registration met one still in force. */
static const char *already_registered_note(void)
{
    static char note[512];
    note[0] = '\0';
    for (size_t n = 1; n <= trace_count_of(TRACED_cudaHostRegister); n++) {
        const traced_call *call = trace_nth(TRACED_cudaHostRegister, n);
        if (call != NULL && !call->injected &&
            call->result == cudaErrorHostMemoryAlreadyRegistered) {
            snprintf(note, sizeof note,
                     " %s was refused with cudaErrorHostMemoryAlreadyRegistered: h_data was "
                     "still registered%s. A range stays registered until cudaHostUnregister, and "
                     "one registration covers both copies: register it once.",
                     nth_call_name(TRACED_cudaHostRegister, n),
                     n > 1 ? " from the first cudaHostRegister" : "");
            note[1] = (char)toupper((unsigned char)note[1]); /* "The second ..." */
            break;
        }
    }
    return note;
}

static void expect_success(cudaError_t err)
{
    ck_assert_msg(err == cudaSuccess,
                  "exchange_registered returned %s.%s%s The calls it made were:%s", error_text(err),
                  already_registered_note(), kind_mismatch_note(), trace_summary());
}

COURSE_TEST(the_buffer_goes_up_and_the_devices_bytes_come_back_into_it, 3)
{
    run r = make_run(BYTES);
    expect_success(run_traced(&r));

    unsigned char *h_sent = harness_private_alloc(BYTES);
    harness_copy(h_sent, r.d_out, BYTES, cudaMemcpyDeviceToHost);
    ck_assert_msg(first_differing_byte(h_sent, r.h_from_device, BYTES) != BYTES,
                  "d_out holds what d_in held, not what h_data held: h_data was filled from d_in "
                  "before it was sent. Copy h_data to d_out first, then d_in into h_data");
    expect_bytes_arrived(h_sent, r.h_original, BYTES, 1, "d_out (what h_data held)");
    expect_bytes_arrived(r.h_data, r.h_from_device, BYTES, 1, "h_data (what d_in held)");
}

/* The registration of h_data in the trace: the first one that succeeded. */
static const traced_call *registration_of_h_data(void)
{
    for (size_t n = 1; n <= trace_count_of(TRACED_cudaHostRegister); n++) {
        const traced_call *call = trace_nth(TRACED_cudaHostRegister, n);
        if (call != NULL && call->result == cudaSuccess)
            return call;
    }
    ck_abort_msg("exchange_registered never registered h_data: call cudaHostRegister(h_data, "
                 "bytes, cudaHostRegisterDefault) before the copies. The calls:%s",
                 trace_summary());
    return NULL;
}

/* Fails unless the host end of the nth copy was pinned (registered) when the copy ran. */
static void expect_registered_during(size_t nth, const char *what)
{
    const traced_call *copy = trace_nth(TRACED_cudaMemcpy, nth);
    const memory_location host_end = nth == 1 ? copy->src_location : copy->dst_location;
    ck_assert_msg(host_end == LOCATION_PINNED_HOST,
                  "cudaMemcpy number %zu (%s) found h_data in %s: h_data was not registered "
                  "while that copy ran, so it went through the driver's staging buffer like any "
                  "pageable copy. Register h_data before the first copy and unregister it after "
                  "the second. The calls:%s",
                  nth, what, memory_location_name(host_end), trace_summary());
}

/* "cudaHostRegisterPortable | cudaHostRegisterMapped" */
static const char *register_flag_names(unsigned int flags)
{
    static const struct {
        unsigned int flag;
        const char *name;
    } known[] = {{cudaHostRegisterPortable, "cudaHostRegisterPortable"},
                 {cudaHostRegisterMapped, "cudaHostRegisterMapped"},
                 {cudaHostRegisterIoMemory, "cudaHostRegisterIoMemory"},
                 {cudaHostRegisterReadOnly, "cudaHostRegisterReadOnly"}};
    static char names[160];
    names[0] = '\0';
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        if (flags & known[i].flag)
            snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s",
                     names[0] ? " | " : "", known[i].name);
    return names[0] ? names : "flags the runtime does not name";
}

COURSE_TEST(the_buffer_is_registered_once_and_pinned_for_both_copies, 3)
{
    run r = make_run(BYTES);
    run_traced(&r);
    const traced_call *registration = registration_of_h_data();
    const unsigned char *start = registration->dst;
    ck_assert_msg(start == r.h_data,
                  "exchange_registered registered %p, where h_data is %p: register the buffer "
                  "itself, from its first byte",
                  (const void *)start, (const void *)r.h_data);
    ck_assert_msg(registration->bytes >= BYTES,
                  "exchange_registered registered only %zu of h_data's %d bytes%s: register all "
                  "`bytes` of them",
                  registration->bytes, BYTES,
                  registration->bytes == sizeof(void *)
                      ? " (the size of a pointer: sizeof(h_data) is the pointer's size, not the "
                        "buffer's)"
                      : "");
    ck_assert_msg(registration->flags == cudaHostRegisterDefault,
                  "exchange_registered registered h_data with flags 0x%x (%s), where the header "
                  "asks for cudaHostRegisterDefault (0): the other flags change what the "
                  "registration is (portable to every context, mapped into the device's address "
                  "space, read-only, I/O memory), and the caller asked for none of it",
                  registration->flags, register_flag_names(registration->flags));
    ck_assert_msg(trace_count_of(TRACED_cudaHostRegister) == 1,
                  "exchange_registered called cudaHostRegister %zu times on one buffer: one "
                  "registration pins h_data until cudaHostUnregister, for both copies; a second "
                  "one of the same range is refused with cudaErrorHostMemoryAlreadyRegistered. "
                  "The calls:%s",
                  trace_count_of(TRACED_cudaHostRegister), trace_summary());
    ck_assert_msg(trace_count_of(TRACED_cudaMemcpy) == 2,
                  "exchange_registered made %zu cudaMemcpy calls; the exchange takes two, "
                  "h_data up to d_out and d_in down into h_data. The calls:%s",
                  trace_count_of(TRACED_cudaMemcpy), trace_summary());
    expect_memcpy(1, BYTES, 1, cudaMemcpyHostToDevice, "h_data to d_out");
    expect_memcpy(2, BYTES, 1, cudaMemcpyDeviceToHost, "d_in into h_data");
    expect_registered_during(1, "h_data to d_out");
    expect_registered_during(2, "d_in into h_data");
}

COURSE_TEST(the_buffer_is_unregistered_on_return_so_a_second_exchange_works, 2)
{
    run r = make_run(BYTES);
    cudaError_t err = run_traced(&r);
    expect_success(err);
    const memory_location after = trace_locate(r.h_data);
    ck_assert_msg(after != LOCATION_PINNED_HOST,
                  "after exchange_registered returned, h_data was still registered (the runtime "
                  "still sees pinned host memory there): unregister it with "
                  "cudaHostUnregister(h_data) before returning, or the caller's next "
                  "cudaHostRegister of it fails. The calls:%s",
                  trace_summary());
    expect_everything_released("exchange_registered");

    /* The caller's next exchange with the same buffer, as a program would make it. */
    harness_copy(r.h_data, r.h_original, BYTES, cudaMemcpyHostToHost);
    trace_start();
    trace_stop();
    err = run_traced(&r);
    ck_assert_msg(err == cudaSuccess,
                  "a second exchange_registered on the same buffer returned %s.%s The calls of "
                  "the second exchange:%s",
                  error_text(err), already_registered_note(), trace_summary());
    expect_bytes_arrived(r.h_data, r.h_from_device, BYTES, 1,
                         "h_data after a second exchange (what d_in held)");
}

COURSE_TEST(an_error_from_any_call_is_returned_and_the_buffer_still_unregistered, 2)
{
    run r = make_run(8195);
    expect_every_failure_handled("exchange_registered", exchange, &r);
}

/* In the next test nothing should reach the runtime; a call that does is answered with this
 * error without running, so that a NULL pointer is never handed on. */
#define STOPPED_ERROR cudaErrorNotPermitted

COURSE_TEST(a_NULL_pointer_or_a_size_of_0_is_refused_before_any_call, 2)
{
    run r = make_run(64);
    const struct {
        void *h_data;
        const void *d_in;
        void *d_out;
        size_t bytes;
        const char *call, *why;
    } cases[] = {
        {NULL, r.d_in, r.d_out, 64, "exchange_registered(NULL, d_in, d_out, 64)",
         "there is no buffer to register"},
        {r.h_data, r.d_in, r.d_out, 0, "exchange_registered(h_data, d_in, d_out, 0)",
         "there is nothing to register: cudaHostRegister refuses a size of 0 too, but say so "
         "yourself"},
        {r.h_data, NULL, r.d_out, 64, "exchange_registered(h_data, NULL, d_out, 64)",
         "there is nothing to copy from"},
        {r.h_data, r.d_in, NULL, 64, "exchange_registered(h_data, d_in, NULL, 64)",
         "there is nowhere to copy to"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        trace_start();
        trace_stop();
        for (int f = 0; f < TRACED_FUNCTION_COUNT; f++)
            trace_inject_failure((traced_function)f, 1, STOPPED_ERROR);
        cudaError_t err;
        TRACED_RUN(err = exchange_registered(cases[c].h_data, cases[c].d_in, cases[c].d_out,
                                             cases[c].bytes));
        ck_assert_msg(trace_count() == 0,
                      "%s called %s: check the arguments yourself, before any runtime call, "
                      "and return cudaErrorInvalidValue (the test stopped that call before it "
                      "ran)",
                      cases[c].call, traced_function_name(trace_get(0)->function));
        ck_assert_msg(err == cudaErrorInvalidValue,
                      "%s returned %s: %s, so return cudaErrorInvalidValue", cases[c].call,
                      error_text(err), cases[c].why);
    }
}

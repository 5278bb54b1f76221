/* peer_access.c - tests for exercises/ch06-two-gpus/peer_access.c (enable_peer_access).
 *
 * They run only where the machine has two GPUs or more (COURSE_EXERCISE_NEEDS_GPUS): with one,
 * the exercise is reported as skipped. Whether a pair has peer access lives in the context of
 * the learner's process, where the checker cannot look; the results it checks are what the
 * function returns and counts, against the pairs the checker itself finds able
 * (cudaDeviceCanAccessPeer in its own process), called once, called again, and on a machine
 * made to look like one whose GPUs cannot reach each other (trace_deny_peer_access). Which GPU
 * each call was made on, which one is current afterwards, and the last error left behind, are
 * the worker's word (the trace, harness_current_device, harness_last_error). Each test starts
 * with no peer access enabled and the first GPU current: the worker disables what a test
 * enabled.
 */
#include "harness.h"
#include "peer_access.h"

COURSE_EXERCISE(
    "Peer access, once, where it can be had",
    "For each ordered pair of different GPUs (from, to), ask cudaDeviceCanAccessPeer; where it "
    "says yes, make `from` current and enable its access to `to` (section 6.1). Access has a "
    "direction and belongs to the current device. A second call meets "
    "cudaErrorPeerAccessAlreadyEnabled: fine here, but clear it. Put the caller's device back.\n\n"
    "int current, count; cudaGetDevice(&current); cudaGetDeviceCount(&count); for each from, "
    "to with from != to: cudaDeviceCanAccessPeer(&can, from, to); if (can) { cudaSetDevice(from); "
    "err = cudaDeviceEnablePeerAccess(to, 0); if (err == cudaErrorPeerAccessAlreadyEnabled) { "
    "cudaGetLastError(); err = cudaSuccess; } else if (err == cudaSuccess) (*pairs_enabled)++; } "
    "stop at the first other error; then cudaSetDevice(current) whatever happened, and return "
    "the first error.");
COURSE_EXERCISE_NEEDS_GPUS(2);
COURSE_EXERCISE_WORK_QUEUES(1);

/* The ordered pairs of GPUs that can have peer access, as the checker's own runtime says. */
static int able_pairs(void)
{
    const int count = harness_device_count();
    int able = 0;
    for (int from = 0; from < count; from++)
        for (int to = 0; to < count; to++) {
            int can_access = 0;
            if (from != to && cudaDeviceCanAccessPeer(&can_access, from, to) == cudaSuccess)
                able += can_access != 0;
        }
    (void)cudaGetLastError();
    return able;
}

/* One call under the trace: what it returned, and the count it gave (poisoned first). */
typedef struct one_call {
    cudaError_t err;
    int pairs;
} one_call;

static one_call call_it(void)
{
    int *pairs = harness_host_alloc(sizeof *pairs); /* the code writes it from its process */
    *pairs = -1;
    one_call c;
    TRACED_RUN(c.err = enable_peer_access(pairs));
    c.pairs = *pairs;
    harness_host_free(pairs);
    return c;
}

/* The pairs whose access the trace shows enabled by a call that succeeded, as "(0, 1) (1, 0)". */
static const char *pairs_enabled_words(void)
{
    static char words[512];
    size_t used = 0;
    words[0] = '\0';
    for (size_t n = 1; n <= trace_count_of(TRACED_cudaDeviceEnablePeerAccess); n++) {
        const traced_call *call = trace_nth(TRACED_cudaDeviceEnablePeerAccess, n);
        if (call->result == cudaSuccess)
            harness_append_text(words, sizeof words, &used, " (%d, %d)", call->current_device,
                                call->devices[0]);
    }
    return words[0] ? words : " none";
}

COURSE_TEST(every_pair_that_can_is_enabled_and_counted, 4)
{
    const int able = able_pairs();
    trace_start();
    trace_stop();
    const one_call c = call_it();
    harness_results_compared(); /* the count, against the checker's own */
    ck_assert_msg(c.err == cudaSuccess, "enable_peer_access returned %s. The calls:%s",
                  error_text(c.err), trace_summary());
    ck_assert_msg(c.pairs == able,
                  "*pairs_enabled is %d, but %d ordered pairs of this machine's %d GPUs can have "
                  "peer access, and none had it before the call. Each direction is a pair of its "
                  "own: (0, 1) and (1, 0). The pairs the calls enabled (from, to):%s. The calls:%s",
                  c.pairs, able, harness_device_count(), pairs_enabled_words(), trace_summary());
}

COURSE_TEST(a_second_call_succeeds_and_enables_nothing_more, 3)
{
    trace_start();
    trace_stop();
    const one_call first = call_it();
    ck_assert_msg(first.err == cudaSuccess, "the first call of enable_peer_access returned %s",
                  error_text(first.err));
    trace_start();
    trace_stop();
    const one_call second = call_it();
    harness_results_compared(); /* what the second call returned and counted */
    ck_assert_msg(second.err != cudaErrorPeerAccessAlreadyEnabled,
                  "the second call returned cudaErrorPeerAccessAlreadyEnabled: the first call "
                  "had enabled those pairs, so that is what cudaDeviceEnablePeerAccess says now. "
                  "It means the pair already has access, which is what the function is for: "
                  "treat it as success (and clear it with cudaGetLastError). The calls of the "
                  "second call:%s",
                  trace_summary());
    ck_assert_msg(second.err == cudaSuccess, "the second call returned %s. Its calls:%s",
                  error_text(second.err), trace_summary());
    ck_assert_msg(second.pairs == 0,
                  "the second call set *pairs_enabled to %d, but every pair that can have access "
                  "already had it from the first call: a pair already enabled is not counted. "
                  "Its calls:%s",
                  second.pairs, trace_summary());
}

COURSE_TEST(where_no_gpu_can_reach_another_nothing_is_enabled, 2)
{
    trace_start();
    trace_stop();
    trace_deny_peer_access(true);
    const one_call c = call_it();
    harness_results_compared(); /* what it returned and counted */
    ck_assert_msg(c.err == cudaSuccess && c.pairs == 0,
                  "the test made cudaDeviceCanAccessPeer answer 0 for every pair, as on a machine "
                  "whose GPUs cannot reach each other's memory (their PCIe paths meet only across "
                  "CPU sockets, say). enable_peer_access then returned %s and set *pairs_enabled "
                  "to %d, where nothing is to be enabled: cudaSuccess and 0. Enable a pair only "
                  "where cudaDeviceCanAccessPeer says it can; on such a machine "
                  "cudaDeviceEnablePeerAccess fails. The calls:%s",
                  error_text(c.err), c.pairs, trace_summary());
}

COURSE_TEST(each_pair_is_enabled_with_its_reader_current, 1)
{
    trace_start();
    trace_stop();
    const one_call c = call_it();
    ck_assert_msg(c.err == cudaSuccess, "enable_peer_access returned %s. The calls:%s",
                  error_text(c.err), trace_summary());
    for (size_t n = 1; n <= trace_count_of(TRACED_cudaDeviceEnablePeerAccess); n++) {
        const traced_call *call = trace_nth(TRACED_cudaDeviceEnablePeerAccess, n);
        ck_assert_msg(call->current_device != call->devices[0],
                      "%s asked for access to GPU %d with GPU %d itself current: a GPU is not its "
                      "own peer. cudaDeviceEnablePeerAccess(to, 0) gives the current device "
                      "access to `to`: make `from` current first (cudaSetDevice). The calls:%s",
                      nth_call_name(TRACED_cudaDeviceEnablePeerAccess, n), call->devices[0],
                      call->current_device, trace_summary());
    }
}

COURSE_TEST(the_device_that_was_current_is_current_again, 2)
{
    /* The last GPU first: code that leaves the first one current shows there. */
    const int callers_devices[] = {harness_device_count() - 1, 0};
    for (int k = 0; k < 2; k++) {
        const int before = callers_devices[k];
        harness_set_device(before); /* as the caller's own code would have */
        trace_start();
        trace_stop();
        const one_call c = call_it();
        ck_assert_msg(c.err == cudaSuccess,
                      "enable_peer_access returned %s with GPU %d current. The calls:%s",
                      error_text(c.err), before, trace_summary());
        const int after = harness_current_device();
        ck_assert_msg(after == before,
                      "GPU %d was current when enable_peer_access was called, and GPU %d when it "
                      "returned: the caller's next cudaMalloc or kernel would go to the wrong "
                      "GPU. Remember the current device (cudaGetDevice) at the start and make it "
                      "current again (cudaSetDevice) before returning. The calls:%s",
                      before, after, trace_summary());
    }
}

COURSE_TEST(the_already_enabled_error_is_not_left_behind, 1)
{
    trace_start();
    trace_stop();
    (void)call_it();
    trace_start();
    trace_stop();
    const one_call again = call_it();
    const cudaError_t left = harness_last_error();
    ck_assert_msg(again.err == cudaSuccess,
                  "the second call of enable_peer_access returned %s. Its "
                  "calls:%s",
                  error_text(again.err), trace_summary());
    ck_assert_msg(left != cudaErrorPeerAccessAlreadyEnabled,
                  "after a second call, cudaGetLastError in your program would return "
                  "cudaErrorPeerAccessAlreadyEnabled: the runtime keeps the error that "
                  "cudaDeviceEnablePeerAccess returned as the thread's last error, and the "
                  "caller's next check (after a kernel launch, say) would report it as its own. "
                  "Where you treat it as success, clear it: (void)cudaGetLastError(). The calls "
                  "of the second call:%s",
                  trace_summary());
}

/* One run of the function, as expect_every_failure_handled_on_device makes it. */
static cudaError_t run_once(void *unused)
{
    (void)unused;
    int *pairs = harness_host_alloc(sizeof *pairs);
    const cudaError_t err = enable_peer_access(pairs);
    harness_host_free(pairs);
    return err;
}

COURSE_TEST(errors_are_returned_and_the_callers_device_made_current_again, 3)
{
    /* From the last GPU, where the loop ends: what puts the caller's GPU back only on success
     * shows where a failure stops the loop early. */
    expect_every_failure_handled_on_device("enable_peer_access", run_once, NULL,
                                           harness_device_count() - 1, false);
}

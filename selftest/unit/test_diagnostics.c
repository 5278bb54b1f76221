/* test_diagnostics.c - unit tests of the harness's diagnoses and its JSON strings.
 *
 * These never touch CUDA: they feed the comparison crafted buffers and check
 * that each mistake is named in the learner's terms.
 */
#include "harness.h"
#include "report.h"
#include "unit_main.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { N = 1024 };
static float want[N], got[N];
static char message[512];

static void setup(void)
{
    fill_floats(want, N);
    poison_host(got, sizeof got);
}

START_TEST(equal_floats_need_no_diagnosis)
{
    memcpy(got, want, sizeof got);
    ck_assert(!describe_float_mismatch(got, want, N, "x", message, sizeof message));
}
END_TEST

START_TEST(n_bytes_instead_of_n_floats_is_named_as_the_bytes_pitfall)
{
    memcpy(got, want, N); /* the mistake: N bytes, a quarter of the floats */
    ck_assert(describe_float_mismatch(got, want, N, "the copy", message, sizeof message));
    ck_assert_msg(strstr(message, "only the first 256 of 1024 floats") != NULL, "%s", message);
    ck_assert_msg(strstr(message, "cudaMemcpy's count is in bytes") != NULL, "%s", message);
}
END_TEST

START_TEST(nothing_copied_is_named_as_untouched_poison)
{
    ck_assert(describe_float_mismatch(got, want, N, "the copy", message, sizeof message));
    ck_assert_msg(strstr(message, "none of the 1024 floats") != NULL, "%s", message);
}
END_TEST

START_TEST(a_short_copy_of_another_length_is_called_short)
{
    memcpy(got, want, 100 * sizeof(float));
    ck_assert(describe_float_mismatch(got, want, N, "the copy", message, sizeof message));
    ck_assert_msg(strstr(message, "only the first 100 of 1024") != NULL, "%s", message);
    ck_assert_msg(strstr(message, "in bytes") == NULL, "%s", message);
}
END_TEST

START_TEST(wrong_values_name_the_first_wrong_element)
{
    memcpy(got, want, sizeof got);
    got[17] = -1.0f;
    got[900] = 0.0f;
    ck_assert(describe_float_mismatch(got, want, N, "the copy", message, sizeof message));
    ck_assert_msg(strstr(message, "2 of the 1024 floats") != NULL, "%s", message);
    ck_assert_msg(strstr(message, "element 17, which is -1") != NULL, "%s", message);
}
END_TEST

START_TEST(count_bytes_for_count_elements_is_named_at_any_element_size)
{
    unsigned char want_bytes[96], got_bytes[96];
    fill_bytes(want_bytes, sizeof want_bytes);
    poison_host(got_bytes, sizeof got_bytes);
    memcpy(got_bytes, want_bytes, 8); /* 8 twelve-byte structs copied as 8 bytes */
    ck_assert(describe_byte_mismatch(got_bytes, want_bytes, sizeof got_bytes, 12, "the structs",
                                     message, sizeof message));
    ck_assert_msg(strstr(message, "only the first 8 of 96 bytes") != NULL, "%s", message);
    ck_assert_msg(strstr(message, "(8 * 12 = 96)") != NULL, "%s", message);
    memcpy(got_bytes, want_bytes, sizeof got_bytes);
    ck_assert(!describe_byte_mismatch(got_bytes, want_bytes, sizeof got_bytes, 12, "the structs",
                                      message, sizeof message));
}
END_TEST

START_TEST(a_kind_that_contradicts_the_pointers_is_named_with_the_right_one)
{
    traced_call call = {.function = TRACED_cudaMemcpy,
                        .dst_location = LOCATION_DEVICE,
                        .src_location = LOCATION_PAGEABLE_HOST,
                        .kind = cudaMemcpyDeviceToHost};
    ck_assert_str_eq(describe_kind_mismatch(1, "the copy up", &call),
                     "cudaMemcpy number 1 (the copy up) copies from pageable host memory to device "
                     "memory but says cudaMemcpyDeviceToHost: the kind must name the direction the "
                     "data moves, here cudaMemcpyHostToDevice (or cudaMemcpyDefault, which infers "
                     "it)");
    ck_assert_msg(
        strncmp(describe_kind_mismatch(2, NULL, &call), "cudaMemcpy number 2 copies", 26) == 0,
        "%s", describe_kind_mismatch(2, NULL, &call));
}
END_TEST

START_TEST(json_strings_escape_quotes_backslashes_and_control_characters)
{
    char *text = NULL;
    size_t size = 0;
    FILE *out = open_memstream(&text, &size);
    json_write_string(out, "say \"hi\"\\\n\t\x01");
    fclose(out);
    ck_assert_str_eq(text, "\"say \\\"hi\\\"\\\\\\n\\t\\u0001\"");
    free(text);
}
END_TEST

START_TEST(the_kind_follows_from_where_the_pointers_live)
{
    ck_assert_int_eq(memcpy_kind_for(LOCATION_DEVICE, LOCATION_PAGEABLE_HOST),
                     cudaMemcpyHostToDevice);
    ck_assert_int_eq(memcpy_kind_for(LOCATION_PINNED_HOST, LOCATION_DEVICE),
                     cudaMemcpyDeviceToHost);
    ck_assert_int_eq(memcpy_kind_for(LOCATION_DEVICE, LOCATION_DEVICE), cudaMemcpyDeviceToDevice);
    ck_assert_int_eq(memcpy_kind_for(LOCATION_PAGEABLE_HOST, LOCATION_PINNED_HOST),
                     cudaMemcpyHostToHost);
    ck_assert_str_eq(memcpy_kind_name(cudaMemcpyDefault), "cudaMemcpyDefault");
}
END_TEST

START_TEST(injected_failures_hit_the_nth_call_only)
{
    trace_start();
    trace_inject_failure(TRACED_cudaMemcpy, 2, cudaErrorInvalidValue);
    cudaError_t error = cudaSuccess;
    ck_assert(!trace_should_fail(TRACED_cudaMemcpy, &error));
    ck_assert(trace_should_fail(TRACED_cudaMemcpy, &error));
    ck_assert_int_eq(error, cudaErrorInvalidValue);
    ck_assert(!trace_should_fail(TRACED_cudaMemcpy, &error));
    ck_assert(!trace_should_fail(TRACED_cudaMalloc, &error));
    ck_assert_uint_eq(trace_count_of(TRACED_cudaMemcpy), 3);
    trace_stop();
}
END_TEST

/* The fast fills and comparisons against the loops that define them, at lengths around their
 * periods and blocks, and with the difference at every kind of place. */
START_TEST(fills_and_comparisons_match_their_definitions)
{
    enum { MOST = 3 * 4096 + 600 };
    static unsigned char bytes[MOST], other[MOST];
    static float floats[MOST];
    const size_t lengths[] = {0, 1, 250, 251, 252, 502, 503, 4095, 4096, 4097, 8192 + 17, MOST};
    for (size_t l = 0; l < sizeof lengths / sizeof lengths[0]; l++) {
        const size_t n = lengths[l];
        poison_host(bytes, sizeof bytes);
        fill_bytes(bytes, n);
        /* Each fill starts at a random place in its period: the first element says where. */
        const size_t byte_shift = n > 0 ? bytes[0] : 0;
        for (size_t i = 0; i < n; i++)
            ck_assert_uint_eq(bytes[i], (i + byte_shift) % 251);
        ck_assert(holds_only_poison(bytes + n, MOST - n));
        fill_floats(floats, n);
        const size_t float_shift = n > 0 ? (size_t)((floats[0] - 1.0f) * 4.0f) : 0;
        for (size_t i = 0; i < n; i++)
            ck_assert(floats[i] == 1.0f + (float)((i + float_shift) % ((size_t)1 << 22)) / 4.0f);
        memcpy(other, bytes, sizeof other);
        ck_assert_uint_eq(first_differing_byte(other, bytes, n), n);
        for (size_t at = 0; at < n; at += 1 + at / 3) {
            other[at] ^= 1;
            ck_assert_uint_eq(first_differing_byte(other, bytes, n), at);
            other[at] ^= 1;
        }
    }
    poison_host(bytes, sizeof bytes);
    ck_assert(holds_only_poison(bytes, 0) && holds_only_poison(bytes, 1) &&
              holds_only_poison(bytes, MOST));
    const size_t spots[] = {0, 1, 4095, 4096, MOST - 1};
    for (size_t s = 0; s < sizeof spots / sizeof spots[0]; s++) {
        bytes[spots[s]] = 0;
        ck_assert(!holds_only_poison(bytes, MOST));
        ck_assert(holds_only_poison(bytes + spots[s] + 1, MOST - spots[s] - 1));
        bytes[spots[s]] = POISON_BYTE;
    }
}
END_TEST

int main(void)
{
    Suite *suite = suite_create("harness");
    TCase *tc = tcase_create("diagnostics");
    tcase_add_checked_fixture(tc, setup, NULL);
    tcase_add_test(tc, equal_floats_need_no_diagnosis);
    tcase_add_test(tc, n_bytes_instead_of_n_floats_is_named_as_the_bytes_pitfall);
    tcase_add_test(tc, nothing_copied_is_named_as_untouched_poison);
    tcase_add_test(tc, a_short_copy_of_another_length_is_called_short);
    tcase_add_test(tc, wrong_values_name_the_first_wrong_element);
    tcase_add_test(tc, count_bytes_for_count_elements_is_named_at_any_element_size);
    tcase_add_test(tc, a_kind_that_contradicts_the_pointers_is_named_with_the_right_one);
    tcase_add_test(tc, json_strings_escape_quotes_backslashes_and_control_characters);
    tcase_add_test(tc, the_kind_follows_from_where_the_pointers_live);
    tcase_add_test(tc, injected_failures_hit_the_nth_call_only);
    tcase_add_test(tc, fills_and_comparisons_match_their_definitions);
    suite_add_tcase(suite, tc);
    return run_unit_suite(suite);
}

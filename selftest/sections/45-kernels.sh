# 45-kernels.sh - the course's GPU kernels (common/gpu_work.h): what the build embedded, what
# the grader lets learners call, and, on a GPU, what the kernels do.
section "The course's kernels (common/gpu_work.cu)"

kernels_work=build/selftest/kernels
rm -rf "$kernels_work" && mkdir -p "$kernels_work"
if ! command -v python3 >/dev/null 2>&1; then
    fail "python3 is there to read the fatbin and run the grader (make deps installs it)"
    return 0
fi

# --- Host only: the fatbin in libcommon.a holds every kernel gpu_work.c looks up ----------
# (Their refusals of bad arguments, before any CUDA call, are unit tests: test_gpu_work.)
kernel_names=$(sed -n 's/^ *\[[A-Z_]*\] = "\([a-z_0-9]*\)",$/\1/p' common/gpu_work.c)
cuda_archs=$($MAKE -s --no-print-directory list-cuda-archs)
if [[ -z $kernel_names ]]; then
    fail "the kernels' table in common/gpu_work.c can be read (no [NAME] = \"kernel\", lines)"
else
    fatbin_log=$(python3 selftest/fatbin_kernels.py build/obj/common/gpu_work_fatbin.o \
        build/obj/common/gpu_work_fatbin.fatbin "$cuda_archs" $kernel_names 2>&1)
    if [[ $? -eq 0 ]]; then
        pass "libcommon.a embeds machine code for sm_${cuda_archs// /, sm_} and PTX, each with the $(wc -w <<<"$kernel_names") kernels gpu_work.c loads"
    else
        fail "libcommon.a embeds every kernel gpu_work.c loads, for every architecture" \
            "$(grep -v '^ok' <<<"$fatbin_log")"
    fi
fi

# --- Host only: nothing in libcommon.a runs before main ------------------------------------
# An object nvcc compiled with host code registers its kernels from a constructor, which would
# touch CUDA in the harness's parent before it forks: the kernels must come in as data only.
constructors=$(objdump -h build/lib/libcommon.a 2>&1 | grep -E '\.(init_array|ctors|preinit_array)')
registrations=$(nm -u build/lib/libcommon.a 2>&1 | grep -E '__cuda(Register|PushCallConfiguration)')
if [[ -z $constructors && -z $registrations ]] && objdump -h build/lib/libcommon.a >/dev/null 2>&1; then
    pass "nothing in libcommon.a runs before main: no constructor, no kernel registration"
else
    fail "nothing in libcommon.a runs before main: no constructor, no kernel registration" \
        "$(printf '%s\n%s' "$constructors" "$registrations")"
fi

# --- Host only: the grader accepts a learner's file that calls the kernels' C API ---------
# The file is the first exercise's stub with a function of the learner's own that calls each
# of them; the same that loads GPU code from a file is refused.
first_exercise=$($MAKE -s --no-print-directory list-exercises | sed -n 1p)
learner_file() { # FOLDER CALLS: the stub, plus a static function making CALLS
    mkdir -p "$1/${first_exercise%/*}"
    { cat "exercises/$first_exercise.c"
      printf '\n#include "gpu_work.h"\n\n'
      printf '__attribute__((used)) static cudaError_t learner_helper(float *d_x, size_t n,\n'
      printf '                                                     unsigned long long *d_sum)\n'
      printf '{\n    cudaError_t err = cudaSuccess;\n%s\n    return err;\n}\n' "$2"; } \
        >"$1/$first_exercise.c"
}
learner_file "$kernels_work/calls-api" '    err = gpu_work_keep_busy(0, 1.0);
    err = gpu_work_scale_add(0, d_x, d_x, n, 2.0f, 1.0f);
    err = gpu_work_checksum(0, d_x, n * sizeof *d_x, 1, d_sum);
    err = gpu_work_bytes_to_floats(0, d_x, (const unsigned char *)d_sum, n, 2.0f, 1.0f);
    err = gpu_work_load();
    (void)gpu_work_checksum_host(d_x, n, 1);'
learner_file "$kernels_work/loads-a-file" '    cudaLibrary_t library;
    (void)d_x, (void)n, (void)d_sum;
    err = cudaLibraryLoadFromFile(&library, "kernels.fatbin", NULL, NULL, 0, NULL, NULL, 0);'
if [[ -z $first_exercise ]]; then
    fail "the grader and the kernels' C API (make list-exercises lists no exercise)"
else
    inspect_log=$(python3 grader/grade.py inspect "$kernels_work/calls-api/$first_exercise.c" \
        "$kernels_work/loads-a-file/$first_exercise.c" 2>&1)
    if grep -q "^accepted .*calls-api/" <<<"$inspect_log"; then
        pass "the grader accepts a learner's file that calls every function of gpu_work.h"
    else
        fail "the grader accepts a learner's file that calls every function of gpu_work.h" \
            "$inspect_log"
    fi
    if grep -q "^not accepted .*loads-a-file/.*cudaLibraryLoadFromFile" <<<"$inspect_log"; then
        pass "the grader refuses a learner's file that loads GPU code from a file"
    else
        fail "the grader refuses a learner's file that loads GPU code from a file" "$inspect_log"
    fi
fi

# --- On a GPU: each kernel does what gpu_work.h says -----------------------------------
if need_gpu "dev/gpu_work_check: the kernels on the GPU" && build build/dev/gpu_work_check; then
    check_log=$(with_gpu alone timeout 120 build/dev/gpu_work_check 2>&1) # it times kernels
    case $? in
    0) pass "dev/gpu_work_check: $(grep -c '^ok' <<<"$check_log") checks of the kernels on the GPU"
       sed -n 's/^ok  */          /p' <<<"$check_log" ;;
    77) if [[ ${REQUIRE_GPU:-} == 1 ]]; then
            fail "dev/gpu_work_check: REQUIRE_GPU=1 but this CUDA runtime runs no kernels" \
                "$check_log"
        else
            skip "dev/gpu_work_check (skipped: $(sed -n 's/^ok  *//p' <<<"$check_log"))"
        fi ;;
    *) fail "dev/gpu_work_check: the kernels on the GPU" "$check_log" ;;
    esac
fi

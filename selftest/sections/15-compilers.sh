# 15-compilers.sh - the course builds, warning-free under -Werror, with the other common
# compiler and at other optimisation levels: learners set CC and CFLAGS.
section "The course under other compilers and flags (host only)"

compile_with() { # DESCRIPTION MAKE-VARIABLE...: build everything into a build folder of its own
    local description=$1 folder log
    shift
    folder=build/selftest/compilers/$(tr -c 'A-Za-z0-9\n' '-' <<<"$description")
    rm -rf "$folder"
    # The kernels' fatbin is nvcc's work, the same under any C compiler: reused, not rebuilt.
    mkdir -p "$folder/obj/common"
    cp -a build/obj/common/gpu_work_fatbin.* "$folder/obj/common/" 2>/dev/null
    if log=$($MAKE -s --no-print-directory -j"$(nproc)" course-build BUILD="$folder" "$@" 2>&1); then
        pass "everything builds with $description"
    else
        fail "everything builds with $description" "$(grep -E 'error|warning' <<<"$log" | head -n 20)"
    fi
    rm -rf "$folder"
}

if command -v clang >/dev/null 2>&1; then
    compile_with "clang ($(clang --version | head -n 1))" CC=clang
else
    skip "everything builds with clang (skipped: clang is not installed here)"
fi
compile_with "CFLAGS=-O0" CFLAGS="-O0 -g"
compile_with "CFLAGS=-O3" CFLAGS="-O3"

# A toolkit older than CUDA 13 is refused before anything is built, naming its version: chapter
# 4 and the harness are written for CUDA 13's cudaMemPrefetchAsync and cudaMemAdvise. A copy of
# the real header that says 12.4 stands for such a toolkit.
old_toolkit=build/selftest/cuda-12
mkdir -p "$old_toolkit/include"
real_header=$($MAKE -s --no-print-directory list-toolchain | sed -n 's/^CUDA_HOME=//p')/include/cuda_runtime_api.h
sed 's/^#define CUDART_VERSION .*/#define CUDART_VERSION 12040/' "$real_header" \
    >"$old_toolkit/include/cuda_runtime_api.h" 2>/dev/null
check="make check with a CUDA 12 toolkit stops before building, naming the version and why"
output=$($MAKE -s --no-print-directory check CUDA_HOME="$old_toolkit" 2>&1)
if [[ $? -ne 0 && $output == *"version 12.4"* && $output == *"needs CUDA 13 or later"* ]]; then
    pass "$check"
else
    fail "$check" "$output"
fi
rm -rf "$old_toolkit"

#!/bin/sh
# check.sh PREFIX - checks the stand-in runtime's devices (multi_device_check.c says what): builds
# the checking program against the runtime in PREFIX (dev/stand-in/build.sh PREFIX) and the
# course's build/lib/libcommon.a (make CUDA_HOME=PREFIX first; BUILD=DIR for another build
# folder), and runs it. Its last line is PASSED or FAILED, as its status.
#     dev/stand-in/build.sh /tmp/stand-in-cuda && make CUDA_HOME=/tmp/stand-in-cuda &&
#     dev/stand-in/check.sh /tmp/stand-in-cuda
set -eu
here=$(cd "$(dirname "$0")" && pwd)
prefix=${1:?usage: dev/stand-in/check.sh PREFIX: the stand-in runtime dev/stand-in/build.sh built}
build=${BUILD:-$here/../../build}
if [ ! -f "$build/lib/libcommon.a" ]; then
    echo "check.sh: no $build/lib/libcommon.a: make CUDA_HOME=$prefix first" >&2
    exit 2
fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
cc -std=c11 -O1 -Wall -Wextra -Werror -pthread -I"$prefix/include" -I"$here/../../common" \
    "$here/multi_device_check.c" "$here/multi_device_queues.c" "$build/lib/libcommon.a" -L"$prefix/lib64" \
    -Wl,-rpath,"$prefix/lib64" -lcudart -o "$out/multi_device_check"
"$out/multi_device_check"

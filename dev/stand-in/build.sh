#!/bin/sh
# build.sh DIR - the shared stand-in runtime (../shared/tools/fakecuda, FAKECUDA=PATH), built into
# DIR with what the course added since that it lacks: chapter 4's two calls, cudaMemPrefetchAsync
# and cudaMemAdvise (managed.c), chapter 5's kernel, gpu_work_bytes_to_floats_kernel
# (bytes_to_floats.inc), and chapter 6's several devices: FAKE_CUDA_DEVICES=N of them (1 to 8,
# default 1), each with its memory, streams and events (multi-device.patch, applied with no fuzz
# to a copy of the shared sources; devices.c), peer access and peer copies (peer.c). A tool for
# developing the course without a GPU, like the stand-in itself:
#     dev/stand-in/build.sh /tmp/stand-in-cuda && make CUDA_HOME=/tmp/stand-in-cuda ...
#     FAKE_CUDA_DEVICES=2 make run CH=6 CUDA_HOME=/tmp/stand-in-cuda
# dev/stand-in/check.sh PREFIX checks the devices' behaviours against such a build.
# Once the shared tool has them all this script only builds it.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
shared=${FAKECUDA:-$here/../../../shared/tools/fakecuda}
out=${1:?usage: dev/stand-in/build.sh DIR: say where the runtime goes}
if [ ! -f "$shared/src/build.sh" ]; then
    echo "stand-in: no stand-in runtime at $shared (FAKECUDA=PATH names it)" >&2
    exit 2
fi
has_managed=$(grep -l 'cudaMemPrefetchAsync' "$shared/src/"*.c || true)
has_bytes_to_floats=$(grep -l 'gpu_work_bytes_to_floats_kernel' "$shared/src/kernels.c" || true)
has_peer=$(grep -l 'cudaMemcpyPeerAsync' "$shared/src/"*.c || true)
has_devices=$(grep -l 'FAKE_CUDA_DEVICES' "$shared/src/"*.c || true)
if [ -n "$has_managed" ] && [ -n "$has_bytes_to_floats" ] && [ -n "$has_devices" ]; then
    exec sh "$shared/src/build.sh" "$out"
fi
if [ -n "$has_peer" ] && [ -z "$has_devices" ]; then
    echo "stand-in: $shared/src has peer calls of its own but not several devices: peer.c would" \
        "define them again; merge dev/stand-in/peer.c and multi-device.patch into it by hand" >&2
    exit 1
fi
# Its build compiles a fixed list of sources: a copy of them, with what it lacks added.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp "$shared/src/"* "$work/"
# add_source FILE: one of the course's files, compiled beside the shared ones.
add_source() {
    cp "$here/$1" "$work/"
    sed -i "s|\"\$src/kernels.c\"|\"\$src/kernels.c\" \"\$src/$1\"|" "$work/build.sh"
    grep -q "\"\$src/$1\"" "$work/build.sh" || {
        echo "stand-in: $shared/src/build.sh no longer lists kernels.c: add $1 by hand" >&2
        exit 1
    }
}
if [ -z "$has_devices" ]; then
    # The shared sources' one device made several; a patch that no longer applies says so.
    if ! patch --force --fuzz=0 --no-backup-if-mismatch -r - -p1 -d "$work" \
            <"$here/multi-device.patch" >"$work/patch.log" 2>&1; then
        echo "stand-in: dev/stand-in/multi-device.patch no longer applies to $shared/src, which" \
            "changed since it was written: redo the change in a copy and write the patch anew" \
            "(its header says how)" >&2
        sed 's/^/    /' "$work/patch.log" >&2
        exit 1
    fi
    add_source devices.c
    add_source peer.c
fi
[ -n "$has_managed" ] || add_source managed.c
if [ -z "$has_bytes_to_floats" ]; then
    # Chapter 5's kernel: its function before the table of known kernels, its row in it.
    cp "$here/bytes_to_floats.inc" "$work/"
    sed -i -e 's|^static const fc_kernel known\[\] = {|#include "bytes_to_floats.inc"\n&\n    BYTES_TO_FLOATS_KERNEL|' \
        "$work/kernels.c"
    grep -q 'BYTES_TO_FLOATS_KERNEL' "$work/kernels.c" || {
        echo "stand-in: $shared/src/kernels.c no longer has its table 'known': add chapter 5's kernel by hand" >&2
        exit 1
    }
fi
sh "$work/build.sh" "$out"

#!/bin/sh
# build.sh DIR - the shared stand-in runtime (../shared/tools/fakecuda, FAKECUDA=PATH), built into
# DIR with the two calls chapter 4 adds that it lacks: cudaMemPrefetchAsync and cudaMemAdvise
# (managed.c). A tool for developing the course without a GPU, like the stand-in itself:
#     dev/stand-in/build.sh /tmp/stand-in-cuda && make CUDA_HOME=/tmp/stand-in-cuda ...
# Once the shared tool has both calls this script only builds it.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
shared=${FAKECUDA:-$here/../../../shared/tools/fakecuda}
out=${1:?usage: dev/stand-in/build.sh DIR: say where the runtime goes}
if [ ! -f "$shared/src/build.sh" ]; then
    echo "stand-in: no stand-in runtime at $shared (FAKECUDA=PATH names it)" >&2
    exit 2
fi
if grep -q 'cudaMemPrefetchAsync' "$shared/src/"*.c; then
    exec sh "$shared/src/build.sh" "$out"
fi
# Its build compiles a fixed list of sources: a copy of them, with managed.c added to the list.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp "$shared/src/"* "$work/"
cp "$here/managed.c" "$work/"
sed -i 's|"$src/kernels.c"|"$src/kernels.c" "$src/managed.c"|' "$work/build.sh"
grep -q '"$src/managed.c"' "$work/build.sh" || {
    echo "stand-in: $shared/src/build.sh no longer lists kernels.c: add managed.c by hand" >&2
    exit 1
}
sh "$work/build.sh" "$out"

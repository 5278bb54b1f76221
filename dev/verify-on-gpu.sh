#!/usr/bin/env bash
# verify-on-gpu.sh - the course's proof on a machine with a GPU, in one go, its logs kept.
#
#   dev/verify-on-gpu.sh OUT [STUDENTS]      (run as root, from a checkout, on the GPU machine)
#
# In order, each log written to OUT (gzipped) as soon as it is done, and a line of each in
# OUT/run.log: make deps; make test REQUIRE_GPU=1 SELFTEST_TIMES=1 as an unprivileged user
# (nobody, 65534) in a copy of the tree without its build folder, as a fresh clone would run
# it; the same as root in the checkout; make check SOLUTIONS=1 twice (the second with nothing
# to rebuild); make grade-benchmark STUDENTS (100 by default; 0 skips it). The closing lines
# of each are what a note quotes. VERIFY_SKIP="root check" leaves those steps out (a machine
# lent for minutes, say).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
if [[ -z ${1:-} ]]; then
    echo "usage: dev/verify-on-gpu.sh OUT [STUDENTS]: say where the logs go" >&2
    exit 2
fi
out=$1 students=${2:-100}
skip=" ${VERIFY_SKIP:-} "
if [[ ! $students =~ ^[0-9]+$ ]]; then
    echo "verify-on-gpu: STUDENTS=$students: give a whole number (0 for no benchmark)" >&2
    exit 2
fi
if [[ $(id -u) -ne 0 ]]; then
    echo "verify-on-gpu: run it as root: it runs make test as another user too" >&2
    exit 2
fi
mkdir -p "$out"
note() { echo "== $(date +%T) $*" | tee -a "$out/run.log"; }
# keep NAME COMMAND...: runs it, its output into OUT/NAME.log.gz, its closing lines into run.log.
keep() {
    local name=$1 log
    shift
    log=$(mktemp)
    note "$name"
    { time "$@"; } >"$log" 2>&1
    gzip -c "$log" >"$out/$name.log.gz"
    grep -a "passed,\|FAIL\|^real\|students a minute\|students per minute" "$log" | tail -n 20 |
        tee -a "$out/run.log"
    rm -f "$log"
}

nvidia-smi -L >>"$out/run.log" 2>&1
keep deps make deps
copy=$(mktemp -d /tmp/verify-copy.XXXXXX) home=$(mktemp -d /tmp/verify-home.XXXXXX)
tar -cf - --exclude=./build . | tar -xf - -C "$copy"
chown -R 65534:65534 "$copy" "$home"
keep test-user setpriv --reuid=65534 --regid=65534 --clear-groups \
    env HOME="$home" PATH="$PATH" make -C "$copy" test REQUIRE_GPU=1 SELFTEST_TIMES=1
tar -czf "$out/test-user-results.tgz" -C "$copy/build/selftest" results 2>/dev/null
rm -rf "$copy" "$home"
[[ $skip == *" root "* ]] || keep test-root make test REQUIRE_GPU=1 SELFTEST_TIMES=1
if [[ $skip != *" check "* ]]; then
    keep check-solutions-1 make check SOLUTIONS=1
    keep check-solutions-2 make check SOLUTIONS=1
fi
((students > 0)) && keep benchmark make grade-benchmark STUDENTS="$students"
note end

#!/usr/bin/env bash
# verify-on-gpu.sh - the course's proof on a machine with a GPU, in one go, its logs kept.
#
#   dev/verify-on-gpu.sh OUT [STUDENTS]      (run as root, from a checkout, on the GPU machine)
#
# In order, each log written to OUT (gzipped) as soon as it is done, and a line of each in
# OUT/run.log: make deps; make test REQUIRE_GPU=1 SELFTEST_TIMES=1 as an unprivileged user
# (nobody, 65534) in a copy of the tree without its build folder, as a fresh clone would run
# it; the same as root in the checkout; make check SOLUTIONS=1 twice (the second with nothing
# to rebuild), then for chapters 1 to 3 alone; make grade-benchmark STUDENTS (100 by default; 0 skips it). The unprivileged
# make test and the benchmarks run beside dev/gpu_lock_timeline.py (OUT/NAME-timeline.txt),
# vmstat (OUT/NAME-vmstat.txt) and nvidia-smi dmon (OUT/NAME-dmon.txt), each second.
# The closing lines of each are what a note quotes.
#
# VERIFY_SKIP="test root check benchmark baseline-test baseline-benchmark" leaves any of those
# steps out (a machine lent for minutes, say; or a second call on the warm machine for the
# baseline alone). VERIFY_CH="1 2 3" benchmarks a class of those chapters' exercises (make
# grade-benchmark CH=). VERIFY_BASELINE=FILE.tgz, a `git archive` of the tree to compare with
# (the lent machine's .git may be stale: carry the file), runs that tree's make test as the
# unprivileged user (baseline-test) and its benchmark (baseline-benchmark) too, each right after
# this tree's, on the same machine, with its own make deps. VERIFY_PACK=1 keeps OUT to two
# files, run.log and verify.tgz (every other log, packed again after each step), for a machine
# that hands back only a few files.
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
out=$(cd "$out" && pwd) # the benchmarks write it from other folders
packed=$out
if [[ -n ${VERIFY_PACK:-} ]]; then
    out=$(mktemp -d /tmp/verify-logs.XXXXXX)
    chmod 755 "$out"
fi
# pack: with VERIFY_PACK, OUT's two files brought up to date.
pack() {
    [[ $out == "$packed" ]] && return 0
    cp "$out/run.log" "$packed/run.log" 2>/dev/null
    tar -czf "$packed/verify.tgz.new" -C "$out" . && mv "$packed/verify.tgz.new" "$packed/verify.tgz"
}
note() {
    echo "== $(date +%T) $*" | tee -a "$out/run.log"
    pack
}
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

# watched NAME OWNER COMMAND...: keep NAME COMMAND with a lock folder of OWNER's (make test
# makes its lock files there), the GPU's lock sampled beside it into OUT/NAME-timeline.txt, the
# CPUs' and the GPU's load into OUT/NAME-vmstat.txt and OUT/NAME-dmon.txt.
watched() {
    local name=$1 owner=$2 locks timeline vmstat dmon
    shift 2
    locks=$(mktemp -d /tmp/verify-locks.XXXXXX)
    chown "$owner" "$locks"
    chmod 755 "$locks" # as make test makes its own: other users may open the files
    python3 dev/gpu_lock_timeline.py "$locks" >"$out/$name-timeline.txt" 2>&1 &
    timeline=$!
    # The CPUs' and the GPU's load, each second: whether a run waits for them or for its turns.
    vmstat -n -t 1 >"$out/$name-vmstat.txt" 2>&1 &
    vmstat=$!
    nvidia-smi dmon -s ut -d 1 >"$out/$name-dmon.txt" 2>&1 &
    dmon=$!
    keep "$name" env COURSE_LOCK_DIR="$locks" "$@"
    kill "$timeline" "$vmstat" "$dmon"
    wait "$timeline" "$vmstat" "$dmon"
    tee -a "$out/run.log" <"$out/$name-timeline.txt"
    rm -rf "$locks"
}
nvidia-smi -L >>"$out/run.log" 2>&1
# The machine's layout: which CPUs and memory node are the GPU's own (a timed test's reference
# and the learner's code may run on different ones).
{ nvidia-smi topo -m; lscpu | grep -i numa; } >>"$out/run.log" 2>&1
keep deps make deps
# results NAME FOLDER: the exercises' section's records and test hosts' lines, the gradings'
# logs and the class's feedback from FOLDER's make test, into OUT/NAME-results.tgz.
results() {
    (cd "$2/build/selftest" && tar -czf "$out/$1-results.tgz" results \
        $(ls grader-class/*.log agreement/*.log grader-class/grader-out/students/*/feedback.md \
             grader-class/grader-out/students/*/grade.json \
             grader-class/unsafe/grader-out/students/*/grade.json \
             agreement/out-*/students/*/grade.json 2>/dev/null))
}
# user_test NAME TREE [VARIABLE=VALUE...]: TREE's make test as uid 65534, in a copy without its
# build folder, with those variables set.
user_test() {
    local name=$1 tree=$2 copy home
    shift 2
    copy=$(mktemp -d /tmp/verify-copy.XXXXXX) home=$(mktemp -d /tmp/verify-home.XXXXXX)
    tar -cf - -C "$tree" --exclude=./build . | tar -xf - -C "$copy"
    chown -R 65534:65534 "$copy" "$home"
    watched "$name" 65534:65534 setpriv --reuid=65534 --regid=65534 --clear-groups \
        env HOME="$home" PATH="$PATH" "$@" make -C "$copy" test REQUIRE_GPU=1 SELFTEST_TIMES=1
    results "$name" "$copy"
    rm -rf "$copy" "$home"
}
baseline=
if [[ -n ${VERIFY_BASELINE:-} ]]; then
    baseline=$(mktemp -d /tmp/verify-baseline.XXXXXX)
    if tar -xzf "$VERIFY_BASELINE" -C "$baseline"; then
        [[ -d .deps ]] && cp -r .deps "$baseline/" # the packages make deps unpacks, carried
        keep baseline-deps make -C "$baseline" deps
    else
        note "VERIFY_BASELINE=$VERIFY_BASELINE: not a tree to compare with (git archive --format=tar.gz)"
        rm -rf "$baseline"
        baseline=
    fi
fi
[[ $skip != *" test "* ]] && user_test test-user .
[[ -n $baseline && $skip != *" baseline-test "* ]] && user_test test-user-baseline "$baseline"
if [[ $skip != *" root "* ]]; then
    keep test-root make test REQUIRE_GPU=1 SELFTEST_TIMES=1
    results test-root .
fi
# VERIFY_LANES=N: make test again as the unprivileged user, with N test programs side by side in
# each section (SELFTEST_LANES), to compare with the first run.
[[ -n ${VERIFY_LANES:-} ]] &&
    user_test "test-user-lanes-$VERIFY_LANES" . SELFTEST_LANES="$VERIFY_LANES"
if [[ $skip != *" check "* ]]; then
    keep check-solutions-1 make check SOLUTIONS=1
    keep check-solutions-2 make check SOLUTIONS=1
    # The fifteen of chapters 1 to 3, which the issue's figure of 6 s was measured on.
    fifteen=$(make -s --no-print-directory list-exercises | grep '^ch0[123]-' | tr '\n' ' ')
    keep check-fifteen make check SOLUTIONS=1 EX="$fifteen"
fi
# benchmark NAME FOLDER: make grade-benchmark in FOLDER, beside the lock's timeline.
benchmark() {
    watched "$1" root make -C "$2" grade-benchmark STUDENTS="$students" CH="${VERIFY_CH:-}"
    # Every student's feedback: which test a student who solved everything lost, say.
    (cd "$2/build/grade-benchmark/out" && tar -czf "$out/$1-feedback.tgz" students/*/feedback.md)
}
((students > 0)) && [[ $skip != *" benchmark "* ]] && benchmark benchmark .
((students > 0)) && [[ -n $baseline && $skip != *" baseline-benchmark "* ]] &&
    benchmark benchmark-baseline "$baseline"
[[ -n $baseline ]] && rm -rf "$baseline"
note end

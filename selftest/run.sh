#!/usr/bin/env bash
# run.sh - `make test`, the course's own test suite.
#
# Runs each section in selftest/sections/ (host-only unit tests, the harness's
# behaviour, exercises against their solutions, stubs and mutants, chapter
# programs, the grader, and whatever later sections add). Without a GPU the GPU
# checks are skipped, each with a line saying so; REQUIRE_GPU=1 makes them
# failures. The last line is "N passed, N failed" (", N skipped").
# SECTIONS="30 40" runs only the sections whose file names start so (for work on one part);
# SELFTEST_LANES=N, N test programs side by side in each section that runs several (lib.sh).
#
# Everything the sections run is built first, in one make. Then, on a machine with a GPU and
# 8 CPUs or more, the sections run side by side, each in a subshell writing a log, and the logs
# are shown in order, each once it and those before it are done; elsewhere, where they would
# only compete for the CPUs, one after another (SELFTEST_SERIAL=1 or 0 says which instead).
# Their GPU work shares one set of lock files (harness/gpu_locks.sh): a test that times the GPU
# has it alone among all of them, and CUDA contexts are made three at a time at most.
set -uo pipefail
cd "$(dirname "$0")/.."
MAKE=${MAKE:-make}
export NO_COLOR=${NO_COLOR:-}
source selftest/lib.sh
source harness/gpu_locks.sh
source harness/hosts.sh

started=$EPOCHREALTIME
if ! $MAKE -s --no-print-directory -j"$(nproc)" build/tools/gpu_probe build/tools/report_block \
        build/lib/libharness.a build/lib/libcommon.a; then
    echo "make test: the course's libraries did not build" >&2
    echo "0 passed, 1 failed"
    exit 1
fi
# The rest may fail to build in part: the section that needs a program says so, with the errors.
$MAKE -s -k --no-print-directory -j"$(nproc)" selftest-build >/dev/null 2>&1
prebuilt=1
# The grader's prerequisites (bubblewrap), once, before the sections that grade: 60-grader says
# how it went.
grade_deps_log=$(grader/install-deps.sh --if-missing 2>&1)
grade_deps_status=$?
build_seconds=$(seconds_since "$started")

# Asked once here, for every section: each question costs a CUDA context.
probe_gpu
export CUDA_DEVICE_ORDER=PCI_BUS_ID # as make grade numbers GPUs, so its lock files are these
# The lock folder of its own, or the one it is given (COURSE_LOCK_DIR, as make check and make
# grade take it): to share the GPU with other runs, or to watch its locks
# (dev/gpu_lock_timeline.py).
if [[ -n ${COURSE_LOCK_DIR:-} && -d $COURSE_LOCK_DIR ]]; then
    own_lock_dir=''
else
    COURSE_LOCK_DIR=$(mktemp -d "${TMPDIR:-/tmp}/course-test-locks.XXXXXX")
    chmod 755 "$COURSE_LOCK_DIR" # the grader's workers, other users, open the files read-only
    own_lock_dir=1
fi
export COURSE_LOCK_DIR
use_gpu_locks "$COURSE_LOCK_DIR"
logs=build/selftest/sections
rm -rf "$logs" && mkdir -p "$logs"
trap '[[ -z $own_lock_dir ]] || rm -rf "$COURSE_LOCK_DIR"' EXIT

# run_section FILE: the section, in a subshell of its own; its counts go to a file beside its
# log. (The names here are ones no section uses: a section's variables are its own.) The
# counts are written by an EXIT trap, which also keeps bash 5.2 from running a section's last
# command in place of the subshell (it does, when that command is a program after || or &&,
# and what follows the source never runs).
run_section() {
    (
        __section=$(basename "$1" .sh)
        __counts=$PWD/$logs/$__section.counts
        __section_started=$EPOCHREALTIME
        __end() {
            [[ -n ${__finished:-} ]] || fail "section $__section ran to its end (it stopped early)"
            printf '  (%s: %.1f s)\n' "$__section" "$(seconds_since "$__section_started")"
            echo "$passed $failed $skipped" >"$__counts"
        }
        trap __end EXIT
        passed=0 failed=0 skipped=0
        _line_started=$EPOCHREALTIME
        source "$1"
        __finished=1
    ) </dev/null
}

# Side by side where a GPU is what they wait for, with CPUs to spare; else one after another.
# SELFTEST_SERIAL=1 or 0 decides.
side_by_side=''
[[ -n $gpu_present && $(nproc) -ge 8 ]] && side_by_side=1
case ${SELFTEST_SERIAL:-} in 1) side_by_side='' ;; 0) side_by_side=1 ;; esac
# Side by side, every test program may hold a share of the GPU's memory, as make grade gives
# each of its PER_GPU=8 (harness/trace/trace.c): the isolation fixture's test that takes all it can
# must not starve the programs beside it.
if [[ -n $side_by_side && -z ${COURSE_MEMORY_LIMIT_MB:-} ]]; then
    gpu_memory_mb=$(nvidia-smi --query-gpu=memory.total --format=csv,noheader,nounits 2>/dev/null |
                    head -n 1)
    [[ $gpu_memory_mb =~ ^[0-9]+$ ]] && export COURSE_MEMORY_LIMIT_MB=$((gpu_memory_mb / 9))
fi
printf '  (building everything: %.1f s; the sections run %s)\n' "$build_seconds" \
    "$([[ -n $side_by_side ]] && echo "side by side" || echo "one after another")"
names=() pids=()
for section_file in selftest/sections/*.sh; do
    if [[ -n ${SECTIONS:-} ]]; then
        wanted=0
        for prefix in $SECTIONS; do [[ $(basename "$section_file") == "$prefix"* ]] && wanted=1; done
        ((wanted)) || continue
    fi
    name=$(basename "$section_file" .sh)
    names+=("$name")
    if [[ -n $side_by_side ]]; then
        run_section "$section_file" >"$logs/$name.log" 2>&1 &
        pids+=($!)
    else
        run_section "$section_file"
    fi
done

for i in "${!names[@]}"; do
    name=${names[i]}
    if [[ -n $side_by_side ]]; then
        wait "${pids[i]}"
        cat "$logs/$name.log"
    fi
    if read -r section_passed section_failed section_skipped <"$logs/$name.counts" 2>/dev/null; then
        passed=$((passed + section_passed)) failed=$((failed + section_failed))
        skipped=$((skipped + section_skipped))
    else
        fail "section $name ran to its end"
    fi
done
printf '\n(make test took %.1f s)\n' "$(seconds_since "$started")"
[[ -z $gpu_present ]] && echo "(no GPU: $gpu_reason; the checks that need one were skipped)"

echo
line="$passed passed, $failed failed"
((skipped > 0)) && line+=", $skipped skipped"
echo "$line"
((failed == 0 && passed > 0))

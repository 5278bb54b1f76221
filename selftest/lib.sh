# lib.sh - the self-test's bookkeeping, sourced by selftest/run.sh and its sections.
#
# A section reports each check with pass, fail or skip; run.sh prints the
# closing line from the counts. GPU sections call need_gpu first.

passed=0 failed=0 skipped=0
if [[ -t 1 && -z ${NO_COLOR:-} ]]; then
    _green=$'\033[32m' _red=$'\033[31;1m' _yellow=$'\033[33m' _reset=$'\033[0m'
else
    _green='' _red='' _yellow='' _reset=''
fi

# SELFTEST_TIMES=1: each line starts with the seconds since the line before, to find what is slow.
_line_started=$EPOCHREALTIME
_took=''
_time_line() {
    [[ ${SELFTEST_TIMES:-} == 1 ]] || return 0
    _took=$(awk -v from="$_line_started" -v to="$EPOCHREALTIME" 'BEGIN { printf "%6.2f ", to - from }')
    _line_started=$EPOCHREALTIME
}
pass() { passed=$((passed + 1)); _time_line; echo "$_took  ${_green}ok${_reset}    $1"; }
skip() { skipped=$((skipped + 1)); _time_line; echo "$_took  ${_yellow}skip${_reset}  $1"; }
# fail TEXT [DETAILS]: details are shown indented under the line.
fail() {
    failed=$((failed + 1))
    _time_line
    echo "$_took  ${_red}FAIL${_reset}  $1"
    [[ -n ${2:-} ]] && sed 's/^/          /' <<<"$2" | head -n 40
    return 0
}
section() { echo; echo "$1"; }
# wait_for_a_place N: returns once fewer than N of this shell's background jobs are running, for
# sections that run programs side by side, N at a time.
wait_for_a_place() { while (($(jobs -rp | wc -l) >= $1)); do wait -n; done; }

# probe_gpu: asks once whether there is a GPU (gpu_present), and why not (gpu_reason), for the
# sections run.sh starts after it; asking costs a CUDA context.
probe_gpu() {
    gpu_reason=$(build/tools/gpu_probe 2>&1) && gpu_present=1 || gpu_present=
    streams_overlap='' asynchronous_reason=$gpu_reason
    [[ -n $gpu_present ]] &&
        asynchronous_reason=$(build/tools/gpu_probe --asynchronous 2>&1) && streams_overlap=1
    # The stand-in runtime (fakecuda) runs streams as queues, but times them by a model that
    # follows this machine's CPUs: its speed tests judge nothing.
    stand_in='' stand_in_reason=''
    [[ $gpu_reason == Stand-in* ]] && stand_in=1 &&
        stand_in_reason="the stand-in runtime times copies by a model that follows this machine's CPUs"
}

# need_gpu WHAT: true when a GPU is there; otherwise records WHAT as skipped
# (or, with REQUIRE_GPU=1, as failed) and returns false.
need_gpu() {
    [[ -n $gpu_present ]] && return 0
    if [[ ${REQUIRE_GPU:-} == 1 ]]; then
        fail "$1: REQUIRE_GPU=1 but there is no CUDA device ($gpu_reason)"
    else
        skip "$1 (skipped: no GPU)" # the reason is said once, at the end
    fi
    return 1
}

# build TARGET...: builds quietly; on failure records it and shows the errors. After run.sh's
# one make of everything (prebuilt), a target that exists is up to date: no make is asked again.
build() {
    local log target missing=
    for target in "$@"; do [[ -e $target ]] || missing=1; done
    [[ -n ${prebuilt:-} && -z $missing ]] && return 0
    if ! log=$($MAKE -s --no-print-directory "$@" 2>&1); then
        fail "build $*" "$log"
        return 1
    fi
}

# module_seconds: the file of how long each program of the exercises' section took, the last
# run's, or in a fresh clone the one measured on a GPU that the course keeps
# (selftest/module-seconds.tsv): the hosts and the agreement's students are shared out by it.
module_seconds() {
    if [[ -s build/selftest/results/times ]]; then
        echo build/selftest/results/times
    else
        echo selftest/module-seconds.tsv
    fi
}

# Seconds since an $EPOCHREALTIME reading (awk: bc is not everywhere).
seconds_since() { awk -v from="$1" -v to="$EPOCHREALTIME" 'BEGIN { printf "%.3f", to - from }'; }

# section_in_run NAME: whether this make test runs section NAME (SECTIONS names prefixes).
section_in_run() {
    [[ -z ${SECTIONS:-} ]] && return 0
    local prefix
    for prefix in $SECTIONS; do [[ $1 == "$prefix"* ]] && return 0; done
    return 1
}

# section_wait NAME: returns once section NAME of this run has ended (run.sh writes its counts
# then; sections that run one after another have, by the time a later one asks).
section_wait() {
    local waited
    for ((waited = 0; waited < 6000; waited++)); do
        [[ -e build/selftest/sections/$1.counts ]] && return 0
        sleep 0.1
    done
    return 1
}

# scratch_for_grading PATH: PATH (in the course), where other users can enter the course's
# folder, as the unprivileged uids that build and run submissions must; else (root in a private
# home, say) a new folder they can enter in $TMPDIR or /tmp, as make grade's own default is.
scratch_for_grading() {
    local folder=$PWD
    while [[ $folder != / ]]; do
        if [[ $(stat -c %A "$folder") != ????????x? ]]; then
            folder=$(mktemp -d "${TMPDIR:-/tmp}/course-selftest.XXXXXX") && chmod 755 "$folder"
            echo "$folder"
            return
        fi
        folder=$(dirname "$folder")
    done
    echo "$1"
}

# SELFTEST_LANES=N: the exercises' section runs N test hosts side by side, and each make grade
# of the grader's sections N lanes (PER_GPU), where each takes one a CPU by default: the
# sections run side by side, so that is several programs, and CUDA contexts, to a CPU. For
# measuring what the suite's concurrency costs; make test leaves it unset.
lanes_args=()
if [[ -n ${SELFTEST_LANES:-} ]]; then
    if [[ ! $SELFTEST_LANES =~ ^[1-9][0-9]*$ ]]; then
        echo "make test: SELFTEST_LANES=$SELFTEST_LANES: give a whole number of 1 or more" >&2
        exit 2
    fi
    lanes_args=(--per-gpu "$SELFTEST_LANES")
fi

# with_gpu alone|shared COMMAND...: runs COMMAND holding the GPU as a test program would, alone
# as a timed test or shared, stepping aside for timed tests (tools/gpu_share.c), through the
# lock files run.sh gives every section (harness/gpu_locks.sh).
with_gpu() {
    build/tools/gpu_share "$@"
}

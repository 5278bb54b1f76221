#!/usr/bin/env bash
# check.sh - `make check`: build and run each exercise's tests, then the progress summary.
#
#   harness/check.sh TREE EXERCISE...      TREE is exercises or solutions
#
# Each exercise's file is built on its own, into a learner module, so one that does not compile
# costs only itself; its compiler errors are shown in its place. The exercises that built run
# in the test host (build/tests/host, harness/host/runner.c): the course's tests in a checker, the
# learner's code in a worker beside it, as make grade runs them. A few hosts run side by side,
# each with its share of the exercises, one CUDA context for its checker and one for its worker;
# a test that times copies takes the GPU alone through the runner's lock.
set -uo pipefail
here=${0%/*} # no dirname process: make check counts the processes it starts
[[ $here == "$0" ]] && here=.
cd "$here/.."

tree=$1
shift
MAKE=${MAKE:-make}

# An exercise as a person names it (harness/exercises.sh, as make watch and make reset take it).
exercise_caller=check
source harness/exercises.sh
requested=()
for name in "$@"; do
    exercise=$(exercise_named "$name") || exit 2
    requested+=("$exercise")
done
set -- "${requested[@]}"
results=build/results/$tree
tally=$results/tally.tsv
mkdir -p "$results"
: >"$tally"

if [[ -t 1 && -z ${NO_COLOR:-} ]]; then
    yellow=$'\033[33;1m' reset=$'\033[0m'
else
    yellow='' reset=''
fi

# One make for all of it (each make costs a process and reads the Makefile): the harness and the
# tests, each exercise's learner module, and what make grade would refuse each file for
# (grader/refusals.py: its compile guard and its inspection of the object, in its words, kept
# beside the build so that a file that has not changed costs nothing). -k: one exercise that
# does not build costs only itself. What went wrong, make names in its closing lines; the
# compiler's and the linker's words are in the logs beside the objects (the Makefile's
# `logged`).
course_targets=(build/tests/host build/tests/worker build/tools/report_block)
targets=()
for exercise in "$@"; do
    course_targets+=("build/modules/tests/$exercise.so")
    [[ -f $tree/$exercise.c ]] &&
        targets+=("build/modules/$tree/$exercise.so" "build/refusals/$tree/$exercise.txt")
done
make_log=$($MAKE -s -k --no-print-directory "${course_targets[@]}" "${targets[@]}" 2>&1)
# The targets make could not make: those a recipe failed for (make: *** [...: TARGET] Error N)
# and those left behind because of it ("Target 'X' not remade because of errors.").
declare -A not_made=()
while IFS= read -r target; do
    not_made[$target]=1
done < <(sed -n -e "s/^make[^*]*\*\*\* \[[^]]*: \([^]]*\)\] .*/\1/p" \
                -e "s/^make[^:]*: Target '\([^']*\)' not remade because of errors\./\1/p" \
                <<<"$make_log")
for target in "${course_targets[@]}"; do
    if [[ -n ${not_made[$target]:-} || ! -e $target ]]; then
        printf '%s\n' "$make_log" >&2
        echo "check: the course's own harness or tests did not build (see above); this is not your code" >&2
        exit 2
    fi
done

# The block of an exercise that did not get as far as its tests, by the report's one renderer
# (harness/report/report.c, through tools/report_block), from the one reader of the rubric; the lines
# on its standard input, after the first, are the particulars of WHY.
not_run_block() { # EXERCISE STATUS WHY
    local rubric detail
    rubric=$(awk -f harness/report/rubric.awk "tests/$1.c")
    { echo "$rubric"
      printf 'status\t%s\nsource\t%s\ndetail\t%s\n' "$2" "$tree/$1.c" "$3"
      while IFS= read -r detail; do
          [[ -n $detail ]] && printf 'detail\t%s\n' "${detail//\\/\\\\}"
      done
    } | build/tools/report_block ${reset:+--color} --tally "$tally"
}

# The compiler's lines worth reading, and the linker's in the learner's terms: the one filter
# of them, which make grade uses too.
useful_lines() {
    awk -f harness/report/compiler_lines.awk
}

# The exercises that built run in a few test hosts side by side, each with its share of them,
# the heaviest first (by their time in the last run, where there was one). Tests that time the
# GPU take it alone through lock files (harness/gpu_locks.sh): those of COURSE_LOCK_DIR when a
# caller shares its own (make test does), else a set of this run's. The reports are shown in
# the book's order.
source harness/gpu_locks.sh
source harness/hosts.sh
if [[ -n ${COURSE_LOCK_DIR:-} && -d $COURSE_LOCK_DIR ]]; then
    use_gpu_locks "$COURSE_LOCK_DIR"
else
    locks=$(mktemp -d "${TMPDIR:-/tmp}/course-check.XXXXXX")
    trap 'rm -rf "$locks"' EXIT
    use_gpu_locks "$locks"
fi
color_flag=--no-color
[[ -n $reset ]] && color_flag=--color
runnable=() unasked='' folders=() stale=() sources=0 compiled=0
for exercise in "$@"; do
    folders+=("$results/${exercise%/*}")
    stale+=("$results/$exercise.fields")
done
mkdir -p "${folders[@]}" && rm -f "${stale[@]}"
for exercise in "$@"; do
    source=$tree/$exercise.c
    report=$results/$exercise.report
    module=build/modules/$tree/$exercise.so
    refusals=build/refusals/$tree/$exercise.txt
    [[ -f $source ]] && sources=$((sources + 1))
    [[ -f $source && -z ${not_made[$module]:-} && -e $module ]] && compiled=$((compiled + 1))
    if [[ ! -f $source ]]; then
        not_run_block "$exercise" missing "$source is missing" </dev/null >"$report"
    elif [[ -n ${not_made[$module]:-} || ! -e $module ]]; then
        # The compiler's words, else the linker's, from the logs make kept beside the build.
        object_log=build/obj/$tree/$exercise.o.log
        [[ -e build/obj/$tree/$exercise.o && -s build/modules/$tree/$exercise.so.log ]] &&
            object_log=build/modules/$tree/$exercise.so.log
        useful_lines <"$object_log" |
            not_run_block "$exercise" does_not_compile "$source does not compile:" >"$report"
    elif [[ -s $refusals ]]; then
        # What make grade would refuse is refused here too, in its words: the gradebook holds no
        # surprise.
        sed 's/^/- /' "$refusals" |
            not_run_block "$exercise" rejected "$source was not run: make grade would refuse this file before linking it, because" \
            >"$report"
    else
        [[ -f $refusals && -z ${not_made[$refusals]:-} ]] || unasked=1
        runnable+=("$exercise")
    fi
done
# A host per two CPUs, at most four: each costs two CUDA contexts, which the machine makes a few
# at a time. COURSE_CHECK_HOSTS=N asks for N, to measure what another count would do.
hosts=$(( $(nproc) / 2 ))
(( hosts > 4 )) && hosts=4
[[ ${COURSE_CHECK_HOSTS:-} =~ ^[1-9][0-9]*$ ]] && hosts=$COURSE_CHECK_HOSTS
(( hosts > ${#runnable[@]} )) && hosts=${#runnable[@]}
(( hosts < 1 )) && hosts=1
declare -a shares=()
times=$results/times
[[ -e $times ]] || : >"$times"
while read -r host exercise; do
    shares[host]+=" --module build/modules/tests/$exercise.so"
    shares[host]+=" --learner build/modules/$tree/$exercise.so --source $tree/$exercise.c"
    shares[host]+=" --fields $results/$exercise.fields"
    shares[host]+=" --report $results/$exercise.report"
done < <(queue_group "${runnable[@]}" | share_out "$hosts" "$times")
declare -A running
for host in "${!shares[@]}"; do
    # shellcheck disable=SC2086 # the exercises' options, split at spaces
    build/tests/host --tally "$tally" "$color_flag" ${shares[host]} >"$results/host-$host.log" 2>&1 &
    running[$host]=$!
done
no_gpu= refused= too_few_gpus=() not_done=0
for host in "${!running[@]}"; do
    status=0
    wait "${running[$host]}" || status=$?
    if [[ $status -eq 2 ]]; then # the host refused what it was given (a setting)
        refused=$(<"$results/host-$host.log")
    fi
done
: >"$times.new"
declare -A timed_now=()
# Read with the shell's own $(<file) and read, which start no process: a process for each
# exercise's report and record would cost more than the rest of make check together. The
# record is the test host's lines for the shell (--fields), not its JSON.
for exercise in "$@"; do
    report='' status='' note='' seconds=''
    [[ -f $results/$exercise.report ]] && report=$(<"$results/$exercise.report")
    if [[ -f $results/$exercise.fields ]]; then
        while IFS=$'\t' read -r key value _; do
            case $key in
            status) status=$value ;;
            note) note=$value ;;
            seconds) seconds=$value ;;
            esac
        done <"$results/$exercise.fields"
    fi
    # Without a GPU the tests that need none still ran; the reason is the machine's, said once.
    # (An untouched stub is "not started", GPU or not; its record's note says why none ran.)
    [[ ($status == no_gpu || $status == not_started) && -n $note ]] && no_gpu=$note
    [[ $status == too_few_gpus ]] && too_few_gpus+=("$exercise: $note")
    [[ $status == passed || $status == too_few_gpus ]] || not_done=$((not_done + 1))
    # A time says how long the exercise's tests keep a host busy on a GPU: none is kept from a
    # run without one, where they did not run.
    if [[ -n $seconds && $status != no_gpu ]]; then
        echo "$seconds $exercise" >>"$times.new"
        timed_now[$exercise]=1
    fi
    [[ -z $refused && -n $report ]] && printf '%s\n' "$report"
done
# The times of the exercises this run did not time are the last run's still.
while read -r seconds exercise; do
    [[ -n $exercise && -z ${timed_now[$exercise]:-} ]] && echo "$seconds $exercise" >>"$times.new"
done <"$times"
mv "$times.new" "$times"
if [[ -n $refused ]]; then
    echo "check: $refused" >&2
    exit 2
fi
if [[ -n $unasked ]]; then
    echo
    echo "(make check could not ask make grade's checks of every file, python3 missing? so make"
    echo "grade may still refuse one that passes here: grader/refusals.py says why it would.)"
fi

# Progress: exercises done and points, then the tests' closing line, by the report's renderer.
build/tools/report_block ${reset:+--color} --progress "$tally"
status=$?

# Exercises about several GPUs on a machine with fewer: each says how many, once.
if ((${#too_few_gpus[@]} > 0)); then
    echo
    echo "${yellow}Not run here:${reset}"
    printf '  %s.\n' "${too_few_gpus[@]}"
    echo "Their tests did not run, so they are neither passed nor failed here: check them on a"
    echo "machine with enough GPUs (chapter 6 of the book: its exercises, and where to find one)."
    # All else passed: as without a GPU, the machine is what stands between them and done.
    ((not_done == 0)) && status=3
fi

# No GPU: one short sentence per fact, and the driver named only where there is NVIDIA hardware
# it could drive (PCI vendor 0x10de, or the driver's own file).
if [[ -n $no_gpu ]]; then
    echo
    echo "${yellow}No GPU:${reset} $no_gpu."
    if ((compiled == sources)); then
        echo "All $sources files compile. The tests that need no GPU ran; the others need an NVIDIA GPU."
    else
        echo "$compiled of $sources files compile. The tests that need no GPU ran; the others need an NVIDIA GPU."
    fi
    if grep -qsx 0x10de /sys/bus/pci/devices/*/vendor || [[ -e /proc/driver/nvidia ]]; then
        echo "This machine has an NVIDIA device: install NVIDIA's driver, as new as your CUDA toolkit needs."
        echo "Debian: apt install nvidia-driver. Ubuntu: ubuntu-drivers install. Then nvidia-smi lists it."
    else
        echo "This machine has none. README.md, \"No NVIDIA GPU?\", says where to get one."
    fi
    exit 3
fi
exit "$status"

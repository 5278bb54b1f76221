#!/usr/bin/env bash
# check.sh - `make check`: build and run each exercise's tests, then the progress summary.
#
#   harness/check.sh TREE EXERCISE...      TREE is exercises or solutions
#
# Each exercise is built on its own, so one that does not compile costs only
# itself; its compiler errors are shown in its place. The test programs run side
# by side; a test that times copies takes the GPU alone through the runner's lock.
set -uo pipefail
cd "$(dirname "$0")/.."

tree=$1
shift
MAKE=${MAKE:-make}

# An exercise as a person names it: ch01-memory/roundtrip, what tab completion gives
# (exercises/ch01-memory/roundtrip.c), or the short name alone (roundtrip).
known=$($MAKE -s --no-print-directory list-exercises)
exercise_named() {
    local name=${1#./}
    name=${name#exercises/}
    name=${name#solutions/}
    name=${name%.c}
    name=${name%.h}
    if [[ $name != */* ]]; then
        local matches
        matches=$(grep -E "/${name//./\.}\$" <<<"$known")
        [[ $(grep -c . <<<"$matches") -eq 1 ]] && name=$matches
    fi
    if ! grep -qxF -- "$name" <<<"$known"; then
        echo "check: there is no exercise named '$1'. The exercises, in the book's order:" >&2
        sed 's/^/         /' <<<"$known" >&2
        echo "       (EX=ch01-memory/roundtrip, EX=roundtrip and EX=exercises/ch01-memory/roundtrip.c all work)" >&2
        return 1
    fi
    echo "$name"
}
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
    yellow=$'\033[33;1m' bold=$'\033[1m' reset=$'\033[0m'
else
    yellow='' bold='' reset=''
fi

# The harness itself must build; if it does not, that is the course's fault.
if ! $MAKE -s --no-print-directory build/lib/libharness.a build/lib/libcommon.a \
        build/tools/report_block; then
    echo "check: the course's own harness did not build (see above); this is not your code" >&2
    exit 2
fi
# Build every exercise's test program at once (make -j helps here), errors later.
$MAKE -s -k --no-print-directory "${@/#/build/tests/$tree/}" >/dev/null 2>&1

# The block of an exercise that did not get as far as its tests, by the report's one renderer
# (harness/report.c, through tools/report_block), from the one reader of the rubric; the lines
# on its standard input, after the first, are the particulars of WHY.
not_run_block() { # EXERCISE STATUS WHY
    local rubric tests points detail
    rubric=$(awk -f harness/rubric.awk "tests/$1.c")
    tests=$(grep -c $'^test\t' <<<"$rubric")
    points=$(awk -F'\t' '$1 == "test" { s += $3 } END { print s + 0 }' <<<"$rubric")
    { echo "$rubric"
      printf 'status\t%s\nsource\t%s\ndetail\t%s\n' "$2" "$tree/$1.c" "$3"
      while IFS= read -r detail; do
          [[ -n $detail ]] && printf 'detail\t%s\n' "${detail//\\/\\\\}"
      done
    } | build/tools/report_block ${reset:+--color}
    printf '%s\t%s\t0\t%d\t0\t%d\n' "$1" "$2" "$tests" "$points" >>"$tally"
}

# The compiler's lines worth reading (errors, warnings, notes), and the linker's in the
# learner's terms: each function nothing defines, once, which its own lines never say as
# "error" ("undefined reference to `roundtrip_floats'", as often as it is called).
useful_lines() {
    local log
    log=$(cat)
    { grep -E 'error|warning|note|multiple definition' <<<"$log" |
          grep -vE "^make|collect2: error: ld returned|undefined reference"
      grep -o "undefined reference to \`[A-Za-z0-9_]*'" <<<"$log" | sort -u |
          sed "s/undefined reference to \`\(.*\)'/the linker found no definition of \1: define it in your file, spelled as the header declares it/"
    } | head -n 12
}

# The test programs run side by side, each exercise's in a process of its own. Tests that
# time the GPU take it alone through lock files (harness/gpu_locks.sh): those of COURSE_LOCK_DIR
# when a caller shares its own (make test does), else a set of this run's; the reports are
# shown in the book's order.
source harness/gpu_locks.sh
if [[ -n ${COURSE_LOCK_DIR:-} && -d $COURSE_LOCK_DIR ]]; then
    use_gpu_locks "$COURSE_LOCK_DIR"
else
    locks=$(mktemp -d "${TMPDIR:-/tmp}/course-check.XXXXXX")
    trap 'rm -rf "$locks"' EXIT
    use_gpu_locks "$locks"
fi
color_flag=--no-color
[[ -n $reset ]] && color_flag=--color
declare -A running
for exercise in "$@"; do
    source=$tree/$exercise.c
    program=build/tests/$tree/$exercise
    report=$results/$exercise.report
    mkdir -p "$(dirname "$report")"
    if [[ ! -f $source ]]; then
        not_run_block "$exercise" missing "$source is missing" </dev/null >"$report"
    elif ! build_log=$($MAKE -s --no-print-directory "$program" 2>&1); then
        what="does not compile"
        grep -q "undefined reference" <<<"$build_log" && ! grep -q "error:.*\.c:" <<<"$build_log" &&
            what="compiles, but does not link"
        useful_lines <<<"$build_log" | not_run_block "$exercise" does_not_compile "$source $what:" \
            >"$report"
    else
        "$program" --source "$source" --json "$results/$exercise.json" --tally "$tally" \
            "$color_flag" >"$report" 2>&1 &
        running[$exercise]=$!
    fi
done

no_gpu= refused=
for exercise in "$@"; do
    status=0
    [[ -n ${running[$exercise]:-} ]] && { wait "${running[$exercise]}"; status=$?; }
    if [[ $status -eq 77 ]]; then
        no_gpu=$(sed -n 's/.*no CUDA device: //p' "$results/$exercise.report" | head -n 1)
        continue
    fi
    if [[ $status -eq 2 ]]; then # the test program refused what it was given (a setting)
        refused=$(cat "$results/$exercise.report")
        continue
    fi
    cat "$results/$exercise.report"
done
if [[ -n $refused ]]; then
    echo "check: $refused" >&2
    exit 2
fi
if [[ -n $no_gpu ]]; then
    echo
    echo "${yellow}No CUDA device is available${reset} ($no_gpu), so the tests did not run: they"
    echo "run on an NVIDIA GPU. Check that \`nvidia-smi\` lists one. If the reason says the"
    echo "driver is missing or insufficient, install NVIDIA's driver for your GPU, as new as your"
    echo "CUDA toolkit needs (Debian: nvidia-driver; Ubuntu: ubuntu-drivers install)."
    exit 1
fi

# Progress: exercises done and points, then the tests' closing line.
awk -F'\t' -v bold="$bold" -v reset="$reset" '
    { exercises++; done += ($2 == "passed"); passed += $3; failed += $4 - $3; points += $5; max += $6 }
    END {
        printf "\n%sProgress: %d of %d exercises done, %d of %d points%s\n", bold, done, exercises, points, max, reset
        printf "%d passed, %d failed\n", passed, failed
        exit !(failed == 0 && exercises > 0)
    }' "$tally"

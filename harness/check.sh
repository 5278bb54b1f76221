#!/usr/bin/env bash
# check.sh - `make check`: build and run each exercise's tests, then the progress summary.
#
#   harness/check.sh TREE EXERCISE...      TREE is exercises or solutions
#
# Each exercise is built on its own, so one that does not compile costs only
# itself; its compiler errors are shown in its place. Test programs run one at
# a time, since some of them time copies and must have the GPU to themselves.
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
    red=$'\033[31;1m' yellow=$'\033[33;1m' bold=$'\033[1m' reset=$'\033[0m'
else
    red='' yellow='' bold='' reset=''
fi

# The harness itself must build; if it does not, that is the course's fault.
if ! $MAKE -s --no-print-directory build/lib/libharness.a build/lib/libcommon.a; then
    echo "check: the course's own harness did not build (see above); this is not your code" >&2
    exit 2
fi
# Build every exercise's test program at once (make -j helps here), errors later.
$MAKE -s -k --no-print-directory "${@/#/build/tests/$tree/}" >/dev/null 2>&1

# The points of each test, from the one reader of the rubric, for an exercise whose program
# could not be built.
rubric_of() { awk -f harness/rubric.awk "tests/$1.c" | awk -F'\t' '$1 == "test" { print $3 }'; }

for exercise in "$@"; do
    source=$tree/$exercise.c
    program=build/tests/$tree/$exercise
    if [[ ! -f $source ]]; then
        points=$(rubric_of "$exercise" | awk '{ s += $1 } END { print s + 0 }')
        tests=$(rubric_of "$exercise" | wc -l)
        printf '%sFAIL%s  %-28s 0/%d tests  0/%d points\n      %s is missing\n' \
            "$red" "$reset" "$exercise" "$tests" "$points" "$source"
        printf '%s\tmissing\t0\t%d\t0\t%d\n' "$exercise" "$tests" "$points" >>"$tally"
        continue
    fi
    if ! build_log=$($MAKE -s --no-print-directory "$program" 2>&1); then
        points=$(rubric_of "$exercise" | awk '{ s += $1 } END { print s + 0 }')
        tests=$(rubric_of "$exercise" | wc -l)
        printf '%sFAIL%s  %-28s 0/%d tests  0/%d points\n      %s does not compile:\n' \
            "$red" "$reset" "$exercise" "$tests" "$points" "$source"
        grep -E 'error|warning|note' <<<"$build_log" | grep -v '^make' | head -n 12 | sed 's/^/        /'
        printf '%s\tdoes_not_compile\t0\t%d\t0\t%d\n' "$exercise" "$tests" "$points" >>"$tally"
        continue
    fi
    mkdir -p "$(dirname "$results/$exercise.json")"
    "$program" --source "$source" --json "$results/$exercise.json" --tally "$tally"
    status=$?
    if [[ $status -eq 77 ]]; then
        echo
        echo "${yellow}No CUDA device is available${reset}, so no exercise was graded: these tests run"
        echo "on an NVIDIA GPU. Check that \`nvidia-smi\` lists one. If the reason above says the"
        echo "driver is missing or insufficient, install NVIDIA's driver for your GPU, as new as your"
        echo "CUDA toolkit needs (Debian: nvidia-driver; Ubuntu: ubuntu-drivers install)."
        exit 1
    fi
done

# Progress: exercises done and points, then the tests' closing line.
awk -F'\t' -v bold="$bold" -v reset="$reset" '
    { exercises++; done += ($2 == "passed"); passed += $3; failed += $4 - $3; points += $5; max += $6 }
    END {
        printf "\n%sProgress: %d of %d exercises done, %d of %d points%s\n", bold, done, exercises, points, max, reset
        printf "%d passed, %d failed\n", passed, failed
        exit !(failed == 0 && exercises > 0)
    }' "$tally"

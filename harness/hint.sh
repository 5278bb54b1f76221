#!/usr/bin/env bash
# hint.sh - `make hint EX=... [LEVEL=N]`: an exercise's hint, asked for. make check only says it
# is there.
#
#   harness/hint.sh EXERCISE [LEVEL]   (ch01-memory/roundtrip, or roundtrip where the name is unique)
#
# The hint is read from the exercise's test file by the one reader of the rubric
# (harness/report/rubric.awk) and wrapped to the terminal's width, at most 78 columns. Its levels
# run from mild (the idea, and where the book explains it) to explicit (the calls), apart by a
# blank line in COURSE_EXERCISE: the first is shown, or those up to LEVEL, and the command for the
# next.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2

[[ -n ${1:-} ]] || {
    echo "hint: say which exercise: make hint EX=roundtrip (make list-exercises lists them)" >&2
    exit 2
}
exercise_caller=hint
source harness/exercises.sh
exercise=$(exercise_named "$1") || exit 2

hint=$(awk -f harness/report/rubric.awk "tests/$exercise.c" |
       awk -F '\t' '$1 == "exercise" { print $4 }') || exit 2
level=${2:-1}
if [[ ! $level =~ ^[1-9][0-9]{0,2}$ ]]; then
    echo "hint: LEVEL=$level: give a number, 1 for the mildest hint (make hint EX=$1 LEVEL=2)" >&2
    exit 2
fi
width=${COLUMNS:-78}
((width > 78 || width < 40)) && width=78
# The rubric writes a newline as \n and a backslash as \\.
text=$(printf '%b' "$hint")
levels=$(awk 'BEGIN { RS = "" } END { print NR }' <<<"$text")
((level > levels)) && level=$levels
if ((levels > 1)); then
    echo "Hint for $exercise ($level of $levels):"
else
    echo "Hint for $exercise:"
fi
echo
awk -v last="$level" 'BEGIN { RS = ""; ORS = "\n\n" } NR <= last { print }' <<<"$text" |
    fold -s -w "$width" | sed 's/ *$//' | sed '$d'
if ((level < levels)); then
    echo
    echo "A closer hint: make hint EX=$1 LEVEL=$((level + 1))"
fi

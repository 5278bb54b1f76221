#!/usr/bin/env bash
# hint.sh - `make hint EX=...`: an exercise's hint, asked for. make check only says it is there.
#
#   harness/hint.sh EXERCISE      (ch01-memory/roundtrip, or roundtrip where the name is unique)
#
# The hint is read from the exercise's test file by the one reader of the rubric
# (harness/report/rubric.awk) and wrapped to the terminal's width, at most 78 columns.
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
width=${COLUMNS:-78}
((width > 78 || width < 40)) && width=78
echo "Hint for $exercise:"
echo
# The rubric writes a newline as \n and a backslash as \\; a hint is one paragraph or several.
printf '%b\n' "$hint" | fold -s -w "$width" | sed 's/ *$//'

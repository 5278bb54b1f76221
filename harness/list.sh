#!/usr/bin/env bash
# list.sh - `make list`: each exercise in the book's order, with its title and where the learner
# is with it, as the last `make check` of it left it (rustlings list, for this course).
#
#   harness/list.sh
#
# A file saved since its last check says so instead of showing a verdict that may be stale.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
MAKE=${MAKE:-make}
source harness/exercises.sh

if [[ -t 1 && -z ${NO_COLOR:-} ]]; then
    green=$'\033[32m' red=$'\033[31m' yellow=$'\033[33m' reset=$'\033[0m'
else
    green='' red='' yellow='' reset=''
fi

declare -A title
while IFS=$'\t' read -r kind id text _; do
    [[ $kind == exercise ]] && title[$id]=$text
done < <(test_files=("${course_exercises[@]/#/tests/}")
         awk -f harness/report/rubric.awk "${test_files[@]/%/.c}")

done_count=0
for id in "${course_exercises[@]}"; do
    source=exercises/$id.c record=build/results/exercises/$id.fields status='' colour=$red
    if [[ ! -f $source ]]; then
        state=missing
    elif [[ -f $record && ! $source -nt $record ]]; then
        while IFS=$'\t' read -r key value _; do
            [[ $key == status ]] && status=$value
        done <"$record"
        case $status in
        passed) state=done colour=$green done_count=$((done_count + 1)) ;;
        not_started) state="not started" colour='' ;;
        no_gpu) state="needs a GPU" colour=$yellow ;;
        too_few_gpus) state="needs more GPUs" colour=$yellow ;;
        does_not_compile | unloadable) state="does not compile" ;;
        rejected) state=refused ;;
        *) state=failing ;;
        esac
    elif grep -q TODO "$source"; then
        state="not started" colour=''
    else
        state="not checked" colour=$yellow
    fi
    printf '  %s%-16s%s  %-30s %s\n' "$colour" "$state" "${colour:+$reset}" "$id" "${title[$id]:-}"
done
echo
echo "$done_count of ${#course_exercises[@]} done. make check EX=NAME checks one; make hint EX=NAME gives its hint."

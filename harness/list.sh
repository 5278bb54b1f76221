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
    source=exercises/$id.c record=build/results/exercises/$id.json status=''
    if [[ ! -f $source ]]; then
        state="${red}missing${reset}"
    elif [[ -f $record && ! $source -nt $record ]]; then
        [[ $(<"$record") =~ \"status\":\ \"([a-z_]+)\" ]] && status=${BASH_REMATCH[1]}
        case $status in
        passed) state="${green}done${reset}"; done_count=$((done_count + 1)) ;;
        not_started) state="not started" ;;
        no_gpu) state="${yellow}needs a GPU${reset}" ;;
        does_not_compile | unloadable) state="${red}does not compile${reset}" ;;
        rejected) state="${red}refused${reset}" ;;
        *) state="${red}failing${reset}" ;;
        esac
    elif grep -q TODO "$source"; then
        state="not started"
    else
        state="${yellow}not checked${reset}"
    fi
    # The state padded by its visible width: its colour codes take none.
    plain=${state//$'\033['[0-9]m/}
    plain=${plain//$'\033['[0-9][0-9]m/}
    printf '  %s%*s  %-30s %s\n' "$state" $((16 - ${#plain})) '' "$id" "${title[$id]:-}"
done
echo
echo "$done_count of ${#course_exercises[@]} done. make check EX=NAME checks one; make hint EX=NAME gives its hint."

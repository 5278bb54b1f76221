#!/usr/bin/env bash
# watch.sh - `make watch`: re-check the exercise being worked on each time it is saved.
#
#   harness/watch.sh [EXERCISE]
#
# Goes through the exercises in the book's order (`make list-exercises`), from
# EXERCISE or from the first, checking each with `make check EX=...`: one that
# passes is left behind, and at the first that does not, it waits for its file
# to be saved and checks it again. Once it passes, the next unfinished exercise
# takes its place; when every one passes, it says so and stops.
#
# The folders are watched, not the files: vim and other editors save by
# writing a new file and renaming it over the old one, and a watch on the old
# file would see it vanish and nothing after. inotifywait comes from Debian's
# inotify-tools, which `make deps` installs (into .deps/ without root).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
MAKE=${MAKE:-make}

if [[ -t 1 && -z ${NO_COLOR:-} ]]; then
    bold=$'\033[1m' reset=$'\033[0m'
else
    bold='' reset=''
fi
say() { echo "${bold}watch: $*${reset}"; }

# inotifywait from the system, or from the local prefix that a non-root `make deps` fills.
inotifywait=$(command -v inotifywait)
if [[ -z $inotifywait && -x .deps/root/usr/bin/inotifywait ]]; then
    inotifywait=.deps/root/usr/bin/inotifywait
    library_dirs=$(printf '%s:' "$PWD"/.deps/root/usr/lib/*-linux-gnu)
    export LD_LIBRARY_PATH=${library_dirs%:}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
fi
if [[ -z $inotifywait ]]; then
    echo "watch: needs inotifywait, from the inotify-tools package: run \`make deps\`, or as root" >&2
    echo "       apt-get install inotify-tools (other systems: your package manager's inotify-tools)" >&2
    exit 1
fi

# An exercise as a person names it (harness/exercises.sh, as make check and make reset take it).
exercise_caller=watch
source harness/exercises.sh
exercises=("${course_exercises[@]}")
((${#exercises[@]} > 0)) || { echo "watch: there are no exercises to watch" >&2; exit 2; }
current=0
if [[ -n ${1:-} ]]; then
    start=$(exercise_named "$1") || exit 2
    for ((i = 0; i < ${#exercises[@]}; i++)); do
        [[ ${exercises[i]} == "$start" ]] && current=$i
    done
fi

# Without a GPU each save still compiles the file and runs the tests that need none (make check
# says which); an exercise whose tests need a GPU is not passed, so watch stays on it.
$MAKE -s --no-print-directory build/tools/gpu_probe || exit 2
if ! why=$(build/tools/gpu_probe 2>&1); then
    say "no GPU here ($why): each save compiles your file and runs the tests that need no GPU;"
    say "an exercise whose tests need one stays unfinished (EX=NAME starts elsewhere)"
fi

# One inotifywait for the whole session, so that a save made while a check runs is not lost.
mapfile -t folders < <(printf 'exercises/%s\n' "${exercises[@]%/*}" | sort -u)
exec {events}< <(exec "$inotifywait" -m -q -e close_write -e moved_to --format '%w%f' "${folders[@]}")
watcher=$!
trap 'kill "$watcher" 2>/dev/null' EXIT
trap 'echo; say "stopped"; exit 130' INT TERM

# make check's own verdict is what the learner reads; make's "*** Error" lines after it are noise.
# Only standard error goes through the filter; standard output stays the terminal, in colour.
check() {
    { $MAKE -s --no-print-directory check EX="$1" 2>&1 1>&3 3>&- |
        grep -v '^make\(\[[0-9]*\]\)\{0,1\}: \*\*\*' >&2; } 3>&1
    return "${PIPESTATUS[0]}"
}

# Returns when $1 has been saved; an editor's save is often several events, read together.
wait_for_save() {
    local path
    while read -r -u "$events" path; do
        [[ $path == "$1" ]] || continue
        while read -r -t 0.3 -u "$events" path; do :; done
        return 0
    done
    echo "watch: inotifywait stopped watching exercises/ (see above)" >&2
    return 1
}

while ((current < ${#exercises[@]})); do
    exercise=${exercises[current]}
    echo
    say "$exercise ($((current + 1)) of ${#exercises[@]})"
    if check "$exercise"; then
        current=$((current + 1))
        continue
    fi
    say "edit exercises/$exercise.c: each save checks it again (Ctrl-C stops)"
    wait_for_save "exercises/$exercise.c" || exit 1
done
echo
say "every exercise passes; well done"

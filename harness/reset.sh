#!/usr/bin/env bash
# reset.sh - `make reset EX=...`: an exercise's stub back in place, the learner's file kept beside it.
#
#   harness/reset.sh EXERCISE      (ch01-memory/roundtrip, or roundtrip where the name is unique)
#
# The learner's exercises/EXERCISE.c is renamed to EXERCISE.c.N.bak (the first N not taken), so
# no reset loses work, and the stub comes back from git: the newest committed version of the
# file that still carries the TODO marker, which is the course's stub even when the learner has
# committed work of their own on top of it. Without git history (a zip download) it says so and
# touches nothing.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
MAKE=${MAKE:-make}

die() { echo "reset: $*" >&2; exit 2; }

[[ -n ${1:-} ]] || die "say which exercise: make reset EX=ch01-memory/roundtrip (make list-exercises lists them)"
# An exercise as a person names it (harness/exercises.sh, as make check and make watch take it):
# exercises/ORDER lists every exercise, its learner's file deleted or not.
exercise_caller=reset
source harness/exercises.sh
exercise=$(exercise_named "$1") || exit 2
file=exercises/$exercise.c

# The course's own history: not that of some repository the folder happens to sit inside.
if [[ $(git rev-parse --show-prefix 2>/dev/null || echo none) != "" ]]; then
    die "this folder has no git history (a zip download has none), so the stub of $file cannot be
       restored from it; your file is untouched. Take the stub from a fresh copy of the course
       (git clone, or the same download) and put it in place of $file."
fi
stub_commit=
for commit in $(git rev-list HEAD -- "$file" 2>/dev/null); do
    if git show "$commit:$file" 2>/dev/null | grep -q TODO; then
        stub_commit=$commit
        break
    fi
done
[[ -n $stub_commit ]] || die "git's history has no stub of $file (no committed version with its TODO); your file is untouched"

if [[ -f $file ]] && git show "$stub_commit:$file" | cmp -s - "$file"; then
    echo "reset: $file is the stub already; nothing to do"
    exit 0
fi
if [[ -f $file ]]; then
    n=1
    while [[ -e $file.$n.bak ]]; do n=$((n + 1)); done
    backup=$file.$n.bak
    mv "$file" "$backup" || die "could not rename $file to $backup; nothing was changed"
fi
if ! git show "$stub_commit:$file" >"$file"; then
    if [[ -n ${backup:-} ]]; then mv "$backup" "$file"; else rm -f "$file"; fi
    die "could not write the stub to $file; it is as it was"
fi
if [[ -n ${backup:-} ]]; then
    echo "reset: $file is the stub again, as the course gives it; your version is kept as $backup"
else
    echo "reset: $file was missing; it is the stub again, as the course gives it"
fi

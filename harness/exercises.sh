# exercises.sh - sourced by make check, make watch and make reset: an exercise as a person names
# it, resolved the one way for all three.
#
# COURSE_EXERCISES holds the exercises in the book's order, as the Makefile read them from
# exercises/ORDER (its recipes pass it on); without it, `make list-exercises` says.

if [[ -z ${COURSE_EXERCISES:-} ]]; then
    COURSE_EXERCISES=$(${MAKE:-make} -s --no-print-directory list-exercises)
fi
read -r -d '' -a course_exercises <<<"$COURSE_EXERCISES" || true

# exercise_named NAME: prints the exercise NAME names, which may be its id (ch01-memory/roundtrip),
# what tab completion gives (exercises/ch01-memory/roundtrip.c, or the header), or the short name
# alone (roundtrip) where one exercise has it. Otherwise says so, listing them, and returns 1
# (the message starts with $exercise_caller: check, watch or reset).
exercise_named() {
    local name=${1#./} known match='' matches=0
    name=${name#exercises/}
    name=${name#solutions/}
    name=${name%.c}
    name=${name%.h}
    for known in "${course_exercises[@]}"; do
        [[ $known == "$name" ]] && { echo "$known"; return 0; }
        [[ $name != */* && ${known##*/} == "$name" ]] && { match=$known; matches=$((matches + 1)); }
    done
    if ((matches == 1)); then
        echo "$match"
        return 0
    fi
    echo "${exercise_caller:-check}: there is no exercise named '$1'. The exercises, in the book's order:" >&2
    printf '         %s\n' "${course_exercises[@]}" >&2
    echo "       (EX=ch01-memory/roundtrip, EX=roundtrip and EX=exercises/ch01-memory/roundtrip.c all work)" >&2
    return 1
}

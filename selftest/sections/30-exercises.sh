# 30-exercises.sh - each exercise against its solution, its stub and its known mistakes.
#
# The solution must pass every test; the untouched stub must fail and be shown
# as not started; each mutant (mutants/chNN-slug/EXERCISE--mistake.c, one
# typical mistake) must fail, and the report must carry the diagnostic that
# its header names on a line " * expect: TEXT".
section "Exercises: solutions pass, stubs and known mistakes fail"

results_dir=build/selftest/results
mkdir -p "$results_dir"

# run_tests PROGRAM SOURCE NAME: runs a test program, leaving output and status.
run_tests() {
    local json="$results_dir/${3//\//_}.json"
    output=$(NO_COLOR=1 "$1" --source "$2" --json "$json" 2>&1)
    status=$?
    json_text=$(cat "$json" 2>/dev/null)
}

for exercise in $($MAKE -s --no-print-directory list-exercises); do
    need_gpu "exercise $exercise" || continue
    build "build/tests/solutions/$exercise" "build/tests/exercises/$exercise" || continue

    run_tests "build/tests/solutions/$exercise" "solutions/$exercise.c" "solution-$exercise"
    tests=$(grep -c '"name"' <<<"$json_text")
    if [[ $status -eq 0 ]]; then
        pass "solution $exercise passes all $tests tests"
    else
        fail "solution $exercise passes all its tests (exit $status)" "$output"
    fi

    run_tests "build/tests/exercises/$exercise" "exercises/$exercise.c" "stub-$exercise"
    if [[ $status -eq 1 ]] && grep -q '"status": "not_started"' <<<"$json_text"; then
        pass "stub $exercise fails and is reported as not started"
    elif [[ $status -eq 0 ]]; then
        fail "stub $exercise fails: it passes every test, so the exercise is already solved" "$output"
    else
        fail "stub $exercise fails and is reported as not started (exit $status)" "$output"
    fi

    for mutant in $($MAKE -s --no-print-directory list-mutants | grep "^$exercise--"); do
        expected=$(sed -n 's/^ \* expect: //p' "mutants/$mutant.c")
        if [[ -z $expected ]]; then
            fail "mutant $mutant names its expected diagnostic (a line ' * expect: TEXT')"
            continue
        fi
        build "build/tests/mutants/$mutant" || continue
        run_tests "build/tests/mutants/$mutant" "mutants/$mutant.c" "mutant-$mutant"
        if [[ $status -eq 1 ]] && grep -qF -- "$expected" <<<"$output"; then
            pass "mutant $mutant fails with \"$expected\""
        elif [[ $status -eq 1 ]]; then
            fail "mutant $mutant fails with \"$expected\": it fails, with another message" "$output"
        else
            fail "mutant $mutant fails (exit $status): the tests do not catch this mistake" "$output"
        fi
    done
done

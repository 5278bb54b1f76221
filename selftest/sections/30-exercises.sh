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

# The one reader of the rubric (harness/rubric.awk, for make check, the grader and the book)
# reads what the compiler reads: each test program says what it was compiled with.
for exercise in $($MAKE -s --no-print-directory list-exercises); do
    build "build/tests/solutions/$exercise" || continue
    if difference=$(diff <(build/tests/solutions/$exercise --rubric) \
                         <(awk -f harness/rubric.awk "tests/$exercise.c") 2>&1); then
        pass "the rubric reader agrees with the compiled tests of $exercise"
    else
        fail "the rubric reader agrees with the compiled tests of $exercise" "$difference"
    fi
done

# The list of exercises is the book's order, and names exactly the exercises there are.
order_log=$($MAKE -s --no-print-directory list-exercises 2>&1)
if [[ $(head -n 1 <<<"$order_log") == ch01-memory/roundtrip && $(tail -n 1 <<<"$order_log") == ch01-memory/bandwidth ]]; then
    pass "make list-exercises follows the book: roundtrip first, bandwidth last in chapter 1"
else
    fail "make list-exercises follows the book: roundtrip first, bandwidth last in chapter 1" "$order_log"
fi
order_copy=$(mktemp -d)
cp -r Makefile mk exercises tests "$order_copy"/ 2>/dev/null
echo "ch01-memory/no_such_exercise" >>"$order_copy/exercises/ORDER"
order_log=$($MAKE -s --no-print-directory -C "$order_copy" list-exercises 2>&1)
if [[ $? -ne 0 && $order_log == *"no tests/NAME.c for: ch01-memory/no_such_exercise"* ]]; then
    pass "an exercises/ORDER that names an exercise without tests stops make, saying which"
else
    fail "an exercises/ORDER that names an exercise without tests stops make, saying which" "$order_log"
fi
rm -rf "$order_copy"

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

# 30-exercises.sh - each exercise against its solution, its stub and its known mistakes.
#
# The solution must pass every test; the untouched stub must fail and be shown
# as not started; each mutant (mutants/chNN-slug/EXERCISE--mistake.c, one
# typical mistake) must fail, and the report must carry the diagnostic that
# its header names on a line " * expect: TEXT". A mistake that only a real GPU
# can show (a race, a copy too slow) says " * expect-on-gpu: TEXT" instead: on
# the course's stand-in runtime (host memory, streams run in call order, no
# real timing), it is skipped, and so are the solutions' timed tests.
section "Exercises: solutions pass, stubs and known mistakes fail"

results_dir=build/selftest/results
mkdir -p "$results_dir"

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
if [[ $(head -n 1 <<<"$order_log") == ch01-memory/roundtrip && $(grep '^ch01-' <<<"$order_log" | tail -n 1) == ch01-memory/bandwidth ]]; then
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

# Every test program (solutions, stubs, mutants) is built at once, then run side by side, as
# many as there are CPUs: the tests that time the GPU take it alone through the runner's lock
# (harness/runner.c). The results are then read in order.
exercises=$($MAKE -s --no-print-directory list-exercises)
mutants=$($MAKE -s --no-print-directory list-mutants)
if need_gpu "the exercises against their solutions, stubs and mutants"; then
    programs=()
    for exercise in $exercises; do
        programs+=("solutions/$exercise" "exercises/$exercise")
    done
    for mutant in $mutants; do
        programs+=("mutants/$mutant")
    done
    $MAKE -s -k --no-print-directory -j"$(nproc)" "${programs[@]/#/build/tests/}" >/dev/null 2>&1
    locks=$(mktemp -d)
    : >"$locks/gpu"
    : >"$locks/turnstile"
    for program in "${programs[@]}"; do
        [[ -x build/tests/$program ]] || continue
        while (($(jobs -rp | wc -l) >= $(nproc))); do wait -n; done
        name=${program//\//_}
        (COURSE_GPU_LOCK=$locks/gpu COURSE_GPU_TURNSTILE=$locks/turnstile NO_COLOR=1 \
            "build/tests/$program" --source "$program.c" --json "$results_dir/$name.json" \
            >"$results_dir/$name.out" 2>&1
         echo $? >"$results_dir/$name.status") &
    done
    wait
    rm -rf "$locks"
fi

# run_tests PROGRAM: what its run left: output, status and json_text.
run_tests() {
    local name=${1//\//_}
    output=$(cat "$results_dir/$name.out" 2>/dev/null)
    status=$(cat "$results_dir/$name.status" 2>/dev/null || echo "not run")
    json_text=$(cat "$results_dir/$name.json" 2>/dev/null)
}

# The stand-in runtime names its device so (tools/gpu_probe prints the name).
stand_in=
[[ -n ${gpu_present:-} && ${gpu_reason:-} == "Stand-in GPU"* ]] && stand_in=1

# untimed_failures PROGRAM: the tests of its last run that failed and do not time the GPU.
untimed_failures() {
    python3 -c '
import json, sys
timed = {line.split("\t")[3] for line in open(sys.argv[2]) if line.rstrip("\n").endswith("\ttimed")}
for test in json.load(open(sys.argv[1]))["tests"]:
    if not test["passed"] and test["name"] not in timed:
        print(test["name"])' "$results_dir/${1//\//_}.json" <("build/tests/$1" --rubric) 2>&1
}

for exercise in $exercises; do
    [[ -n ${gpu_present:-} ]] || continue
    build "build/tests/solutions/$exercise" "build/tests/exercises/$exercise" || continue

    run_tests "solutions/$exercise"
    tests=$(grep -c '"name"' <<<"$json_text")
    if [[ $status -eq 0 ]]; then
        pass "solution $exercise passes all $tests tests"
    elif [[ -n $stand_in && $status -eq 1 && -z $(untimed_failures "solutions/$exercise") ]]; then
        skip "solution $exercise passes its untimed tests; its timed ones need a real GPU (skipped: the stand-in runtime has no real timing)"
    else
        fail "solution $exercise passes all its tests (exit $status)" "$output"
    fi

    run_tests "exercises/$exercise"
    if [[ $status -eq 1 ]] && grep -q '"status": "not_started"' <<<"$json_text"; then
        pass "stub $exercise fails and is reported as not started"
    elif [[ $status -eq 0 ]]; then
        fail "stub $exercise fails: it passes every test, so the exercise is already solved" "$output"
    else
        fail "stub $exercise fails and is reported as not started (exit $status)" "$output"
    fi

    for mutant in $(grep "^$exercise--" <<<"$mutants"); do
        expected=$(sed -n 's/^ \* expect: //p' "mutants/$mutant.c")
        on_gpu=$(sed -n 's/^ \* expect-on-gpu: //p' "mutants/$mutant.c")
        if [[ -n $on_gpu && -n $stand_in ]]; then
            skip "mutant $mutant fails with \"$on_gpu\" (skipped: only a real GPU shows this mistake, the stand-in runtime cannot)"
            continue
        fi
        expected=${expected:-$on_gpu}
        if [[ -z $expected ]]; then
            fail "mutant $mutant names its expected diagnostic (a line ' * expect: TEXT' or ' * expect-on-gpu: TEXT')"
            continue
        fi
        build "build/tests/mutants/$mutant" || continue
        run_tests "mutants/$mutant"
        if [[ $status -eq 1 ]] && grep -qF -- "$expected" <<<"$output"; then
            pass "mutant $mutant fails with \"$expected\""
        elif [[ $status -eq 1 ]]; then
            fail "mutant $mutant fails with \"$expected\": it fails, with another message" "$output"
        else
            fail "mutant $mutant fails (exit $status): the tests do not catch this mistake" "$output"
        fi
    done
done

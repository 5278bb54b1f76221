# 30-exercises.sh - each exercise against its solution, its stub and its known mistakes.
#
# The solution must pass every test; the untouched stub must fail and be shown
# as not started; each mutant (mutants/chNN-slug/EXERCISE--mistake.patch, one
# typical mistake, applied to the solution by make into build/mutants/) must
# fail, and the report must carry the diagnostic that its header names on a
# line " * expect: TEXT".
#
# Some mistakes show only where streams really run beside the host: a race
# between streams, or overlap that makes a pipeline fast. Such a mutant names its
# diagnostic on a line " * expect-on-gpu: TEXT" instead, and the timed tests of
# chapter 3 measure overlap. A device that runs each stream's work before the call
# that queued it returns (the stand-in runtime for machines without a GPU; asked
# of build/tools/gpu_probe --asynchronous) cannot show either: there, such a mutant
# is skipped, and a solution that fails timed tests only passes its untimed ones,
# with its timed tests skipped. On a GPU both are held to the full rule. A mistake whose
# diagnostic only a timed test gives (a loop that looks busier than it is, loaders that take
# turns) names it on a line " * expect-when-timed: TEXT": it is run with its timed tests from
# the start, where the others are first run without them.
section "Exercises: solutions pass, stubs and known mistakes fail"

results_dir=build/selftest/results
mkdir -p "$results_dir"

# The one reader of the rubric (harness/report/rubric.awk, for make check, the grader and the book)
# reads what the compiler reads: each test module says what it was compiled with.
rubric_of() { # EXERCISE: its rubric, as the test host reads it from the test module
    build/tests/host --module "build/modules/tests/$1.so" --rubric
}
for exercise in $($MAKE -s --no-print-directory list-exercises); do
    build build/tests/host "build/modules/tests/$exercise.so" || continue
    if difference=$(diff <(rubric_of "$exercise") \
                         <(awk -f harness/report/rubric.awk "tests/$exercise.c") 2>&1); then
        pass "the rubric reader agrees with the compiled tests of $exercise"
    else
        fail "the rubric reader agrees with the compiled tests of $exercise" "$difference"
    fi
done

# The list of exercises is the book's order, and names exactly the exercises there are.
order_log=$($MAKE -s --no-print-directory list-exercises 2>&1)
order_check="make list-exercises follows the book: chapter by chapter, roundtrip first and bandwidth last in chapter 1"
if [[ $(head -n 1 <<<"$order_log") == ch01-memory/roundtrip &&
      $(grep '^ch01-' <<<"$order_log" | tail -n 1) == ch01-memory/bandwidth &&
      $(cut -d/ -f1 <<<"$order_log" | uniq) == $(cut -d/ -f1 <<<"$order_log" | sort -u) ]]; then
    pass "$order_check"
else
    fail "$order_check" "$order_log"
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

# Every exercise module (solutions, stubs, mutants), built by run.sh, is run in the test host
# (build/tests/host, harness/host/runner.c), several modules to a host and as many hosts side by side
# as there are CPUs: a host runs its modules one after another in one CUDA context, and starts a
# fresh process only after a test that crashed, hung, exited or poisoned it. The tests that time
# the GPU take it alone through the runner's lock, which run.sh shares among its sections. The
# results are then read in order, from each module's report and JSON record.
exercises=$($MAKE -s --no-print-directory list-exercises)
mutants=$($MAKE -s --no-print-directory list-mutants)
alternatives=$($MAKE -s --no-print-directory list-alternatives)
# source_of PROGRAM: the learner's file it is (a mutant's is made from its patch).
source_of() {
    if [[ $1 == mutants/* ]]; then echo "build/$1.c"; else echo "$1.c"; fi
}
# record_field PROGRAM FIELD: a field of its record (status, seconds, note), from the lines the
# test host wrote beside its JSON record (--fields); nothing where it reported none.
record_field() {
    awk -F '\t' -v field="$2" '$1 == field { print $2 }' \
        "$results_dir/${1//\//_}.fields" 2>/dev/null
}
# exercise_of PROGRAM: the exercise a solution, stub, mutant or alternative is graded as.
exercise_of() {
    local name=${1##*/} folder=${1%/*}
    name=${name%%--*}
    echo "${folder##*/}/$name"
}
if need_gpu "the exercises against their solutions, stubs and mutants"; then
    # Each module's time in the last run, where there was one; else later chapters first
    # (streams and threads run longest), each exercise's solution and mistakes, then the stubs,
    # which fail at once.
    programs=() stubs=()
    for exercise in $(tac <<<"$exercises"); do
        programs+=("solutions/$exercise")
        for alternative in $alternatives; do
            [[ $alternative == "$exercise--"* ]] && programs+=("selftest/alternatives/$alternative")
        done
        for mutant in $mutants; do
            [[ $mutant == "$exercise--"* ]] && programs+=("mutants/$mutant")
        done
        stubs+=("exercises/$exercise")
    done
    programs+=("${stubs[@]}")
    # run_batch SKIP PROGRAM...: runs them in nproc hosts side by side, shared out so that each
    # host has about as much to do (the longest first, each to the host with the least so far)
    # and exercises whose workers need as many work queues (hosts.sh, queue_group: a mistake
    # run without its timed tests may need fewer than its solution);
    # with SKIP 1, known mistakes without their timed tests (--skip-timed), which have the GPU
    # to themselves one at a time and, failing, try again: most mistakes show in an untimed
    # test. Those that did not show their diagnostic that way are run again whole, below. A
    # mistake that shows only where streams run beside the host (expect-on-gpu), often in a
    # timed test, or only in a timed test (expect-when-timed), is run whole in this batch: run
    # again after the others, the few of them would make hosts, and contexts, of their own, and
    # the section would wait for their timed tests at its end.
    run_batch() {
        local skip_timed=$1 program name host hosts=${SELFTEST_LANES:-$(nproc)} line
        shift
        local -a shares=() timed=() untimed=()
        local -A skips=()
        for program in "$@"; do
            [[ -e build/modules/$program.so ]] || continue
            if [[ $skip_timed == 1 && $program == mutants/* ]] &&
               ! grep -Eq '^ \* expect-(on-gpu|when-timed): ' "$(source_of "$program")"; then
                untimed+=("$program")
                skips[$program]=" --skip-timed"
            else
                timed+=("$program")
            fi
        done
        while read -r host program; do
            name=${program//\//_}
            exercise=$(exercise_of "$program")
            rm -f "$results_dir/$name.json" "$results_dir/$name.fields"
            shares[host]+=" --module build/modules/tests/$exercise.so"
            shares[host]+=" --learner build/modules/$program.so --source $(source_of "$program")"
            shares[host]+=" --json $results_dir/$name.json --fields $results_dir/$name.fields"
            shares[host]+=" --report $results_dir/$name.out"
            shares[host]+=${skips[$program]:-}
        done < <({ queue_group "${timed[@]}"; queue_group --untimed "${untimed[@]}"; } |
                 share_out "$hosts" "$(module_seconds)")
        for host in "${!shares[@]}"; do
            # shellcheck disable=SC2086 # the modules' options, split at spaces
            NO_COLOR=1 COURSE_RUNNER_STATS=${SELFTEST_TIMES:-} build/tests/host ${shares[host]} \
                >"$results_dir/host-$skip_timed-$host.log" 2>&1 &
        done
        wait
        for program in "$@"; do
            line=$(record_field "$program" seconds)
            [[ -n $line ]] && echo "$line $program" >>"$results_dir/times.new"
        done
    }
    touch "$results_dir/times"
    rm -f "$results_dir/times.new" "$results_dir"/host-*.log
    batch_started=$EPOCHREALTIME
    run_batch 1 "${programs[@]}"
    first_batch_seconds=$(seconds_since "$batch_started")
    again=()
    for mutant in $mutants; do
        name=mutants_${mutant//\//_}
        expected=$(sed -n 's/^ \* expect\(-on-gpu\|-when-timed\)\{0,1\}: //p' "mutants/$mutant.patch" |
                   head -n 1)
        mutant_status=$(record_field "mutants/$mutant" status)
        [[ $mutant_status == too_few_gpus ]] && continue
        # Where only a real GPU's timing shows a mistake and this is none, its run is judged a
        # skip (below): a second run would show no more.
        [[ -n $stand_in || -z $streams_overlap ]] &&
            grep -q '^ \* expect-on-gpu: ' "mutants/$mutant.patch" && continue
        if [[ $mutant_status != failed ]] ||
           [[ -z $expected ]] || ! grep -qF -- "$expected" "$results_dir/$name.out"; then
            again+=("mutants/$mutant")
        fi
    done
    batch_started=$EPOCHREALTIME
    run_batch 0 "${again[@]}"
    mv "$results_dir/times.new" "$results_dir/times"
    echo "  (known mistakes run again with their timed tests: ${#again[@]} of $(wc -w <<<"$mutants"))"
    # SELFTEST_TIMES=1: where this section's time went, and the processes (CUDA contexts) it took.
    if [[ ${SELFTEST_TIMES:-} == 1 ]]; then
        workers=$(cat "$results_dir"/host-*.log |
                  sed -n 's/^runner: [0-9]* checkers\{0,1\} and \([0-9]*\) workers\{0,1\} replaced for.*/\1/p' |
                  awk '{ n += $1 + 1 } END { print n + 0 }')
        printf '  (running %d modules: %.1f s, then %d again: %.1f s; %d workers)\n' \
            "${#programs[@]}" "$first_batch_seconds" "${#again[@]}" \
            "$(seconds_since "$batch_started")" "$workers"
        sed -n 's/^runner: checker .*(\([0-9.]*\) s waiting for a turn .*, \([0-9.]*\) s making it)/\1 \2/p' \
            "$results_dir"/host-*.log |
            awk '{ n++; wait += $1; make += $2 }
                 END { if (n) printf "  (a checker'"'"'s context took %.2f s to make on average, after %.2f s waiting for a turn)\n", make / n, wait / n }'
        sed -n 's/^runner: worker started in \([0-9.]*\) s (\([0-9.]*\) s waiting .*, \([0-9.]*\) s making it) with \([0-9]*\) .*/\1 \2 \3 \4/p' \
            "$results_dir"/host-*.log |
            awk '{ n++; all += $1; wait += $2; make += $3; if ($1 > longest) longest = $1
                   of[$4]++; making[$4] += $3 }
                 END { if (n) printf "  (%d workers started, in %.2f s on average (the longest %.2f s): %.2f s waiting for a turn, %.2f s making the context)\n", n, all / n, longest, wait / n, make / n
                       for (q in of) printf "  (%d workers of %d work queues: %.2f s making the context on average)\n", of[q], q, making[q] / of[q] }'
        echo "  (the slowest modules, in seconds:)"
        sort -rn "$results_dir/times" | head -n 12 | sed 's/^/      /'
        grep -h "^runner: a fresh worker" "$results_dir"/host-*.log | sed 's/.*: //' | sort | uniq -c |
            sed 's/^/      fresh workers: /'
    fi
fi

# failed_untimed_tests EXERCISE: the names of the tests that failed in the record run_tests
# read and are not timed, as its rubric says (the same sentences).
failed_untimed_tests() {
    local timed
    timed=$(rubric_of "$1" | awk -F '\t' '$1 == "test" && $5 == "timed" { print $4 }')
    awk -F '\t' '$1 == "test" && $2 == 0 { print $3 }' <<<"$fields" |
        grep -vxF -f <(printf '%s\n' "$timed")
}

# run_tests PROGRAM: what its run left: output (its report), fields (its record, as the test
# host's lines for the shell), record_status and status, the exit status its own test program
# would have had (0 all passed, 1 some failed).
run_tests() {
    local name=${1//\//_}
    output=$(cat "$results_dir/$name.out" 2>/dev/null)
    fields=$(cat "$results_dir/$name.fields" 2>/dev/null)
    record_status=$(record_field "$1" status)
    case $record_status in
        passed) status=0 ;;
        failed | not_started) status=1 ;;
        no_gpu | too_few_gpus) status=77 ;;
        *) status=99 # not reported: what the hosts said last
           output+=$'\nnot reported; the test hosts ended with:\n'$(tail -q -n 3 "$results_dir"/host-*.log) ;;
    esac
}

# expect_all_pass KIND NAME PROGRAM EXERCISE: a correct file (a solution, or an alternative
# written another way) passes every test; where the GPU's timing judges nothing (the stand-in,
# or streams that do not overlap), every untimed one, and its timed ones are skipped.
expect_all_pass() {
    run_tests "$3"
    local tests
    tests=$(grep -c '^test' <<<"$fields")
    if [[ $status -eq 0 ]]; then
        pass "$1 $2 passes all $tests tests"
    elif [[ $status -eq 1 && ( -z $streams_overlap || -n $stand_in ) &&
            -z $(failed_untimed_tests "$4") ]]; then
        pass "$1 $2 passes all its untimed tests"
        skip "$1 $2 passes its timed tests (skipped: ${stand_in_reason:-$asynchronous_reason})"
    else
        fail "$1 $2 passes all its tests (exit $status)" "$output"
    fi
}

for exercise in $exercises; do
    [[ -n ${gpu_present:-} ]] || continue
    build "build/modules/solutions/$exercise.so" "build/modules/exercises/$exercise.so" || continue

    # An exercise about several GPUs, on a machine with fewer: nothing of it ran, so nothing of it
    # passed or failed; each kind of file says so once.
    run_tests "solutions/$exercise"
    if [[ $record_status == too_few_gpus ]]; then
        why=$(record_field "solutions/$exercise" note)
        others=$(grep -c "^$exercise--" <<<"$alternatives")
        skip "solution $exercise passes all its tests (skipped: $why)"
        ((others > 0)) && skip "$others alternatives of $exercise pass all their tests (skipped: $why)"
        skip "stub $exercise fails and is reported as not started (skipped: $why)"
        skip "$(grep -c "^$exercise--" <<<"$mutants") known mistakes of $exercise fail as they should (skipped: $why)"
        continue
    fi
    expect_all_pass solution "$exercise" "solutions/$exercise" "$exercise"

    # Correct solutions written in other styles (selftest/alternatives/): every test passes.
    for alternative in $(grep "^$exercise--" <<<"$alternatives"); do
        build "build/modules/selftest/alternatives/$alternative.so" || continue
        expect_all_pass alternative "$alternative" "selftest/alternatives/$alternative" "$exercise"
    done

    run_tests "exercises/$exercise"
    if [[ $status -eq 1 && $record_status == not_started ]]; then
        pass "stub $exercise fails and is reported as not started"
    elif [[ $status -eq 0 ]]; then
        fail "stub $exercise fails: it passes every test, so the exercise is already solved" "$output"
    else
        fail "stub $exercise fails and is reported as not started (exit $status)" "$output"
    fi

    for mutant in $(grep "^$exercise--" <<<"$mutants"); do
        expected=$(sed -n 's/^ \* expect\(-when-timed\)\{0,1\}: //p' "mutants/$mutant.patch")
        expected_on_gpu=$(sed -n 's/^ \* expect-on-gpu: //p' "mutants/$mutant.patch")
        if [[ -z $expected && -z $expected_on_gpu ]]; then
            fail "mutant $mutant names its expected diagnostic (a line ' * expect: TEXT', ' * expect-when-timed: TEXT' or ' * expect-on-gpu: TEXT')"
            continue
        fi
        if [[ -z $expected && -z $streams_overlap ]]; then
            skip "mutant $mutant fails with \"$expected_on_gpu\" (skipped: $asynchronous_reason)"
            continue
        fi
        expected=${expected:-$expected_on_gpu}
        build "build/modules/mutants/$mutant.so" || continue
        run_tests "mutants/$mutant"
        if [[ $status -eq 1 ]] && grep -qF -- "$expected" <<<"$output"; then
            pass "mutant $mutant fails with \"$expected\""
        elif [[ -n $stand_in && -n $expected_on_gpu && $expected == "$expected_on_gpu" ]]; then
            skip "mutant $mutant fails with \"$expected\" (skipped: $stand_in_reason)"
        elif [[ $status -eq 1 ]]; then
            fail "mutant $mutant fails with \"$expected\": it fails, with another message" "$output"
        else
            fail "mutant $mutant fails (exit $status): the tests do not catch this mistake" "$output"
        fi
    done
done

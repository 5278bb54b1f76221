# 20-harness.sh - the harness contains misbehaving tests and says so; no GPU, no pass.
section "The harness"

fixture=build/selftest/fixtures/harness_behaviour
if build "$fixture"; then
    tally=$(mktemp) json=$(mktemp)
    output=$(COURSE_SKIP_GPU_PROBE=1 COURSE_TEST_TIMEOUT=2 NO_COLOR=1 "$fixture" \
        --tally "$tally" --json "$json" 2>&1)
    status=$?
    expect_in_report() { # WHAT PATTERN
        if grep -q -- "$2" <<<"$output"; then pass "$1"; else fail "$1" "$output"; fi
    }
    [[ $status -eq 1 ]] && pass "a run with failing tests exits 1" ||
        fail "a run with failing tests exits 1 (it exited $status)" "$output"
    expect_in_report "a failing test's message reaches the report" "the message travels to the report"
    expect_in_report "a crashing test fails alone, named as a crash" "crashed: Received signal 11"
    expect_in_report "a hanging test fails alone at its timeout" "did not finish within 2 s"
    expect_in_report "exit(0) in the middle of a test fails that test" "called exit(0)"
    expect_in_report "the exercise's hint follows a failure" "hint: the hint is printed after a failure"
    if [[ $(cut -f2- "$tally") == $'failed\t2\t6\t3\t7' ]]; then
        pass "the tests around the bad ones pass: 2 of 6 tests, 3 of 7 points"
    else
        fail "the tests around the bad ones pass: 2 of 6 tests, 3 of 7 points" "tally: $(cat "$tally")"
    fi
    if grep -q '"status": "failed"' "$json" && grep -q '"name": "a test that crashes", "points": 1, "passed": false' "$json"; then
        pass "the JSON result records each test"
    else
        fail "the JSON result records each test" "$(cat "$json")"
    fi
    rm -f "$tally" "$json"
    # A time limit the harness cannot keep is refused in a sentence, before any test runs.
    for bad in abc -1 0 1e30 inf; do
        output=$(COURSE_SKIP_GPU_PROBE=1 COURSE_TEST_TIMEOUT=$bad "$fixture" 2>&1)
        status=$?
        if [[ $status -eq 2 && $output == *"COURSE_TEST_TIMEOUT=$bad is not a time"* &&
              $output != *PASS* && $output != *FAIL* ]]; then
            pass "COURSE_TEST_TIMEOUT=$bad is refused in a sentence, with exit 2"
        else
            fail "COURSE_TEST_TIMEOUT=$bad is refused in a sentence, with exit 2 (exit $status)" "$output"
        fi
    done
fi

# The test host runs several exercises in one process, one after another: the same fixture
# twice, then a module that is not there. The second run of the fixture fares as the first did,
# after the first's crash, hang and exit(0); the missing module is reported as not loaded, and
# the others still are.
module=build/modules/selftest/fixtures/harness_behaviour.so
if build build/tests/host "$module"; then
    host_run=$(mktemp -d)
    output=$(COURSE_SKIP_GPU_PROBE=1 COURSE_TEST_TIMEOUT=2 NO_COLOR=1 build/tests/host \
        --tally "$host_run/tally" --module "$module" --json "$host_run/1.json" \
        --module "$module" --report "$host_run/2.out" --json "$host_run/2.json" \
        --module "$host_run/no_such_exercise.so" 2>&1)
    status=$?
    check="the test host runs a fixture twice in one process, the second as the first, and says which module it could not load"
    if [[ $status -eq 1 && $(cut -f2- "$host_run/tally") == $'failed\t2\t6\t3\t7\nfailed\t2\t6\t3\t7\ndoes_not_compile\t0\t0\t0\t0' ]] &&
       cmp -s <(sed '/"seconds": /d; s/"message": .*//' "$host_run/1.json") \
              <(sed '/"seconds": /d; s/"message": .*//' "$host_run/2.json") &&
       [[ $(grep -c "called exit(0)" "$host_run/2.out") == 1 &&
          $(grep -c "called exit(0)" <<<"$output") == 1 ]] &&
       grep -q "could not load it" <<<"$output" && grep -q "no_such_exercise.so" <<<"$output"; then
        pass "$check"
    else
        fail "$check (exit $status)" "$output$(echo; cat "$host_run/tally" "$host_run/2.out")"
    fi
    output=$(build/tests/host --source x.c 2>&1)
    if [[ $? -eq 2 && $output == *"an exercise option before any --module"* ]]; then
        pass "the test host refuses an exercise's option that names no module, with exit 2"
    else
        fail "the test host refuses an exercise's option that names no module, with exit 2" "$output"
    fi
    rm -rf "$host_run"
fi

# A timed test beside a test that hangs (selftest/fixtures/gpu_turns.c, no GPU needed): the
# hanging one is stopped while the timed one has the GPU, so the timed one waits a moment, not
# the other's whole time limit (6 s); the hanging one then ends at its own limit.
fixture=build/selftest/fixtures/gpu_turns
if build "$fixture"; then
    turns=$(mktemp -d)
    : >"$turns/gpu" && : >"$turns/turnstile"
    (
        export COURSE_GPU_LOCK=$turns/gpu COURSE_GPU_TURNSTILE=$turns/turnstile COURSE_SKIP_GPU_PROBE=1 \
            COURSE_RUNNER_STATS=1 COURSE_TEST_TIMEOUT=6 NO_COLOR=1
        FIXTURE_HANG=1 "$fixture" >"$turns/hanging.log" 2>&1 &
        for _ in $(seq 200); do # until its test 1 runs
            grep -q "worker 1 ready" "$turns/hanging.log" && break
            sleep 0.05
        done
        sleep 0.5
        "$fixture" >"$turns/timed.log" 2>&1
        echo $? >"$turns/timed.status"
        wait
    )
    waited=$(sed -n 's/^runner: test 2 (timed) took .*, after \([0-9.]*\) s waiting for the GPU$/\1/p' \
        "$turns/timed.log")
    check="a timed test beside a hanging one gets the GPU within a second (the hanging test is stopped meanwhile, then ends at its own limit)"
    if [[ $(cat "$turns/timed.status") == 0 && -n $waited ]] && awk -v s="$waited" 'BEGIN { exit !(s < 1) }' &&
       grep -q "runner: a test stopped for" "$turns/hanging.log" &&
       grep -q "did not finish within 6 s" "$turns/hanging.log"; then
        pass "${check/within a second/in $waited s}"
    else
        fail "$check" "$(cat "$turns/timed.log"; echo "--- the program with the hanging test:"
                         cat "$turns/hanging.log")"
    fi
    rm -rf "$turns"
fi

# The delay that chapter 3's tests put before a learner's copies holds up just those copies,
# on a GPU whose streams run beside the host (elsewhere there is nothing to hold up).
fixture=build/selftest/fixtures/stream_delay
if need_gpu "the harness's delays before a stream's copies" && build "$fixture"; then
    if [[ -z $streams_overlap ]]; then
        skip "the harness's delays before a stream's copies (skipped: $asynchronous_reason)"
    elif output=$(NO_COLOR=1 "$fixture" 2>&1); then
        pass "the harness's delays hold up the copies they name, and only while the test wants"
    else
        fail "the harness's delays hold up the copies they name, and only while the test wants" "$output"
    fi
fi

# make check with no GPU: says so, exits non-zero, reports nothing as passed.
# CUDA_VISIBLE_DEVICES= hides any GPU there is, so this runs everywhere.
output=$(CUDA_VISIBLE_DEVICES= NO_COLOR=1 $MAKE -s --no-print-directory check-now SOLUTIONS=1 2>&1)
status=$?
if [[ $status -ne 0 ]] && grep -q "No CUDA device is available" <<<"$output" &&
   ! grep -qE '^PASS|[1-9][0-9]* passed' <<<"$output"; then
    pass "make check without a GPU says so, exits non-zero and passes nothing"
else
    fail "make check without a GPU says so, exits non-zero and passes nothing (exit $status)" "$output"
fi

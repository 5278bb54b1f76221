# 25-isolation.sh - an exercise's tests share one process and one CUDA context, and a test that
# crashes, hangs, exits or poisons the context still fails alone, by make check and by make grade.
#
# The fixture (selftest/fixtures/isolation/) is an exercise whose "learner's" file misbehaves on
# cue; it is checked and graded in a copy of the course that holds it, so that the course itself
# lists no such exercise.
section "Isolation: one process per exercise, each bad test failing alone"

isolation_expect() { # WHERE OUTPUT: the fixture's seven tests, as each must end
    local where=$1 output=$2 sentence reason
    if ! grep -q "3/7 tests" <<<"$output"; then
        fail "$where: the fixture ran, and three of its seven tests passed" "$output"
        return
    fi
    while IFS='|' read -r sentence reason; do
        if [[ $reason == pass ]]; then
            grep -qF "FAIL $sentence" <<<"$output" &&
                { fail "$where: '$sentence' passes" "$output"; continue; }
            pass "$where: '$sentence' passes"
        elif [[ $reason == *poisoned* && $output == *"step 5 returned cudaErrorNotSupported"* ]]; then
            skip "$where: '$sentence' fails as a poisoned context (skipped: this CUDA runtime runs no kernels)"
        elif grep -A2 -F "FAIL $sentence" <<<"$output" | grep -qF -- "${reason#*:}"; then
            pass "$where: '$sentence' fails, ${reason%%:*}"
        else
            fail "$where: '$sentence' fails, ${reason%%:*}" "$output"
        fi
    done <<'EXPECTED'
step 1 works|pass
step 2 crashes|as a crash:crashed: Received signal 11
step 3 hangs|at its time limit:did not finish within 3 s
step 4 exits|as a call of exit():called exit(0)
step 5 poisons the context|as a poisoned context:left the GPU in an error state
step 6 keeps all the memory it can|pass
step 7 needs a gibibyte|pass
EXPECTED
}

# isolation_copy DEST: a copy of the course that holds the fixture as an exercise.
isolation_copy() {
    local copy=$1
    rm -rf "$copy" && mkdir -p "$copy/build"
    tar --exclude=./build --exclude=./.git --exclude=./.deps -cf - . | tar -xf - -C "$copy"
    cp -a build/lib build/obj "$copy/build/"
    [[ -d .deps ]] && ln -s "$PWD/.deps" "$copy/.deps" # Check, where make deps unpacked it here
    cp -r selftest/fixtures/isolation/exercises selftest/fixtures/isolation/tests "$copy/"
    mkdir -p "$copy/solutions/ch00-isolation"
    cp selftest/fixtures/isolation/exercises/ch00-isolation/isolation.c "$copy/solutions/ch00-isolation/"
    echo "ch00-isolation/isolation" >>"$copy/exercises/ORDER"
}

if need_gpu "the isolation fixture"; then
    # make check and make grade each in a copy of their own, side by side: each spends most of
    # its time waiting, for the hanging test's limit and for its CUDA contexts.
    check_copy=build/selftest/isolation-check grade_copy=build/selftest/isolation-grade
    isolation_copy "$check_copy"
    isolation_copy "$grade_copy"
    # Each worker takes 3.5 s to start, longer than a test's limit, as on a busy machine where
    # contexts wait for their turn: that time is not the test's.
    (COURSE_TEST_TIMEOUT=3 COURSE_WORKER_START_DELAY_S=3.5 COURSE_RUNNER_STATS=1 NO_COLOR=1 \
        $MAKE -s --no-print-directory -C "$check_copy" check-now EX=ch00-isolation/isolation \
        >"$check_copy.log" 2>&1) &
    check_pid=$!

    class=$grade_copy/build/class
    mkdir -p "$class/a-student/ch00-isolation"
    cp selftest/fixtures/isolation/exercises/ch00-isolation/isolation.c "$class/a-student/ch00-isolation/"
    chmod -R a+rX "$class"
    isolation_scratch=$(scratch_for_grading "$PWD/$grade_copy/build/scratch")
    grade_log=$($MAKE -s --no-print-directory -C "$grade_copy" grade SUBMISSIONS=build/class \
                OUT=build/grades SCRATCH="$isolation_scratch" TEST_TIMEOUT=3 2>&1)
    feedback=$(cat "$grade_copy/build/grades/students/a-student/feedback.md" 2>/dev/null)
    wait "$check_pid"
    output=$(cat "$check_copy.log")

    isolation_expect "make check" "$output"
    # The checker's context, and the workers': one for tests 1-2, then a fresh one after each of
    # the crash, the hang, the exit and the poisoned context: six contexts for seven tests, where
    # a process per test made seven. (A runtime that runs no kernels cannot be poisoned: five.)
    replaced=4
    [[ $output == *"step 5 returned cudaErrorNotSupported"* ]] && replaced=3
    host_logs=$(cat "$check_copy"/build/results/exercises/host-*.log 2>/dev/null)
    contexts="$((replaced + 2)) processes that use CUDA (the checker and $((replaced + 1)) workers) for the seven tests"
    if grep -q "runner: 1 checker and $replaced workers replaced for 7 tests" <<<"$host_logs"; then
        pass "make check: $contexts"
    else
        fail "make check: $contexts" "$host_logs"
    fi
    if [[ -z $feedback ]]; then
        fail "make grade graded the fixture" "$grade_log"
    else
        isolation_expect "make grade" "$feedback"
    fi
    rm -rf "$check_copy" "$check_copy.log" "$grade_copy"
    [[ $isolation_scratch == "$PWD/$grade_copy/build/scratch" ]] || rm -rf "$isolation_scratch"
fi

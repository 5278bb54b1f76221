# 20-harness.sh - the harness contains misbehaving tests and says so; no GPU, no pass.
section "The harness"

# A fixture is an exercise of the harness's own (selftest/fixtures/NAME/): its tests in a test
# module, its "learner's" file, which misbehaves on cue, in a learner module.
fixture_options() { # NAME: the test host's options for it
    echo "--module build/modules/fixtures/$1/tests.so --learner build/modules/fixtures/$1/learner.so"
}

# The fixtures that use the GPU spend their time waiting: for turns to make their contexts, and
# for the GPU alone in their timed tests. They start here, side by side and beside the rest of
# the section, and are judged below in their places (one after another, they took 57 s of the
# section's 80 on an H100).
fixtures_run=$(mktemp -d)
declare -A fixture_pid=()
# fixture_start NAME COMMAND...: COMMAND in the background, its output kept under NAME.
fixture_start() {
    local name=$1
    shift
    ("$@" >"$fixtures_run/$name.out" 2>&1) &
    fixture_pid[$name]=$!
}
# fixture_output NAME COMMAND...: NAME's output in $output, and its exit status: the run started
# above, waited for; where none was started (its programs were not built then), COMMAND now.
fixture_output() {
    local name=$1 status
    shift
    if [[ -n ${fixture_pid[$name]:-} ]]; then
        wait "${fixture_pid[$name]}"
        status=$?
        output=$(cat "$fixtures_run/$name.out")
    else
        output=$("$@" 2>&1)
        status=$?
    fi
    return "$status"
}
# The commands, as they are started here and judged below (the options split at spaces).
# shellcheck disable=SC2207
stream_delay_run=(env NO_COLOR=1 build/tests/host $(fixture_options stream_delay))
# shellcheck disable=SC2207
queues_alone_run=(env -u CUDA_DEVICE_MAX_CONNECTIONS FIXTURE_QUEUES_DUE=2 NO_COLOR=1
                  build/tests/host $(fixture_options worker_queues) --skip-timed)
# shellcheck disable=SC2207
queues_timed_run=(env -u CUDA_DEVICE_MAX_CONNECTIONS FIXTURE_QUEUES_DUE=-1 NO_COLOR=1
                  build/tests/host $(fixture_options worker_queues))
# shellcheck disable=SC2207
queues_beside_run=(env -u CUDA_DEVICE_MAX_CONNECTIONS -u FIXTURE_CONNECTIONS_GIVEN
                   FIXTURE_QUEUES_DUE=-1 NO_COLOR=1 build/tests/host
                   $(fixture_options worker_queues) $(fixture_options worker_environment))
# shellcheck disable=SC2207
queues_five_run=(env CUDA_DEVICE_MAX_CONNECTIONS=5 FIXTURE_CONNECTIONS_GIVEN=5 FIXTURE_QUEUES_DUE=5
                 NO_COLOR=1 build/tests/host $(fixture_options worker_environment)
                 $(fixture_options worker_queues))
# make check on one GPU (below), the solutions and then the stub: both write build/results, so
# they run one after the other, and before the make check without a GPU, which waits for them.
one_gpu_checks() {
    CUDA_VISIBLE_DEVICES=0 NO_COLOR=1 MAKE=$MAKE harness/check.sh solutions \
        ch01-memory/roundtrip ch06-two-gpus/peer_access >"$fixtures_run/one_gpu_solutions.out" 2>&1
    echo $? >"$fixtures_run/one_gpu_solutions.status"
    CUDA_VISIBLE_DEVICES=0 NO_COLOR=1 MAKE=$MAKE harness/check.sh exercises \
        ch06-two-gpus/peer_access >"$fixtures_run/one_gpu_stub.out" 2>&1
    echo $? >"$fixtures_run/one_gpu_stub.status"
}
if [[ -n $gpu_present ]]; then
    fixture_start one_gpu one_gpu_checks
    built() { local target; for target in "$@"; do [[ -e $target ]] || return 1; done; }
    if [[ -n $streams_overlap ]] && built build/tests/host build/tests/worker \
        build/modules/fixtures/stream_delay/tests.so build/modules/fixtures/stream_delay/learner.so; then
        fixture_start stream_delay "${stream_delay_run[@]}"
    fi
    if built build/tests/host build/tests/worker build/modules/fixtures/worker_environment/tests.so \
        build/modules/fixtures/worker_environment/learner.so \
        build/modules/fixtures/worker_queues/tests.so build/modules/fixtures/worker_queues/learner.so; then
        fixture_start queues_alone "${queues_alone_run[@]}"
        fixture_start queues_timed "${queues_timed_run[@]}"
        fixture_start queues_beside "${queues_beside_run[@]}"
        fixture_start queues_five "${queues_five_run[@]}"
    fi
fi

if build build/tests/host build/tests/worker build/modules/fixtures/behaviour/tests.so \
         build/modules/fixtures/behaviour/learner.so; then
    host_run=$(mktemp -d)
    # shellcheck disable=SC2046 # the options, split at spaces
    output=$(COURSE_SKIP_GPU_PROBE=1 COURSE_TEST_TIMEOUT=2 NO_COLOR=1 build/tests/host \
        --tally "$host_run/tally" $(fixture_options behaviour) --json "$host_run/1.json" 2>&1)
    status=$?
    expect_in_report() { # WHAT PATTERN
        if grep -q -- "$2" <<<"$output"; then pass "$1"; else fail "$1" "$output"; fi
    }
    [[ $status -eq 1 ]] && pass "a run with failing tests exits 1" ||
        fail "a run with failing tests exits 1 (it exited $status)" "$output"
    expect_in_report "a failing test's message reaches the report" "the message travels to the report"
    expect_in_report "a test whose code crashes fails alone, named as a crash" "crashed: Received signal 11"
    expect_in_report "a test whose code hangs fails alone at its timeout" "did not finish within 2 s"
    expect_in_report "exit(0) in the middle of a test fails that test" "called exit(0)"
    expect_in_report "a failure says where the exercise's hint is, and does not show it" "hint: make hint EX="
    if grep -q "the hint is printed after a failure" <<<"$output"; then
        fail "a failure does not show the hint unasked" "$output"
    fi
    if [[ $(cut -f2- "$host_run/tally") == $'failed\t2\t6\t3\t7' ]]; then
        pass "the tests around the bad ones pass: 2 of 6 tests, 3 of 7 points"
    else
        fail "the tests around the bad ones pass: 2 of 6 tests, 3 of 7 points" "tally: $(cat "$host_run/tally")"
    fi
    if grep -q '"status": "failed"' "$host_run/1.json" &&
       grep -q '"name": "a test that crashes", "points": 1, "passed": false' "$host_run/1.json"; then
        pass "the JSON result records each test"
    else
        fail "the JSON result records each test" "$(cat "$host_run/1.json")"
    fi
    # A time limit the harness cannot keep is refused in a sentence, before any test runs.
    for bad in abc -1 0 1e30 inf; do
        # shellcheck disable=SC2046
        output=$(COURSE_SKIP_GPU_PROBE=1 COURSE_TEST_TIMEOUT=$bad build/tests/host \
                 $(fixture_options behaviour) 2>&1)
        status=$?
        if [[ $status -eq 2 && $output == *"COURSE_TEST_TIMEOUT=$bad is not a time"* &&
              $output != *PASS* && $output != *FAIL* ]]; then
            pass "COURSE_TEST_TIMEOUT=$bad is refused in a sentence, with exit 2"
        else
            fail "COURSE_TEST_TIMEOUT=$bad is refused in a sentence, with exit 2 (exit $status)" "$output"
        fi
    done

    # The test host runs several exercises, one after another: the same fixture twice, then one
    # whose learner's module is not there. The second run of the fixture fares as the first did,
    # after the first's crash, hang and exit(0), in a worker started afresh after each; the
    # missing module is reported as not loaded, and the others still are.
    : >"$host_run/tally"
    # shellcheck disable=SC2046
    output=$(COURSE_SKIP_GPU_PROBE=1 COURSE_TEST_TIMEOUT=2 NO_COLOR=1 COURSE_RUNNER_STATS=1 \
        build/tests/host --tally "$host_run/tally" $(fixture_options behaviour) \
        --json "$host_run/1.json" $(fixture_options behaviour) --report "$host_run/2.out" \
        --json "$host_run/2.json" --module build/modules/fixtures/behaviour/tests.so \
        --learner "$host_run/no_such_learner.so" 2>&1)
    status=$?
    check="the test host runs a fixture twice in one run, the second as the first, and says which learner's module it could not load"
    if [[ $status -eq 1 && $(cut -f2- "$host_run/tally") == $'failed\t2\t6\t3\t7\nfailed\t2\t6\t3\t7\ndoes_not_compile\t0\t0\t0\t0' ]] &&
       cmp -s <(sed '/"seconds": /d; s/"message": .*//' "$host_run/1.json") \
              <(sed '/"seconds": /d; s/"message": .*//' "$host_run/2.json") &&
       [[ $(grep -c "called exit(0)" "$host_run/2.out") == 1 &&
          $(grep -c "called exit(0)" <<<"$output") == 1 ]] &&
       grep -q "could not load it" <<<"$output" && grep -q "no_such_learner.so" <<<"$output" &&
       grep -q "runner: 1 checker and 6 workers replaced for 18 tests" <<<"$output"; then
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
    output=$(build/tests/host --module build/modules/fixtures/behaviour/tests.so 2>&1)
    if [[ $? -eq 2 && $output == *"without its learner's module (--learner)"* ]]; then
        pass "the test host refuses an exercise without its learner's module, with exit 2"
    else
        fail "the test host refuses an exercise without its learner's module, with exit 2" "$output"
    fi
    rm -rf "$host_run"
fi

# A failed test's undo (harness_undo_if_failed) ends the learner's thread in the same worker,
# after the verdict, so that the next test needs no fresh worker; an undo taken back is not run,
# none runs in a fresh worker, and one that hangs ends its worker without touching the test's
# verdict or message. The fixture's every other test reads what the one before it left.
if build build/modules/fixtures/undo/tests.so build/modules/fixtures/undo/learner.so; then
    undo_run=$(mktemp -d)
    # shellcheck disable=SC2046
    output=$(COURSE_SKIP_GPU_PROBE=1 COURSE_TEST_TIMEOUT=2 NO_COLOR=1 COURSE_RUNNER_STATS=1 \
        build/tests/host --tally "$undo_run/tally" $(fixture_options undo) 2>&1)
    status=$?
    check="a failed test's undo ends the learner's thread in the same worker, after the verdict, and never in a fresh one"
    if [[ $status -eq 1 && $(cut -f2- "$undo_run/tally") == $'failed\t4\t8\t4\t8' ]] &&
       grep -q "fails on purpose, its spinner running" <<<"$output" &&
       grep -q "fails on purpose, its undo hangs" <<<"$output" &&
       [[ $(grep -o "a fresh worker after test [0-9]*" <<<"$output" | tr '\n' ' ') == \
          "a fresh worker after test 5 a fresh worker after test 7 " ]]; then
        pass "$check"
    else
        fail "$check (exit $status)" "$output$(echo; cat "$undo_run/tally")"
    fi
    rm -rf "$undo_run"
fi

# The learner's code cannot forge the result channel, nor reach the processes that judge it:
# its forged records on every descriptor it has, and on the checker's, come to nothing.
if build build/modules/fixtures/result_channel/tests.so build/modules/fixtures/result_channel/learner.so; then
    channel_run=$(mktemp -d)
    # shellcheck disable=SC2046
    COURSE_SKIP_GPU_PROBE=1 COURSE_TEST_TIMEOUT=3 NO_COLOR=1 build/tests/host $(fixture_options result_channel) \
        --result-fd 9 >"$channel_run/out" 2>&1 9>"$channel_run/channel"
    records=$(grep -c '"exercise"' "$channel_run/channel")
    check="the result channel holds the judge's record alone, and the learner's code reached none of the checker's descriptors or memory"
    if [[ $records == 1 ]] && ! grep -q '"forged"' "$channel_run/channel" &&
       grep -q '"status": "failed"' "$channel_run/channel" &&
       grep -q "it reached 0 of the checker's descriptors and memory" "$channel_run/channel"; then
        pass "$check"
    else
        fail "$check" "$(cat "$channel_run/channel" "$channel_run/out")"
    fi
    rm -rf "$channel_run"
fi

# A timed test beside a test that hangs (the gpu_turns fixture, no GPU needed): the hanging one
# is stopped while the timed one has the GPU, so the timed one waits a moment, not the other's
# whole time limit (6 s); the hanging one then ends at its own limit.
if build build/modules/fixtures/gpu_turns/tests.so build/modules/fixtures/gpu_turns/learner.so; then
    # beside_a_timed_test ENV SEEN: in a folder of lock files of its own ($turns), the fixture run
    # with ENV set (into $turns/first.log, its exit status into first.status) until its log shows
    # SEEN, then, half a second later, a second run of it beside it (timed.log, timed.status),
    # whose test 2 takes the GPU alone.
    beside_a_timed_test() {
        turns=$(mktemp -d)
        : >"$turns/gpu" && : >"$turns/turnstile"
        (
            export COURSE_GPU_LOCK=$turns/gpu COURSE_GPU_TURNSTILE=$turns/turnstile \
                COURSE_SKIP_GPU_PROBE=1 COURSE_RUNNER_STATS=1 COURSE_TEST_TIMEOUT=6 NO_COLOR=1
            # shellcheck disable=SC2046
            env "$1" build/tests/host $(fixture_options gpu_turns) >"$turns/first.log" 2>&1 &
            first=$!
            for _ in $(seq 200); do
                grep -qs "$2" "$turns/first.log" && break # -s: the log may not be made yet
                sleep 0.05
            done
            sleep 0.5
            # shellcheck disable=SC2046
            build/tests/host $(fixture_options gpu_turns) >"$turns/timed.log" 2>&1
            echo $? >"$turns/timed.status"
            wait "$first"
            echo $? >"$turns/first.status"
        )
    }
    both_logs() {
        cat "$turns/timed.log"
        echo "--- the program beside the timed test:"
        cat "$turns/first.log"
    }
    beside_a_timed_test FIXTURE_HANG=1 "checker 1 ready" # its test 1 runs, and hangs
    waited=$(sed -n 's/^runner: test 2 (timed) took .*, after \([0-9.]*\) s waiting for the GPU$/\1/p' \
        "$turns/timed.log")
    check="a timed test beside a hanging one gets the GPU within a second (the hanging test is stopped meanwhile, then ends at its own limit)"
    if [[ $(cat "$turns/timed.status") == 0 && -n $waited ]] && awk -v s="$waited" 'BEGIN { exit !(s < 1) }' &&
       grep -q "runner: a test stopped for" "$turns/first.log" &&
       grep -q "did not finish within 6 s" "$turns/first.log"; then
        pass "${check/within a second/in $waited s}"
    else
        fail "$check" "$(both_logs)"
    fi
    rm -rf "$turns"

    # The judge tells a test that it stops it (COMMAND_STOPPING) before it does: a test that held
    # up work on the GPU, which runs on meanwhile, asks afterwards whether it was stopped
    # (harness_stops_so_far, harness_busy_after). Test 3 waits for that word, then passes.
    beside_a_timed_test FIXTURE_STOPPED=1 "runner: test 2 (timed) took" # its test 3 runs
    check="a test is told that it was stopped while another program's timed test had the GPU"
    if [[ $(cat "$turns/first.status") == 0 ]] && grep -q "runner: a test stopped for" "$turns/first.log"; then
        pass "$check"
    else
        fail "$check" "$(both_logs)"
    fi
    rm -rf "$turns"
fi

# The delay that chapter 3's tests put before a learner's copies holds up just those copies,
# on a GPU whose streams run beside the host (elsewhere there is nothing to hold up).
if need_gpu "the harness's delays before a stream's copies" &&
   build build/modules/fixtures/stream_delay/tests.so build/modules/fixtures/stream_delay/learner.so; then
    if [[ -z $streams_overlap ]]; then
        skip "the harness's delays before a stream's copies (skipped: $asynchronous_reason)"
    elif fixture_output stream_delay "${stream_delay_run[@]}"; then
        pass "the harness's delays hold up the copies they name, and only while the test wants"
    else
        fail "the harness's delays hold up the copies they name, and only while the test wants" "$output"
    fi
fi

# The checker makes its context with one work queue, and the learner's code keeps the
# environment's setting: none (the driver's 8), or the number it names; but a host whose
# exercises all name their work queues (worker_queues alone, 2) gives them that many where the
# environment names none, unless it is to run a timed test that wants the environment's.
# Beside an exercise that says nothing (worker_environment), the host gives both the
# environment's setting: one worker, not a second for the other kind.
if need_gpu "the learner's code keeps the environment's CUDA_DEVICE_MAX_CONNECTIONS" &&
   build build/modules/fixtures/worker_environment/tests.so \
         build/modules/fixtures/worker_environment/learner.so \
         build/modules/fixtures/worker_queues/tests.so build/modules/fixtures/worker_queues/learner.so; then
    queues_output=''
    queues_failed=''
    for run in queues_alone queues_timed queues_beside queues_five; do
        declare -n run_command=${run}_run
        if [[ $run == queues_alone ]]; then
            # Run without its timed test (--skip-timed), which alone fails, as not run.
            fixture_output "$run" "${run_command[@]}"
            [[ $? == 1 && $(grep -c '^ *FAIL [a-z]' <<<"$output") == 1 ]] &&
                grep -q 'FAIL a timed test that asks for it' <<<"$output" &&
                grep -q 'not run: COURSE_SKIP_TIMED=1' <<<"$output" || queues_failed+=" $run"
        else
            fixture_output "$run" "${run_command[@]}" || queues_failed+=" $run"
        fi
        unset -n run_command
        queues_output+=$output
    done
    output=$queues_output
    if [[ -z $queues_failed ]]; then
        pass "the learner's code keeps the environment's CUDA_DEVICE_MAX_CONNECTIONS, not the checker's, and a host of exercises that name their work queues alone gives them that many"
    else
        fail "the learner's code keeps the environment's CUDA_DEVICE_MAX_CONNECTIONS, not the checker's, and a host of exercises that name their work queues alone gives them that many" \
            "$output"
    fi
fi

# make check with no GPU: says so once, runs the tests that need none (break_even's and
# managed_or_copy's, the two exercises of arithmetic alone), passes
# nothing else, and its own status says "no GPU" (3). CUDA_VISIBLE_DEVICES= hides any GPU there
# is, so this runs everywhere.
exercises=$($MAKE -s --no-print-directory list-exercises)
[[ -z ${fixture_pid[one_gpu]:-} ]] || wait "${fixture_pid[one_gpu]}"
output=$(CUDA_VISIBLE_DEVICES= NO_COLOR=1 MAKE=$MAKE harness/check.sh solutions $exercises 2>&1)
status=$?
waiting=$(($(wc -w <<<"$exercises") - 2))
check="make check without a GPU says so once, exits 3, and runs only the tests that need none"
if [[ $status -eq 3 ]] && [[ $(grep -c "^No GPU: " <<<"$output") -eq 1 ]] &&
   [[ $(grep -c '^PASS' <<<"$output") -eq 2 ]] && grep -q '^PASS  ch02-pinned/break_even' <<<"$output" &&
   grep -q '^PASS  ch04-managed/managed_or_copy' <<<"$output" &&
   grep -q "^SKIP  ch01-memory/roundtrip" <<<"$output" && grep -q "$waiting waiting for a GPU" <<<"$output" &&
   ! grep -q "driver" <<<"$(sed -n '/^No GPU: /,$p' <<<"$output" | tail -n +2)"; then
    pass "$check"
elif [[ -e /proc/driver/nvidia ]] || grep -qsx 0x10de /sys/bus/pci/devices/*/vendor; then
    # Where NVIDIA hardware is, the message rightly names the driver.
    if [[ $status -eq 3 ]] && grep -q '^PASS  ch02-pinned/break_even' <<<"$output"; then
        pass "$check"
    else
        fail "$check (exit $status)" "$output"
    fi
else
    fail "$check (exit $status)" "$output"
fi

# make check on one GPU (CUDA_VISIBLE_DEVICES=0 makes any machine one): an exercise about two is
# neither passed nor failed but "not run here", said once; when all else passed, the status says
# the machine stood in the way (3), as without a GPU; its untouched stub is still not started (1).
check="make check on one GPU runs chapter 6 nowhere, says so, and exits 3 when all else passed"
if need_gpu "$check"; then
    [[ -n ${fixture_pid[one_gpu]:-} ]] || one_gpu_checks # started above where a GPU was found
    output=$(cat "$fixtures_run/one_gpu_solutions.out")
    status=$(cat "$fixtures_run/one_gpu_solutions.status")
    stub=$(cat "$fixtures_run/one_gpu_stub.out")
    stub_status=$(cat "$fixtures_run/one_gpu_stub.status")
    if ((status == 3 && stub_status == 1)) && grep -q '^PASS  ch01-memory/roundtrip' <<<"$output" &&
       grep -q '^SKIP  ch06-two-gpus/peer_access' <<<"$output" &&
       [[ $(grep -c '^Not run here:' <<<"$output") -eq 1 ]] &&
       grep -q 'peer_access: it needs 2 GPUs and this machine has 1\.' <<<"$output" &&
       grep -q '^TODO  ch06-two-gpus/peer_access' <<<"$stub"; then
        pass "$check"
    else
        fail "$check (exit $status, the stub's $stub_status)" "$output"$'\n'"$stub"
    fi
fi

# Hints on request, mild first: make hint prints the first level, wrapped, and the command for
# the next; LEVEL=2 the calls. Every exercise has a mild hint before its explicit one. A file
# that does not compile is not offered one.
hint=$($MAKE -s --no-print-directory hint EX=roundtrip 2>&1)
closer=$($MAKE -s --no-print-directory hint EX=roundtrip LEVEL=2 2>&1)
if [[ $hint == *"(1 of 2)"* && $hint == *"make hint EX=roundtrip LEVEL=2"* &&
      $hint != *"cudaMalloc("* && $closer == *"cudaMalloc("* && $closer != *"LEVEL=3"* ]] &&
   awk 'length > 78 { exit 1 }' <<<"$hint"$'\n'"$closer"; then
    pass "make hint EX=roundtrip prints its mild hint first, then with LEVEL=2 the calls, in lines of 78 columns at most"
else
    fail "make hint EX=roundtrip prints its mild hint first, then with LEVEL=2 the calls, in lines of 78 columns at most" \
        "$hint"$'\n---\n'"$closer"
fi
if wrong=$($MAKE -s --no-print-directory hint EX=roundtrip LEVEL=two 2>&1); then
    fail "make hint with a LEVEL that is not a number says so and exits non-zero" "$wrong"
elif [[ $wrong == *"LEVEL=two: give a number"* ]]; then
    pass "make hint with a LEVEL that is not a number says so and exits non-zero"
else
    fail "make hint with a LEVEL that is not a number says so and exits non-zero" "$wrong"
fi
single=$(awk -f harness/report/rubric.awk tests/*/*.c |
         awk -F '\t' '$1 == "exercise" { n = split($4, levels, /\\n\\n/)
                                           if (n < 2 || length(levels[1]) >= length(levels[n])) print $2 }')
if [[ -z $single ]]; then
    pass "every exercise's hint has a mild level before its explicit one"
else
    fail "every exercise's hint has a mild level before its explicit one" "$single"
fi
if build build/tools/report_block; then
    block=$({ awk -f harness/report/rubric.awk tests/ch01-memory/roundtrip.c
              printf 'status\tdoes_not_compile\nsource\texercises/ch01-memory/roundtrip.c\ndetail\tit does not compile:\n'
            } | build/tools/report_block)
    if [[ $block == *"does not compile"* && $block != *"hint"* ]]; then
        pass "a file that does not compile is shown its compiler's errors, not the hint"
    else
        fail "a file that does not compile is shown its compiler's errors, not the hint" "$block"
    fi
fi

# make list: every exercise in the book's order, each with its title and a state.
listing=$(NO_COLOR=1 $MAKE -s --no-print-directory list 2>&1)
expected=$($MAKE -s --no-print-directory list-exercises)
listed=$(awk 'NF > 2 && $0 ~ /^  / { for (i = 1; i <= NF; i++) if ($i ~ /^ch[0-9][0-9]-/) { print $i; break } }' <<<"$listing")
titled=$(awk -f harness/report/rubric.awk $(sed 's|.*|tests/&.c|' <<<"$expected") |
         awk -F '\t' '$1 == "exercise" { print $3 }' | while IFS= read -r title; do
             grep -qF -- "$title" <<<"$listing" || echo "missing: $title"; done)
if [[ $listed == "$expected" && -z $titled ]] &&
   grep -qE '^[0-9]+ of [0-9]+ done\.' <<<"$listing"; then
    pass "make list names every exercise in the book's order, with its title and its state"
else
    fail "make list names every exercise in the book's order, with its title and its state" "$listing
$titled"
fi

# make watch without a GPU: it starts, says so once, checks the exercise (compiling it, running
# the tests that need no GPU) and waits for a save, where it used to refuse to start.
if command -v inotifywait >/dev/null || [[ -x .deps/root/usr/bin/inotifywait ]]; then
    watch_log=$(mktemp)
    CUDA_VISIBLE_DEVICES= NO_COLOR=1 setsid $MAKE -s --no-print-directory watch EX=break_even \
        >"$watch_log" 2>&1 </dev/null &
    watcher=$!
    for _ in $(seq 1 120); do
        grep -q "each save checks it again" "$watch_log" && break
        kill -0 "$watcher" 2>/dev/null || break
        sleep 0.5
    done
    kill -- -"$watcher" 2>/dev/null; wait "$watcher" 2>/dev/null
    check="make watch without a GPU starts, says so once, checks the exercise and waits for a save"
    if grep -q "^watch: no GPU here" "$watch_log" && grep -q "break_even" "$watch_log" &&
       grep -q "each save checks it again" "$watch_log" &&
       [[ $(grep -c "no GPU here" "$watch_log") -eq 1 ]]; then
        pass "$check"
    else
        fail "$check" "$(cat "$watch_log")"
    fi
    rm -f "$watch_log"
else
    skip "make watch without a GPU (skipped: no inotifywait)"
fi
rm -rf "$fixtures_run"

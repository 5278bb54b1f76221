# 40-chapters.sh - every chapter program runs with its defaults and reports success, and
# the measuring tool the grading benchmark uses creates its contexts.
section "Chapter programs"

# A chapter that is not there is named, before anything is built or run (no GPU needed).
run_log=$($MAKE -s --no-print-directory run CH=99 2>&1)
if [[ $? -ne 0 && $run_log == *"no chapter '99'"* ]]; then
    pass "make run CH=99 stops, naming the chapter that is not there"
else
    fail "make run CH=99 stops, naming the chapter that is not there" "$run_log"
fi

log_dir=build/selftest/chapters
# Built first, then run side by side, SELFTEST_CHAPTERS_AT_ONCE (4) at a time: each spends much
# of its time waiting for the GPU beside the other sections (65 s one after another, 36 s four at
# a time, on the H200 in make test). Their results are read in order.
chapter_programs=()
for program in $($MAKE -s --no-print-directory list-chapters); do
    need_gpu "chapter program $program" || continue
    build "build/$program" || continue
    chapter_programs+=("$program")
done
# work_queues PROGRAM: how it is run as to its hardware work queues. A program that makes no
# stream of its own (the CUDA calls it imports name no cudaStreamCreate) queues all its work on
# the legacy default stream, whose work runs in its order whatever the queues, and checks what
# arrived, not how fast: it runs with one queue (CUDA_DEVICE_MAX_CONNECTIONS=1), as the
# exercises of one stream do, a context the driver makes in a third of the time of the default
# 8's, beside every other program's (docs/performance.md, "What a context costs"). The others,
# and every program where the environment names a number, keep what the environment says.
work_queues() {
    local imports
    [[ -n ${CUDA_DEVICE_MAX_CONNECTIONS:-} ]] && return 0
    imports=$(nm -D --undefined-only "$1" 2>/dev/null)
    if grep -q ' cuda' <<<"$imports" && ! grep -q ' cudaStreamCreate' <<<"$imports"; then
        echo CUDA_DEVICE_MAX_CONNECTIONS=1
    fi
}
for program in "${chapter_programs[@]}"; do
    wait_for_a_place "${SELFTEST_CHAPTERS_AT_ONCE:-4}"
    log="$log_dir/${program#chapters/}.log"
    mkdir -p "$(dirname "$log")"
    # Beside the other sections' tests, never beside one that times the GPU.
    # shellcheck disable=SC2046 # work_queues prints one word or none
    (with_gpu shared timeout 300 env $(work_queues "build/$program") "build/$program" >"$log" 2>&1
     echo $? >"$log.status") &
done
wait
if [[ ${SELFTEST_TIMES:-} == 1 ]]; then
    one_queue=0
    for program in "${chapter_programs[@]}"; do
        [[ -n $(work_queues "build/$program") ]] && one_queue=$((one_queue + 1))
    done
    echo "  ($one_queue of ${#chapter_programs[@]} chapter programs run with one work queue: they make no stream)"
fi
for program in "${chapter_programs[@]}"; do
    log="$log_dir/${program#chapters/}.log"
    status=$(cat "$log.status" 2>/dev/null || echo unknown)
    if [[ $status == 0 ]]; then
        pass "$program runs and checks its result"
    elif [[ $status == 77 ]]; then
        # EXIT_SKIPPED (common/chapter.h): the machine lacks what it needs, such as a second GPU;
        # not a missing GPU, so a skip even with REQUIRE_GPU=1, the reason its SKIPPED line.
        skip "$program ($(sed -n 's/^SKIPPED: \(.*\)/skipped: \1/p' "$log" | tail -n 1))"
    else
        fail "$program runs and checks its result (exit $status; log in $log)" "$(tail -n 20 "$log")"
    fi
done

# dev_tool_runs SENTENCE WANT SHOW COMMAND...: a developers' tool builds, runs within two minutes
# and prints WANT; with SHOW 1 the pass line carries its last line, without the tool's name.
dev_tool_runs() {
    local sentence=$1 want=$2 show=$3 log
    shift 3
    need_gpu "$sentence" || return 0
    build "$1" || return 0
    log=$(timeout 120 "$@" 2>&1)
    if [[ $? -ne 0 || $log != *"$want"* ]]; then
        fail "$sentence" "$log"
    elif [[ $show == 1 ]]; then
        pass "$sentence: $(tail -n 1 <<<"$log" | sed "s|^${1##*/}: ||; s/^ *//" | tr -s ' ')"
    else
        pass "$sentence"
    fi
}
# The grader's benchmark measures how fast this machine creates CUDA contexts; which work queues
# the streams of a context get (one way of making them: a context each); and what a test's
# buffers cost before anything is copied (grader/README.md quotes it).
dev_tool_runs "dev/context_rate creates contexts in child processes" "contexts per second" 1 \
    build/dev/context_rate --processes 2 --contexts 4
dev_tool_runs "dev/stream_queues times four streams kept busy at once" "side by side" 1 \
    build/dev/stream_queues --busy 5 --patterns 1
dev_tool_runs "dev/setup_cost times pinning and first touches in child processes" \
    "cudaHostUnregister that" 0 build/dev/setup_cost --size 16M --processes 2

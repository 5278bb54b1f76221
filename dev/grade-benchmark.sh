#!/usr/bin/env bash
# grade-benchmark.sh - grade a generated class and say how many students a minute this machine grades.
#
#   dev/grade-benchmark.sh [STUDENTS]        (make grade-benchmark STUDENTS=100 [PER_GPU=N] [CH="1 2 3"])
#
# The class (grader/make_class.py benchmark) mixes good, partial, broken,
# incomplete, crashing and hanging work, as folders, .zip and .tar.gz. It is
# graded from scratch (REGRADE=1) with `make grade`, every GPU in use; the rate
# counts the whole run, the course's own build and the sandbox's checks
# included. BENCHMARK_CHAPTERS (make's CH), chapters as make run names one, keeps the class
# to those chapters' exercises: the course's work as it was before the others existed, to
# compare with figures taken then. The class, the grades and the log stay in $BENCHMARK_DIR
# (build/grade-benchmark); the result line is also in result.txt there.
set -euo pipefail
cd "$(dirname "$0")/.."
students=${1:-100}
if [[ ! $students =~ ^[0-9]+$ ]] || ((10#$students < 1)); then
    echo "make grade-benchmark: STUDENTS=$students: give the size of the class to generate, a whole number of at least 1" >&2
    exit 2
fi
students=$((10#$students))
work=${BENCHMARK_DIR:-build/grade-benchmark}
MAKE=${MAKE:-make}

read -r -a chapters <<<"${BENCHMARK_CHAPTERS:-}" || true
python3 grader/make_class.py chapters "${chapters[@]}" >/dev/null # before anything is removed
rm -rf "$work"
mkdir -p "$work"
mix=$(python3 grader/make_class.py benchmark "$work/class" "$students" "${chapters[@]}")
echo "benchmark: a class of $students students: $mix${chapters[*]:+ (chapters ${chapters[*]} only)}"
gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ' || true)
# Each test host creates a CUDA context (more after a crash): how fast this
# machine creates them, one at a time and side by side, on one GPU and on all,
# is one of the costs behind the rate below.
contexts=()
if ((gpus > 0)) && $MAKE -s --no-print-directory build/dev/context_rate; then
    contexts+=("$(CUDA_VISIBLE_DEVICES=0 build/dev/context_rate --processes 1 --contexts 8 2>&1)")
    contexts+=("$(CUDA_VISIBLE_DEVICES=0 build/dev/context_rate --processes 8 --contexts 32 2>&1)")
    if ((gpus > 1)); then
        contexts+=("$(build/dev/context_rate --processes $((8 * gpus)) --contexts $((32 * gpus)) 2>&1)")
    fi
fi
# What a test's buffers cost, alone and 16 processes at once (grader/README.md).
if ((gpus > 0)) && $MAKE -s --no-print-directory build/dev/setup_cost; then
    contexts+=("$(CUDA_VISIBLE_DEVICES=0 build/dev/setup_cost 2>&1)")
    contexts+=("$(CUDA_VISIBLE_DEVICES=0 build/dev/setup_cost --processes 16 2>&1)")
fi
start=$(date +%s.%N)
status=0
$MAKE -s --no-print-directory grade SUBMISSIONS="$work/class" OUT="$work/out" REGRADE=1 \
    ${PER_GPU:+PER_GPU=$PER_GPU} >"$work/grade.log" 2>&1 || status=$?
end=$(date +%s.%N)
sed -n '/^This run /,$p' "$work/grade.log"
# The lanes make grade chose (PER_GPU, else a lane per CPU): its first line says how many.
lanes=$(sed -n 's/.*up to \([0-9]*\) test programs at a time on each.*/\1/p' "$work/grade.log" | head -n 1)
result=$(python3 - "$start" "$end" "$students" "${gpus:-0}" "$(nproc)" "$status" "${PER_GPU:-${lanes:-1}}" \
    "${chapters[*]}" <<'PY'
import sys
start, end, students, gpus, cpus, status, per_gpu, chapters = sys.argv[1:]
seconds = float(end) - float(start)
print("benchmark: %s students in %.0f s: %.1f students per minute (%s GPU%s, %s CPUs, "
      "PER_GPU=%s%s%s)" % (
          students, seconds, int(students) / seconds * 60, gpus, "" if gpus == "1" else "s",
          cpus, per_gpu, "; chapters %s only" % chapters if chapters else "",
          "" if status == "0" else "; make grade exited %s, see the log" % status))
PY
)
echo "$result" | tee "$work/result.txt"
for line in "${contexts[@]}"; do
    echo "$line" | tee -a "$work/result.txt"
done
python3 grader/profile.py "$work/out" | tee -a "$work/result.txt"
echo "benchmark: log in $work/grade.log, gradebook in $work/out/grades.csv"

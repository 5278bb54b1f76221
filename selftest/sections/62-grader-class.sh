# 62-grader-class.sh - make grade, end to end, on a class of good, partial, broken and hostile
# work (grader/make_class.py sample; the hostile samples are in selftest/submissions/).
#
# Without a GPU: the class graded as far as a machine without a GPU can (archives read, files
# found or missing, compile errors, refusals, atomic writes, an interrupted run resumed). With
# one: the whole class graded, each student's score and feedback checked, then the hostile
# samples graded again with the static checks off, to see the sandbox hold on its own.
section "The grader (make grade): a class of good, partial, broken and hostile work"

grader_work=build/selftest/grader-class
if ! command -v python3 >/dev/null 2>&1; then
    fail "python3 is there for the grader (make deps installs it)"
    return 0
fi
if [[ $grade_deps_status != 0 ]]; then
    skip "grading the sample class (skipped: bubblewrap is missing, as 60-grader says)"
    return 0
fi

# --- The sample class -------------------------------------------------------------------------
rm -rf "$grader_work"
mkdir -p "$grader_work"
class=$grader_work/class
out=$grader_work/grader-out # the hostile writes-outside sample aims at this name
# The scratch folder inside the course, which the sandbox must keep apart, where it can be.
scratch=$(scratch_for_grading "$PWD/$grader_work/scratch")
python3 grader/make_class.py sample "$class"
if need_gpu "grading the sample class with its tests run (the GPU part of make grade)"; then
    gpu_mode=1 gpu_args=() check_args=() make_args=()
else
    gpu_mode='' gpu_args=(--gpus none) check_args=(--no-gpu) make_args=(GPUS=none)
fi
# Tests get 10 s, not the default 20: the samples that hang or wait for ever cost that much each,
# and so do the timed tests beside them, which wait for the GPU until they are ended.
grade_args=(--submissions "$class" --out "$out" --scratch "$scratch" --test-timeout 10 "${gpu_args[@]}"
            "${lanes_args[@]}")
make_args+=(TEST_TIMEOUT=10 ${SELFTEST_LANES:+PER_GPU=$SELFTEST_LANES})

# With a GPU: the hostile samples that act at run time, graded again with the static checks off,
# to see the sandbox hold on its own. Beside the class, in a scratch and an out folder of their
# own (the out named as the one writes-outside aims at, and beside its scratch as the class's
# is), holding a record of a student it does not grade, which nothing may change.
unsafe_work=$grader_work/unsafe
unsafe_out=$unsafe_work/grader-out
if [[ -n $gpu_mode ]]; then
    unsafe_class=$unsafe_work/class
    mkdir -p "$unsafe_class" "$unsafe_out/students/student-good"
    for sample in hostile-writes-outside hostile-forks hostile-kills-parent hostile-constructor.zip \
        hostile-every-descriptor hostile-reaches-out hostile-sticky-error hostile-freezes-locks \
        hostile-gpu-memory; do
        cp -r "$class/$sample" "$unsafe_class/"
    done
    # The honest student beside them, honest-first, hands in chapter 1's solutions (the good
    # student's): the hostile samples act in the first seconds of the run, during roundtrip's
    # tests, and chapter 1's timed tests run beside them, where chapters 2 and 3 would come
    # after they are gone.
    mkdir -p "$unsafe_class/honest-first/exercises"
    cp -r "$class/student-good/exercises/ch01-memory" "$unsafe_class/honest-first/exercises/"
    chmod -R a+rX "$unsafe_class"
    echo '{"score": 7, "bystander": true}' >"$unsafe_out/students/student-good/results.json"
    bystander=$(sha256sum <"$unsafe_out/students/student-good/results.json")
    unsafe_scratch=$(scratch_for_grading "$PWD/$unsafe_work/scratch")
    python3 grader/grade.py grade --submissions "$unsafe_class" --out "$unsafe_out" \
        --scratch "$unsafe_scratch" --test-timeout 10 --unsafe-skip-static-checks "${lanes_args[@]}" \
        >"$grader_work/unsafe.log" 2>&1 &
    unsafe_pid=$!
fi

# Interrupted after a few students (SIGTERM, as Ctrl-C or Slurm would): what was
# written is whole, and the run resumes where it stopped.
python3 grader/grade.py grade "${grade_args[@]}" >"$grader_work/first.log" 2>&1 &
grader_pid=$!
for _ in $(seq 1200); do
    written=$(compgen -G "$out/students/*/grade.json" | wc -l)
    if ((written >= 3)) || ! kill -0 "$grader_pid" 2>/dev/null; then break; fi
    sleep 0.1
done
kill -TERM "$grader_pid" 2>/dev/null
wait "$grader_pid"
first_status=$?
whole=$(python3 - "$out" <<'EOF'
import csv, json, os, sys
out = sys.argv[1]
broken, complete = [], 0
for student in sorted(os.listdir(os.path.join(out, "students"))):
    folder = os.path.join(out, "students", student)
    try:
        if os.path.exists(os.path.join(folder, "grade.json")):
            record = json.load(open(os.path.join(folder, "grade.json")))
            if record["complete"]:  # a score only for a student graded in full
                json.load(open(os.path.join(folder, "results.json")))
            open(os.path.join(folder, "feedback.md")).read()
            complete += record["complete"] is True
    except (OSError, ValueError, KeyError) as err:
        broken.append("%s: %s" % (student, err))
if os.path.exists(os.path.join(out, "grades.csv")):
    list(csv.reader(open(os.path.join(out, "grades.csv"))))
print(complete if not broken else "broken: " + "; ".join(broken))
EOF
)
if [[ $first_status -eq 130 && $whole =~ ^[0-9]+$ ]] && grep -q "interrupted:" "$grader_work/first.log"; then
    pass "an interrupted make grade stops at once and leaves whole files ($whole students graded)"
elif [[ $whole =~ ^[0-9]+$ ]] && grep -q "^grading " "$grader_work/first.log"; then
    pass "make grade finished before it could be interrupted; its files are whole"
elif [[ $whole =~ ^[0-9]+$ ]]; then
    fail "make grade started grading (exit $first_status)" "$(tail -n 20 "$grader_work/first.log")"
else
    fail "an interrupted make grade leaves whole files (exit $first_status)" "$whole
$(tail -n 20 "$grader_work/first.log")"
fi

# The rest, through make; the students already graded are skipped.
$MAKE -s --no-print-directory grade SUBMISSIONS="$class" OUT="$out" SCRATCH="$scratch" \
    "${make_args[@]}" >"$grader_work/second.log" 2>&1
second_status=$?
skipped_now=$(sed -n 's/.*; \([0-9]*\) already graded, skipped.*/\1/p' "$grader_work/second.log")
if [[ ${skipped_now:-0} -eq ${whole:-x} ]] || [[ -z $skipped_now && ${whole:-0} -eq 0 ]]; then
    pass "the rerun skips the $whole students already graded and grades the rest"
else
    fail "the rerun skips the ${whole:-?} students already graded (it skipped ${skipped_now:-none})" \
        "$(head -n 30 "$grader_work/second.log")"
fi
if [[ -n $gpu_mode && $second_status -ne 0 ]]; then
    fail "make grade exits 0 when every student is graded (exit $second_status)" \
        "$(tail -n 30 "$grader_work/second.log")"
elif [[ -z $gpu_mode && $second_status -ne 0 ]] &&
     grep -q "no CUDA device" "$grader_work/second.log"; then
    pass "make grade without a GPU says so and fails: the students it could not run are left to grade"
elif [[ -z $gpu_mode ]]; then
    fail "make grade without a GPU fails and says why (exit $second_status)" \
        "$(tail -n 30 "$grader_work/second.log")"
fi
# Without a GPU, a student whose tests have not run has no score on the terminal either, and
# the closing lines give the command that grades them, with the same OUT.
if [[ -z $gpu_mode ]]; then
    no_score=$'\xe2\x80\x93' # the en dash (UTF-8) that stands for points not known (grader/results.py)
    if grep -qE "^  student-good +$no_score/[0-9]+ +not graded yet" "$grader_work/second.log" &&
       ! grep -qE "^  student-good +0/" "$grader_work/second.log"; then
        pass "without a GPU, a student whose tests have not run shows no points on the terminal"
    else
        fail "without a GPU, a student whose tests have not run shows no points on the terminal" \
            "$(grep -E "^  student-good" "$grader_work/second.log")"
    fi
    if grep -qE "^[0-9]+ students? not graded yet: their tests need a GPU\.$" "$grader_work/second.log" &&
       grep -qx "On a machine with a CUDA device, run the same command, with the same OUT:" "$grader_work/second.log" &&
       grep -qF "    make grade SUBMISSIONS=$class OUT=$out" "$grader_work/second.log"; then
        pass "without a GPU, make grade closes with the command that grades the rest, on a machine with one"
    else
        fail "without a GPU, make grade closes with the command that grades the rest, on a machine with one" \
            "$(tail -n 6 "$grader_work/second.log")"
    fi
fi
if grep -q "^sandbox: " "$grader_work/second.log"; then
    pass "make grade says how submissions are confined: $(sed -n 's/^sandbox: //p' "$grader_work/second.log" | head -n 1)"
fi

# Each student's score, status and feedback, once nothing else runs that could write them.
[[ -n ${unsafe_pid:-} ]] && wait "$unsafe_pid"
check_log=$(python3 selftest/check_grades.py "$class.expected.tsv" "$out" "${check_args[@]}" 2>&1)
while read -r verdict student rest; do
    case $verdict in
    ok) pass "graded ${student%:}: $rest" ;;
    FAIL) fail "graded ${student%:} as expected" "$rest" ;;
    esac
done <<<"$check_log"
[[ -n $(grep -v '^ok ' <<<"$check_log" | grep -v '^FAIL ') ]] && fail "check the gradebook" "$check_log"

# --- A Slurm task run again alone still grades its own slice --------------------------------
# Task 7 of an array of 10, resubmitted as an array of one: it takes the students at
# places 7, 17, ... of the class. Builds only (no GPU given), so it is quick anywhere.
mkdir -p "$scratch/slurm-tmp"
SLURM_ARRAY_TASK_ID=7 SLURM_ARRAY_TASK_COUNT=1 SLURM_SUBMIT_DIR=$PWD CUDA_VISIBLE_DEVICES='' \
    TMPDIR=$scratch/slurm-tmp timeout 300 grader/slurm-grade.sh "$class" \
    "$grader_work/slurm-out" 10 >"$grader_work/slurm.log" 2>&1
class_size=$(find "$class" -mindepth 1 -maxdepth 1 | wc -l)
slice_students=$(((class_size - 7 + 9) / 10)) # places 7, 17, ... below class_size
if grep -q "^grading $slice_students submissions" "$grader_work/slurm.log"; then
    pass "grader/slurm-grade.sh run again as task 7 alone grades slice 7 of 10 ($slice_students students)"
else
    fail "grader/slurm-grade.sh run again as task 7 alone grades slice 7 of 10 ($slice_students students)" \
        "$(head -n 5 "$grader_work/slurm.log")"
fi

# PER_GPU set for sbatch reaches make grade (0 is refused there, which shows it arrived).
if PER_GPU=0 SLURM_ARRAY_TASK_ID=7 SLURM_SUBMIT_DIR=$PWD CUDA_VISIBLE_DEVICES='' \
    timeout 120 grader/slurm-grade.sh "$class" "$grader_work/slurm-out" 10 \
    >"$grader_work/slurm-per-gpu.log" 2>&1; then
    fail "grader/slurm-grade.sh passes PER_GPU on to make grade" "PER_GPU=0 was accepted"
elif grep -q "PER_GPU=0" "$grader_work/slurm-per-gpu.log"; then
    pass "grader/slurm-grade.sh passes PER_GPU on to make grade"
else
    fail "grader/slurm-grade.sh passes PER_GPU on to make grade" "$(head -n 5 "$grader_work/slurm-per-gpu.log")"
fi

# --- With a GPU: the sandbox alone against the hostile samples --------------------------------
if [[ -n $gpu_mode ]]; then
    sandbox_line=$(sed -n 's/^sandbox: //p' "$grader_work/unsafe.log" | head -n 1)
    if [[ $sandbox_line != *"read-only"* && $sandbox_line != *"unprivileged uid"* ]] ||
       [[ $sandbox_line != *"pid namespace"* && $sandbox_line != *"unprivileged uid"* ]]; then
        skip "the sandbox without static checks (skipped: this machine allows neither read-only mounts nor a uid per worker: $sandbox_line)"
    else
        unsafe_log=$(python3 selftest/check_grades.py selftest/submissions/expected-without-static-checks.tsv \
            "$unsafe_out" --subset 2>&1)
        while read -r verdict student rest; do
            case $verdict in
            ok) pass "without static checks, ${student%:} still earns only what its work is worth" ;;
            FAIL) fail "without static checks, ${student%:} earns only what its work is worth" "$rest" ;;
            esac
        done <<<"$unsafe_log"
        [[ -n $(grep -v '^ok ' <<<"$unsafe_log" | grep -v '^FAIL ') ]] &&
            fail "check the gradebook of the pass without static checks" "$unsafe_log"
        if [[ $(sha256sum <"$unsafe_out/students/student-good/results.json") == "$bystander" ]] &&
           ! grep -q 1000 "$unsafe_out/grades.csv" "$out/grades.csv"; then
            pass "a submission writing forged grades changes nobody's files"
        else
            fail "a submission writing forged grades changes nobody's files" \
                "$(cat "$unsafe_out/students/student-good/results.json" "$unsafe_out/grades.csv" "$out/grades.csv")"
        fi
        # What hostile-reaches-out tried to leave: in the host's /tmp and /dev/shm, the home
        # folders, and every folder it could list from its working folder up to the root.
        left_files=$( { find "$PWD" /tmp /dev/shm -name grader-leftover-reaches-out
                        find "$HOME" /root /home -maxdepth 2 -name grader-leftover-reaches-out
                        folder=$unsafe_scratch/a/b/c/d
                        while [[ $folder != / ]]; do
                            folder=$(dirname "$folder")
                            find "$folder" -maxdepth 2 -name grader-leftover-reaches-out
                        done; } 2>/dev/null | sort -u)
        if [[ -z $left_files ]]; then
            pass "a submission leaves no file outside its test's view (host /tmp, /dev/shm, home folders, the course, the scratch folder)"
        else
            fail "a submission leaves no file outside its test's view" "$left_files"
        fi
        leftovers=$(grep -l "grader-leftover" /proc/[0-9]*/comm 2>/dev/null)
        if [[ -z $leftovers ]]; then
            pass "a child process a submission left running is gone with its test program"
        else
            fail "a child process a submission left running is gone with its test program" "$leftovers"
        fi
    fi
    [[ $unsafe_scratch == "$PWD/$unsafe_work/scratch" ]] || rm -rf "$unsafe_scratch"
fi
[[ $scratch == "$PWD/$grader_work/scratch" ]] || rm -rf "$scratch"

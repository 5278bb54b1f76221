# 65-grader-slurm.sh - grader/slurm-grade.sh submitted for real, to a one-node Slurm cluster.
#
# Where Slurm is installed (Debian's slurm-wlm and munge: make deps-cluster) and
# this runs as root: starts a private cluster on 127.0.0.1
# (dev/slurm-test-cluster.sh, stopped afterwards whatever happens), submits a
# small class as a job array of two tasks and the grade-report step as a job
# that depends on it, exactly as grader/README.md tells instructors to, waits,
# and checks each task's slice and the merged gradebook. Without a GPU the
# tasks build and check only, and the gradebook says what they could decide.
# Elsewhere, a skip line.
section "The grader on a Slurm cluster (sbatch, a job array, grade-report)"

slurm_missing=()
for program in slurmctld slurmd sbatch munged mungekey; do
    command -v "$program" >/dev/null 2>&1 || slurm_missing+=("$program")
done
if [[ ${#slurm_missing[@]} -gt 0 ]]; then
    skip "grading as a Slurm job array (skipped: Slurm is not installed here, no ${slurm_missing[*]}; make deps-cluster installs it)"
elif [[ $(id -u) -ne 0 ]]; then
    skip "grading as a Slurm job array (skipped: the test's own slurmd must run as root, to run jobs as whoever submits them)"
else
    slurm_work=$PWD/build/selftest/grader-slurm
    rm -rf "$slurm_work"
    mkdir -p "$slurm_work/class"
    # In /tmp: munged wants every folder above its socket open to all, and a short path.
    cluster=$(mktemp -d /tmp/course-slurm-XXXXXX)
    python3 grader/make_class.py sample "$slurm_work/all" >/dev/null
    # A folder, two archives; a good, a partial and a broken student; two slices.
    slurm_students=(hostile-does-not-compile student-good student-partial)
    for student in "${slurm_students[@]}"; do
        cp -r "$slurm_work/all/$student"* "$slurm_work/class/"
        grep "^$student	" "$slurm_work/all.expected.tsv" >>"$slurm_work/expected.tsv"
    done
    # Without a GPU, make grade builds and checks, and exits 1: students are left to grade.
    if need_gpu "grading as a Slurm job array with its tests run (it builds and checks only)"; then
        check_mode=() task_end="COMPLETED" how_far=""
    else
        check_mode=(--no-gpu) task_end="FAILED" how_far=" as far as a machine without a GPU can"
    fi
    # The node has no GPU resource configured, so --gres=none: the task finds the GPU as
    # make grade does anywhere. %1: the tasks share the one GPU, so one at a time.
    # Run by the cluster's script, with the folders in its environment (TEST_WORK).
    submit='jobid=$(sbatch --parsable --array=0-1%1 --gres=none --cpus-per-task=1 \
            --output="$TEST_WORK/grade-%A_%a.log" grader/slurm-grade.sh "$TEST_WORK/class" \
            "$TEST_WORK/out" 2) &&
        echo "$jobid" >"$TEST_WORK/jobid" &&
        report=$(sbatch --parsable --dependency="afterany:$jobid" --output="$TEST_WORK/report.log" \
            --wrap "make -C $(printf %q "$PWD") -s --no-print-directory grade-report OUT=$(printf %q "$TEST_WORK/out")") &&
        while [[ -n $(squeue --noheader --jobs="$jobid,$report") ]]; do sleep 0.2; done &&
        scontrol --oneliner show job "$jobid" >"$TEST_WORK/tasks.txt"'
    slurm_started=$(date +%s)
    # The jobs' make starts afresh (sbatch exports the environment, not make's variables): it
    # is given the toolkit this run's make resolved, as an instructor's shell would hold it.
    cuda_home=$($MAKE -s --no-print-directory list-toolchain | sed -n 's/^CUDA_HOME=//p')
    env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS -u PER_GPU CUDA_HOME="$cuda_home" TEST_WORK="$slurm_work" timeout 300 \
        dev/slurm-test-cluster.sh "$cluster" bash -c "$submit" >"$slurm_work/cluster.log" 2>&1
    slurm_status=$?
    slurm_seconds=$(($(date +%s) - slurm_started))
    if [[ $slurm_status -eq 3 ]]; then
        fail "a one-node Slurm cluster starts (dev/slurm-test-cluster.sh)" "$(cat "$slurm_work/cluster.log")"
    elif [[ $slurm_status -ne 0 ]]; then
        fail "the job array and the grade-report job ran (exit $slurm_status$( ((slurm_status == 124)) &&
            echo ': out of time after 300 s'))" "$(cat "$slurm_work/cluster.log" "$slurm_work"/*.log \
            "$cluster/log/slurmctld.log" 2>/dev/null | tail -n 30)"
    else
        pass "grader/slurm-grade.sh ran as a job array of 2 on a one-node cluster, then grade-report ($slurm_seconds s)"
        jobid=$(cat "$slurm_work/jobid")
        # Task 0 takes places 0 and 2 of the sorted class, task 1 place 1.
        for task in 0 1; do
            want=$((task == 0 ? 2 : 1))
            state=$(grep "ArrayTaskId=$task " "$slurm_work/tasks.txt" | grep -o 'JobState=[A-Z]*')
            if grep -q "^grading $want submission" "$slurm_work/grade-${jobid}_$task.log" 2>/dev/null &&
               [[ $state == "JobState=$task_end" ]]; then
                pass "Slurm task $task graded its slice, $want of the 3 students, and ended $task_end"
            else
                fail "Slurm task $task graded its slice, $want of the 3 students, and ended $task_end (${state:-no JobState})" \
                    "$(head -n 20 "$slurm_work/grade-${jobid}_$task.log" 2>&1)"
            fi
        done
        check_log=$(python3 selftest/check_grades.py "$slurm_work/expected.tsv" "$slurm_work/out" \
            "${check_mode[@]}" 2>&1)
        if [[ $? -eq 0 ]] && grep -q "^Gradebook: " "$slurm_work/report.log"; then
            pass "the gradebook merged by grade-report holds every student as graded$how_far"
        else
            fail "the gradebook merged by grade-report holds every student as graded" \
                "$check_log
$(cat "$slurm_work/report.log")"
        fi
    fi
    cp -r "$cluster/log" "$slurm_work/cluster-log" 2>/dev/null # for a look afterwards
    rm -rf "$cluster"
fi

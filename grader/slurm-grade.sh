#!/usr/bin/env bash
#SBATCH --job-name=course-grade
#SBATCH --gres=gpu:1
#SBATCH --cpus-per-task=8
#SBATCH --time=04:00:00
#SBATCH --output=grade-%A_%a.log
# slurm-grade.sh - one task of a Slurm job array: grade one slice of a class.
#
#   cd COURSE && sbatch --array=0-9 grader/slurm-grade.sh SUBMISSIONS OUT 10
#   sbatch --dependency=afterany:JOBID --wrap "make -C $PWD grade-report OUT=OUT"
#
# The class is cut into SLICES slices (the third argument, the size of the
# array); task i grades the students whose place in the sorted list is i
# modulo SLICES, into the shared OUT: each student's files are their own,
# written whole, so tasks never collide. A task that is preempted or fails is
# run again alone with the same SLICES (sbatch --array=7 ... OUT 10); the
# count is an argument because such a rerun is an array of one, whose
# SLURM_ARRAY_TASK_COUNT would be 1. Already graded students are skipped. Each
# task rewrites grades.csv from what it has seen; the grade-report step
# afterwards rebuilds it from every student's grade.json. Slurm sets
# CUDA_VISIBLE_DEVICES to the task's GPUs, and the grader runs one worker on
# each. PER_GPU in the environment of sbatch (PER_GPU=8 sbatch ...) is passed
# on to make grade: sbatch exports the environment to the task. Submit from
# the course's folder.
set -euo pipefail
usage="usage: sbatch --array=0-N grader/slurm-grade.sh SUBMISSIONS OUT SLICES   (SLICES = N + 1)"
if [[ $# -ne 3 || ! $3 =~ ^[1-9][0-9]*$ ]]; then
    echo "$usage" >&2
    exit 2
fi
task=${SLURM_ARRAY_TASK_ID:-0}
if ((task >= $3)); then
    echo "slurm-grade.sh: task $task of an array cut into $3 slices: the array's indices must run from 0 to $(($3 - 1))" >&2
    exit 2
fi
cd "${SLURM_SUBMIT_DIR:-.}"
[[ -f mk/grade.mk ]] || { echo "slurm-grade.sh: submit it from the course's folder" >&2; exit 2; }
exec make -s --no-print-directory grade SUBMISSIONS="$1" OUT="$2" SLICE="$task/$3" \
    JOBS="${SLURM_CPUS_PER_TASK:-$(nproc)}" SCRATCH="${TMPDIR:-/tmp}" ${PER_GPU:+PER_GPU="$PER_GPU"}

#!/usr/bin/env bash
#SBATCH --job-name=course-grade
#SBATCH --gres=gpu:1
#SBATCH --cpus-per-task=8
#SBATCH --time=04:00:00
#SBATCH --output=grade-%A_%a.log
# slurm-grade.sh - one task of a Slurm job array: grade one slice of a class.
#
#   cd COURSE && sbatch --array=0-9 grader/slurm-grade.sh SUBMISSIONS OUT
#   sbatch --dependency=afterany:JOBID --wrap "make -C $PWD grade-report OUT=OUT"
#
# Task i of n grades the students whose place in the sorted list is i modulo
# n, into the shared OUT: each student's files are their own, written whole,
# so tasks never collide, and a task that is preempted or fails is simply run
# again (already graded students are skipped). Each task rewrites grades.csv
# from what it has seen; the grade-report step afterwards rebuilds it from
# every student's grade.json. Slurm sets CUDA_VISIBLE_DEVICES to the task's
# GPUs, and the grader runs one worker on each. Submit from the course's folder.
set -euo pipefail
if [[ $# -ne 2 ]]; then
    echo "usage: sbatch --array=0-N grader/slurm-grade.sh SUBMISSIONS OUT" >&2
    exit 2
fi
cd "${SLURM_SUBMIT_DIR:-.}"
[[ -f mk/grade.mk ]] || { echo "slurm-grade.sh: submit it from the course's folder" >&2; exit 2; }
exec make -s --no-print-directory grade SUBMISSIONS="$1" OUT="$2" \
    SLICE="${SLURM_ARRAY_TASK_ID:-0}/${SLURM_ARRAY_TASK_COUNT:-1}" \
    JOBS="${SLURM_CPUS_PER_TASK:-$(nproc)}" SCRATCH="${TMPDIR:-/tmp}"

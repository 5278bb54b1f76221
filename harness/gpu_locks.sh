# gpu_locks.sh - sourced: the lock files through which test programs share a GPU.
#
# harness/host/runner.c reads these paths from the environment: COURSE_GPU_LOCK, which a test
# that times the GPU holds alone and the others shared; COURSE_GPU_TURNSTILE, which lets a
# waiting timed test in; COURSE_CONTEXT_LOCK and its _1 and _2, the turns to make a CUDA
# context, three at most at once, and COURSE_CONTEXT_LINE, where programs wait when all three
# are taken, with COURSE_CONTEXT_FRONT, its front, for the chains (harness/host/gpu_share.h). They are named in a folder as make grade names them
# (grader/grade.py), so that runs given the same COURSE_LOCK_DIR (make test gives its make check,
# make grade and its own runs one) share one set per GPU.

# use_gpu_locks FOLDER: exports the paths for the first GPU CUDA_VISIBLE_DEVICES lets
# this process see (device 0 when it is unset), and makes the files, which others only read.
use_gpu_locks() {
    local gpu=${CUDA_VISIBLE_DEVICES:-0}
    gpu=${gpu%%,*}
    gpu=${gpu//[^A-Za-z0-9]/-}
    export COURSE_GPU_LOCK=$1/gpu-${gpu:-0}.lock
    export COURSE_GPU_TURNSTILE=$1/gpu-${gpu:-0}.turnstile
    export COURSE_CONTEXT_LOCK=$1/contexts.lock
    export COURSE_CONTEXT_LOCK_1=$1/contexts-1.lock COURSE_CONTEXT_LOCK_2=$1/contexts-2.lock
    export COURSE_CONTEXT_LINE=$1/contexts-line.lock COURSE_CONTEXT_FRONT=$1/contexts-front.lock
    local file files=("$COURSE_GPU_LOCK" "$COURSE_GPU_TURNSTILE" "$COURSE_CONTEXT_LOCK"
        "$COURSE_CONTEXT_LOCK_1" "$COURSE_CONTEXT_LOCK_2" "$COURSE_CONTEXT_LINE"
        "$COURSE_CONTEXT_FRONT")
    for file in "${files[@]}"; do
        [[ -e $file ]] || : >"$file"
    done
    chmod 644 "${files[@]}" 2>/dev/null || true # one process for all: make check counts them
}

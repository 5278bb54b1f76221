#!/usr/bin/env bash
# bench-ch5.sh - chapter 5's feeding loop against the same loop written with PyTorch's DataLoader.
#
#   dev/bench-ch5.sh [--build DIR] [--batch N] [--step-ms MS] [--loaders N] [--batches N]
#                    [--data FILE] [--data-size SIZE] [--csv DIR]
#   (make bench-ch5 [BATCH=64] [STEP_MS=8] [LOADERS=4] [BATCHES=200] [DATA=FILE]
#                   [DATA_SIZE=2G] [CSV=DIR])
#
# One dataset (03-cure --data FILE writes it, or reuses it), then, on it, with the same batch,
# step and loaders: the course's loader_ring (loaders read and convert on the CPU, as
# DataLoader's workers do) and compact (the course's further step), each a run of 03-cure
# --variant; then chapters/ch05-training-loop/against_pytorch.py, the loop a PyTorch user
# writes, where python3 has torch and numpy and sees the GPU (it says it skipped otherwise), at
# most BATCHES batches. It prints the three loops' batches a second and utilisations and the
# ratios; CSV=DIR writes DIR/against_pytorch.csv. A benchmark, not a test: it fails when a
# program does, when PyTorch's first batch is wrong, or when there is no GPU. The programs'
# output, their CSV files and the default dataset stay in $BENCH_DIR (build/bench-ch5).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=build batch=64 step_ms=8 loaders=4 batches=200 data='' data_size=2G csv=''
python=${PYTHON:-python3}
# NVLink multicast stays off (NCCL's NVLS, PyTorch's symmetric memory): one GPU never needs it.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1

bad() {
    echo "bench-ch5: $*" >&2
    exit 2
}
while (($#)); do
    case $1 in
    --build | --batch | --step-ms | --loaders | --batches | --data | --data-size | --csv)
        (($# >= 2)) || bad "$1 needs a value"
        name=${1#--}
        printf -v "${name//-/_}" '%s' "$2"
        shift 2
        ;;
    -h | --help)
        sed -n '2,7s/^# \{0,1\}//p' "$0"
        exit 0
        ;;
    *) bad "$1: not an option (--help lists them)" ;;
    esac
done
# whole VALUE VARIABLE WHAT: VALUE is a whole number of at least 1, or the benchmark stops.
whole() {
    if [[ ! $1 =~ ^[0-9]+$ ]] || ((10#$1 < 1)); then
        bad "$2=$1: give $3, a whole number of at least 1"
    fi
}
whole "$batch" BATCH "the samples of a batch"
whole "$loaders" LOADERS "the loader threads (PyTorch's num_workers)"
whole "$batches" BATCHES "the most batches PyTorch's loop times"
[[ $step_ms =~ ^[0-9]*\.?[0-9]+$ ]] ||
    bad "STEP_MS=$step_ms: give the training step's time in milliseconds, a number (8, 2.5; 0: no step)"
[[ $data_size =~ ^[0-9]+([KkMmGg]([Ii]?[Bb])?|[Bb])?$ && ! $data_size =~ ^0+[^0-9]*$ ]] ||
    bad "DATA_SIZE=$data_size: give the dataset's size, e.g. 2G, 512M"
[[ -z $csv || ! -e $csv || -d $csv ]] || bad "CSV=$csv: not a folder"

cure=$build/chapters/ch05-training-loop/03-cure
if [[ ! -x $cure ]]; then
    source=$root/chapters/ch05-training-loop/03-cure.c
    echo "bench-ch5: $cure is not there: $([[ -f $source ]] && echo "\`make $cure\` builds it" ||
        echo "nor is its source, $source")" >&2
    exit 1
fi
[[ -x $build/tools/gpu_probe ]] || { echo "bench-ch5: $build/tools/gpu_probe is not there:" \
    "\`make $build/tools/gpu_probe\` builds it" >&2; exit 1; }
gpu=$("$build/tools/gpu_probe") || { echo "bench-ch5: no CUDA device: $gpu" >&2; exit 1; }
work=${BENCH_DIR:-$build/bench-ch5}
data=${data:-$work/feed.data}
mkdir -p "$work"
echo "bench-ch5: $gpu; batches of $batch samples, a step of $step_ms ms, $loaders loaders, on $data ($data_size)"

# course VARIANT: the feed: line of one 03-cure run of VARIANT (its output in $work/VARIANT.txt,
# its CSV files in $work/VARIANT/); stops the benchmark if the run fails or prints none.
course() {
    local log=$work/$1.txt line
    mkdir -p "$work/$1"
    if ! "$cure" --data "$data" --data-size "$data_size" --batch "$batch" --step-ms "$step_ms" \
        --loaders "$loaders" --variant "$1" --csv "$work/$1" >"$log" 2>&1; then
        echo "bench-ch5: $cure --variant $1 failed (all of it in $log):" >&2
        tail -n 5 "$log" >&2
        exit 1
    fi
    line=$(grep "^feed: variant=$1 " "$log" | tail -n 1) || true
    [[ -n $line ]] || { echo "bench-ch5: $cure --variant $1 printed no 'feed: variant=$1' line" \
        "(its output is in $log)" >&2; exit 1; }
    echo "$line"
}
loader_ring=$(course loader_ring)
compact=$(course compact)
# The provenance of the CSV: the course's own "gpu:" line, as its CSV files have it.
gpu_line=$(sed -n 's/^# \(gpu: .*\)/\1/p' "$work/loader_ring/cure.csv" 2>/dev/null | head -n 1) || true

if ! command -v "$python" >/dev/null; then
    printf '%s\n' "$loader_ring" "$compact"
    echo "pytorch DataLoader: skipped: there is no $python (PYTHON=...) to run PyTorch with"
    exit 0
fi
status=0
timeout "${BENCH_CH5_TIMEOUT:-300}" "$python" "$root/chapters/ch05-training-loop/against_pytorch.py" \
    --data "$data" --batch "$batch" --step-ms "$step_ms" --loaders "$loaders" --batches "$batches" \
    --course "$loader_ring" --course "$compact" ${gpu_line:+--gpu-line "$gpu_line"} \
    ${csv:+--csv "$csv"} || status=$?
if ((status == 124)); then
    echo "bench-ch5: PyTorch's loop did not end in ${BENCH_CH5_TIMEOUT:-300} s (BENCH_CH5_TIMEOUT)" >&2
fi
echo "bench-ch5: the course's output and CSV files in $work/"
exit $status

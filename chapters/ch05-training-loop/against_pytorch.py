#!/usr/bin/env python3
"""against_pytorch.py - chapter 5's training loop the way a PyTorch user writes it, beside the
course's figures for the same loop.

    against_pytorch.py --data FILE [--batch 64] [--step-ms 8] [--loaders 4] [--batches 200]
                       [--course 'feed: variant=NAME batches=N ...']... [--gpu-line 'gpu: ...']
                       [--csv DIR]

dev/bench-ch5.sh (make bench-ch5) runs the course's 03-cure first, on the same FILE, and hands
its `feed:` lines over with --course. This then runs the loop a PyTorch user writes: a dataset
whose __getitem__ preads one sample and converts it with numpy, DataLoader(batch_size=B,
num_workers=loaders, pin_memory=True, persistent_workers=True), `.to(device, non_blocking=True)`,
and the step: torch.cuda._sleep calibrated to last --step-ms, then the batch's sum, which reads
the data. One short epoch warms the workers up; the next is timed, from the first batch asked
for to the final torch.cuda.synchronize(). Utilisation is the steps' time (CUDA events around
each step) over that wall time, as the course measures its own. The first batch on the GPU is
compared with numpy's conversion of the same samples read straight from the file.

It prints the course's loops and PyTorch's, batches a second and utilisation, and the ratios;
with --csv DIR it writes DIR/against_pytorch.csv. The course does not depend on PyTorch: where
torch or numpy is missing, or sees no GPU, it says the comparison was skipped and why, and
exits 0. Exit 1: PyTorch's loop failed or its first batch was wrong; 2: bad arguments.
"""

import argparse
import datetime
import os
import statistics
import sys
import time

# The dataset's layout and the conversion, as common/feed.h has them: 8-bit RGB samples of
# 256 x 256 back to back; out = float32(x) * SCALE + OFFSET (x / 255 normalised with mean 0.5
# and std 0.25), rounded after the multiply and after the add, in float32.
SAMPLE_SHAPE = (256, 256, 3)
SAMPLE_BYTES = 256 * 256 * 3
SCALE = 1.0 / (255 * 0.25)
OFFSET = -0.5 / 0.25
# What a `feed:` line of 03-cure must say for a row of the table.
FEED_FIELDS = ("variant", "batches", "batches_per_s", "utilisation")
PYTORCH_LOOP = "pytorch_dataloader"


class BadInput(Exception):
    """An argument, a file or a line from the course that this cannot use (exit 2)."""


class BadRun(Exception):
    """PyTorch's loop failed, or delivered the wrong data (exit 1)."""


def parse_feed_line(line):
    """The figures of one `feed: variant=NAME batches=N seconds=S batches_per_s=X
    utilisation=U loop_ms=L ideal_ms=I` line, as a dict; BadInput says what is wrong with it.
    Keys it does not know are left alone; utilisation is a fraction (or "97.1%")."""
    words = line.split()
    if not words or words[0] != "feed:":
        raise BadInput("not a feed: line: %r" % line)
    fields = {}
    for word in words[1:]:
        key, equals, value = word.partition("=")
        if not equals or not key or not value:
            raise BadInput("%r in the feed: line %r is not KEY=VALUE" % (word, line))
        fields[key] = value
    missing = [key for key in FEED_FIELDS if key not in fields]
    if missing:
        raise BadInput("the feed: line %r lacks %s" % (line, ", ".join(missing)))
    try:
        figures = {"variant": fields["variant"], "batches": int(fields["batches"]),
                   "batches_per_s": float(fields["batches_per_s"])}
        utilisation = fields["utilisation"]
        figures["utilisation"] = (float(utilisation[:-1]) / 100 if utilisation.endswith("%")
                                  else float(utilisation))
    except ValueError as error:
        raise BadInput("a figure of the feed: line %r is not a number (%s)" % (line, error))
    if figures["batches"] < 1 or not figures["batches_per_s"] > 0:
        raise BadInput("the feed: line %r has no batches, or none a second" % line)
    if not 0 <= figures["utilisation"] <= 1.05:
        raise BadInput("utilisation=%s in the feed: line %r is not a fraction of the wall time"
                       % (utilisation, line))
    return figures


def whole_number(text):
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError("'%s' is not a whole number of at least 1" % text)
    return value


def milliseconds(text):
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 <= value <= 1000:  # as the course's programs take it (common/feed.h)
        raise argparse.ArgumentTypeError("'%s' is not a number of milliseconds from 0 to 1000"
                                         % text)
    return value


def parse_arguments(argv):
    parser = argparse.ArgumentParser(
        prog="against_pytorch.py",
        description="Chapter 5's loop with PyTorch's DataLoader, beside the course's.")
    parser.add_argument("--data", help="the dataset file 03-cure wrote (samples back to back)")
    parser.add_argument("--batch", type=whole_number, default=64, help="samples a batch")
    parser.add_argument("--step-ms", type=milliseconds, default=8.0, help="the step's time")
    parser.add_argument("--loaders", type=whole_number, default=4, help="DataLoader workers")
    parser.add_argument("--batches", type=whole_number, default=200,
                        help="at most this many timed batches")
    parser.add_argument("--course", action="append", default=[], metavar="LINE",
                        help="a feed: line of 03-cure, one per course loop")
    parser.add_argument("--gpu-line", help="the 'gpu: ...' provenance line of the course's CSV")
    parser.add_argument("--csv", metavar="DIR", help="write DIR/against_pytorch.csv")
    return parser.parse_args(argv)


def samples_in(path, batch):
    """How many whole samples the dataset file holds: at least one batch, or BadInput."""
    try:
        size = os.stat(path).st_size
    except OSError as error:
        raise BadInput("--data %s: %s" % (path, error.strerror))
    if size % SAMPLE_BYTES != 0 or size // SAMPLE_BYTES < batch:
        raise BadInput("--data %s: %d bytes is not a whole number of samples of %d bytes, at "
                       "least a batch of %d" % (path, size, SAMPLE_BYTES, batch))
    return size // SAMPLE_BYTES


def load_pytorch():
    """(torch, numpy), or (None, why the comparison cannot run here). Imported here only, so
    that the course runs, and says what it skipped, where neither is installed."""
    try:
        import numpy
    except ImportError as error:
        return None, "numpy is not installed for %s (%s)" % (sys.executable, error)
    try:
        import torch
    except ImportError as error:
        return None, "PyTorch is not installed for %s (%s)" % (sys.executable, error)
    if torch.version.cuda is None:
        return None, "PyTorch %s is a build without CUDA" % torch.__version__
    if not torch.cuda.is_available():
        return None, "PyTorch %s (CUDA %s) sees no CUDA device" % (torch.__version__,
                                                                  torch.version.cuda)
    return (torch, numpy), None


def convert(np, pixels):
    """numpy's conversion: a multiply and an add of float32, each rounded (no fused
    multiply-add: numpy does one operation per call)."""
    return pixels.astype(np.float32) * np.float32(SCALE) + np.float32(OFFSET)


class SampleFile:
    """The dataset as a PyTorch user writes one: __getitem__ reads one sample with pread and
    converts it. A map-style dataset needs only __getitem__ and __len__ (torch's Dataset class
    adds nothing to them), so this file stays importable without PyTorch. Each process opens
    the file for itself: the DataLoader's workers are other processes."""

    def __init__(self, path, samples):
        self.path = path
        self.samples = samples  # the sampler reads it at each epoch's start
        self.fd = None
        self.pid = None

    def __len__(self):
        return self.samples

    def __getitem__(self, index):
        import numpy as np
        import torch
        if self.pid != os.getpid():
            self.fd, self.pid = os.open(self.path, os.O_RDONLY), os.getpid()
        data = os.pread(self.fd, SAMPLE_BYTES, index * SAMPLE_BYTES)
        if len(data) != SAMPLE_BYTES:
            raise OSError("%s: sample %d is cut short" % (self.path, index))
        pixels = np.frombuffer(data, dtype=np.uint8).reshape(SAMPLE_SHAPE)
        return torch.from_numpy(convert(np, pixels))


def calibrate_sleep(torch, step_ms):
    """The cycles of torch.cuda._sleep that last step_ms, from a sleep of 50 ms or more timed
    with CUDA events (the first, short one loads the kernel)."""
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    torch.cuda._sleep(1000)
    torch.cuda.synchronize()
    cycles = 1 << 20
    for _ in range(24):
        start.record()
        torch.cuda._sleep(cycles)
        end.record()
        end.synchronize()
        elapsed_ms = start.elapsed_time(end)
        if elapsed_ms >= 50:
            return max(1, round(cycles / elapsed_ms * step_ms))
        cycles *= 2
    raise BadRun("torch.cuda._sleep(%d) lasted %.3f ms: it does not keep the GPU busy"
                 % (cycles // 2, elapsed_ms))


def run_epoch(torch, loader, device, cycles, batches):
    """One epoch of the user's loop: (wall seconds, each step's ms, the first batch on the
    GPU). The step is the sleep and the batch's sum, between two events on the current
    stream, the stream .to() copies on."""
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(batches)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(batches)]
    sums, first = [], None
    begin = time.perf_counter()
    for index, x in enumerate(loader):
        if index == batches:
            raise BadRun("the DataLoader gave more than the %d batches asked for" % batches)
        x = x.to(device, non_blocking=True)
        starts[index].record()
        torch.cuda._sleep(cycles)
        sums.append(x.sum())
        ends[index].record()
        if first is None:
            first = x
    torch.cuda.synchronize()
    wall = time.perf_counter() - begin
    if len(sums) != batches:
        raise BadRun("the DataLoader gave %d batches where %d were asked for"
                     % (len(sums), batches))
    return wall, [start.elapsed_time(end) for start, end in zip(starts, ends)], first


def check_first_batch(np, path, batch, on_gpu, which):
    """The first batch as it arrived on the GPU against numpy's conversion of samples 0 to
    batch - 1 read straight from the file: identical, or BadRun naming the first difference."""
    pixels = np.fromfile(path, dtype=np.uint8, count=batch * SAMPLE_BYTES)
    expected = convert(np, pixels.reshape((batch,) + SAMPLE_SHAPE))
    got = on_gpu.cpu().numpy()
    if got.shape != expected.shape:
        raise BadRun("the %s epoch's first batch has the shape %s, numpy's %s"
                     % (which, got.shape, expected.shape))
    if not np.array_equal(got, expected):
        at = int(np.flatnonzero(got.reshape(-1) != expected.reshape(-1))[0])
        raise BadRun("the %s epoch's first batch differs from numpy's conversion of %s: first at "
                     "sample %d, float %d of it: %r where numpy has %r"
                     % (which, path, at // SAMPLE_BYTES, at % SAMPLE_BYTES,
                        float(got.reshape(-1)[at]), float(expected.reshape(-1)[at])))


def run_pytorch(modules, args, batches):
    """PyTorch's row of the table: its figures, and what it ran, for the table's notes."""
    torch, np = modules
    device = torch.device("cuda")
    dataset = SampleFile(args.data, batches * args.batch)
    loader = torch.utils.data.DataLoader(dataset, batch_size=args.batch, shuffle=False,
                                         num_workers=args.loaders, pin_memory=True,
                                         persistent_workers=True)
    # The warm-up: a short epoch through the same loop starts the workers (forked before this
    # process has a CUDA context), loads the kernels, fills the pinned-memory cache, and
    # corrects the sleep by what a whole step measured.
    warm_up = min(batches, 4 * args.loaders + 4)
    dataset.samples = warm_up * args.batch
    warm_up_epoch = iter(loader)
    cycles = calibrate_sleep(torch, args.step_ms)
    _, steps, first = run_epoch(torch, warm_up_epoch, device, cycles, warm_up)
    check_first_batch(np, args.data, args.batch, first, "warm-up")
    cycles = max(1, round(cycles * args.step_ms / max(statistics.median(steps), 1e-3)))
    dataset.samples = batches * args.batch
    wall, steps, first = run_epoch(torch, loader, device, cycles, batches)
    check_first_batch(np, args.data, args.batch, first, "timed")
    del warm_up_epoch, loader  # the workers end here, not at the interpreter's exit
    return {"variant": PYTORCH_LOOP, "batches": batches, "batches_per_s": batches / wall,
            "utilisation": sum(steps) / (wall * 1000), "cycles": cycles,
            "step_ms": statistics.median(steps), "torch": torch.__version__,
            "cuda": torch.version.cuda, "gpu": torch.cuda.get_device_name(device),
            "driver": getattr(torch._C, "_cuda_getDriverVersion", lambda: 0)()}


def label(row):
    if row["variant"] == PYTORCH_LOOP:
        return "pytorch DataLoader"
    return "course " + row["variant"]


def print_table(rows):
    print("  %-24s %10s %12s %9s" % ("loop", "batches/s", "utilisation", "ms/batch"))
    for row in rows:
        print("  %-24s %10.1f %11.1f%% %9.2f" % (label(row), row["batches_per_s"],
                                               100 * row["utilisation"],
                                               1000 / row["batches_per_s"]))


def print_ratios(course, pytorch):
    """The course's batches a second over PyTorch's, in a sentence: the course's loops are to
    match or beat PyTorch's (1.00 or more)."""
    if not course:
        return
    ratios = ["%.2f" % (row["batches_per_s"] / pytorch["batches_per_s"]) for row in course]
    sentence = "the course's %s runs %s times as many batches a second as PyTorch's DataLoader" % (
        course[0]["variant"], ratios[0])
    sentence += "".join(", %s %s times" % (row["variant"], ratio)
                        for row, ratio in zip(course[1:], ratios[1:]))
    slower = [row["variant"] for row in course if row["batches_per_s"] < pytorch["batches_per_s"]]
    print("%s: %s" % (sentence, "as fast or faster, as the course's loops are to be" if not slower
                      else "SLOWER (%s), where the course's loops are to match or beat it"
                      % ", ".join(slower)))


def provenance_gpu_line(args, pytorch):
    """The CSV's "gpu:" line: the course's own, from its CSV, or else PyTorch's view of it."""
    if args.gpu_line:
        return args.gpu_line
    driver = pytorch["driver"]  # as the course's: the newest CUDA version the driver runs
    date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    return "gpu: %s, driver %s, runtime %s, date %s" % (
        pytorch["gpu"], "%d.%d" % (driver // 1000, driver % 1000 // 10) if driver else "unknown",
        pytorch["cuda"], date)


def write_csv(args, rows, pytorch):
    """DIR/against_pytorch.csv, whole or not at all: two provenance lines, then the rows."""
    os.makedirs(args.csv, exist_ok=True)
    path = os.path.join(args.csv, "against_pytorch.csv")
    partial = os.path.join(args.csv, ".against_pytorch.csv.tmp")
    with open(partial, "w") as csv:
        csv.write("# the course's feeding loops against PyTorch %s's DataLoader(pin_memory=True) "
                  "and .to(device, non_blocking=True): batch %d samples, step %g ms, %d loaders, "
                  "%d batches timed\n" % (pytorch["torch"], args.batch, args.step_ms,
                                          args.loaders, pytorch["batches"]))
        csv.write("# %s\n" % provenance_gpu_line(args, pytorch))
        csv.write("loop,batches_per_s,utilisation\n")
        for row in rows:
            name = row["variant"] if row is pytorch else "course_" + row["variant"]
            csv.write("%s,%.3f,%.4f\n" % (name, row["batches_per_s"], row["utilisation"]))
    os.replace(partial, path)
    print("wrote %s" % path)


def timed_batches(args, course):
    """How many batches PyTorch's epoch times: the course's, the file's, --batches at most."""
    batches = min([args.batches, samples_in(args.data, args.batch) // args.batch] +
                  [row["batches"] for row in course])
    if course and batches < max(row["batches"] for row in course):
        print("(PyTorch times %d batches, the course's loops %s: --batches and the file's size "
              "bound PyTorch's)" % (batches, "/".join(str(row["batches"]) for row in course)))
    return batches


def compare(args, course):
    """Runs PyTorch's loop where it can and prints the comparison; the exit status."""
    if args.data is not None:
        samples_in(args.data, args.batch)
    modules, why_not = load_pytorch()
    if modules is None:
        if course:
            print_table(course)
        print("pytorch DataLoader: skipped, no comparison: %s; the course does not need it%s" % (
            why_not, "; no against_pytorch.csv written" if args.csv else ""))
        return 0
    if args.data is None:
        raise BadInput("--data FILE is needed: the dataset both loops read")
    batches = timed_batches(args, course)
    try:
        pytorch = run_pytorch(modules, args, batches)
    except RuntimeError as error:  # what a DataLoader worker's death, or CUDA's error, raises
        shm = ("; a worker killed by a bus error ran out of /dev/shm, where the batches on "
               "their way need about %d MiB" % ((2 * args.loaders + 2) * args.batch *
                                                 SAMPLE_BYTES * 4 >> 20)
               if "DataLoader worker" in str(error) else "")
        raise BadRun("PyTorch's loop failed: %s%s" % (error, shm))
    print_table(course + [pytorch])
    print_ratios(course, pytorch)
    print("PyTorch %s (CUDA %s) on %s: DataLoader(batch_size=%d, num_workers=%d, "
          "pin_memory=True, persistent_workers=True), .to(device, non_blocking=True), step "
          "torch.cuda._sleep(%d) then the batch's sum: %.2f ms (median); the first batch on the "
          "GPU is numpy's conversion of the file's first samples, bit for bit"
          % (pytorch["torch"], pytorch["cuda"], pytorch["gpu"], args.batch, args.loaders,
             pytorch["cycles"], pytorch["step_ms"]))
    print("PyTorch's copies run on the step's stream, as .to() does unless the user makes "
          "another: each batch's copy waits for the previous step")
    if args.csv:
        write_csv(args, course + [pytorch], pytorch)
    return 0


def main(argv):
    args = parse_arguments(argv)
    try:
        course = [parse_feed_line(line) for line in args.course]
        if len({row["variant"] for row in course}) != len(course):
            raise BadInput("two --course lines name the same variant")
        return compare(args, course)
    except BadInput as error:
        print("against_pytorch.py: %s" % error, file=sys.stderr)
        return 2
    except BadRun as error:
        print("against_pytorch.py: FAILED: %s" % error, file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

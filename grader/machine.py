"""machine.py - the grading machine, for make grade: its GPUs (counted in child processes: the
grader never touches CUDA), the lanes of test hosts on each, and the unused uids they run as
(as root), each claimed with a lock file so that two graders on one machine never share one.
"""

import fcntl
import os
import pwd
import signal
import subprocess
import sys
import tempfile


FIRST_UID = 61000  # where unused uids are looked for, as root
UID_CLAIMS = "/run/lock/course-grade-uids"  # a lock file per uid a grader on this machine holds
_claimed = []  # the open lock files of the uids this process holds, until it ends


def unused_uids(count, start):
    """`count` consecutive uids from `start` up that no account uses."""
    uid = start
    while True:
        block = list(range(uid, uid + count))
        taken = [u for u in block if _uid_in_use(u)]
        if not taken:
            return block
        uid = taken[-1] + 1


def _uid_in_use(uid):
    try:
        pwd.getpwuid(uid)
        return True
    except KeyError:
        return False


def processes_where(predicate):
    """pids of the processes whose /proc/PID/stat fields satisfy predicate(fields, uid)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % entry) as f:
                fields = f.read().rsplit(")", 1)[1].split()
            uid = os.stat("/proc/" + entry).st_uid
        except (OSError, IndexError):
            continue
        if predicate(fields, uid):
            found.append(int(entry))
    return found


def kill_session(session):
    """Kills every process of a session, whatever its process group."""
    for pid in processes_where(lambda fields, uid: fields[3] == str(session)):
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


def uids_running(uids):
    """Those of `uids` that some process runs as."""
    found = set()
    processes_where(lambda fields, owner: owner in uids and found.add(owner))
    return found


def claim_uids(count, start=FIRST_UID):
    """`count` consecutive uids that no account uses and no other grader here holds.

    After each program the grader kills everything still running as its uid, so
    two graders on one machine (two Slurm tasks on one node, two checkouts'
    self-tests) must never share one: each would kill the other's builds and
    tests. Each uid is claimed with a lock (flock) on a file of its own, held
    while this process lives; the kernel drops it when the process ends, however.
    A uid that some process runs as is taken too, claimed or not (a grader of an
    older checkout, another tool's sandbox).
    """
    folder = UID_CLAIMS if os.path.isdir(os.path.dirname(UID_CLAIMS)) else os.path.join(
        tempfile.gettempdir(), os.path.basename(UID_CLAIMS))
    os.makedirs(folder, exist_ok=True)
    uid = start
    while True:
        block = unused_uids(count, uid)
        running = uids_running(block)
        held = []
        for candidate in block:
            if candidate in running:
                break
            claim = os.open(os.path.join(folder, str(candidate)), os.O_RDWR | os.O_CREAT, 0o600)
            try:
                fcntl.flock(claim, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                os.close(claim)
                break
            held.append(claim)
        if len(held) == count:
            _claimed.extend(held)
            return block
        for claim in held:
            os.close(claim)
        uid = block[len(held)] + 1


def lanes_per_gpu(gpus):
    """PER_GPU's default: a lane for each CPU, shared out over the GPUs, 4 to 32 a GPU.

    A lane's test host spends most of its time on the CPU (filling and checking buffers of
    hundreds of MiB, the learners' own host threads) and waits for the GPU only in short
    turns, so lanes scale with CPUs; past 32 a GPU, each lane's share of its memory would be
    under what the tests need. docs/performance.md has what more and fewer lanes measured."""
    return max(4, min(32, (os.cpu_count() or 4) // max(1, gpus)))


def find_gpus(course, requested):
    """([CUDA_VISIBLE_DEVICES value per worker], a note). CUDA is asked in child processes."""
    if requested is not None and requested.strip().lower() in ("", "none", "0-none"):
        return [], "GPUS=none"
    run = course.make(os.path.join(course.build, "tools", "gpu_probe"))
    probe = course.built("tools", "gpu_probe")
    if run.returncode != 0 or not os.path.exists(probe):
        return [], "the GPU probe did not build"
    if requested:
        ids = [g.strip() for g in requested.split(",") if g.strip()]
    elif os.environ.get("CUDA_VISIBLE_DEVICES") is not None:
        ids = [g.strip() for g in os.environ["CUDA_VISIBLE_DEVICES"].split(",") if g.strip()]
    else:
        try:
            listed = subprocess.run(["nvidia-smi", "-L"], stdout=subprocess.PIPE,
                                    stderr=subprocess.DEVNULL, universal_newlines=True,
                                    timeout=60)
            ids = [str(i) for i, line in enumerate(
                l for l in listed.stdout.splitlines() if l.startswith("GPU "))]
        except (OSError, subprocess.TimeoutExpired):
            ids = []
        ids = ids or ["0"]
    working = []
    why = ""
    for gpu in ids:
        env = dict(os.environ, CUDA_VISIBLE_DEVICES=gpu, CUDA_DEVICE_ORDER="PCI_BUS_ID")
        check = subprocess.run([probe], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               universal_newlines=True, errors="replace")
        if check.returncode == 0:
            working.append(gpu)
            why = why or check.stdout.strip()
        else:
            why = check.stdout.strip()
    return working, why


# --- Commands -----------------------------------------------------------------------------

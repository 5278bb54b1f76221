"""sandbox.py - running a build or a test program of a submission, confined.

Layers, each used when this machine allows it (Confinement.probe finds out,
and says what is missing):

  - namespaces (unshare): no network; a pid namespace with a /proc of its own,
    whose every process the kernel kills when its first one (the test program)
    ends; a mount namespace in which the course, the submissions and the output
    folder are read-only (sandbox-mounts.sh). As root directly, otherwise inside
    a user namespace;
  - a user of its own (as root, setpriv): an unused uid per GPU worker and one
    for builds, so the code cannot write anything of the grader's and the
    process limit counts only its processes; no new privileges;
  - resource limits (prlimit): processes, file size, CPU seconds, open files,
    no core dumps. Never an address-space limit: CUDA reserves far more
    virtual memory than it uses;
  - its own session: a wall-clock limit, after which the session, anything
    left of it and anything left running as its uid are killed;
  - output read through a pipe and capped: what the code prints is counted,
    the start kept, the rest dropped.
"""

import os
import pwd
import signal
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
MOUNTS_SCRIPT = os.path.join(HERE, "sandbox-mounts.sh")


def python_for_everyone():
    """A python3 any uid can run (the grader's own may live in a private home)."""
    for candidate in ("/usr/bin/python3", "/usr/local/bin/python3"):
        if os.access(candidate, os.X_OK):
            return candidate
    return sys.executable


class Limits:
    def __init__(self, cpu_seconds, file_bytes, processes=None, open_files=1024):
        self.cpu_seconds = int(cpu_seconds)
        self.file_bytes = int(file_bytes)
        self.processes = processes
        self.open_files = open_files

    def prlimit_arguments(self):
        args = ["--cpu=%d:%d" % (self.cpu_seconds, self.cpu_seconds + 5),
                "--fsize=%d" % self.file_bytes, "--core=0", "--nofile=%d" % self.open_files]
        if self.processes:
            args.append("--nproc=%d" % self.processes)
        return args


class RunResult:
    def __init__(self):
        self.returncode = None
        self.timed_out = False
        self.output = b""  # the start of what it printed (stdout and stderr together)
        self.output_bytes = 0  # how much it printed in all
        self.channel = None  # bytes read from the result channel, if one was asked for
        self.seconds = 0.0


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


class Confinement:
    """How submissions run here: the layers this machine allows, and running under them."""

    def __init__(self, scratch, protected, namespaces=(), uids=False):
        self.scratch = scratch
        self.protected = [p for p in protected if p and os.path.isdir(p)]
        self.namespaces = tuple(namespaces)  # of "net", "pid", "mount"
        self.uids = uids  # run as unused uids (root only)
        self.is_root = os.geteuid() == 0
        self.notes = []
        self._active = set()
        self._lock = threading.Lock()

    # --- Building commands -------------------------------------------------------------

    def wrap(self, argv, limits, uid=None):
        command = []
        if self.namespaces:
            command += ["unshare"]
            if not self.is_root:
                command += ["--user", "--map-root-user"]
            if "net" in self.namespaces:
                command += ["--net"]
            if "pid" in self.namespaces:
                command += ["--pid", "--fork", "--kill-child"]
            if "mount" in self.namespaces:
                # In a pid namespace, the parent's /proc names other pids than getpid()
                # does, and CUDA fails there (cudaErrorOperatingSystem on the H200,
                # grader/README.md); a /proc of the namespace's own is what CUDA needs.
                command += ["--mount-proc" if "pid" in self.namespaces else "--mount"]
            command += ["--"]
            if "mount" in self.namespaces:
                command += ["/bin/sh", MOUNTS_SCRIPT, self.scratch] + self.protected + ["--"]
        if self.uids and uid is not None:
            command += ["setpriv", "--reuid=%d" % uid, "--regid=%d" % uid, "--clear-groups",
                        "--no-new-privs", "--"]
        return command + ["prlimit"] + limits.prlimit_arguments() + ["--"] + list(argv)

    def describe(self):
        parts = []
        if "net" in self.namespaces:
            parts.append("no network")
        if "pid" in self.namespaces:
            parts.append("own pid namespace")
        if "mount" in self.namespaces:
            parts.append("course, submissions and output read-only")
        if self.uids:
            parts.append("an unprivileged uid per worker")
        parts.append("limits on processes, file size, CPU time and open files")
        return ", ".join(parts)

    # --- Running ------------------------------------------------------------------------

    def run(self, argv, cwd, env, timeout, limits, uid=None, result_channel=False,
            keep_output=64 << 10, sweep=False):
        """Runs argv confined; never raises for what the program does.

        sweep: afterwards kill whatever still runs as uid. Only for a uid no other
        run is using (a GPU worker's), never the one parallel builds share.
        """
        result = RunResult()
        read_end = write_end = None
        pass_fds = ()
        argv = list(argv)
        if result_channel:
            read_end, write_end = os.pipe()
            pass_fds = (write_end,)
            argv += ["--result-fd", str(write_end)]
        started = time.monotonic()
        with self._lock:  # no other thread forks while this one's pipe ends are open
            try:
                process = subprocess.Popen(
                    self.wrap(argv, limits, uid), cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                    stdout=subprocess.PIPE, stderr=subprocess.STDOUT, pass_fds=pass_fds,
                    start_new_session=True)
            except OSError as err:
                for fd in (read_end, write_end):
                    if fd is not None:
                        os.close(fd)
                result.returncode = 127
                result.output = ("could not start: %s" % err).encode()
                return result
            finally:
                if write_end is not None:
                    os.close(write_end)
            self._active.add(process)

        output = []
        channel = []

        def drain():
            while True:
                chunk = process.stdout.read1(65536) if hasattr(process.stdout, "read1") \
                    else process.stdout.read(65536)
                if not chunk:
                    break
                result.output_bytes += len(chunk)
                if sum(len(c) for c in output) < keep_output:
                    output.append(chunk)

        def read_channel():
            with os.fdopen(read_end, "rb") as f:
                while True:
                    chunk = f.read(65536)
                    if not chunk:
                        break
                    if sum(len(c) for c in channel) < (4 << 20):
                        channel.append(chunk)

        readers = [threading.Thread(target=drain, daemon=True)]
        if result_channel:
            readers.append(threading.Thread(target=read_channel, daemon=True))
        for reader in readers:
            reader.start()
        try:
            result.returncode = process.wait(timeout=max(timeout, 1))
        except subprocess.TimeoutExpired:
            result.timed_out = True
        finally:
            self._kill(process, uid if sweep else None)
            result.returncode = process.wait()
            with self._lock:
                self._active.discard(process)
        # Everything the run started has gone once nothing holds its output open.
        for reader in readers:
            reader.join(timeout=10)
        result.seconds = time.monotonic() - started
        result.output = b"".join(output)[:keep_output]
        if result_channel:
            result.channel = b"".join(channel) if not readers[1].is_alive() else None
        process.stdout.close()
        return result

    def _kill(self, process, uid):
        for kill in (lambda: os.killpg(process.pid, signal.SIGKILL),
                     lambda: kill_session(process.pid)):
            try:
                kill()
            except OSError:
                pass
        if self.uids and uid is not None:
            self.sweep(uid)

    def sweep(self, uid):
        """Kills whatever still runs as `uid`, and waits until none does."""
        if not self.uids:
            return
        subprocess.run(["setpriv", "--reuid=%d" % uid, "--regid=%d" % uid, "--clear-groups",
                        "--", python_for_everyone(), "-c",
                        "import os, signal\ntry: os.kill(-1, signal.SIGKILL)\n"
                        "except OSError: pass"],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and processes_where(
                lambda fields, owner: owner == uid and fields[0] != "Z"):
            time.sleep(0.05)

    def kill_everything(self):
        """On an interrupt: ends every run in flight."""
        with self._lock:
            active = list(self._active)
        for process in active:
            self._kill(process, None)


def scratch_problem(scratch, other_uids):
    """Why the test programs built in folders made in `scratch` could not run, or None.

    other_uids: whether unprivileged uids must reach them (they need `scratch`
    and every folder above it open to others).
    """
    if os.statvfs(scratch).f_flag & os.ST_NOEXEC:
        return ("the scratch folder %s is on a file system mounted noexec, where the test "
                "programs built there cannot run: give another with SCRATCH=DIR" % scratch)
    if other_uids:
        folder = scratch
        while True:
            if not os.stat(folder).st_mode & 0o001:
                return ("other users cannot enter %s, so the unprivileged uids that build and "
                        "run submissions cannot reach the scratch folder %s: give another with "
                        "SCRATCH=DIR, or open it with chmod o+x %s" % (folder, scratch, folder))
            if folder == os.path.dirname(folder):
                return None
            folder = os.path.dirname(folder)
    return None


def probe(scratch, protected, trial):
    """The strongest confinement under which trial(confinement) returns None.

    trial returns None when things work, or a sentence saying what failed.
    Raises RuntimeError when even the weakest fails.
    """
    is_root = os.geteuid() == 0
    strongest = ("net", "pid", "mount")
    candidates = []
    for uids in ((True, False) if is_root else (False,)):
        # No pid namespace without a mount namespace: it could not have a /proc of its own.
        for namespaces in (strongest, ("net", "mount"), ("net",), ()):
            candidates.append(Confinement(scratch, protected, namespaces, uids))
    failures = []
    reasons = set()
    for confinement in candidates:
        why = trial(confinement)
        if why is None:
            lost = ["%s namespace" % n for n in strongest if n not in confinement.namespaces]
            if is_root and not confinement.uids:
                lost.append("a uid of their own")
            if lost:
                confinement.notes.append("without %s, which failed here: %s" % (
                    ", ".join(lost), failures[0]))
            if not is_root:
                confinement.notes.append("not run as root: submissions run as this user "
                                         "(within a user namespace where there is one)")
            return confinement
        failures.append("%s: %s" % (" + ".join(confinement.namespaces + (
            ("uid",) if confinement.uids else ())) or "limits only", why))
        reasons.add(why)
    if len(reasons) == 1:
        raise RuntimeError("%s, with or without the sandbox, so the sandbox is not the cause"
                           % reasons.pop())
    raise RuntimeError("no way to run a submission works here: " + "; ".join(failures[-3:]))

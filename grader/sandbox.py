"""sandbox.py - running a build or a test program of a submission, confined.

The confinement is bubblewrap (bwrap): each run gets a view of the file
system of its own, built from an empty root, that holds /usr (the compiler,
the libraries), the CUDA toolkit's folder, the GPU's device nodes, a /proc
and /sys, a private size-limited /tmp and /dev/shm, and only the folders that
run needs: for a build, the course's sources and the exercise's own build
folder (the one writable place); for a test program, its exercise's build,
read-only. Not the submissions, the output folder, solutions/, the other
students' builds, nor the host's /tmp, /dev/shm or /run. It has no network,
a pid namespace whose every process dies with the first, and a seccomp
filter that denies what a test never needs (ptrace, process_vm_writev,
mounts, new namespaces, kernel keys...), where python3-seccomp can write one.
As root, bwrap runs without a user namespace and the code runs as an unused
uid per GPU worker (setpriv, no new privileges); otherwise bwrap makes a user
namespace, so the same view holds without root. Where neither works, grading
untrusted submissions is refused (probe says why), unless the instructor says
the submissions are trusted (--trust-submissions): then the older layers
below are used, with whatever this machine allows.

Always, whatever the view:

  - resource limits (prlimit): processes, file size, CPU seconds, open files,
    no core dumps. Never an address-space limit: CUDA reserves far more
    virtual memory than it uses;
  - its own session: a wall-clock limit, after which the session, anything
    left of it and anything left running as its uid are killed;
  - output read through a pipe and capped: what the code prints is counted,
    the start kept, the rest dropped.

Without bubblewrap (trusted submissions only): namespaces by unshare (no
network; a pid namespace with a /proc of its own; a mount namespace in which
the course, the submissions and the output folder are read-only,
sandbox-mounts.sh), and the uid per worker as root.
"""

import glob
import os
import shutil
import signal
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from machine import kill_session, processes_where, unused_uids  # noqa: E402,F401
# Where grader/install-deps.sh unpacks packages without root.
LOCAL_ROOT = os.path.join(os.path.dirname(HERE), ".deps", "root")
MOUNTS_SCRIPT = os.path.join(HERE, "sandbox-mounts.sh")
PRIVATE_TMP_BYTES = 256 << 20  # each run's /tmp and /dev/shm, in memory
# System calls a build or a test never needs, and which would reach beyond its own process:
# another process's memory, the kernel's keys, mounts and namespaces, kernel modules.
DENIED_SYSTEM_CALLS = (
    "ptrace", "process_vm_readv", "process_vm_writev", "kcmp", "pidfd_getfd",
    "perf_event_open", "bpf", "userfaultfd", "keyctl", "add_key", "request_key",
    "mount", "umount2", "pivot_root", "chroot", "unshare", "setns", "move_mount",
    "open_tree", "fsopen", "fsmount", "fsconfig", "fspick", "mount_setattr",
    "kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module",
    "reboot", "swapon", "swapoff", "acct", "quotactl", "syslog", "io_uring_setup",
    "io_uring_enter", "io_uring_register")
TRUST_FLAG = "TRUST_SUBMISSIONS=1"  # make grade's; grade.py's --trust-submissions


def python_for_everyone():
    """A python3 any uid can run (the grader's own may live in a private home)."""
    for candidate in ("/usr/bin/python3", "/usr/local/bin/python3"):
        if os.access(candidate, os.X_OK):
            return candidate
    return sys.executable


def inside(path, folder):
    return path == folder or path.startswith(folder.rstrip("/") + "/")


SECCOMP_WRITER = """
import errno, sys, seccomp
program = seccomp.SyscallFilter(defaction=seccomp.ALLOW)
for name in sys.argv[2:]:
    try:
        program.add_rule(seccomp.ERRNO(errno.EPERM), name)
    except (RuntimeError, ValueError):
        pass  # a call this kernel or architecture lacks
with open(sys.argv[1], "wb") as f:
    program.export_bpf(f)
"""


def seccomp_program(folder):
    """(path of a compiled seccomp filter denying DENIED_SYSTEM_CALLS, None) or (None, why).

    Written by libseccomp's Python bindings (Debian's python3-seccomp), which belong
    to the system's python3, not necessarily the one running the grader.
    """
    path = os.path.join(folder, "seccomp.bpf")
    env = dict(os.environ, PYTHONPATH=os.path.join(LOCAL_ROOT, "usr/lib/python3/dist-packages"))
    run = subprocess.run([python_for_everyone(), "-c", SECCOMP_WRITER, path] +
                         list(DENIED_SYSTEM_CALLS), env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, universal_newlines=True, errors="replace")
    if run.returncode != 0 or not os.path.exists(path):
        last = (run.stdout.strip().splitlines() or ["no reason given"])[-1]
        return None, ("%s has no python3-seccomp (make deps installs it)" % python_for_everyone()
                      if "No module named" in last else last)
    return path, None


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


class _Collected:
    """A run's output and its result channel, read by threads of their own as the program runs:
    the first keep_output bytes of the output kept (all of it counted), 4 MiB of the channel."""

    def __init__(self, process, channel_fd, keep_output):
        self.output, self.channel, self.keep, self.bytes = [], [], keep_output, 0
        self.readers = [threading.Thread(target=self._drain, args=(process.stdout,), daemon=True)]
        if channel_fd is not None:
            self.readers.append(threading.Thread(target=self._read_channel, args=(channel_fd,),
                                                 daemon=True))
        for reader in self.readers:
            reader.start()

    def _drain(self, stream):
        while True:
            chunk = stream.read1(65536) if hasattr(stream, "read1") else stream.read(65536)
            if not chunk:
                break
            self.bytes += len(chunk)
            if sum(len(c) for c in self.output) < self.keep:
                self.output.append(chunk)

    def _read_channel(self, fd):
        with os.fdopen(fd, "rb") as f:
            while True:
                chunk = f.read(65536)
                if not chunk:
                    break
                if sum(len(c) for c in self.channel) < (4 << 20):
                    self.channel.append(chunk)

    def finish(self, result):
        """Into result, once the run is over: everything it started has gone once nothing holds
        its output open."""
        for reader in self.readers:
            reader.join(timeout=10)
        result.output_bytes = self.bytes
        result.output = b"".join(self.output)[:self.keep]
        if len(self.readers) > 1:
            result.channel = b"".join(self.channel) if not self.readers[1].is_alive() else None


class Confinement:
    """How submissions run here: the layers this machine allows, and running under them."""

    def __init__(self, scratch, protected, namespaces=(), uids=False, view=False,
                 seccomp=None, libraries=()):
        self.scratch = scratch
        self.protected = [p for p in protected if p and os.path.isdir(p)]
        self.namespaces = tuple(namespaces)  # of "net", "pid", "mount" (without a view)
        self.uids = uids  # run as unused uids (root only)
        self.view = view  # bubblewrap: a file system view of each run's own
        self.seccomp = seccomp  # a compiled seccomp filter's file (with a view)
        self.libraries = [p for p in libraries if p and os.path.isdir(p) and
                          not inside(os.path.realpath(p), "/usr")]
        self.tmp_bytes = PRIVATE_TMP_BYTES  # the size of the view's /tmp and /dev/shm
        self.is_root = os.geteuid() == 0
        self.notes = []
        self._active = set()
        self._lock = threading.Lock()

    # --- Building commands -------------------------------------------------------------

    def home(self, run_dir):
        """Where a test program's HOME and temporary files are, as it sees them."""
        return "/tmp" if self.view else run_dir

    def bubblewrap(self, visible, writable, cwd):
        """bwrap's arguments: a view from an empty root with only what the run needs."""
        command = [bubblewrap_program() or "bwrap", "--die-with-parent", "--new-session"]
        if self.is_root:  # no user namespace: the uid change happens inside, by setpriv
            command += ["--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts",
                        "--unshare-cgroup-try"]
        else:
            command += ["--unshare-all"]
        command += ["--ro-bind", "/usr", "/usr"]
        for top in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):
            path = "/" + top
            if os.path.islink(path):  # merged /usr: /lib -> usr/lib
                command += ["--symlink", os.readlink(path), path]
            elif os.path.isdir(path):
                command += ["--ro-bind", path, path]
        command += ["--perms", "0755", "--dir", "/etc"]  # bwrap would make it its owner's alone
        for path in ("/etc/ld.so.cache", "/etc/alternatives"):
            command += ["--ro-bind-try", path, path]
        command += ["--dev", "/dev"]
        for device in sorted(glob.glob("/dev/nvidia*")):
            command += ["--dev-bind", device, device]
        command += ["--proc", "/proc", "--ro-bind", "/sys", "/sys"]
        for private in ("/tmp", "/dev/shm"):  # writable by any uid, like the host's
            command += ["--perms", "1777", "--size", str(self.tmp_bytes), "--tmpfs", private]
        shown = self.libraries + [p for p in visible if os.path.exists(p)]
        # The folders above each mount, which bwrap would make open to their owner alone.
        above = sorted({os.path.dirname(p) for p in shown + list(writable)} - {"/"})
        made = set()
        for folder in above:
            parts = folder.strip("/").split("/")
            for depth in range(1, len(parts) + 1):
                ancestor = "/" + "/".join(parts[:depth])
                if ancestor not in made and ancestor not in ("/tmp", "/usr", "/dev", "/proc",
                                                             "/sys"):
                    made.add(ancestor)
                    command += ["--perms", "0755", "--dir", ancestor]
        for path in shown:
            command += ["--ro-bind", path, path]
        for path in writable:
            command += ["--bind", path, path]
        seen = [p for p in list(visible) + list(writable)]
        command += ["--chdir", cwd if any(inside(cwd, p) for p in seen) else "/tmp"]
        return command

    def wrap(self, argv, limits, uid=None, visible=(), writable=(), cwd="/tmp",
             seccomp_fd=None):
        command = []
        if self.view:
            command += self.bubblewrap(visible, writable, cwd)
            if seccomp_fd is not None:
                command += ["--seccomp", str(seccomp_fd)]
            command += ["--"]
        elif self.namespaces:
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
        if self.view:
            parts.append("bubblewrap%s: a file system view of its own per run (its exercise's "
                         "build read-only, the libraries, the GPU's device nodes, a private "
                         "%d MiB /tmp), no network, own pid namespace" % (
                             "" if self.is_root else " in a user namespace",
                             PRIVATE_TMP_BYTES >> 20))
            if self.seccomp:
                parts.append("a seccomp filter (no ptrace, no access to other processes' "
                             "memory, no mounts or namespaces)")
        if "net" in self.namespaces:
            parts.append("no network")
        if "pid" in self.namespaces:
            parts.append("own pid namespace")
        if "mount" in self.namespaces:
            parts.append("course, submissions and output read-only")
        if self.uids:
            parts.append("an unprivileged uid per worker")
        # The process limit counts every process of the real uid: set only where it is ours.
        parts.append("limits on %sfile size, CPU time and open files"
                     % ("processes, " if self.uids else ""))
        return ", ".join(parts)

    # --- Running ------------------------------------------------------------------------

    def run(self, argv, cwd, env, timeout, limits, uid=None, result_channel=False,
            keep_output=64 << 10, sweep=False, visible=(), writable=(), pass_fds=()):
        """Runs argv confined; never raises for what the program does.

        sweep: afterwards kill whatever still runs as uid. Only for a uid no other
        run is using (a GPU worker's), never the one parallel builds share.
        visible, writable: the folders the run sees (read-only) and may write, in a
        view; anything else it is given (argv, cwd) must lie in them. cwd outside them
        is the view's private /tmp.
        pass_fds: descriptors the program inherits (the GPU's lock files, which its view
        does not show: grade.py).
        """
        result = RunResult()
        read_end = write_end = seccomp_fd = None
        pass_fds = list(pass_fds)
        argv = list(argv)
        if result_channel:
            read_end, write_end = os.pipe()
            pass_fds.append(write_end)
            argv += ["--result-fd", str(write_end)]
        started = time.monotonic()
        with self._lock:  # no other thread forks while this one's pipe ends are open
            try:
                if self.view and self.seccomp:
                    seccomp_fd = os.open(self.seccomp, os.O_RDONLY)
                    pass_fds.append(seccomp_fd)
                command = self.wrap(argv, limits, uid, visible, writable, cwd, seccomp_fd)
                process = subprocess.Popen(
                    command, cwd=cwd if not self.view else "/", env=env,
                    stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                    pass_fds=pass_fds, start_new_session=True)
            except OSError as err:
                if read_end is not None:
                    os.close(read_end)
                result.returncode = 127
                result.output = ("could not start: %s" % err).encode()
                return result
            finally:
                for fd in (write_end, seccomp_fd):
                    if fd is not None:
                        os.close(fd)
            self._active.add(process)

        collected = _Collected(process, read_end if result_channel else None, keep_output)
        try:
            result.returncode = process.wait(timeout=max(timeout, 1))
        except subprocess.TimeoutExpired:
            result.timed_out = True
        finally:
            self._kill(process, uid if sweep else None)
            result.returncode = process.wait()
            with self._lock:
                self._active.discard(process)
        collected.finish(result)
        result.seconds = time.monotonic() - started
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


def bubblewrap_program():
    """bwrap on the PATH, or where grader/install-deps.sh unpacked it; None if neither."""
    local = os.path.join(LOCAL_ROOT, "usr", "bin", "bwrap")
    return shutil.which("bwrap") or (local if os.access(local, os.X_OK) else None)


def unconfined_reason():
    """Why bubblewrap cannot give a view here, as far as can be told without trying."""
    if not bubblewrap_program():
        return "bubblewrap (bwrap) is not installed: make deps installs it (Debian's bubblewrap)"
    return None


def probe(scratch, protected, trial, libraries=(), trust=False):
    """The strongest confinement under which trial(confinement) returns None.

    trial returns None when things work, or a sentence saying what failed.
    Without a bubblewrap view, only trusted submissions are graded (trust), under
    the older layers. Raises RuntimeError when nothing acceptable works.
    """
    is_root = os.geteuid() == 0
    failures = []
    seccomp, no_seccomp = seccomp_program(scratch)
    why_no_view = unconfined_reason()
    if why_no_view is None:
        for program in ((seccomp, None) if seccomp else (None,)):
            confinement = Confinement(scratch, protected, uids=is_root, view=True,
                                      seccomp=program, libraries=libraries)
            why = trial(confinement)
            if why is None:
                if no_seccomp:
                    confinement.notes.append("without a seccomp filter: %s" % no_seccomp)
                elif not program:
                    confinement.notes.append("without a seccomp filter, which failed here: %s"
                                             % failures[0])
                return confinement
            failures.append("bubblewrap%s: %s" % (" with seccomp" if program else "", why))
        why_no_view = failures[-1]
        if "nknown option" in why_no_view:  # --size and --perms on a tmpfs: bubblewrap 0.6
            why_no_view += " (this bubblewrap is too old: the grader needs 0.6 or later)"
        if not is_root and ("namespace" in why_no_view or "ermission" in why_no_view):
            why_no_view += (" (this kernel does not let users make namespaces: allow it with "
                            "sysctl kernel.unprivileged_userns_clone=1, or on Ubuntu "
                            "kernel.apparmor_restrict_unprivileged_userns=0, or grade as root)")
    if not trust:
        raise RuntimeError(
            "submissions cannot be confined on this machine, so they are not graded: %s. "
            "To grade submissions you trust anyway, without that confinement, add %s "
            "(grader/README.md, Security)" % (why_no_view, TRUST_FLAG))
    strongest = ("net", "pid", "mount")
    candidates = []
    for uids in ((True, False) if is_root else (False,)):
        # No pid namespace without a mount namespace: it could not have a /proc of its own.
        for namespaces in (strongest, ("net", "mount"), ("net",), ()):
            candidates.append(Confinement(scratch, protected, namespaces, uids))
    reasons = set()
    for confinement in candidates:
        why = trial(confinement)
        if why is None:
            confinement.notes.append("submissions are trusted (%s): no view of their own, "
                                     "which failed here: %s" % (TRUST_FLAG, why_no_view))
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

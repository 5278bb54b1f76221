#!/usr/bin/env python3
"""grade.py - `make grade`: grade a class's submissions against the course's tests.

    grade.py grade --submissions DIR --out DIR [--regrade] [--jobs N] [--gpus LIST] ...
    grade.py report --out DIR          rebuild grades.csv and the summary from OUT
    grade.py inspect FILE...           build course files as submissions, run nothing: accepted?

For each student and each exercise: take the exercise's .c file from the
submission (submissions.py), build it and the exercise's tests into a module
of the test host with the course's Makefile in a scratch folder, under a
compiler launcher that refuses forbidden includes and assembly (course.py,
compile_guard.py), inspecting the object before linking (static_checks.py).
Then run the test host confined (sandbox.py) with all of the student's
modules, read each exercise's results from the result channel, and write the
feedback, results.json and the gradebook (results.py). Builds run in
parallel; PER_GPU test hosts, a student each, run side by side on each GPU.
grader/README.md has the whole design and its limits.

Exit status: 0 every student graded; 1 some not (no GPU, time, a grader error);
2 the course or the command line is wrong.
"""

import argparse
import concurrent.futures
import fcntl
import json
import os
import queue
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import course as course_module  # noqa: E402
import results  # noqa: E402
import sandbox  # noqa: E402
import scratch as scratch_module  # noqa: E402
import static_checks  # noqa: E402
import submissions as submissions_module  # noqa: E402

DEFAULT_TEST_TIMEOUT = 20  # the harness's own default, seconds per test
BUILD_TIMEOUT = 180
# A test host's file size limit: its shared memory is a sparse file of 64 GiB (harness/host/remote.h),
# which takes only what the tests touch; the view's /tmp has a size of its own.
HOST_FILE_BYTES = 65 << 30
# A student's test host may take the sum of its tests' limits, and this for its start and its
# reports; time it spends waiting for the GPU while others hold it is not its own, and past
# the limit the tests not reported are not graded, to be run again.
HOST_START_SECONDS = 60
# How often a student whose tests something outside their code spoiled is graded again.
NOT_GRADED_RETRIES = 2
FIRST_UID = 61000  # where unused uids are looked for, as root
DEFAULT_MEMORY_SHARE_MB = 4096  # a test program's memory where nvidia-smi cannot say
SMALLEST_MEMORY_SHARE_MB = 1024  # what the course's tests need at most, with room
UID_CLAIMS = "/run/lock/course-grade-uids"  # a lock file per uid a grader on this machine holds
LOUD_OUTPUT = 1 << 20  # more than this printed earns a note in the feedback


class Build:
    def __init__(self, status, details=None, module=None, source=None):
        self.status = status  # built, missing, does_not_compile, rejected
        self.details = details or []
        self.module = module  # the test host's module: the exercise's tests and the file
        self.source = source
        self.seconds = 0.0  # how long building and inspecting took, for the benchmark


class Grader:
    def __init__(self, args):
        self.args = args
        make_vars = {"CC": args.cc, "CFLAGS": args.cflags, "CPPFLAGS": args.cppflags,
                     "LDFLAGS": args.ldflags, "LDLIBS": args.ldlibs, "CUDA_HOME": args.cuda_home}
        self.course = course_module.Course(os.path.join(HERE, ".."), args.course_build,
                                           {k: v for k, v in make_vars.items() if v is not None})
        self.allow = None
        self.confinement = None
        self.build_uid = None
        self.worker_uids = []
        self.gpus = []
        self.gpu_note = ""
        self.test_timeout = args.test_timeout or DEFAULT_TEST_TIMEOUT
        self.python = sandbox.python_for_everyone()
        self.stop = threading.Event()
        self._memory_shares = {}

    # --- Setting up ------------------------------------------------------------------------

    def prepare(self, protected, scratch_parent):
        exercises = self.course.prepare()
        results.RENDERER = self.course.built("tools", "report_block")
        self.allow = static_checks.AllowList(os.path.join(HERE, "allowed-symbols.txt"),
                                             extra_names=self.course.common_symbols)
        problem = sandbox.scratch_problem(scratch_parent, os.geteuid() == 0)
        if problem:
            raise RuntimeError(problem)
        scratch_module.remove_stale(scratch_parent)
        self.scratch = scratch_module.claim(scratch_parent)
        self.gpus, self.gpu_note = find_gpus(self.course, self.args.gpus)
        if self.args.per_gpu is None:
            self.args.per_gpu = lanes_per_gpu(len(self.gpus))
        if os.geteuid() == 0:  # one for the builds, one per GPU and lane
            lanes = self.args.per_gpu
            uids = claim_uids(1 + max(1, len(self.gpus)) * lanes)
            self.build_uid = uids[0]
            self.worker_uids = [uids[1 + g * lanes:1 + (g + 1) * lanes]
                                for g in range(max(1, len(self.gpus)))]
        # The test host (harness/host/runner.c), its worker beside it, where it looks for it, and
        # the exercises' test modules, where the uids that run them can read them.
        host_folder = os.path.join(self.scratch, "host")
        os.makedirs(host_folder)
        os.chmod(host_folder, 0o755)
        self.host = os.path.join(host_folder, "test-host")
        shutil.copy(self.course.built("tests", "host"), self.host)
        shutil.copy(self.course.built("tests", "worker"), os.path.join(host_folder, "worker"))
        self.test_modules = {}
        for exercise_id in exercises:
            module = os.path.join(host_folder, "tests", exercise_id + ".so")
            os.makedirs(os.path.dirname(module), exist_ok=True)
            shutil.copy(self.course.test_module(exercise_id), module)
            self.test_modules[exercise_id] = module
        for folder, dirs, files in os.walk(host_folder):
            os.chmod(folder, 0o755)
            for name in files:
                os.chmod(os.path.join(folder, name), 0o755)
        self.confinement = sandbox.probe(self.scratch, protected, self._trial,
                                         self.course.libraries(), self.args.trust_submissions)
        return exercises

    def _trial(self, confinement):
        """None when the course's own stub builds and runs under `confinement`."""
        self.confinement = confinement
        exercise = next(iter(self.course.exercises.values()))
        folder = tempfile.mkdtemp(prefix="probe-", dir=self.scratch)
        os.chmod(folder, 0o755)
        with open(self.course.path("exercises", exercise.id + ".c"), "rb") as f:
            build = self.build(folder, exercise, f.read(), inspect=False)
        if build.status != "built":
            return "the course's own %s did not build in it (%s)" % (
                exercise.id, " ".join(build.details[:3]) or build.status)
        run_dir = self._run_dir(folder, 0)
        run = confinement.run([self.host, "--module", self.test_modules[exercise.id],
                               "--rubric"], run_dir,
                              self._run_env(run_dir, ""), 60,
                              sandbox.Limits(60, 1 << 20, self._processes()),
                              self._worker_uid(0), visible=[folder, os.path.dirname(self.host)])
        if run.returncode != 0:
            return "a test program did not start in it (%s)" % run.output.decode(
                errors="replace").strip()[:200]
        if self.gpus:
            probe = os.path.join(run_dir, "gpu_probe")
            shutil.copy(self.course.built("tools", "gpu_probe"), probe)
            run = confinement.run([probe], run_dir, self._run_env(run_dir, self.gpus[0]), 60,
                                  sandbox.Limits(60, 1 << 20, self._processes()),
                                  self._worker_uid(0), visible=[run_dir])
            if run.returncode != 0:
                return "CUDA did not work in it (%s)" % run.output.decode(
                    errors="replace").strip()[:200]
        shutil.rmtree(folder, ignore_errors=True)
        return None

    def _worker_uid(self, slot, lane=0):
        return self.worker_uids[slot][lane] if self.confinement.uids else None

    def _processes(self, builds=False):
        """RLIMIT_NPROC counts every process of the real uid, so it is set where that uid is ours."""
        if self.confinement.uids:
            return 64 * (self.args.jobs + 1) if builds else 512
        return None

    def _own(self, path, uid):
        if uid is None:
            return
        for folder, dirs, files in os.walk(path):
            os.lchown(folder, uid, uid)
            for name in dirs + files:
                os.lchown(os.path.join(folder, name), uid, uid)

    # --- Building one exercise ---------------------------------------------------------------

    def build(self, folder, exercise, source, inspect=True, link=True):
        view = self.course.make_view(folder, exercise.id, source)
        uid = self.build_uid if self.confinement.uids else None
        self._own(folder, uid)
        relative_source = os.path.join("exercises", exercise.id + ".c")
        guard_report = os.path.join(folder, "guard.json")
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": folder, "LC_ALL": "C",
               "TMPDIR": folder, "GRADE_REAL_CC": self.course.make_vars.get("CC") or "cc",
               "GRADE_STUDENT_SOURCE": relative_source, "GRADE_COURSE_ROOT": self.course.root,
               "GRADE_GUARD_REPORT": guard_report}
        for name in ("PKG_CONFIG_PATH", "CUDA_PATH"):
            if name in os.environ:
                env[name] = os.environ[name]
        # The course's own CC and CUDA_HOME (Course.resolve_toolchain), whatever the shell had.
        variables = dict(self.course.make_vars, BUILD=self.course.build)
        variables["CC"] = "%s %s" % (self.python, os.path.join(HERE, "compile_guard.py"))
        variables["LDFLAGS"] = (variables.get("LDFLAGS", "") + " -Wl,-z,noexecstack").strip()
        make = self.course.make_command + ["-s", "--no-print-directory"] + [
            "%s=%s" % kv for kv in variables.items()]
        # 64 MiB a file: an exercise's object and test program are a few MiB at most.
        limits = sandbox.Limits(BUILD_TIMEOUT, 64 << 20, self._processes(builds=True))

        def step(targets):
            return self.confinement.run(make + targets, view, env, BUILD_TIMEOUT, limits, uid,
                                        keep_output=256 << 10, writable=[folder],
                                        visible=self.course.view_sources(exercise.id))

        # One make compiles and links: the object is inspected before anything of it runs,
        # and a link runs nothing of it, so the link need not wait for the inspection.
        targets = [self.course.object_target(exercise.id)]
        if link:
            targets.append(self.course.module_target(exercise.id))
        made = step(targets)
        obj = os.path.join(view, targets[0])
        guard = read_json(guard_report) or {}
        if guard.get("rejected"):
            return Build("rejected", guard["rejected"])
        if not os.path.exists(obj):
            if made.timed_out:
                return Build("does_not_compile", ["the compiler did not finish within %d s"
                                                  % BUILD_TIMEOUT])
            errors = guard.get("diagnostics") or compiler_errors(made.output, view)
            return Build("does_not_compile", errors.splitlines()[:12] or [
                "the compiler stopped (exit status %s)" % made.returncode] + last_lines(
                    made.output, view))
        if inspect and not self.args.unsafe_skip_static_checks:
            reasons = static_checks.inspect_object(obj, exercise.api, exercise.course_defined,
                                                   self.allow)
            if reasons:
                return Build("rejected", reasons)
        source = os.path.join(view, relative_source)
        if not link:
            return Build("built", source=source)
        module = os.path.join(view, targets[1])
        if made.returncode != 0 or made.timed_out or not os.path.exists(module):
            errors = compiler_errors(made.output, view).splitlines()[:11]
            return Build("does_not_compile", ["it compiles, but does not link:"] + (
                errors or last_lines(made.output, view)))
        return Build("built", module=module, source=source)

    # --- Running one exercise's tests ---------------------------------------------------------

    def _run_dir(self, folder, slot, lane=0):
        run_dir = os.path.join(folder, "run")
        os.makedirs(run_dir, exist_ok=True)
        self._own(run_dir, self._worker_uid(slot, lane))
        return run_dir

    def _locks_folder(self):
        """Where the GPUs' lock files are: COURSE_LOCK_DIR when the caller shares its own with
        other runs on this machine (make test does: harness/gpu_locks.sh names them alike),
        else the scratch folder's."""
        shared = os.environ.get("COURSE_LOCK_DIR", "")
        return shared if os.path.isdir(shared) else os.path.join(self.scratch, "locks")

    def _gpu_locks(self, gpu):
        """The lock files through which test programs on one GPU share it (harness/host/runner.c):
        a test that times the GPU runs alone on it, and contexts are made one at a time. Each
        test host gets them as open descriptors (_open_locks), never in its view: the learner's
        code, beside it, could otherwise hold them."""
        folder = self._locks_folder()
        if not os.path.isdir(folder):
            os.makedirs(folder, exist_ok=True)
            os.chmod(folder, 0o755)
        name = "".join(c if c.isalnum() else "-" for c in str(gpu))
        paths = {"COURSE_GPU_LOCK": "gpu-%s.lock" % name,
                 "COURSE_GPU_TURNSTILE": "gpu-%s.turnstile" % name,
                 "COURSE_CONTEXT_LOCK": "contexts.lock"}
        for variable, file_name in paths.items():
            paths[variable] = os.path.join(folder, file_name)
            with open(paths[variable], "a"):
                pass
            try:
                os.chmod(paths[variable], 0o644)
            except OSError:  # another user's, in a shared folder: they made it readable
                pass
        return paths

    def _open_locks(self, gpu):
        """({VARIABLE_FD: descriptor}, [descriptors]): the GPU's lock files, opened for one test
        host, each an open file of its own (flock locks an open file, not a path)."""
        variables, fds = {}, []
        for variable, path in self._gpu_locks(gpu).items():
            fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
            fds.append(fd)
            variables[variable + "_FD"] = str(fd)
        return variables, fds

    def _run_env(self, run_dir, gpu, lock_variables=None):
        home = self.confinement.home(run_dir)  # the view's private /tmp, where there is one
        env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": home, "TMPDIR": home,
               "CK_TMPDIR": home, "CK_FORK": "yes", "NO_COLOR": "1", "LC_ALL": "C",
               "COURSE_TEST_TIMEOUT": str(self.test_timeout), "CUDA_VISIBLE_DEVICES": gpu,
               "CUDA_DEVICE_ORDER": "PCI_BUS_ID", "CUDA_CACHE_PATH": os.path.join(home, ".nv")}
        if "LD_LIBRARY_PATH" in os.environ:  # where containers keep the driver's library
            env["LD_LIBRARY_PATH"] = os.environ["LD_LIBRARY_PATH"]
        if gpu:
            env.update(lock_variables or {})
            env["COURSE_MEMORY_LIMIT_MB"] = str(self._memory_share(gpu))
        return env

    def _memory_share(self, gpu):
        """The device memory (and pinned host memory) one test program may hold, in MiB: the
        GPU's memory shared by the PER_GPU programs beside it and one spare share, so that a
        program that takes all it can fails its own tests, not its neighbours' (harness/trace/trace.c).
        """
        if gpu not in self._memory_shares:
            total = 0
            try:
                run = subprocess.run(["nvidia-smi", "--query-gpu=memory.total",
                                      "--format=csv,noheader,nounits", "-i", str(gpu)],
                                     capture_output=True, text=True, timeout=30)
                total = int(run.stdout.split()[0]) if run.returncode == 0 else 0
            except (OSError, ValueError, IndexError, subprocess.TimeoutExpired):
                total = 0
            share = max(total // (self.args.per_gpu + 1), SMALLEST_MEMORY_SHARE_MB)
            self._memory_shares[gpu] = share if total else DEFAULT_MEMORY_SHARE_MB
        return self._memory_shares[gpu]

    def run_tests(self, built, slot, seconds_left, lane=0):
        """The tests of a student's built exercises, [(exercise, folder, Build)], in one test
        host (harness/host/runner.c), which runs them one after another in one CUDA context where
        they let it: {exercise id: Outcome}."""
        gpu = self.gpus[slot]
        student_folder = os.path.dirname(built[0][1])
        run_dir = self._run_dir(student_folder, slot, lane)
        # Each test has test_timeout once it has the GPU; waiting for the GPU while the programs
        # beside it hold it (a timed test waits for all of them) is not counted against it. The
        # host as a whole has the sum of its tests' limits: past that, something else held it
        # up, and what is not reported is not graded yet.
        tests = sum(len(exercise.tests) for exercise, _, _ in built)
        timeout = min(tests * self.test_timeout + HOST_START_SECONDS, seconds_left)
        limits = sandbox.Limits((tests + 3 * len(built)) * self.test_timeout + 30, HOST_FILE_BYTES,
                                self._processes())
        command = [self.host, "--no-color"]
        for exercise, _, build in built:
            command += ["--module", self.test_modules[exercise.id], "--learner", build.module,
                        "--source", build.source]
        lock_variables, lock_fds = self._open_locks(gpu)
        started = time.monotonic()
        try:
            run = self.confinement.run(command, run_dir,
                                       self._run_env(run_dir, gpu, lock_variables), timeout,
                                       limits, self._worker_uid(slot, lane),
                                       result_channel=True, sweep=True, pass_fds=lock_fds,
                                       # its builds, the host, its worker and the test modules
                                       visible=[student_folder, os.path.dirname(self.host)])
        finally:
            for fd in lock_fds:
                os.close(fd)
        records = parse_records(run.channel, [exercise for exercise, _, _ in built])
        outcomes = {}
        unaccounted = time.monotonic() - started
        for exercise, _, _ in built:
            record = records.get(exercise.id)
            if record is not None:
                unaccounted -= record["seconds"]
        for exercise, _, _ in built:
            record = records.get(exercise.id)
            # The tests' output goes to the runner, which counts it; what the program itself
            # printed past the runner, the sandbox counts.
            printed = record["printed_bytes"] if record else run.output_bytes
            note = ""
            if printed > LOUD_OUTPUT:
                note = ("the code printed %.1f MiB while its tests ran; the grader keeps none "
                        "of it" % (printed / (1 << 20)))
            if record is None:
                if run.timed_out:
                    outcome = results.Outcome(exercise, "not_run", details=[
                        "not graded yet: the tests did not finish within %d s, the sum of the "
                        "time limits of the student's %d tests, since something else held the "
                        "GPU up; they are run again" % (timeout, tests)], note=note)
                else:
                    # The judge runs no learner code, and the learner's code cannot signal
                    # it: a host that ended early ended for a reason of the machine's.
                    outcome = results.Outcome(exercise, "not_run", details=[
                        "not graded yet: the test program stopped before it reported these "
                        "results (exit status %s), which the code under test cannot make it do; "
                        "they are run again" % run.returncode], note=note)
            elif record["status"] == "no_gpu":
                outcome = results.Outcome(exercise, "not_run", details=[
                    "the test program found no CUDA device (%s)" % record.get("note", "")])
            elif record["status"] == "unloadable":
                outcome = results.Outcome(exercise, "does_not_compile",
                                          details=[record.get("note", "")])
            else:
                outcome = results.Outcome(exercise, record["status"], tests=record["tests"],
                                          note=note)
            # The host's own start (its CUDA context) is shared out evenly.
            outcome.seconds = {"tests": round((record["seconds"] if record else 0)
                                              + max(unaccounted, 0) / len(built), 2)}
            outcomes[exercise.id] = outcome
        return outcomes

    # --- One student --------------------------------------------------------------------------

    def prepare_student(self, submission, builders):
        """Starts building each exercise of a submission already read, each as a task of its
        own on `builders` (a pool of threads): a student's exercises are built side by side, so
        the first students' tests start after one build's time, not fifteen. Returns
        [(exercise, folder, future of its Build)] and a dict in which the first of its builds
        to start notes when ("started")."""
        student_scratch = os.path.join(self.scratch, submission.student)
        os.makedirs(student_scratch)
        clock = {}
        pending = []
        for n, exercise in enumerate(self.course.exercises.values()):
            folder = os.path.join(student_scratch, "%02d-%s" % (n, exercise.id.replace("/", "-")))
            os.makedirs(folder)
            pending.append((exercise, folder, builders.submit(
                self._build_task, folder, exercise, submission.files.get(exercise.id), clock)))
        return pending, clock

    def _build_task(self, folder, exercise, source, clock):
        clock.setdefault("started", time.monotonic())
        if self.stop.is_set():
            return Build("not_run", ["grading was interrupted"])
        if source is None:
            return Build("missing")
        started = time.monotonic()
        build = self.build(folder, exercise, source)
        build.seconds = time.monotonic() - started
        return build

    def run_student(self, built, started, slot, lane=0):
        """A student's built exercises on GPU `slot` (None: no GPU), in lane `lane`: {exercise
        id: Outcome}. `started` is when the student's grading began, which the student's time
        limit counts from."""
        seconds_left = self.args.student_timeout - (time.monotonic() - started)
        if self.stop.is_set():
            why = ("not_run", "grading was interrupted")
        elif slot is None:
            why = ("not_run", "there is no CUDA device on the grading machine (%s)"
                   % self.gpu_note)
        elif seconds_left < 10:
            why = ("timed_out", "the student's time limit (%d s) ran out before these tests "
                   "could run" % self.args.student_timeout)
        else:
            why = None
        if why:
            outcomes = {exercise.id: results.Outcome(exercise, why[0], details=[why[1]])
                        for exercise, _, _ in built}
        else:
            outcomes = self.run_tests(built, slot, seconds_left, lane)
            # What something outside the student's code spoiled (a GPU others kept busy, a host
            # held up past its time) is run again, a few times, before it is left for a rerun.
            for _ in range(NOT_GRADED_RETRIES):
                again = [item for item in built if not outcomes[item[0].id].complete]
                seconds_left = self.args.student_timeout - (time.monotonic() - started)
                if not again or seconds_left < 10 or self.stop.is_set():
                    break
                outcomes.update(self.run_tests(again, slot, seconds_left, lane))
        for exercise, _, build in built:
            outcomes[exercise.id].seconds = dict(outcomes[exercise.id].seconds or {"tests": 0},
                                                 build=round(build.seconds, 2))
        return outcomes


class StudentRun:
    """A student being graded: its built exercises, run together by whichever lane is free, in
    one test host (one CUDA context where the code lets it), and its record."""

    def __init__(self, submission, prepared):
        """`prepared` is Grader.prepare_student's: this waits for the student's builds."""
        self.submission = submission
        pending, clock = prepared
        self.built = [(exercise, folder, future.result()) for exercise, folder, future in pending]
        self.started = clock.get("started", time.monotonic())
        self.outcomes = {}
        self.failed = False  # a grader error in one of its tasks: the student is not written
        for exercise, _, build in self.built:
            if build.status != "built":
                outcome = results.Outcome(exercise, build.status, details=build.details)
                outcome.seconds = {"build": round(build.seconds, 2), "tests": 0}
                self.outcomes[exercise.id] = outcome
        self.runnable = [item for item in self.built if item[2].status == "built"]

    def tests_done(self, outcomes):
        """Records the outcomes of its exercises' tests; None: a grader error."""
        if outcomes is None:
            self.failed = True
        else:
            self.outcomes.update(outcomes)

    def record(self):
        submission = self.submission
        record = results.StudentRecord(submission.student, submission.shown_name,
                                       submission.notes, submission.problem,
                                       submission.fingerprint())
        record.outcomes = [self.outcomes[exercise.id] for exercise, _, _ in self.built]
        return record


# --- Helpers ------------------------------------------------------------------------------

_claimed = []  # the open lock files of the uids this process holds, until it ends


def uids_running(uids):
    """Those of `uids` that some process runs as."""
    found = set()
    sandbox.processes_where(lambda fields, owner: owner in uids and found.add(owner))
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
        block = sandbox.unused_uids(count, uid)
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


def read_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def compiler_errors(output, view):
    """The compiler's and linker's first messages, as check.sh shows them."""
    text = output.decode("utf-8", errors="replace").replace(view.rstrip("/") + "/", "")
    lines = [line for line in text.splitlines()
             if any(w in line for w in ("error", "warning", "note", "undefined reference"))
             and not line.startswith(("make", "grader:"))]
    return "\n".join(lines[:12])


def last_lines(output, view, count=6):
    """The end of a build's output, when it holds no compiler message to show."""
    text = output.decode("utf-8", errors="replace").replace(view.rstrip("/") + "/", "")
    return [line for line in text.splitlines() if line.strip()][-count:]


def parse_records(channel, exercises):
    """The runner's records from the result channel, one after another: {exercise id: record}
    for each record that is whole and about one of these exercises. The runner writes UTF-8 and
    shows any other byte escaped (harness/report/report.c); bytes that still are not UTF-8 cost the
    record they are in, as a record that is not whole does, never the others."""
    records, seen = {}, set()
    text = channel.decode("utf-8", errors="replace") if channel else ""
    decoder = json.JSONDecoder()
    at = 0
    by_id = {exercise.id: exercise for exercise in exercises}
    while True:
        while at < len(text) and text[at].isspace():
            at += 1
        if at >= len(text):
            return records
        try:
            record, at = decoder.raw_decode(text, at)
        except ValueError:
            return records
        exercise = by_id.get(record.get("exercise")) if isinstance(record, dict) else None
        if exercise is None:
            continue
        if exercise.id in seen:  # the runner writes one: a second is forged, and so is the first
            records.pop(exercise.id, None)
            continue
        seen.add(exercise.id)
        record = parse_record(record, exercise)
        if record is not None:
            records[exercise.id] = record


def parse_record(record, exercise):
    """One record of the runner's, checked against the exercise's rubric; None if unsound."""
    if record.get("status") == "unloadable":
        record["note"] = str(record.get("note", ""))[:2048]
        record["tests"], record["printed_bytes"] = [], 0
    elif record.get("status") not in ("passed", "failed", "not_started", "no_gpu", "not_graded"):
        return None
    else:
        by_name = {t.get("name"): t for t in record.get("tests", []) if isinstance(t, dict)}
        if set(by_name) != {name for name, _ in exercise.tests}:
            return None
        # Points come from the course's rubric; the run says which tests passed, and which of
        # those count (a test that passed on the worker's own record counts once a test that
        # rests on results passed too: harness/report/report.c).
        record["tests"] = [{"name": name, "points": points,
                            "passed": by_name[name].get("passed") is True,
                            "counts": by_name[name].get("counts") is True,
                            "not_graded": by_name[name].get("not_graded") is True,
                            "message": str(by_name[name].get("message", ""))[:8192]}
                           for name, points in exercise.tests]
    if not isinstance(record.get("printed_bytes"), int):
        record["printed_bytes"] = 0
    seconds = record.get("seconds", 0)
    record["seconds"] = float(seconds) if isinstance(seconds, (int, float)) else 0.0
    return record


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

def refuse(command, sentence):
    """Says why the command cannot go on, on stderr; returns the exit status for bad input."""
    print("%s: %s" % (command, sentence), file=sys.stderr)
    return 2


def folder_problem(knob, path):
    """None once `path` is a folder this user can write in (made if need be); else why not."""
    try:
        os.makedirs(path, exist_ok=True)
    except OSError as err:
        return "%s=%s: the folder cannot be made (%s)" % (knob, path, err.strerror or err)
    if not os.access(path, os.W_OK | os.X_OK):
        return "%s=%s: this user cannot write in it" % (knob, path)
    return None


def command_grade(args):
    os.umask(0o022)  # the builds' outputs must be readable by the uid that runs the tests
    if not os.path.isdir(args.submissions):
        return refuse("make grade", "%s is not a folder" % args.submissions)
    out = os.path.abspath(args.out)
    class_folder = os.path.realpath(args.submissions)
    if os.path.commonpath([os.path.realpath(out), class_folder]) == class_folder:
        return refuse("make grade", "OUT=%s is inside the submissions (SUBMISSIONS=%s), or that "
                      "folder itself: the next run would grade what this one writes as a "
                      "student's work. Give an OUT outside it" % (args.out, args.submissions))
    try:
        found, skipped_entries = submissions_module.discover(args.submissions)
    except OSError as err:
        return refuse("make grade", "SUBMISSIONS=%s cannot be read (%s)" % (
            args.submissions, err.strerror or err))
    if not found:
        return refuse("make grade", "SUBMISSIONS=%s holds no submission: it needs a folder, a "
                      ".zip or a .tar.gz per student, named after them%s" % (
                          args.submissions, "".join("\n  skipped " + entry
                                                    for entry in skipped_entries[:10])))
    if args.slice:
        index, count = (int(x) for x in args.slice.split("/"))
        class_size = len(found)
        found = [s for i, s in enumerate(found) if i % count == index]
        if not found:
            print("slice %s of a class of %d holds no student: nothing to grade" % (
                args.slice, class_size))
            return 0
    scratch_parent = os.path.abspath(args.scratch or tempfile.gettempdir())
    problem = folder_problem("OUT", out) or folder_problem("SCRATCH", scratch_parent)
    if problem:
        return refuse("make grade", problem)
    os.makedirs(os.path.join(out, "students"), exist_ok=True)
    grader = Grader(args)
    protected = [grader.course.root, os.path.realpath(args.submissions), os.path.realpath(out)]

    def interrupt(signum, frame):
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, interrupt)
    try:
        grader.prepare(protected, scratch_parent)
    except (course_module.CourseError, RuntimeError, KeyboardInterrupt) as err:
        if getattr(grader, "scratch", None):
            shutil.rmtree(grader.scratch, ignore_errors=True)
        if isinstance(err, KeyboardInterrupt):
            print("\ninterrupted before any student was graded", file=sys.stderr)
            return 130
        print("make grade: %s" % err, file=sys.stderr)
        return 2
    exercise_ids = list(grader.course.exercises)
    for submission in found:  # small files, read in memory: what is graded, and its fingerprint
        submissions_module.read_files(submission, exercise_ids)
    todo = [s for s in found if args.regrade or
            not results.is_graded(out, s.student, s.fingerprint())]
    already = len(found) - len(todo)

    if not grader.gpus:
        where = "no CUDA device (%s): exercises are built and checked, not run" % grader.gpu_note
    else:
        where = "GPUs: %s (%s)" % (",".join(grader.gpus), grader.gpu_note)
        if args.per_gpu > 1:
            where += ", up to %d test programs at a time on each" % args.per_gpu
    print("grading %d submission%s of %d exercise%s; %s" % (
        len(todo), "" if len(todo) == 1 else "s", len(exercise_ids),
        "" if len(exercise_ids) == 1 else "s", where))
    print("sandbox: " + grader.confinement.describe())
    for note in grader.confinement.notes:
        print("note: sandbox " + note)
    if args.unsafe_skip_static_checks:
        print("warning: static checks are off (--unsafe-skip-static-checks): self-test only")
    for entry in skipped_entries:
        print("note: skipped %s" % entry)

    lock = threading.Lock()
    records = results.load_records(out)
    state = {"graded": 0, "complete": 0}

    def write(record):
        try:
            results.write_student(out, record)
        except (OSError, UnicodeError) as err:  # this student's alone: the others go on
            print("make grade: %s's files could not be written in %s (%s); the student is "
                  "not graded" % (record.student, out, err), file=sys.stderr, flush=True)
            return
        with lock:
            records[record.student] = record.to_json()
            results.write_atomically(os.path.join(out, "grades.csv"),
                                     results.gradebook_csv(records, exercise_ids))
            state["graded"] += 1
            state["complete"] += record.complete
            print(results.student_line(record), flush=True)

    started = time.monotonic()
    # PER_GPU test programs at a time on each GPU, each in a lane with a uid of its own. A lane
    # takes the next student, runs its exercises' tests and writes its record.
    slots = [(slot, lane) for slot in range(len(grader.gpus)) for lane in range(args.per_gpu)]
    slots = slots or [(None, 0)]
    ahead = threading.Semaphore(args.jobs + 2 * len(slots))
    order = queue.Queue()
    builders = concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs)

    def feed():
        for submission in todo:
            ahead.acquire()
            if grader.stop.is_set():
                break
            try:
                prepared = grader.prepare_student(submission, builders)
            except Exception as err:  # a lane takes it, and says so as a grader error
                prepared = err
            order.put((submission, prepared))
        for _ in slots:
            order.put(None)

    def finish(student):
        try:
            if not student.failed and not grader.stop.is_set():
                write(student.record())
        finally:
            shutil.rmtree(os.path.join(grader.scratch, student.submission.student),
                          ignore_errors=True)
            ahead.release()

    def take_student(item, slot, lane):
        submission, prepared = item
        try:
            if isinstance(prepared, Exception):
                raise prepared
            student = StudentRun(submission, prepared)
        except Exception:
            print("grader error on %s:\n%s" % (submission.student, traceback.format_exc()),
                  file=sys.stderr)
            shutil.rmtree(os.path.join(grader.scratch, submission.student), ignore_errors=True)
            ahead.release()
            return
        if student.runnable:
            outcomes = None
            try:
                outcomes = grader.run_student(student.runnable, student.started, slot, lane)
            except Exception:  # a grader bug must not cost the other students
                print("grader error on %s:\n%s" % (student.submission.student,
                                                     traceback.format_exc()),
                      file=sys.stderr)
            student.tests_done(outcomes)
        finish(student)

    def work(slot, lane):
        while True:
            item = order.get()
            if item is None:
                return
            take_student(item, slot, lane)

    threads = [threading.Thread(target=feed, daemon=True)] + [
        threading.Thread(target=work, args=slot, daemon=True) for slot in slots]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            while thread.is_alive():
                thread.join(0.2)
    except KeyboardInterrupt:
        grader.stop.set()
        grader.confinement.kill_everything()
        shutil.rmtree(grader.scratch, ignore_errors=True)
        print("\ninterrupted: %d student%s graded and written in this run; run again to "
              "grade the rest" % (state["graded"], "" if state["graded"] == 1 else "s"),
              file=sys.stderr, flush=True)
        sys.stdout.flush()
        os._exit(130)  # what was written is whole; nothing in flight is worth waiting for
    builders.shutdown()
    shutil.rmtree(grader.scratch, ignore_errors=True)
    print()
    notes = grader.confinement.notes
    print(results.summary(records, exercise_ids, time.monotonic() - started, state["graded"],
                          already, complete_now=state["complete"]))
    if state["graded"]:
        print("\nWritten: %s (gradebook), %s/NAME/feedback.md and results.json" % (
            os.path.join(args.out, "grades.csv"), os.path.join(args.out, "students")))
    else:
        print("\nNothing written: every student in it is graded already.")
    graded = {s.student for s in found}
    complete = all(records.get(s, {}).get("complete") for s in graded)
    return 0 if complete else 1


def command_report(args):
    out = os.path.abspath(args.out)
    records = results.load_records(out)
    if not records:
        print("make grade-report: %s holds no graded student (no %s): give the OUT that "
              "make grade wrote" % (args.out, os.path.join(args.out, "students", "*",
                                                             "grade.json")), file=sys.stderr)
        return 2
    course = course_module.Course(os.path.join(HERE, ".."), args.course_build)
    exercise_ids = course.list_exercises()
    try:
        results.write_atomically(os.path.join(out, "grades.csv"),
                                 results.gradebook_csv(records, exercise_ids))
    except OSError as err:
        return refuse("make grade-report", "OUT=%s: grades.csv cannot be written there (%s)" % (
            args.out, err.strerror or err))
    print(results.summary(records, exercise_ids))
    return 0


def exercise_of_path(path):
    """exercises/ch01-memory/roundtrip.c, solutions/..., build/mutants/ch01-memory/roundtrip--x.c."""
    parts = os.path.normpath(path).split(os.sep)
    if len(parts) < 2 or not parts[-1].endswith(".c"):
        return None
    return parts[-2] + "/" + parts[-1][:-2].split("--")[0]


def command_inspect(args):
    """Compiles and checks files as if submitted, in parallel; links and runs nothing.

    Each file's exercise comes from its path, as in the course's trees. The
    self-test uses this to see that every solution, stub and mutant passes the
    static checks, so the allow-list keeps up with the course.
    """
    os.umask(0o022)
    args.gpus = "none"
    grader = Grader(args)
    scratch_parent = os.path.abspath(args.scratch or tempfile.gettempdir())
    try:
        grader.prepare([grader.course.root], scratch_parent)
    except (course_module.CourseError, RuntimeError) as err:
        print("inspect: %s" % err, file=sys.stderr)
        return 2

    def one(path):
        exercise = grader.course.exercises.get(exercise_of_path(path))
        if exercise is None:
            return path, "not an exercise of this course"
        folder = tempfile.mkdtemp(dir=grader.scratch)
        os.chmod(folder, 0o755)
        with open(path, "rb") as f:
            build = grader.build(folder, exercise, f.read(), link=False)
        shutil.rmtree(folder, ignore_errors=True)
        return path, None if build.status == "built" else "%s: %s" % (
            build.status, "; ".join(build.details))

    status = 0
    try:
        with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
            for path, problem in pool.map(one, args.files):
                if problem:
                    status = 1
                    print("not accepted %s: %s" % (path, problem))
                else:
                    print("accepted %s" % path)
    finally:
        shutil.rmtree(grader.scratch, ignore_errors=True)
    return status


# The options that take a count, by the name of their make knob, and what they count.
COUNTS = {"jobs": ("JOBS", "builds at a time"),
          "per_gpu": ("PER_GPU", "test programs at a time on one GPU"),
          "test_timeout": ("TEST_TIMEOUT", "seconds per test"),
          "student_timeout": ("STUDENT_TIMEOUT", "seconds for all of a student's builds and tests")}
COMMAND_NAMES = {"grade": "make grade", "report": "make grade-report",
                 "inspect": "grade.py inspect"}


def knob_problem(args):
    """A sentence naming the make knob whose value is wrong, or None; makes counts numbers."""
    for option, (knob, counts) in COUNTS.items():
        value = getattr(args, option, None)
        if value is None:
            continue
        if not re.fullmatch(r"\s*\d+\s*", value) or int(value) < 1:
            return "%s=%s: give a whole number of at least 1 (%s)" % (knob, value, counts)
        setattr(args, option, int(value))
    if getattr(args, "slice", None):
        parts = re.fullmatch(r"(\d+)/(\d+)", args.slice)
        if not parts or int(parts.group(1)) >= int(parts.group(2)):
            return ("SLICE=%s: give i/n, slice i of n with 0 <= i < n (SLICE=0/4 to SLICE=3/4)"
                    % args.slice)
    return None


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command")
    grade = commands.add_parser("grade")
    report = commands.add_parser("report")
    inspect = commands.add_parser("inspect")
    for sub in (grade, report, inspect):
        sub.add_argument("--course-build", default="build")
        sub.add_argument("--cc")
        sub.add_argument("--cflags")
        sub.add_argument("--cppflags")
        sub.add_argument("--ldflags")
        sub.add_argument("--ldlibs")
        sub.add_argument("--cuda-home")
        sub.add_argument("--jobs", default=str(os.cpu_count() or 2))
        sub.add_argument("--gpus")
        sub.add_argument("--scratch")
        sub.add_argument("--test-timeout")
        sub.add_argument("--student-timeout", default="1800")
        sub.add_argument("--per-gpu")  # default: lanes_per_gpu
        sub.add_argument("--slice")
        sub.add_argument("--regrade", action="store_true")
        sub.add_argument("--unsafe-skip-static-checks", action="store_true",
                         help=argparse.SUPPRESS)
        sub.add_argument("--trust-submissions", action="store_true",
                         help="grade even where submissions cannot be confined (README)")
    grade.add_argument("--submissions", required=True)
    grade.add_argument("--out", default="grades")
    report.add_argument("--out", default="grades")
    inspect.add_argument("files", nargs="+")
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    problem = knob_problem(args)
    if problem:
        return refuse(COMMAND_NAMES[args.command], problem)
    return {"grade": command_grade, "report": command_report,
            "inspect": command_inspect}[args.command](args)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

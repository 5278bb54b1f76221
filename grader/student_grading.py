"""student_grading.py - one student's exercises built and run, for make grade (class_runner.py).

Each exercise is built on its own in a scratch folder with the course's Makefile, under the
compile guard (compile_guard.py), and its object inspected before it is linked
(static_checks.py); the student's built exercises then run together in one confined test host
(sandbox.py), whose result channel carries each exercise's record. grader/README.md has the
whole design and its limits.
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import course as course_module  # noqa: E402
import gpu_locks  # noqa: E402
import results  # noqa: E402
import sandbox  # noqa: E402
import scratch as scratch_module  # noqa: E402
import static_checks  # noqa: E402
from machine import claim_uids, find_gpus, lanes_per_gpu  # noqa: E402
from results import parse_records  # noqa: E402

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
DEFAULT_MEMORY_SHARE_MB = 4096  # a test program's memory where nvidia-smi cannot say
SMALLEST_MEMORY_SHARE_MB = 1024  # what the course's tests need at most, with room
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
            # Niced: a build has no clock to beat, and the tests beside it do (a timed test's
            # copies by the CPU, a test's time limit).
            return self.confinement.run(["nice", "-n", "10"] + make + targets, view, env,
                                        BUILD_TIMEOUT, limits, uid,
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
            errors = guard.get("diagnostics") or course_module.compiler_errors(made.output, view)
            return Build("does_not_compile", errors.splitlines()[:12] or [
                "the compiler stopped (exit status %s)" % made.returncode] + course_module.last_lines(
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
            errors = course_module.compiler_errors(made.output, view).splitlines()[:11]
            return Build("does_not_compile", ["it compiles, but does not link:"] + (
                errors or course_module.last_lines(made.output, view)))
        return Build("built", module=module, source=source)

    # --- Running one exercise's tests ---------------------------------------------------------

    def _run_dir(self, folder, slot, lane=0):
        run_dir = os.path.join(folder, "run")
        os.makedirs(run_dir, exist_ok=True)
        self._own(run_dir, self._worker_uid(slot, lane))
        return run_dir

    def _run_env(self, run_dir, gpu, lock_variables=None):
        home = self.confinement.home(run_dir)  # the view's private /tmp, where there is one
        env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": home, "TMPDIR": home,
               "CK_TMPDIR": home, "CK_FORK": "yes", "NO_COLOR": "1", "LC_ALL": "C",
               "COURSE_TEST_TIMEOUT": str(self.test_timeout), "CUDA_VISIBLE_DEVICES": gpu,
               "CUDA_DEVICE_ORDER": "PCI_BUS_ID", "CUDA_CACHE_PATH": os.path.join(home, ".nv")}
        if "LD_LIBRARY_PATH" in os.environ:  # where containers keep the driver's library
            env["LD_LIBRARY_PATH"] = os.environ["LD_LIBRARY_PATH"]
        if "CUDA_DEVICE_MAX_CONNECTIONS" in os.environ:  # the work queues, as make check's
            env["CUDA_DEVICE_MAX_CONNECTIONS"] = os.environ["CUDA_DEVICE_MAX_CONNECTIONS"]
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
            if self.args.skip_timed:
                command.append("--skip-timed")
        lock_variables, lock_fds = gpu_locks.open_for_host(self.scratch, gpu)
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
            outcome = outcome_of_record(exercise, record, run, timeout, tests, note)
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
            outcomes = {exercise.id: results.Outcome(exercise, why[0], details=[why[1]],
                                                     needs_gpu=slot is None)
                        for exercise, _, _ in built}
            if slot is None:  # what needs no GPU to know is decided all the same
                outcomes.update({exercise.id: results.Outcome(exercise, "not_started")
                                 for exercise, _, build in built
                                 if self.course.is_untouched_stub(exercise.id, build.source)})
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


def outcome_of_record(exercise, record, run, timeout, tests, note):
    """What a test host's record (None: none came) says of an exercise; `timeout` and `tests` are
    the host's limit and its tests' count, for the words."""
    if record is None and run.timed_out:
        return results.Outcome(exercise, "not_run", details=[
            "not graded yet: the tests did not finish within %d s, the sum of the time limits of "
            "the student's %d tests, since something else held the GPU up; they are run again"
            % (timeout, tests)], note=note)
    if record is None:
        # The judge runs no learner code, and the learner's code cannot signal it: a host that
        # ended early ended for a reason of the machine's.
        return results.Outcome(exercise, "not_run", details=[
            "not graded yet: the test program stopped before it reported these results (exit "
            "status %s), which the code under test cannot make it do; they are run again"
            % run.returncode], note=note)
    if record["status"] == "no_gpu":
        return results.Outcome(exercise, "not_run", details=[
            "the test program found no CUDA device (%s)" % record.get("note", "")],
            needs_gpu=True)
    if record["status"] == "too_few_gpus":
        # Every lane has one GPU of its own: an exercise about several waits for a grader that
        # gives a lane more (grader/README.md, "Exercises about two GPUs").
        return results.Outcome(exercise, "not_run", details=[
            "not graded yet: its tests need more GPUs than make grade gives a test program, "
            "which is one (%s)" % record.get("note", "")], needs_gpu=True, more_gpus=True)
    if record["status"] == "unloadable":
        return results.Outcome(exercise, "does_not_compile", details=[record.get("note", "")])
    return results.Outcome(exercise, record["status"], tests=record["tests"], note=note)


def read_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


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

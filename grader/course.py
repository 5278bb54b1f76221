"""course.py - what the grader takes from the course: exercises, rubrics, objects, rules.

Nothing here is listed by hand. The exercises come from `make list-exercises`;
each one's rubric, title and hint from its test module (`build/tests/host
--module ... --rubric --json`, which runs no test); the functions a submission
may define from its header (gcc -aux-info, a rule in the Makefile); the
course's libraries, test modules and dispatchers from the Makefile's own rules.

A submission's exercise is built in a folder of its own, the "view": links to
the course's Makefile, mk/, common/, harness/ and tests/, the exercise's
headers, copies of the course's built objects, and the student's file where
the learner's would be. `make` run there compiles the student's file with the
very rule `make check` uses, and links it with the exercise's dispatchers into
a learner module, which the test host's worker loads (harness/host/remote.h); the
exercise's tests are the course's own test module, built once.
"""

import glob
import json
import os
import shutil
import subprocess

from static_checks import defined_symbols, header_api

VIEW_LINKS = ("Makefile", "mk", "common", "harness", "tests", ".deps")

class Exercise:
    def __init__(self, exercise_id, record):
        self.id = exercise_id
        self.title = record.get("title", "")
        self.hint = record.get("hint", "")
        self.tests = [(t["name"], int(t["points"])) for t in record.get("tests", [])]
        self.max_points = sum(points for _, points in self.tests)
        self.api = []  # functions the header declares
        self.course_defined = set()  # what the test, the harness and common/ define


class CourseError(RuntimeError):
    pass


class Course:
    def __init__(self, root, build="build", make_vars=None, make="make"):
        self.root = os.path.realpath(root)
        self.build = build
        self.make_vars = dict(make_vars or {})
        self.make_command = make.split()
        self.exercises = {}  # id -> Exercise, in course order
        self.common_symbols = set()

    def make(self, *targets, cwd=None, env=None, keep_going=False, extra_vars=None):
        variables = dict(self.make_vars, BUILD=self.build, **(extra_vars or {}))
        command = self.make_command + ["-s", "--no-print-directory"] + (
            ["-k"] if keep_going else []) + ["%s=%s" % kv for kv in variables.items() if
                                              kv[1] is not None] + list(targets)
        return subprocess.run(command, cwd=cwd or self.root, env=env or clean_make_env(),
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              universal_newlines=True, errors="replace")

    def path(self, *parts):
        return os.path.join(self.root, *parts)

    def built(self, *parts):
        return os.path.join(self.root, self.build, *parts)

    def is_untouched_stub(self, exercise_id, source):
        """Whether the file at `source` is the course's stub as handed out (line ends and the
        blank lines around it aside). Such a file is not started, with or without a GPU: the
        self-test (selftest/sections/30-exercises.sh) sees every stub pass no test and be
        reported as not started, so no test run can say otherwise."""
        def text(path):
            with open(path, "rb") as f:
                return f.read().replace(b"\r\n", b"\n").strip()
        try:
            return text(source) == text(self.path("exercises", exercise_id + ".c"))
        except OSError:
            return False

    def list_exercises(self):
        run = self.make("list-exercises")
        if run.returncode != 0:
            raise CourseError("make list-exercises failed:\n" + run.stdout)
        return [line.strip() for line in run.stdout.splitlines() if line.strip()]

    def resolve_toolchain(self):
        """Fixes CC and CUDA_HOME to what this make resolves here.

        The submissions' builds run with a bare environment, where a CUDA_HOME
        set in the instructor's shell would be missing; without this they would
        look for the toolkit elsewhere than the course's own build did.
        """
        run = self.make("list-toolchain")
        if run.returncode != 0:
            raise CourseError("make list-toolchain failed:\n" + run.stdout)
        for line in run.stdout.splitlines():
            name, _, value = line.partition("=")
            if name in ("CC", "CUDA_HOME") and value and not self.make_vars.get(name):
                self.make_vars[name] = value

    def prepare(self, exercise_ids=None):
        """Builds what grading needs from the course and reads every rubric."""
        ids = exercise_ids or self.list_exercises()
        self.resolve_toolchain()
        libraries = [os.path.join(self.build, "lib", name)
                     for name in ("libharness.a", "libworker.a", "libcommon.a")]
        per_exercise = []
        for e in ids:
            per_exercise += [os.path.relpath(self.test_module(e), self.root),
                             os.path.join(self.build, "obj", "gen", e + ".dispatch.o"),
                             os.path.join(self.build, "gen", e + ".dispatch.c"),
                             os.path.join(self.build, "api", e + ".aux")]
        renderer = os.path.join(self.build, "tools", "report_block")  # the report's blocks
        host = os.path.join(self.build, "tests", "host")  # the judge and the checker
        worker = os.path.join(self.build, "tests", "worker")  # runs the learner's modules
        run = self.make(*(libraries + per_exercise + [renderer, host, worker]))
        if run.returncode != 0:
            raise CourseError("the course's own harness and tests did not build:\n" + run.stdout)
        self.common_symbols = defined_symbols([self.built("lib", "libcommon.a")])
        course_wide = defined_symbols([self.built("lib", "libworker.a"),
                                       self.built("lib", "libcommon.a")])
        for exercise_id in ids:
            exercise = Exercise(exercise_id, self._rubric(exercise_id))
            dispatch = self.built("obj", "gen", exercise_id + ".dispatch.o")
            exercise.course_defined = course_wide | defined_symbols([dispatch])
            exercise.api = self._api(exercise_id)
            self.exercises[exercise_id] = exercise
        return self.exercises

    def test_module(self, exercise_id):
        """The exercise's tests and the stubs of its functions: the course's, built once."""
        return self.built("modules", "tests", exercise_id + ".so")

    def _rubric(self, exercise_id):
        # A record of this process's own: two graders may start at once (the self-test runs
        # two), and each host writes its record beside it and renames it into place.
        folder = self.built("grade", "rubric", os.path.dirname(exercise_id))
        os.makedirs(folder, exist_ok=True)
        record_path = os.path.join(folder, "%s.%d.json" % (os.path.basename(exercise_id),
                                                          os.getpid()))
        env = dict(clean_make_env(), CUDA_VISIBLE_DEVICES="")
        try:
            run = subprocess.run([self.built("tests", "host"), "--module",
                                  self.test_module(exercise_id), "--rubric", "--json",
                                  record_path],
                                 env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                 universal_newlines=True, errors="replace")
            if run.returncode == 0:
                with open(record_path) as f:
                    return json.load(f)
        finally:
            if os.path.exists(record_path):
                os.unlink(record_path)
        raise CourseError("the test module of %s did not load, so its rubric is unknown: %s"
                          % (exercise_id, run.stderr.strip()[:300]))

    def _api(self, exercise_id):
        """The functions exercise_id's header declares; failing that, what its stub defines."""
        aux = self.built("api", exercise_id + ".aux")
        if os.path.exists(aux):
            with open(aux, errors="replace") as f:
                names = header_api(f.read(), self.path("exercises", exercise_id + ".h"))
            if names:
                return names
        stub = self.built("obj", "exercises", exercise_id + ".o")
        return sorted(defined_symbols([stub])) if os.path.exists(stub) else []

    # --- A submission's exercise --------------------------------------------------------

    def make_view(self, folder, exercise_id, source):
        """Lays out `folder`/view for building exercise_id from `source` (bytes)."""
        view = os.path.join(folder, "view")
        chapter, name = exercise_id.split("/")
        os.makedirs(os.path.join(view, "exercises", chapter))
        for entry in VIEW_LINKS:
            if os.path.exists(self.path(entry)):
                os.symlink(self.path(entry), os.path.join(view, entry))
        for header in glob.glob(self.path("exercises", chapter, "*.h")):
            os.symlink(header, os.path.join(view, "exercises", chapter,
                                            os.path.basename(header)))
        with open(os.path.join(view, "exercises", chapter, name + ".c"), "wb") as f:
            f.write(source)
        # The learner module's other prerequisites, up to date: make compiles the student's file
        # and links it with the exercise's dispatchers, and builds nothing of the course.
        built = [os.path.join("api", exercise_id + ".aux"),
                 os.path.join("gen", exercise_id + ".dispatch.c"),
                 os.path.join("obj", "gen", exercise_id + ".dispatch.o")]
        for relative in built:  # copies keep their times, so make finds them up to date
            destination = os.path.join(view, self.build, relative)
            os.makedirs(os.path.dirname(destination), exist_ok=True)
            shutil.copy2(self.built(relative), destination)
        return view

    def view_sources(self, exercise_id):
        """The course's folders and files a view's links point into: all a build reads of it."""
        paths = [self.path(entry) for entry in VIEW_LINKS if os.path.exists(self.path(entry))]
        return paths + [self.path("exercises", exercise_id.split("/")[0]),
                        os.path.dirname(os.path.abspath(__file__))]  # the compile guard

    def libraries(self):
        """Folders outside /usr that builds and test programs load from: the CUDA toolkit,
        Check unpacked into .deps/, the driver's library where a container keeps it."""
        folders = [self.make_vars.get("CUDA_HOME"), self.path(".deps")]
        folders += os.environ.get("LD_LIBRARY_PATH", "").split(":")
        # A compiler installed outside /usr (/opt/gcc/bin/gcc): its whole prefix, which holds
        # what it runs (cc1, the assembler's wrappers) and its own libraries.
        compiler = shutil.which(self.make_vars.get("CC") or os.environ.get("CC") or "cc")
        if compiler:
            folders.append(os.path.dirname(os.path.dirname(os.path.realpath(compiler))))
        folders = [f for f in folders if f and os.path.isdir(f)]
        # Both names of a linked folder: programs may know either (an rpath, the loader).
        return sorted({os.path.abspath(f) for f in folders} | {os.path.realpath(f)
                                                                for f in folders})

    def object_target(self, exercise_id):
        return os.path.join(self.build, "obj", "exercises", exercise_id + ".o")

    def module_target(self, exercise_id):
        """The student's file and the exercise's dispatchers: the learner module the worker
        loads."""
        return os.path.join(self.build, "modules", "exercises", exercise_id + ".so")


def clean_make_env(extra=None):
    """The grader's environment for make, without what the outer make passed down."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES", "MAKE")}
    env.update(extra or {})
    return env


COMPILER_LINES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                              "harness", "report", "compiler_lines.awk")


def compiler_errors(output, view):
    """The compiler's and linker's first messages, through the filter make check uses."""
    text = output.decode("utf-8", errors="replace").replace(view.rstrip("/") + "/", "")
    run = subprocess.run(["awk", "-f", COMPILER_LINES], input=text, stdout=subprocess.PIPE,
                         universal_newlines=True, errors="replace")
    return run.stdout.rstrip("\n")


def last_lines(output, view, count=6):
    """The end of a build's output, when it holds no compiler message to show."""
    text = output.decode("utf-8", errors="replace").replace(view.rstrip("/") + "/", "")
    return [line for line in text.splitlines() if line.strip()][-count:]

#!/usr/bin/env python3
"""grade.py - `make grade`: grade a class's submissions against the course's tests.

    grade.py grade --submissions DIR --out DIR [--regrade] [--jobs N] [--gpus LIST] ...
    grade.py report --out DIR          rebuild grades.csv and the summary from OUT
    grade.py inspect FILE...           build course files as submissions, run nothing: accepted?

The command line: what it checks of its knobs and folders before anything is written, and
the run's first and last lines. The grading itself, student by student, is class_runner.py's:
the exercise's file taken from each submission (submissions.py), built into a learner module
with the course's Makefile in a scratch folder under the compile guard (course.py,
compile_guard.py), inspected before linking (static_checks.py), run in the confined test host
(sandbox.py), and written (results.py). grader/README.md has the whole design and its limits.

Exit status: 0 every student graded; 1 some not (no GPU, time, a grader error);
2 the course or the command line is wrong.
"""

import argparse
import concurrent.futures
import os
import re
import shlex
import shutil
import signal
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import course as course_module  # noqa: E402
import results  # noqa: E402
import submissions as submissions_module  # noqa: E402
from class_runner import ClassRun  # noqa: E402
from machine import FIRST_UID, claim_uids, uids_running  # noqa: E402,F401 (the tests use them)
from results import parse_records  # noqa: E402,F401
from student_grading import DEFAULT_TEST_TIMEOUT, HOST_FILE_BYTES, Grader  # noqa: E402,F401

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


def select_class(args):
    """(submissions found, entries skipped, OUT, the scratch folder's parent), or the exit status
    with which make grade refuses the command line, having said why."""
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
    return found, skipped_entries, out, scratch_parent


def announce(grader, args, todo, exercise_ids, skipped_entries):
    """The run's first lines: what it grades, where, in what sandbox."""
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
    if args.skip_timed:
        print("warning: the timed tests are not run (--skip-timed): self-test only")
    for entry in skipped_entries:
        print("note: skipped %s" % entry)


def command_grade(args):
    os.umask(0o022)  # the builds' outputs must be readable by the uid that runs the tests
    selected = select_class(args)
    if not isinstance(selected, tuple):
        return selected
    found, skipped_entries, out, scratch_parent = selected
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
    # The students with the most files first (by name among equals): a lane grades a student's
    # exercises one after another, so the longest student started last would end the run alone.
    todo.sort(key=lambda s: -len(s.files))
    announce(grader, args, todo, exercise_ids, skipped_entries)
    started = time.monotonic()
    run = ClassRun(grader, args, out, todo, exercise_ids)
    run.run()
    print()
    print(results.summary(run.records, exercise_ids, time.monotonic() - started, run.graded,
                          len(found) - len(todo), complete_now=run.complete))
    if run.graded:
        print("\nWritten: %s (gradebook), %s/NAME/feedback.md, and results.json for each student "
              "graded in full" % (os.path.join(args.out, "grades.csv"),
                                  os.path.join(args.out, "students")))
    else:
        print("\nNothing written: every student in it is graded already.")
    waiting = [s.student for s in found if not run.records.get(s.student, {}).get("complete")]
    more_gpus = [student for student in waiting if any(
        exercise.get("more_gpus") for exercise in
        run.records.get(student, {}).get("exercises", {}).values())]
    if waiting:
        print(what_next(args, len(waiting), len(found) - len(waiting), bool(grader.gpus),
                        len(more_gpus)))
    return 1 if waiting else 0


def what_next(args, waiting, graded, gpus, more_gpus=0):
    """The closing lines while students wait: the command that grades them, and what it keeps."""
    command = "make grade SUBMISSIONS=%s OUT=%s%s" % (
        shlex.quote(args.submissions), shlex.quote(args.out),
        " SLICE=" + args.slice if args.slice else "")
    if gpus and more_gpus:
        # Said plainly: running again on this grader will not help them.
        return ("\n%s not graded yet, %s of them because an exercise needs more GPUs than a "
                "grading lane has:\nmake grade gives each lane one GPU, so those exercises wait "
                "(grader/README.md, \"Exercises about\ntwo GPUs\"). OUT keeps everything else "
                "this run decided." % (results.count_students(waiting),
                                       "all" if more_gpus == waiting else more_gpus))
    if gpus:
        why, where = "something held their tests up", "Run"
    else:
        why, where = "their tests need a GPU", "On a machine with a CUDA device, run"
    kept = ("%s graded in full, skipped next time" % results.count_students(graded) if graded
            else "nobody is graded in full yet")
    return ("\n%s not graded yet: %s.\n%s the same command, with the same OUT:\n    %s\n"
            "OUT keeps what this run decided: %s; the others are built again\n"
            "(compile results are not reused: that machine's compiler decides) and their "
            "tests run." % (results.count_students(waiting), why, where, command, kept))


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
        # The self-test's: the timed tests are not run, each failing "not run" (the known
        # mistakes of its agreement class, whose timed tests the exercises' section skips too).
        sub.add_argument("--skip-timed", action="store_true", help=argparse.SUPPRESS)
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

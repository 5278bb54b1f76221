#!/usr/bin/env python3
"""check_grades.py - compares what make grade wrote with what each student deserves.

    check_grades.py EXPECTED.tsv OUT [--no-gpu] [--subset]

EXPECTED.tsv comes from grader/make_class.py (its docstring has the format).
Prints one line per student, "ok STUDENT: ..." or "FAIL STUDENT: ...", and a
line per check of the output as a whole; exits 1 on any failure. With
--no-gpu the grader could build but not run: exercises it would have run must
be "not graded yet", the rest exactly as expected. With --subset the gradebook
may hold other students too. Where the tests ran on a device that runs streams
in call order (build/tools/gpu_probe --asynchronous says so), no solution can
pass a test of overlap, so "max" means what the course's own test program gives
the solution; on the stand-in runtime, whose timing follows this machine's CPUs,
"max" leaves out the points of the timed tests that failed.

Expected points "oracle:FILE" are what the course's own test program for FILE
(a mutant or a stub, built by make) scores when run directly: the grader must
agree with make check.
"""

import collections
import csv
import json
import os
import subprocess
import sys

COURSE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DECIDED_WITHOUT_RUNNING = ("missing", "does_not_compile", "rejected")


def oracle_points(source, cache={}):
    """Points the course's own test host gives a mutant or stub file (make check's)."""
    if source in cache:
        return cache[source]
    tree, rest = source.split("/", 1)
    if tree == "build":  # a mutant, made from its patch: build/mutants/CHAPTER/NAME.c
        tree, rest = rest.split("/", 1)
    learner = os.path.join("build", "modules", tree, rest[:-2] + ".so")
    tests = os.path.join("build", "modules", "tests", rest[:-2].split("--")[0] + ".so")
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MAKELEVEL")}
    subprocess.run(["make", "-s", "--no-print-directory", learner, tests, "build/tests/host",
                    "build/tests/worker"], cwd=COURSE, env=env,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    record_path = os.path.join(COURSE, "build", "selftest", "oracle-%s.json"
                               % rest.replace("/", "_"))
    subprocess.run([os.path.join(COURSE, "build", "tests", "host"), "--module", tests,
                    "--learner", learner, "--json", record_path], cwd=COURSE, env=env,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    with open(record_path) as f:
        cache[source] = json.load(f)["points"]
    return cache[source]


def timed_tests(exercise, cache={}):
    """The names of the exercise's timed tests, as the test host reads its rubric."""
    if exercise not in cache:
        rubric = subprocess.run([os.path.join(COURSE, "build", "tests", "host"), "--module",
                                 os.path.join(COURSE, "build", "modules", "tests", exercise + ".so"),
                                 "--rubric"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                universal_newlines=True).stdout
        cache[exercise] = {fields[3] for fields in (line.split("\t") for line in rubric.splitlines())
                           if len(fields) >= 5 and fields[0] == "test" and fields[4] == "timed"}
    return cache[exercise]


def on_the_stand_in():
    """Whether the device is the stand-in runtime, whose timing follows this machine's CPUs."""
    probe = subprocess.run([os.path.join(COURSE, "build", "tools", "gpu_probe")],
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                           universal_newlines=True)
    return probe.returncode == 0 and probe.stdout.startswith("Stand-in")


def streams_run_in_call_order():
    """Whether the device runs each stream's work before the call that queued it returns."""
    probe = subprocess.run([os.path.join(COURSE, "build", "tools", "gpu_probe"), "--asynchronous"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return probe.returncode != 0


def expected_points(spec, outcome):
    tests = outcome["tests"]
    if spec == "max":
        return outcome["max_points"]
    if spec.startswith("all-but:"):
        return sum(t["points"] for t in tests if t["name"] != spec[8:])
    if spec.startswith("only:"):
        return sum(t["points"] for t in tests if t["name"] == spec[5:])
    if spec.startswith("oracle:"):
        return oracle_points(spec[7:])
    if spec == "any":
        return outcome["points"]
    return int(spec)


def read_student(folder):
    """(grade.json, results.json or None, feedback.md) of one student; OSError, ValueError."""
    with open(os.path.join(folder, "grade.json")) as f:
        record = json.load(f)
    with open(os.path.join(folder, "feedback.md")) as f:
        feedback = f.read()
    gradescope = None  # a score: only for a student graded in full
    if record.get("complete") or os.path.exists(os.path.join(folder, "results.json")):
        with open(os.path.join(folder, "results.json")) as f:
            gradescope = json.load(f)
    return record, gradescope, feedback


def not_graded_problems(record, gradescope, feedback, total):
    """What a student not graded yet must not have: a score anywhere (grader/results.py)."""
    if record.get("complete"):
        return [] if total == str(record.get("points")) else [
            "grades.csv's total is %r, grade.json's %s" % (total, record.get("points"))]
    problems = []
    if gradescope is not None:
        problems.append("not graded yet, yet results.json gives a score of %s"
                        % gradescope.get("score"))
    waiting = [o for o in record["exercises"].values() if o["status"] == "not_run"]
    why = ("some exercises need more GPUs than a grading lane has"
           if any(o.get("more_gpus") for o in waiting)
           else "the tests need a GPU" if any(o.get("needs_gpu") for o in waiting)
           else "some tests are to be run again")
    if "**Not graded yet: %s.**" % why not in feedback:
        problems.append("the feedback does not say 'Not graded yet: %s'" % why)
    if " of %d points**" % record.get("max_points", -1) in feedback:
        problems.append("the feedback gives points out of the total")
    if total != "not graded yet":
        problems.append("grades.csv's total is %r, not 'not graded yet'" % total)
    return problems


# How this run grades: without a GPU; with streams that run in call order; on the stand-in.
Run = collections.namedtuple("Run", "no_gpu synchronous_streams stand_in")


def exercise_problems(run, exercise, outcome, wanted, feedback, cell):
    """What is wrong with one exercise's outcome, against its row of the expectations."""
    chapter = wanted.get(exercise.split("/")[0] + "/*", wanted.get("*", ("?", "?", "-")))
    points, status, phrase = wanted.get(exercise, chapter)
    if points == "?":
        return ["%s has no expectation" % exercise]
    if run.synchronous_streams and points == "max":
        points, status = "oracle:solutions/%s.c" % exercise, "any"
    elif run.stand_in and points == "max":
        # The stand-in's speed tests judge nothing (its timing model follows the CPUs that the
        # whole class shares): "max" is every point but those of timed tests that failed.
        timed = timed_tests(exercise)
        points = str(outcome["max_points"] - sum(
            t["points"] for t in outcome["tests"] if t["name"] in timed and not t["passed"]))
        status = "any"
    # The course's stub as handed out is not started, with or without a GPU.
    untouched = status == "not_started" or points == "oracle:exercises/%s.c" % exercise
    if run.no_gpu and untouched:
        points, status = "0", "not_started"
    elif run.no_gpu and status not in DECIDED_WITHOUT_RUNNING:
        if outcome["status"] != "not_run":
            return ["%s: %s without a GPU, not 'not_run'" % (exercise, outcome["status"])]
        return []
    problems = []
    want = expected_points(points, outcome)
    if outcome["points"] != want:
        problems.append("%s: %d points, not %d" % (exercise, outcome["points"], want))
    if status != "any" and outcome["status"] != status:
        problems.append("%s: %s, not %s" % (exercise, outcome["status"], status))
    if phrase != "-" and phrase not in feedback:
        problems.append("%s: the feedback does not say %r" % (exercise, phrase))
    if cell != str(outcome["points"]):
        problems.append("%s: grades.csv says %r, grade.json %d" % (exercise, cell,
                                                                     outcome["points"]))
    return problems


def main(argv):
    expected_file, out = argv[0], argv[1]
    no_gpu = "--no-gpu" in argv
    run = Run(no_gpu, not no_gpu and streams_run_in_call_order(),
              not no_gpu and on_the_stand_in())
    rows = {}
    with open(expected_file) as f:
        for line in f:
            if line.strip() and not line.startswith("#"):
                student, exercise, points, status, phrase = line.rstrip("\n").split("\t")
                rows.setdefault(student, {})[exercise] = (points, status, phrase)
    failures = 0
    with open(os.path.join(out, "grades.csv")) as f:
        gradebook = {row["student"]: row for row in csv.DictReader(f)}
    for student, wanted in sorted(rows.items()):
        folder = os.path.join(out, "students", student)
        problems = []
        try:
            record, gradescope, feedback = read_student(folder)
        except (OSError, ValueError) as err:
            print("FAIL %s: its files are missing or broken (%s)" % (student, err))
            failures += 1
            continue
        for exercise, outcome in sorted(record["exercises"].items()):
            problems += exercise_problems(run, exercise, outcome, wanted, feedback,
                                          gradebook.get(student, {}).get(exercise))
        problems += not_graded_problems(record, gradescope, feedback,
                                        gradebook.get(student, {}).get("total"))
        if not no_gpu:
            if not record.get("complete"):
                problems.append("not marked complete")
            if gradescope and gradescope.get("score") != record.get("points"):
                problems.append("results.json scores %s, grade.json %s" % (
                    gradescope.get("score"), record.get("points")))
            if gradescope and any(t.get("status") not in ("passed", "failed")
                                  for t in gradescope["tests"]):
                problems.append("results.json has a test status other than passed/failed")
        if problems:
            failures += 1
            print("FAIL %s: %s" % (student, "; ".join(problems)))
        else:
            # What the student handed in, in one short line: the exercises missing from it go
            # without saying.
            handed_in = ["%s %s %d" % (e.split("/")[-1], o["status"], o["points"])
                         for e, o in sorted(record["exercises"].items())
                         if o["status"] != "missing"]
            print("ok %s: %s" % (student, ", ".join(handed_in) or "nothing handed in"))
    unexpected = sorted(set(gradebook) - set(rows))
    if unexpected and "--subset" not in argv:
        failures += 1
        print("FAIL the gradebook has students nobody submitted: %s" % ", ".join(unexpected))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

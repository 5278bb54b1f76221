"""results.py - a student's outcomes, and what is written from them.

Per student, in OUT/students/NAME/: feedback.md (what `make check` would have
said, exercise by exercise), results.json (Gradescope's layout) and grade.json
(the grader's record, written last: a student with a complete grade.json is
graded, and a rerun skips them). OUT/grades.csv is rebuilt from the grade.json
files, so it always matches them, whichever run or Slurm task wrote them.
Every file is written to a temporary name in its folder and renamed.
"""

import csv
import io
import json
import math
import os
import re
import statistics
import subprocess
import textwrap
import threading
import time

# An exercise's status, and the words that say it, from the one list of them.
STATUSES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "harness",
                        "report", "statuses.def")


def _status_words():
    with open(STATUSES) as f:
        rows = re.findall(r'^STATUS\((\w+), "[^"]*", "([^"]*)", [01], [01]\)$', f.read(), re.M)
    if not rows:
        raise RuntimeError("%s names no status: the grader cannot word its results" % STATUSES)
    return dict(rows)


STATUS_WORDS = _status_words()
BUILD_FAILURES = ("does_not_compile", "rejected")
WAITING = ("not_run", "not_graded")  # an exercise whose points are not known yet
# What a student's feedback, line and gradebook row say in place of points not known yet: no
# number, so that nobody takes a student nobody could run for a student who scored 0.
NOT_GRADED = "not graded yet"
NO_SCORE = "\u2013"  # an en dash: "\u2013/233" on the terminal, never "0/233"


class Outcome:
    """One exercise of one student."""

    def __init__(self, exercise, status, tests=None, details=None, note="", needs_gpu=False,
                 more_gpus=False):
        self.exercise = exercise
        self.status = status
        self.needs_gpu = needs_gpu  # not run because the grading machine has no CUDA device
        self.more_gpus = more_gpus  # ... or a lane has fewer GPUs than the exercise needs
        self.tests = tests if tests is not None else [  # [{name, points, passed, message}]
            {"name": name, "points": points, "passed": False, "message": ""}
            for name, points in exercise.tests]
        self.details = details or []  # compiler errors, reasons for a refusal
        self.note = note  # one more sentence: output printed, time taken
        self.seconds = {}  # {"build": s, "tests": s}: where grading time goes

    @property
    def points(self):
        return sum(t["points"] for t in self.tests if t["passed"] and t.get("counts", True))

    @property
    def complete(self):
        return self.status not in WAITING

    def shown_points(self):
        """"2/5", or "\u2013/5" while the points are not known."""
        return "%s/%d" % (self.points if self.complete else NO_SCORE, self.exercise.max_points)

    def to_json(self):
        return {"status": self.status, "points": self.points, "needs_gpu": self.needs_gpu,
                "more_gpus": self.more_gpus, "max_points": self.exercise.max_points,
                "title": self.exercise.title, "tests": self.tests, "details": self.details,
                "note": self.note, "seconds": self.seconds}


class StudentRecord:
    def __init__(self, student, source, notes=(), problem=None, fingerprint=None):
        self.student = student
        self.fingerprint = fingerprint
        self.source = source  # the submission's file or folder name
        self.notes = list(notes)  # files ignored in the submission
        self.problem = problem
        self.outcomes = []
        self.graded_at = time.strftime("%Y-%m-%dT%H:%M:%S%z")

    @property
    def complete(self):
        return all(o.complete for o in self.outcomes)

    @property
    def waiting_for(self):
        """Why the student is not graded yet, in words; None once they are."""
        if self.complete:
            return None
        if any(o.more_gpus for o in self.outcomes if not o.complete):
            return "some exercises need more GPUs than a grading lane has"
        if any(o.needs_gpu for o in self.outcomes if not o.complete):
            return "the tests need a GPU"
        return "some tests are to be run again"

    def shown_points(self):
        return "%s/%d" % (sum(o.points for o in self.outcomes) if self.complete else NO_SCORE,
                          sum(o.exercise.max_points for o in self.outcomes))

    def to_json(self):
        return {"student": self.student, "submission": self.source, "complete": self.complete,
                "fingerprint": self.fingerprint,
                "graded_at": self.graded_at, "notes": self.notes, "problem": self.problem,
                "points": sum(o.points for o in self.outcomes),
                "max_points": sum(o.exercise.max_points for o in self.outcomes),
                "exercises": {o.exercise.id: o.to_json() for o in self.outcomes}}


# --- Writing files -----------------------------------------------------------------------

def write_atomically(path, text):
    """Writes text to path through a temporary file in the same folder and a rename."""
    folder = os.path.dirname(path) or "."
    os.makedirs(folder, exist_ok=True)
    temporary = os.path.join(folder, ".%s.tmp-%d-%d" % (os.path.basename(path), os.getpid(),
                                                        threading.get_ident()))
    with open(temporary, "w", encoding="utf-8") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.replace(temporary, path)


def student_folder(out, student):
    return os.path.join(out, "students", student)


def is_graded(out, student, fingerprint=None):
    """True when the student's grade.json is complete (and of these very files)."""
    try:
        with open(os.path.join(student_folder(out, student), "grade.json")) as f:
            record = json.load(f)
    except (OSError, ValueError):
        return False
    return record.get("complete") is True and (
        fingerprint is None or record.get("fingerprint") == fingerprint)


def write_student(out, record):
    """feedback.md, results.json, then grade.json: the last one marks the student graded.

    results.json holds a score, so a student not graded yet has none: an earlier one (of files
    since resubmitted, or a REGRADE=1 without a GPU) goes, as grade.json no longer backs it.
    """
    folder = student_folder(out, record.student)
    write_atomically(os.path.join(folder, "feedback.md"), feedback(record))
    if record.complete:
        write_atomically(os.path.join(folder, "results.json"),
                         json.dumps(gradescope(record), indent=2) + "\n")
    else:
        try:
            os.remove(os.path.join(folder, "results.json"))
        except FileNotFoundError:
            pass
    write_atomically(os.path.join(folder, "grade.json"),
                     json.dumps(record.to_json(), indent=2) + "\n")


def load_records(out):
    """Every student's grade.json in out, by student."""
    records = {}
    base = os.path.join(out, "students")
    for student in sorted(os.listdir(base)) if os.path.isdir(base) else []:
        try:
            with open(os.path.join(base, student, "grade.json")) as f:
                records[student] = json.load(f)
        except (OSError, ValueError):
            continue
    return records


def gradebook_csv(records, exercise_ids):
    """grades.csv: a row per student, a column per exercise, the total. An exercise not graded
    yet is blank; a student not graded yet has words for a total, which no sum takes for 0."""
    text = io.StringIO()
    writer = csv.writer(text, lineterminator="\n")
    writer.writerow(["student"] + list(exercise_ids) + ["total"])
    for student, record in sorted(records.items()):
        cells = []
        for exercise_id in exercise_ids:
            outcome = record.get("exercises", {}).get(exercise_id)
            cells.append("" if outcome is None or outcome["status"] in WAITING
                         else outcome["points"])
        total = record.get("points", 0) if record.get("complete") else NOT_GRADED
        writer.writerow([csv_safe(student)] + cells + [total])
    return text.getvalue()


def csv_safe(text):
    """No cell may start like a spreadsheet formula."""
    return "'" + text if text[:1] in ("=", "+", "-", "@") else text


# --- The feedback, in make check's words --------------------------------------------------

def _indent(text, prefix):
    return "\n".join(prefix + line if line else line for line in text.splitlines())


def _clean(text):
    """Printable text only: a submission's words end up in here."""
    return re.sub(r"[^\x09\x0a\x20-\x7e\u00a0-\uffff]", "?", text)


# The course's one renderer of an exercise's block (harness/report/report.c, as the tool
# build/tools/report_block), which grade.py points this at once the course is built.
RENDERER = None


def _escaped(text):
    """Text as harness/report/rubric.awk escapes it, for the renderer's record."""
    return str(text).replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n")


def first_hint(exercise):
    """The mildest of an exercise's hints (harness/hint.sh), and how to ask for a closer one."""
    levels = [level.strip() for level in exercise.hint.split("\n\n") if level.strip()]
    if len(levels) < 2:
        return exercise.hint
    return "%s\n(a closer hint: make hint EX=%s LEVEL=2)" % (levels[0], exercise.id)


def exercise_block(outcome):
    """The exercise's block as `make check` prints it (without colour), by the course's renderer."""
    exercise = outcome.exercise
    source = "exercises/%s.c" % exercise.id
    status = outcome.status
    record = ["exercise\t%s\t%s\t%s" % (exercise.id, _escaped(exercise.title),
                                           _escaped(exercise.hint))]
    record += ["test\t%s\t%d\t%s\tuntimed" % (exercise.id, points, _escaped(name))
               for name, points in exercise.tests]
    record += ["status\t%s" % status, "source\t%s" % source]
    details = list(outcome.details or [])
    if status == "missing":
        details = ["%s is missing from the submission" % source]
    elif status == "does_not_compile":
        details = ["%s does not compile:" % source] + details
    elif status == "rejected":
        details = ["%s was not run: the grader refuses it before linking, because" % source] + [
            "- " + line for line in details]
    elif status == "not_run":
        details = ["not graded yet: %s" % (details[0] if details else "")]
    elif status == "not_graded":
        details = ["not graded: something outside this code spoiled a test (see below); it is "
                   "run again"]
    elif status in ("timed_out", "no_report"):
        details = [details[0] if details else STATUS_WORDS[status]]
    else:
        details = []
    record += ["detail\t%s" % _escaped(line) for line in details]
    by_name = {test["name"]: test for test in outcome.tests or []}
    for number, (name, _) in enumerate(exercise.tests, 1):
        if name in by_name:
            test = by_name[name]
            word = ("passed" if test.get("counts", True) else "passed,uncounted") \
                if test["passed"] else "not_graded" if test.get("not_graded") else "failed"
            record.append("result\t%d\t%s\t%s" % (number, word, _escaped(test["message"] or "")))
    if outcome.note:
        record.append("note\t%s" % _escaped(outcome.note))
    run = subprocess.run([RENDERER], input="\n".join(record) + "\n", capture_output=True,
                         text=True, errors="replace")
    if run.returncode != 0:
        raise RuntimeError("the report's renderer refused a record: " + run.stderr.strip())
    return _clean(run.stdout.rstrip("\n"))


def _fenced(text):
    longest = max([len(run) for run in re.findall(r"`+", text)] + [2])
    fence = "`" * (longest + 1)
    return "%stext\n%s\n%s" % (fence, text, fence)


def feedback(record):
    done = sum(1 for o in record.outcomes if o.status == "passed")
    source = _clean(record.source).replace("`", "'")
    if record.complete:
        head = "**%s points**, %d of %d exercises done. Graded %s from `%s`." % (
            record.shown_points().replace("/", " of "), done, len(record.outcomes),
            record.graded_at, source)
    else:  # no number: what was decided so far is in the table, the rest waits for its tests
        head = ("**Not graded yet: %s.** Checked %s from `%s`: the table says what building "
                "the files decided; the points come once the tests have run." % (
                    record.waiting_for, record.graded_at, source))
    lines = ["# Feedback for %s" % _clean(record.student), "", head, ""]
    if record.problem:
        lines += ["**%s.**" % _clean(record.problem), ""]
    lines += ["| exercise | points | result |", "| --- | ---: | --- |"]
    for o in record.outcomes:
        lines.append("| %s | %s | %s |" % (o.exercise.id, o.shown_points(),
                                            STATUS_WORDS[o.status]))
    lines.append("")
    if record.notes:
        lines += ["Files in the submission that were not graded:", ""]
        lines += ["- " + _clean(n).replace("`", "'") for n in record.notes] + [""]
    for o in record.outcomes:
        lines += ["## %s: %s (%s points)" % (o.exercise.id, _clean(o.exercise.title),
                                             o.shown_points()), "",
                  _fenced(exercise_block(o)), ""]
    lines.append("Run `make check` on your own machine for the same tests and messages.")
    return "\n".join(lines) + "\n"


def gradescope(record):
    """Gradescope's results.json: a test per rubric test, named exercise: sentence."""
    tests = []
    for o in record.outcomes:
        why = None
        if o.status not in ("passed", "failed", "not_started"):
            block = exercise_block(o).split("\n")[1:]
            why = textwrap.dedent("\n".join(block))
        for i, test in enumerate(o.tests):
            if test["passed"]:
                output = ""
            elif why is not None:
                output = why if i == 0 else "see the first test of %s" % o.exercise.id
            else:
                output = test["message"] + ("\n\nhint: " + first_hint(o.exercise)
                                            if o.status == "failed" else "")
            counted = test["passed"] and test.get("counts", True)
            tests.append({"name": "%s: %s" % (o.exercise.id, test["name"]),
                          "score": test["points"] if counted else 0,
                          "max_score": test["points"],
                          "status": "passed" if test["passed"] else "failed",
                          "output": _clean(output)})
    notes = "\n".join(["Not graded from the submission: " + _clean(n) for n in record.notes])
    return {"score": sum(o.points for o in record.outcomes),
            "max_score": sum(o.exercise.max_points for o in record.outcomes),
            "output": (_clean(record.problem) + "\n" if record.problem else "") + notes,
            "tests": tests}


# --- The terminal -------------------------------------------------------------------------

LINE_WIDTH = 100


def student_line(record):
    """A student's line as they are graded: points, then each exercise not passed, by status.

    Wrapped between words, under the status column, rather than cut: the line is
    all the terminal says about the student until the summary.
    """
    points, maximum = record.shown_points().split("/")
    head = "  %-30s %3s/%-3s " % (record.student, points, maximum)
    by_status = {}
    for o in record.outcomes:
        if o.status != "passed":
            by_status.setdefault(STATUS_WORDS[o.status], []).append(o.exercise.id.split("/")[-1])
    words = "; ".join("%s: %s" % (status, ", ".join(names))
                      for status, names in by_status.items()) or "all passed"
    return textwrap.fill(words, LINE_WIDTH, initial_indent=head,
                         subsequent_indent=" " * len(head), break_long_words=False,
                         break_on_hyphens=False)


def summary(records, exercise_ids, seconds=None, graded_now=0, skipped=0, notes=(),
            complete_now=None):
    """The terminal summary: this run, the gradebook, mean and spread per exercise, failures.

    `graded_now` students were written in this run, `complete_now` of them with every
    exercise graded (the rest wait for a GPU, say); the gradebook counts OUT as a whole.
    """
    lines = []
    complete = {s: r for s, r in records.items() if r.get("complete")}
    if seconds is not None:
        complete_now = graded_now if complete_now is None else complete_now
        if complete_now == graded_now:
            run = "This run graded %s in %s" % (count_students(graded_now), _duration(seconds))
        else:
            run = "This run went through %s in %s: %d graded, %d not yet (tests left to run)" % (
                count_students(graded_now), _duration(seconds), complete_now,
                graded_now - complete_now)
        if seconds >= 60 and graded_now:  # over less than a minute, a rate says little
            run += ", %.1f students a minute" % (graded_now / (seconds / 60))
        if skipped:
            run += ("; %d already graded, skipped (unchanged since; REGRADE=1 grades them again)"
                    % skipped)
        lines.append(run + ".")
    if len(complete) == len(records):
        lines.append("Gradebook: %s, all graded." % count_students(len(records)))
    else:
        lines.append("Gradebook: %s, %d graded, %d not yet." % (
            count_students(len(records)), len(complete), len(records) - len(complete)))
    if complete:
        lines.append("")
        lines.append("%-32s %5s %7s %7s %5s %5s" % ("exercise", "max", "mean", "sd", "min",
                                                   "max"))
        columns = list(exercise_ids) + ["total"]
        for column in columns:
            values, maximum = [], 0
            for record in complete.values():
                if column == "total":
                    values.append(record.get("points", 0))
                    maximum = max(maximum, record.get("max_points", 0))
                else:
                    outcome = record.get("exercises", {}).get(column)
                    if outcome:
                        values.append(outcome["points"])
                        maximum = max(maximum, outcome["max_points"])
            if not values:
                continue
            spread = statistics.pstdev(values) if len(values) > 1 else 0.0
            lines.append("%-32s %5d %7.1f %7.1f %5d %5d" % (
                column, maximum, statistics.mean(values), spread, min(values), max(values)))
    failed = []
    for student, record in sorted(records.items()):
        for exercise_id, outcome in sorted(record.get("exercises", {}).items()):
            if outcome["status"] in BUILD_FAILURES:
                detail = (outcome.get("details") or [""])[0]
                failed.append("  %-28s %-30s %s%s" % (
                    student, exercise_id, STATUS_WORDS[outcome["status"]],
                    ": " + detail[:80] if outcome["status"] == "rejected" and detail else ""))
        if record.get("problem"):
            failed.append("  %-28s %s" % (student, record["problem"]))
    if failed:
        lines += ["", "Submissions that failed to build (%d):" % len(failed)] + failed
    pending = [s for s, r in sorted(records.items()) if not r.get("complete")]
    if pending:
        lines += ["", "Not graded yet (%d): %s" % (len(pending), ", ".join(pending[:20]) +
                                                   (" ..." if len(pending) > 20 else ""))]
    for note in notes:
        lines.append("note: " + note)
    return "\n".join(lines)


def count_students(count):
    return "%d student%s" % (count, "" if count == 1 else "s")


def _duration(seconds):
    minutes, seconds = divmod(int(math.ceil(seconds)), 60)
    return "%dm%02ds" % (minutes, seconds) if minutes else "%ds" % seconds


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
    elif record.get("status") not in ("passed", "failed", "not_started", "no_gpu", "not_graded",
                                      "too_few_gpus"):
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

"""What is written from the outcomes: atomically, in make check's words, in Gradescope's layout."""
import csv
import io
import json
import os
import shutil
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import course  # noqa: E402
import results  # noqa: E402

# The blocks come from the course's renderer (harness/report/report.c), which make builds.
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
results.RENDERER = os.path.join(ROOT, "build", "tools", "report_block")
if not os.path.exists(results.RENDERER):
    course.Course(ROOT).make(os.path.join("build", "tools", "report_block"))

EXERCISE = course.Exercise("ch01-memory/roundtrip", {
    "title": "Round trip", "hint": "use bytes",
    "tests": [{"name": "the floats come back", "points": 3},
              {"name": "errors are returned", "points": 2}]})
OTHER = course.Exercise("ch01-memory/directions", {
    "title": "Directions", "hint": "four kinds", "tests": [{"name": "all four", "points": 5}]})


def record(*outcomes, student="alice"):
    r = results.StudentRecord(student, student + ".zip", notes=["ignored x.h: a header"])
    r.outcomes = list(outcomes)
    return r


def tests(first, second, message="only 256 of 1024 floats arrived"):
    return [{"name": "the floats come back", "points": 3, "passed": first,
             "message": "" if first else message},
            {"name": "errors are returned", "points": 2, "passed": second, "message": ""}]


class Writing(unittest.TestCase):
    def test_a_file_is_replaced_whole_and_no_temporary_is_left(self):
        folder = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, folder, True)
        path = os.path.join(folder, "grades.csv")
        results.write_atomically(path, "old\n")
        results.write_atomically(path, "new\n")
        with open(path) as f:
            self.assertEqual(f.read(), "new\n")
        self.assertEqual(os.listdir(folder), ["grades.csv"])

    def test_grade_json_is_written_last_and_marks_the_student_graded(self):
        out = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, out, True)
        done = record(results.Outcome(EXERCISE, "failed", tests(False, True)))
        results.write_student(out, done)
        self.assertTrue(results.is_graded(out, "alice"))
        done.fingerprint = "abc"
        results.write_student(out, done)
        self.assertTrue(results.is_graded(out, "alice", "abc"))
        self.assertFalse(results.is_graded(out, "alice", "resubmitted"))
        pending = record(results.Outcome(EXERCISE, "not_run", details=["no GPU"]), student="bob")
        results.write_student(out, pending)
        self.assertFalse(results.is_graded(out, "bob"))
        self.assertEqual(sorted(os.listdir(os.path.join(out, "students", "alice"))),
                         ["feedback.md", "grade.json", "results.json"])


class NotGradedYet(unittest.TestCase):
    """A student whose tests have not run (no GPU) gets no score anywhere."""

    def pending(self):
        return record(results.Outcome(EXERCISE, "not_run", details=["no CUDA device"],
                                      needs_gpu=True),
                      results.Outcome(OTHER, "missing"), student="bob")

    def test_no_results_json_and_an_earlier_one_goes(self):
        out = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, out, True)
        graded = record(results.Outcome(EXERCISE, "passed", tests(True, True)),
                        results.Outcome(OTHER, "missing"), student="bob")
        results.write_student(out, graded)  # graded once; then a REGRADE=1 without a GPU
        results.write_student(out, self.pending())
        self.assertEqual(sorted(os.listdir(os.path.join(out, "students", "bob"))),
                         ["feedback.md", "grade.json"])
        self.assertFalse(results.is_graded(out, "bob"))  # a rerun on a GPU grades bob

    def test_the_feedback_says_why_and_gives_no_total(self):
        text = results.feedback(self.pending())
        self.assertIn("**Not graded yet: the tests need a GPU.**", text)
        self.assertNotIn("0 of 10 points", text)
        self.assertIn("| ch01-memory/roundtrip | \u2013/5 | not graded yet |", text)
        self.assertIn("| ch01-memory/directions | 0/5 | missing |", text)  # decided: it counts
        self.assertIn("WAIT  ch01-memory/roundtrip        \u2013/2 tests  \u2013/5 points", text)

    def test_an_exercise_needing_more_gpus_waits_and_says_why(self):
        import student_grading  # the record of a test host that saw too few GPUs
        run = type("Run", (), {"timed_out": False, "returncode": 1})()
        outcome = student_grading.outcome_of_record(
            EXERCISE, {"status": "too_few_gpus", "note": "it needs 2 GPUs and this machine has 1",
                       "tests": [], "seconds": 0}, run, 60, 2, "")
        self.assertFalse(outcome.complete)
        self.assertTrue(outcome.to_json()["more_gpus"])
        waiting = record(outcome, results.Outcome(OTHER, "missing"), student="carol")
        self.assertEqual(waiting.waiting_for,
                         "some exercises need more GPUs than a grading lane has")
        self.assertIn("**Not graded yet: some exercises need more GPUs than a grading lane has.**",
                      results.feedback(waiting))
        self.assertIn("it needs 2 GPUs and this machine has 1", results.feedback(waiting))

    def test_tests_to_run_again_are_not_blamed_on_the_gpu(self):
        spoiled = record(results.Outcome(EXERCISE, "not_graded", tests(True, False)))
        self.assertIn("**Not graded yet: some tests are to be run again.**",
                      results.feedback(spoiled))

    def test_the_terminal_line_has_a_dash_for_points(self):
        self.assertEqual(results.student_line(self.pending()).split()[:2], ["bob", "\u2013/10"])


class Gradebook(unittest.TestCase):
    def test_a_row_per_student_a_column_per_exercise_blank_when_not_graded(self):
        records = {
            "alice": record(results.Outcome(EXERCISE, "failed", tests(False, True)),
                            results.Outcome(OTHER, "missing")).to_json(),
            "bob": record(results.Outcome(EXERCISE, "passed", tests(True, True)),
                          results.Outcome(OTHER, "not_run"), student="bob").to_json(),
            "-cmd": record(results.Outcome(EXERCISE, "missing"),
                           results.Outcome(OTHER, "missing"), student="-cmd").to_json(),
        }
        rows = list(csv.reader(io.StringIO(results.gradebook_csv(
            records, ["ch01-memory/roundtrip", "ch01-memory/directions"]))))
        self.assertEqual(rows[0], ["student", "ch01-memory/roundtrip", "ch01-memory/directions",
                                   "total"])
        # bob's tests of directions have not run: no total, and words no sum takes for 0
        self.assertEqual(rows[1:], [["'-cmd", "0", "0", "0"], ["alice", "2", "0", "2"],
                                    ["bob", "5", "", "not graded yet"]])


class Feedback(unittest.TestCase):
    def test_a_failure_reads_as_make_check_prints_it(self):
        text = results.feedback(record(results.Outcome(EXERCISE, "failed", tests(False, True))))
        self.assertIn("FAIL  ch01-memory/roundtrip        1/2 tests  2/5 points  Round trip", text)
        self.assertIn("      FAIL the floats come back (3 points)\n"
                      "           only 256 of 1024 floats arrived", text)
        self.assertIn("      hint: make hint EX=roundtrip", text)  # the hint itself on request only
        self.assertIn("ignored x.h", text)

    def test_compiler_output_cannot_break_out_of_its_block(self):
        outcome = results.Outcome(EXERCISE, "does_not_compile",
                                  details=["x.c:1: error: ```` # Full marks \x1b[2J"])
        text = results.feedback(record(outcome))
        self.assertIn("`````text\n", text)
        self.assertNotIn("\x1b", text)

    def test_gradescope_layout(self):
        doc = results.gradescope(record(results.Outcome(EXERCISE, "failed", tests(False, True)),
                                        results.Outcome(OTHER, "rejected",
                                                        details=["it uses fork"])))
        self.assertEqual((doc["score"], doc["max_score"]), (2, 10))
        self.assertEqual([(t["name"], t["score"], t["max_score"], t["status"])
                          for t in doc["tests"]],
                         [("ch01-memory/roundtrip: the floats come back", 0, 3, "failed"),
                          ("ch01-memory/roundtrip: errors are returned", 2, 2, "passed"),
                          ("ch01-memory/directions: all four", 0, 5, "failed")])
        self.assertIn("it uses fork", doc["tests"][2]["output"])
        self.assertIn("hint: use bytes", doc["tests"][0]["output"])
        json.dumps(doc)

    def test_gradescope_gives_the_mildest_hint_and_how_to_ask_for_more(self):
        graded = course.Exercise("ch01-memory/roundtrip", {
            "title": "Round trip", "hint": "think in bytes\n\ncudaMalloc(&d, n * 4)",
            "tests": [{"name": "the floats come back", "points": 3}]})
        doc = results.gradescope(record(results.Outcome(graded, "failed", [
            {"name": "the floats come back", "points": 3, "passed": False, "message": "no"}])))
        output = doc["tests"][0]["output"]
        self.assertIn("hint: think in bytes\n(a closer hint: make hint EX=ch01-memory/roundtrip "
                      "LEVEL=2)", output)
        self.assertNotIn("cudaMalloc", output)


class Summary(unittest.TestCase):
    def test_mean_spread_and_build_failures(self):
        records = {
            "a": record(results.Outcome(EXERCISE, "passed", tests(True, True))).to_json(),
            "b": record(results.Outcome(EXERCISE, "does_not_compile", details=["x: error"]),
                        student="b").to_json(),
        }
        text = results.summary(records, ["ch01-memory/roundtrip"], 60, 2, 1)
        self.assertIn("This run graded 2 students in 1m00s, 2.0 students a minute; 1 already "
                      "graded", text)
        self.assertIn("ch01-memory/roundtrip                5     2.5     2.5     0     5", text)
        self.assertIn("b                            ch01-memory/roundtrip          does not compile",
                      text)

    def test_this_run_and_the_gradebook_do_not_contradict_each_other(self):
        done = record(results.Outcome(EXERCISE, "passed", tests(True, True)))
        waiting = record(results.Outcome(EXERCISE, "not_run", details=["no GPU"]), student="bob")
        records = {"alice": done.to_json(), "bob": waiting.to_json()}
        text = results.summary(records, ["ch01-memory/roundtrip"], 0.3, 2, complete_now=1)
        run_line, gradebook_line = text.splitlines()[:2]
        self.assertEqual(run_line, "This run went through 2 students in 1s: 1 graded, 1 not yet "
                                   "(tests left to run).")
        self.assertEqual(gradebook_line, "Gradebook: 2 students, 1 graded, 1 not yet.")
        self.assertNotIn("per minute", text)  # 2 students in 0.3 s is no rate
        self.assertNotIn("a minute", text)


class StudentLine(unittest.TestCase):
    def test_a_long_line_wraps_between_words_and_loses_nothing(self):
        exercises = [course.Exercise("ch01-memory/exercise_number_%d" % n, {
            "title": "x", "hint": "", "tests": [{"name": "t", "points": 1}]}) for n in range(12)]
        line = results.student_line(record(*[
            results.Outcome(e, "not_run" if n % 2 else "missing")
            for n, e in enumerate(exercises)], student="a-student-with-a-long-name"))
        rows = line.splitlines()
        self.assertGreater(len(rows), 1)
        self.assertTrue(all(len(row) <= results.LINE_WIDTH for row in rows), line)
        words = " ".join(line.split())
        for n in range(12):
            self.assertIn("exercise_number_%d" % n, words)
        self.assertIn("not graded yet: exercise_number_1, exercise_number_3", words)
        self.assertIn("missing: exercise_number_0, exercise_number_2", words)
        indent = rows[0].index("missing")
        self.assertTrue(all(row[:indent].strip() == "" for row in rows[1:]), line)

    def test_a_student_who_passed_everything(self):
        line = results.student_line(record(results.Outcome(EXERCISE, "passed", tests(True, True))))
        self.assertEqual(line.split(), ["alice", "5/5", "all", "passed"])


if __name__ == "__main__":
    unittest.main()

"""make grade-export: the gradebook as Canvas and Moodle import it, matched through a roster."""
import contextlib
import csv
import io
import json
import os
import shutil
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import export  # noqa: E402


def grade_json(student, points, complete=True, submission=None):
    """A student's grade.json as make grade writes it, of two exercises (10 and 5 points)."""
    return {"student": student, "submission": submission or student, "complete": complete,
            "points": points[0] + points[1] if complete else 0, "max_points": 15,
            "exercises": {"ch01-memory/roundtrip": {"points": points[0], "max_points": 10},
                          "ch01-memory/directions": {"points": points[1], "max_points": 5}}}


CANVAS_ROSTER = [["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "Submission"],
                 ["    Points Possible", "", "", "", "", ""],
                 ["Lovelace, Ada", "101", "s101", "ada", "A", "ada"],
                 ["Hopper, Grace", "102", "s102", "grace", "A", "grace.zip"],
                 ["Turing, Alan", "103", "s103", "alan", "B", "alan"]]


class Export(unittest.TestCase):
    def setUp(self):
        self.out = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.out)
        self.graded({"ada": grade_json("ada", (10, 5)),
                     "grace": grade_json("grace", (3, 0), submission="grace.zip"),
                     "alan": grade_json("alan", (0, 0), complete=False)})

    def graded(self, records):
        for student, record in records.items():
            folder = os.path.join(self.out, "students", student)
            os.makedirs(folder, exist_ok=True)
            with open(os.path.join(folder, "grade.json"), "w") as f:
                json.dump(record, f)

    def roster(self, rows):
        path = os.path.join(self.out, "roster.csv")
        with open(path, "w", newline="") as f:
            csv.writer(f).writerows(rows)
        return path

    def run_export(self, *options, rows=CANVAS_ROSTER):
        """(exit status, stderr, the exported rows or None)."""
        argv = ["--out", self.out, "--roster", self.roster(rows)] + list(options)
        err = io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            status = export.main(argv)
        fmt = argv[argv.index("--format") + 1] if "--format" in argv else ""
        path = os.path.join(self.out, "export-%s.csv" % fmt)
        if not os.path.exists(path):
            return status, err.getvalue(), None
        with open(path, newline="") as f:
            return status, err.getvalue(), list(csv.reader(f))

    def test_canvas_gets_its_identity_columns_a_points_row_and_the_total(self):
        status, said, rows = self.run_export("--format", "canvas")
        self.assertEqual(status, 0, said)
        self.assertEqual(rows[0], ["Student", "ID", "SIS User ID", "SIS Login ID", "Section",
                                   "GPU data movement exercises"])
        self.assertEqual(rows[1], ["    Points Possible", "", "", "", "", "15"])
        # grace is matched by the archive she handed in; alan is not graded yet: no row, no 0
        self.assertEqual(rows[2:], [["Lovelace, Ada", "101", "s101", "ada", "A", "15"],
                                    ["Hopper, Grace", "102", "s102", "grace", "A", "3"]])
        self.assertIn("1 student not graded yet (alan): left out, not given 0", said)

    def test_a_column_per_exercise(self):
        status, said, rows = self.run_export("--format", "canvas", "--columns", "exercises")
        self.assertEqual(rows[0][5:], ["ch01-memory/roundtrip", "ch01-memory/directions"])
        self.assertEqual(rows[1][5:], ["10", "5"])
        self.assertEqual(rows[3][5:], ["3", "0"])

    def test_moodle_gets_the_user_field_it_matches_and_the_grades(self):
        rows = [["Name", "Email address", "ID number", "Submission"],
                ["Ada", "ada@example.org", "7001", "ada"],
                ["Grace", "grace@example.org", "7002", "grace"],
                ["Alan", "alan@example.org", "7003", "alan"]]
        status, said, exported = self.run_export("--format", "moodle", rows=rows)
        self.assertEqual(status, 0, said)
        self.assertEqual(exported, [["Email address", "GPU data movement exercises"],
                                    ["ada@example.org", "15"], ["grace@example.org", "3"]])
        status, said, exported = self.run_export("--format", "moodle", "--moodle-id", "idnumber",
                                                 rows=rows)
        self.assertEqual(exported[:2], [["ID number", "GPU data movement exercises"],
                                        ["7001", "15"]])

    def test_a_graded_folder_missing_from_the_roster_is_an_error_and_nothing_is_written(self):
        status, said, rows = self.run_export("--format", "canvas", rows=CANVAS_ROSTER[:3])
        self.assertEqual(status, 2)
        self.assertIn("submission folders alan, grace", said)
        self.assertIsNone(rows)

    def test_a_roster_student_without_a_submission_is_a_warning_and_gets_no_zero(self):
        status, said, rows = self.run_export(
            "--format", "canvas",
            rows=CANVAS_ROSTER + [["Noether, Emmy", "104", "s104", "emmy", "B", "emmy"]])
        self.assertEqual(status, 0, said)
        self.assertIn("warning: no graded submission for 1 student in the roster (emmy)", said)
        self.assertNotIn("Noether, Emmy", [row[0] for row in rows])

    def test_a_roster_that_cannot_say_who_is_who_is_refused(self):
        status, said, _ = self.run_export("--format", "canvas",
                                          rows=[row[:5] for row in CANVAS_ROSTER])
        self.assertEqual(status, 2)
        self.assertIn("has no column 'Submission'", said)
        status, said, _ = self.run_export("--format", "canvas",
                                          rows=CANVAS_ROSTER + [["Ada again", "", "", "", "",
                                                                 "ada"]])
        self.assertEqual(status, 2)
        self.assertIn("names the submission ada twice (lines 3 and 6)", said)
        status, said, _ = self.run_export("--format", "blackboard")
        self.assertEqual((status, "FORMAT=blackboard" in said), (2, True))

    def test_a_cell_that_reads_as_a_formula_is_escaped(self):
        rows = [row[:] for row in CANVAS_ROSTER]
        rows[2][0] = "=HYPERLINK(\"x\")"
        status, said, exported = self.run_export("--format", "canvas", rows=rows)
        self.assertEqual(exported[2][0], "'=HYPERLINK(\"x\")")


if __name__ == "__main__":
    unittest.main()

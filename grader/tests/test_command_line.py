"""Bad input to make grade and its companions: a sentence naming the knob, exit 2, nothing written."""
import contextlib
import io
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
COURSE = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import grade  # noqa: E402


def run_grade(*argv):
    """(exit status, what it printed on stderr) of grade.py with argv; a traceback fails the test."""
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            status = grade.main(list(argv))
        except SystemExit as exit:
            status = exit.code
    return status, err.getvalue()


class Folders(unittest.TestCase):
    def setUp(self):
        self.base = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.base)
        self.class_folder = os.path.join(self.base, "class")
        os.makedirs(self.class_folder)

    def test_an_empty_submissions_folder_is_refused_and_nothing_is_written(self):
        out = os.path.join(self.base, "grades")
        status, said = run_grade("grade", "--submissions", self.class_folder, "--out", out)
        self.assertEqual(status, 2)
        self.assertIn("holds no submission", said)
        self.assertFalse(os.path.exists(out))

    def test_a_folder_of_things_that_are_not_submissions_is_named_as_empty(self):
        with open(os.path.join(self.class_folder, "notes.txt"), "w") as f:
            f.write("not a student\n")
        status, said = run_grade("grade", "--submissions", self.class_folder,
                                 "--out", os.path.join(self.base, "grades"))
        self.assertEqual(status, 2)
        self.assertIn("holds no submission", said)
        self.assertIn("notes.txt", said)

    def test_out_inside_or_equal_to_the_submissions_is_refused(self):
        os.makedirs(os.path.join(self.class_folder, "alice", "ch01-memory"))
        for out in (self.class_folder, os.path.join(self.class_folder, "grades"),
                    os.path.join(self.class_folder, ".", "alice", "..", "grades")):
            status, said = run_grade("grade", "--submissions", self.class_folder, "--out", out)
            self.assertEqual(status, 2, out)
            self.assertIn("inside the submissions", said)
        self.assertEqual(sorted(os.listdir(self.class_folder)), ["alice"])

    def test_an_out_that_cannot_be_made_is_said_plainly(self):
        os.makedirs(os.path.join(self.class_folder, "alice"))
        for out in ("/proc/no-such-folder", os.path.join(self.base, "a-file", "grades")):
            with open(os.path.join(self.base, "a-file"), "w"):
                pass
            status, said = run_grade("grade", "--submissions", self.class_folder, "--out", out)
            self.assertEqual(status, 2, out)
            self.assertIn("OUT=%s" % out, said)
            self.assertNotIn("Traceback", said)

    def test_a_scratch_that_cannot_be_made_is_said_plainly(self):
        os.makedirs(os.path.join(self.class_folder, "alice"))
        status, said = run_grade("grade", "--submissions", self.class_folder,
                                 "--out", os.path.join(self.base, "grades"),
                                 "--scratch", "/proc/no-such-folder")
        self.assertEqual(status, 2)
        self.assertIn("SCRATCH=/proc/no-such-folder", said)


class Numbers(unittest.TestCase):
    def test_each_number_knob_is_named_by_its_make_name(self):
        for option, knob in (("--jobs", "JOBS"), ("--per-gpu", "PER_GPU"),
                             ("--test-timeout", "TEST_TIMEOUT"),
                             ("--student-timeout", "STUDENT_TIMEOUT")):
            for value in ("abc", "0", "-3", "1.5"):
                status, said = run_grade("grade", "--submissions", "x", option, value)
                self.assertEqual(status, 2, (option, value))
                self.assertIn("%s=%s" % (knob, value), said)
                self.assertIn("whole number", said)
                self.assertNotIn("usage:", said)

    def test_a_slice_out_of_range_is_named(self):
        status, said = run_grade("report", "--slice", "4/4")
        self.assertEqual(status, 2)
        self.assertIn("SLICE=4/4", said)
        self.assertNotIn("usage:", said)


class Benchmark(unittest.TestCase):
    def assert_refused_before_anything_runs(self, students, phrase, chapters=""):
        """dev/grade-benchmark.sh STUDENTS exits 2 saying `phrase`, its folder left alone."""
        work = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, work)
        marker = os.path.join(work, "kept")
        open(marker, "w").close()
        run = subprocess.run([os.path.join(HERE, "..", "dev", "grade-benchmark.sh"), students],
                             env=dict(os.environ, BENCHMARK_DIR=work, BENCHMARK_CHAPTERS=chapters),
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             universal_newlines=True)
        self.assertEqual(run.returncode, 2, run.stdout)
        self.assertIn(phrase, run.stdout)
        self.assertNotIn("Traceback", run.stdout)
        self.assertTrue(os.path.exists(marker), "the benchmark's folder was emptied")

    def test_a_class_size_that_is_not_a_number_is_refused_before_anything_runs(self):
        for students in ("abc", "-3", "0"):
            self.assert_refused_before_anything_runs(students, "STUDENTS=%s" % students)

    def test_a_chapter_that_has_no_exercises_is_refused_before_anything_runs(self):
        self.assert_refused_before_anything_runs("3", "CH=9 names no chapter", chapters="1 9")

    def test_a_class_of_some_chapters_hands_in_their_exercises_alone(self):
        work = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, work)
        maker = os.path.join(HERE, "make_class.py")
        listed = subprocess.run([sys.executable, maker, "chapters", "1", "ch03"],
                                stdout=subprocess.PIPE,
                                universal_newlines=True, check=True).stdout.split()
        self.assertTrue(listed and all(e.startswith(("ch01-", "ch03-")) for e in listed), listed)
        self.assertIn("ch01-memory/roundtrip", listed)
        self.assertIn("ch03-streams/pipeline", listed)
        subprocess.run([sys.executable, maker, "benchmark", os.path.join(work, "class"), "3", "1",
                        "ch03"],
                       stdout=subprocess.PIPE, check=True)
        # student-000 is a folder, its files under exercises/ (make_class.py says so).
        folder = os.path.join(work, "class", "student-000", "exercises")
        handed_in = {os.path.relpath(os.path.join(top, f), folder)[:-2]
                     for top, _, files in os.walk(folder) for f in files}
        self.assertTrue(handed_in and handed_in <= set(listed), handed_in)


if __name__ == "__main__":
    unittest.main()

"""class_runner.py - grading a class, student by student, for `make grade` (grade.py).

The Grader builds each student's exercises in a scratch folder with the course's own rules
(course.py, the compile guard, the static checks), runs the test host confined (sandbox.py)
with all of a student's modules, and reads each exercise's results from the result channel;
a ClassRun takes the students in turn, builds running ahead of the tests, PER_GPU test hosts
side by side on each GPU, and writes each student's files as they are graded (results.py).
grader/README.md has the whole design and its limits.
"""

import concurrent.futures
import os
import queue
import shutil
import sys
import threading
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import results  # noqa: E402
from student_grading import Grader, StudentRun  # noqa: E402,F401

class ClassRun:
    """The students to grade, in turn: a thread builds ahead of the tests (JOBS builds at a
    time, at most so many students ahead), PER_GPU lanes on each GPU take the next built
    student, run its tests and write its files; an interruption stops all at once, leaving
    what was written whole."""

    def __init__(self, grader, args, out, todo, exercise_ids):
        self.grader, self.args, self.out = grader, args, out
        self.todo, self.exercise_ids = todo, exercise_ids
        self.lock = threading.Lock()
        self.records = results.load_records(out)
        self.graded = self.complete = 0
        # PER_GPU test programs at a time on each GPU, each in a lane with a uid of its own.
        self.slots = [(slot, lane) for slot in range(len(grader.gpus))
                      for lane in range(args.per_gpu)] or [(None, 0)]
        self.ahead = threading.Semaphore(args.jobs + 2 * len(self.slots))
        self.order = queue.Queue()
        self.builders = concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs)

    def write(self, record):
        try:
            results.write_student(self.out, record)
        except (OSError, UnicodeError) as err:  # this student's alone: the others go on
            print("make grade: %s's files could not be written in %s (%s); the student is "
                  "not graded" % (record.student, self.out, err), file=sys.stderr, flush=True)
            return
        with self.lock:
            self.records[record.student] = record.to_json()
            results.write_atomically(os.path.join(self.out, "grades.csv"),
                                     results.gradebook_csv(self.records, self.exercise_ids))
            self.graded += 1
            self.complete += record.complete
            print(results.student_line(record), flush=True)

    def feed(self):
        for submission in self.todo:
            self.ahead.acquire()
            if self.grader.stop.is_set():
                break
            try:
                prepared = self.grader.prepare_student(submission, self.builders)
            except Exception as err:  # a lane takes it, and says so as a grader error
                prepared = err
            self.order.put((submission, prepared))
        for _ in self.slots:
            self.order.put(None)

    def _forget(self, student_name):
        shutil.rmtree(os.path.join(self.grader.scratch, student_name), ignore_errors=True)
        self.ahead.release()

    def take_student(self, item, slot, lane):
        submission, prepared = item
        try:
            if isinstance(prepared, Exception):
                raise prepared
            student = StudentRun(submission, prepared)
        except Exception:
            print("grader error on %s:\n%s" % (submission.student, traceback.format_exc()),
                  file=sys.stderr)
            self._forget(submission.student)
            return
        if student.runnable:
            outcomes = None
            try:
                outcomes = self.grader.run_student(student.runnable, student.started, slot, lane)
            except Exception:  # a grader bug must not cost the other students
                print("grader error on %s:\n%s" % (student.submission.student,
                                                     traceback.format_exc()), file=sys.stderr)
            student.tests_done(outcomes)
        try:
            if not student.failed and not self.grader.stop.is_set():
                self.write(student.record())
        finally:
            self._forget(student.submission.student)

    def work(self, slot, lane):
        while True:
            item = self.order.get()
            if item is None:
                return
            self.take_student(item, slot, lane)

    def run(self):
        """Grades every student; on Ctrl-C or SIGTERM, stops everything and exits 130."""
        threads = [threading.Thread(target=self.feed, daemon=True)] + [
            threading.Thread(target=self.work, args=slot, daemon=True) for slot in self.slots]
        try:
            for thread in threads:
                thread.start()
            for thread in threads:
                while thread.is_alive():
                    thread.join(0.2)
        except KeyboardInterrupt:
            self.grader.stop.set()
            self.grader.confinement.kill_everything()
            shutil.rmtree(self.grader.scratch, ignore_errors=True)
            print("\ninterrupted: %d student%s graded and written in this run; run again to "
                  "grade the rest" % (self.graded, "" if self.graded == 1 else "s"),
                  file=sys.stderr, flush=True)
            sys.stdout.flush()
            os._exit(130)  # what was written is whole; nothing in flight is worth waiting for
        self.builders.shutdown()
        shutil.rmtree(self.grader.scratch, ignore_errors=True)

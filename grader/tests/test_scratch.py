"""The scratch folder is claimed with a lock: a live grader's is never taken, a dead one's is."""
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, HERE)
import scratch  # noqa: E402

# A grader in another process: claims a folder in argv[1], says its name, waits for stdin.
OTHER_GRADER = ("import sys; sys.path.insert(0, %r); import scratch; "
                "print(scratch.claim(sys.argv[1]), flush=True); sys.stdin.read()" % HERE)


class Claims(unittest.TestCase):
    def setUp(self):
        self.parent = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.parent, True)

    def other_grader(self):
        process = subprocess.Popen([sys.executable, "-c", OTHER_GRADER, self.parent],
                                   stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                   universal_newlines=True)
        self.addCleanup(process.wait)
        self.addCleanup(process.stdin.close)
        return process, process.stdout.readline().strip()

    def test_a_live_graders_folder_is_kept_whatever_its_pid_says(self):
        process, folder = self.other_grader()
        self.assertTrue(scratch.is_live(folder))
        scratch.remove_stale(self.parent)
        self.assertTrue(os.path.isdir(folder))

    def test_the_folder_of_a_grader_that_is_gone_is_removed(self):
        process, folder = self.other_grader()
        process.stdin.close()
        process.wait()
        self.assertFalse(scratch.is_live(folder))
        scratch.remove_stale(self.parent)
        self.assertFalse(os.path.exists(folder))

    def test_a_folder_not_yet_claimed_and_other_entries_are_left_alone(self):
        unclaimed = tempfile.mkdtemp(prefix=scratch.PREFIX, dir=self.parent)
        other = os.path.join(self.parent, "someone-elses")
        os.mkdir(other)
        os.symlink(other, os.path.join(self.parent, scratch.PREFIX + "link"))
        scratch.remove_stale(self.parent)
        self.assertTrue(os.path.isdir(unclaimed) and os.path.isdir(other))

    def test_this_process_holds_its_own_claim(self):
        folder = scratch.claim(self.parent)
        scratch.remove_stale(self.parent)
        self.assertTrue(os.path.isdir(folder))


if __name__ == "__main__":
    unittest.main()

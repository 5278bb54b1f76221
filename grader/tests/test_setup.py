"""Before any student: the scratch folder, and the toolchain the builds are given."""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
COURSE = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import course  # noqa: E402
import grade  # noqa: E402
import sandbox  # noqa: E402


class Scratch(unittest.TestCase):
    def setUp(self):
        self.parent = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.parent)
        os.chmod(self.parent, 0o755)

    def test_an_open_folder_is_fine(self):
        self.assertIsNone(sandbox.scratch_problem(self.parent, other_uids=True))

    def test_a_folder_closed_to_others_is_named_when_other_uids_need_it(self):
        private = os.path.join(self.parent, "private")
        scratch = os.path.join(private, "scratch")
        os.makedirs(scratch)
        os.chmod(private, 0o700)
        problem = sandbox.scratch_problem(scratch, other_uids=True)
        self.assertIn("other users cannot enter %s" % private, problem)
        self.assertIn("chmod o+x %s" % private, problem)
        self.assertIsNone(sandbox.scratch_problem(scratch, other_uids=False))


class Uids(unittest.TestCase):
    def test_two_graders_on_one_machine_never_share_a_uid(self):
        # Each kills whatever runs as its uids after every program: sharing one, they
        # would kill each other's builds (seen when two self-tests ran side by side).
        if os.geteuid() != 0:
            self.skipTest("graders claim uids only as root")
        other = subprocess.Popen(
            [sys.executable, "-c", "import sys; sys.path.insert(0, %r); import grade; "
             "print(*grade.claim_uids(3), flush=True); sys.stdin.read()" % HERE],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, universal_newlines=True)
        self.addCleanup(other.wait)
        self.addCleanup(other.stdin.close)
        self.addCleanup(other.stdout.close)
        theirs = [int(uid) for uid in other.stdout.readline().split()]
        ours = grade.claim_uids(3)
        self.assertEqual(len(theirs), 3)
        self.assertFalse(set(ours) & set(theirs), "both hold %s" % (set(ours) & set(theirs)))
        self.assertFalse(set(grade.claim_uids(2)) & set(ours), "one process, two claims")

    def test_a_uid_some_process_runs_as_is_not_claimed(self):
        # A grader of an older checkout holds no lock, but sweeps its uids all the same.
        if os.geteuid() != 0:
            self.skipTest("graders claim uids only as root")
        busy = sandbox.unused_uids(1, grade.FIRST_UID + 500)[0]  # no account; not locked
        squatter = subprocess.Popen(["setpriv", "--reuid=%d" % busy, "--regid=%d" % busy,
                                     "--clear-groups", "sleep", "60"])
        self.addCleanup(squatter.wait)
        self.addCleanup(squatter.kill)
        while busy not in grade.uids_running({busy}):
            time.sleep(0.01)
        other = subprocess.run(
            [sys.executable, "-c", "import sys; sys.path.insert(0, %r); import grade; "
             "print(grade.claim_uids(1, start=%d)[0])" % (HERE, busy)],
            stdout=subprocess.PIPE, universal_newlines=True, check=True)
        self.assertNotEqual(int(other.stdout), busy)


class InstallDeps(unittest.TestCase):
    """grader/install-deps.sh says what failed and why, in a line each: apt's own reason."""

    def test_a_failed_install_gives_apts_reason_and_not_a_root_hint_to_root(self):
        tree = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, tree)
        os.makedirs(os.path.join(tree, "grader"))
        shutil.copy(os.path.join(HERE, "install-deps.sh"), os.path.join(tree, "grader"))
        tools = os.path.join(tree, "bin")  # the system's tools, but no bubblewrap
        os.makedirs(tools)
        for tool in ("bash", "dirname", "ls", "head", "dpkg", "mkdir", "find", "cat", "sed",
                     "grep", "tail", "id", "rm", "true"):
            found = shutil.which(tool)
            if found:
                os.symlink(found, os.path.join(tools, tool))
        with open(os.path.join(tools, "apt-get"), "w") as f:  # a machine without network
            f.write("#!/bin/sh\necho 'Reading package lists...'\n"
                    "echo \"E: Unable to locate package bubblewrap\" >&2\nexit 100\n")
        with open(os.path.join(tools, "sudo"), "w") as f:
            f.write("#!/bin/sh\nexit 1\n")  # sudo asks for a password here
        os.chmod(os.path.join(tools, "apt-get"), 0o755)
        os.chmod(os.path.join(tools, "sudo"), 0o755)
        run = subprocess.run([os.path.join(tools, "bash"),
                              os.path.join(tree, "grader", "install-deps.sh")],
                             env={"PATH": tools}, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, universal_newlines=True)
        self.assertEqual(run.returncode, 1, run.stderr)
        lines = run.stderr.splitlines()
        # The seccomp bindings are asked for beside it where this machine lacks them too.
        failed = re.compile(r"apt-get %s bubblewrap( python3-seccomp)? failed: E: Unable to "
                            r"locate package bubblewrap$"
                            % ("install" if os.geteuid() == 0 else "download"))
        self.assertIn("deps: bubblewrap is missing, so make grade cannot confine "
                      "submissions: %s" % ("" if os.geteuid() == 0 else "not root and no sudo, "
                                           "and "), run.stderr)
        self.assertTrue(any(failed.search(line) for line in lines), run.stderr)
        if os.geteuid() == 0:
            self.assertNotIn("as root, run", run.stderr)
        self.assertTrue(all(len(line) < 200 for line in lines), run.stderr)


class Toolchain(unittest.TestCase):
    def listed(self, *variables):
        env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MAKELEVEL")}
        run = subprocess.run(["make", "-s", "--no-print-directory", "list-toolchain"] +
                             list(variables), cwd=COURSE, env=env, stdout=subprocess.PIPE,
                             universal_newlines=True, check=True)
        return dict(line.partition("=")[::2] for line in run.stdout.splitlines())

    def test_the_builds_get_what_the_courses_make_resolved(self):
        # A submission is built with a bare environment: CUDA_HOME must be passed
        # down explicitly, or it finds another toolkit than the course did, or none.
        own = course.Course(COURSE)
        own.resolve_toolchain()
        expected = self.listed()
        self.assertEqual(own.make_vars["CUDA_HOME"], expected["CUDA_HOME"])
        self.assertEqual(own.make_vars["CC"], expected["CC"])

    def test_what_the_instructor_gave_is_kept(self):
        own = course.Course(COURSE, make_vars={"CUDA_HOME": "/opt/cuda-given"})
        own.resolve_toolchain()
        self.assertEqual(own.make_vars["CUDA_HOME"], "/opt/cuda-given")


if __name__ == "__main__":
    unittest.main()

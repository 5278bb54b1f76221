"""Choosing the confinement: a view of its own, or a refusal that says why and what to do."""
import os
import shutil
import sys
import tempfile
import unittest
from unittest import mock

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, HERE)
import sandbox  # noqa: E402


class Choosing(unittest.TestCase):
    def setUp(self):
        self.scratch = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.scratch, True)

    def test_a_view_is_used_where_it_works(self):
        confinement = sandbox.probe(self.scratch, [], lambda c: None)
        self.assertTrue(confinement.view)
        self.assertIn("bubblewrap", confinement.describe())

    def test_without_bubblewrap_untrusted_submissions_are_refused_with_the_way_out(self):
        with mock.patch.object(sandbox, "bubblewrap_program", return_value=None):
            with self.assertRaises(RuntimeError) as refused:
                sandbox.probe(self.scratch, [], lambda c: None)
        message = str(refused.exception)
        for words in ("not installed", "make deps", sandbox.TRUST_FLAG):
            self.assertIn(words, message)

    def test_a_view_that_fails_is_refused_and_said_why(self):
        def trial(confinement):
            return "bwrap: setting up uid map: Permission denied" if confinement.view else None

        with self.assertRaises(RuntimeError) as refused:
            sandbox.probe(self.scratch, [], trial)
        self.assertIn("uid map", str(refused.exception))
        self.assertIn(sandbox.TRUST_FLAG, str(refused.exception))

    def test_trusted_submissions_fall_back_to_the_older_layers_and_say_so(self):
        def trial(confinement):
            return "bwrap: no" if confinement.view else None

        confinement = sandbox.probe(self.scratch, [], trial, trust=True)
        self.assertFalse(confinement.view)
        self.assertTrue(any("trusted" in note for note in confinement.notes))

    def test_the_seccomp_filter_is_dropped_only_where_it_fails(self):
        def trial(confinement):
            return "seccomp broke CUDA" if confinement.seccomp else None

        confinement = sandbox.probe(self.scratch, [], trial)
        self.assertTrue(confinement.view)
        if sandbox.seccomp_program(self.scratch)[0]:
            self.assertTrue(any("seccomp broke CUDA" in n for n in confinement.notes))


class Views(unittest.TestCase):
    def test_a_runs_view_holds_its_folders_and_nothing_of_the_hosts_tmp(self):
        scratch = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, scratch, True)
        view = os.path.join(scratch, "alice", "01", "view")
        os.makedirs(view)
        confinement = sandbox.Confinement(scratch, [], view=True)
        command = confinement.bubblewrap([view], [], os.path.join(scratch, "alice", "01", "run"))
        text = " ".join(command)
        self.assertIn("--ro-bind %s %s" % (view, view), text)
        self.assertIn("--tmpfs /tmp", text)
        self.assertIn("--tmpfs /dev/shm", text)
        self.assertNotIn("--bind /tmp ", text)
        self.assertEqual(command[command.index("--chdir") + 1], "/tmp")  # cwd not shown
        self.assertLess(text.index("--tmpfs /tmp"), text.index("--ro-bind " + view))


if __name__ == "__main__":
    unittest.main()

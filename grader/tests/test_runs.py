"""Running the test host confined: the result channel, crashes, output, time, leftovers.

Uses the harness's own fixtures (selftest/fixtures/), whose tests touch no
CUDA, so this runs on any machine, under whatever confinement it allows.
"""
import os
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

FIXTURES = ("behaviour", "result_channel")


def processes_with(marker):
    found = []
    for pid in os.listdir("/proc"):
        try:
            with open("/proc/%s/cmdline" % pid, "rb") as f:
                if marker.encode() in f.read():
                    found.append(pid)
        except OSError:
            pass
    return found


class Runs(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MAKELEVEL")}
        modules = ["build/modules/fixtures/%s/%s.so" % (f, side) for f in FIXTURES
                   for side in ("tests", "learner")]
        subprocess.run(["make", "-s", "--no-print-directory", "build/tests/host",
                        "build/tests/worker"] + modules, cwd=COURSE, env=env, check=True)
        cls.scratch = tempfile.mkdtemp()
        os.chmod(cls.scratch, 0o755)
        # The host, its worker beside it, and the fixtures' modules, where any uid can run them.
        shutil.copy(os.path.join(COURSE, "build", "tests", "host"), cls.scratch)
        shutil.copy(os.path.join(COURSE, "build", "tests", "worker"), cls.scratch)
        for module in modules:
            fixture, side = module.split("/")[-2], os.path.basename(module)
            shutil.copy(os.path.join(COURSE, module),
                        os.path.join(cls.scratch, "%s-%s" % (fixture, side)))
        # Claimed like a grader's: the hang test kills whatever runs as it.
        cls.uid = grade.claim_uids(1)[0] if os.geteuid() == 0 else None
        os.makedirs(os.path.join(cls.scratch, "run"))
        if cls.uid is not None:
            os.chown(os.path.join(cls.scratch, "run"), cls.uid, cls.uid)

        def trial(confinement):
            run = confinement.run(["/bin/true"], cls.scratch, {"PATH": "/usr/bin:/bin"}, 10,
                                  sandbox.Limits(10, 1 << 20), cls.uid, visible=[cls.scratch])
            return None if run.returncode == 0 else run.output.decode(errors="replace")

        # The libraries the fixtures load from outside /usr (Check unpacked into .deps/, the
        # CUDA toolkit), as the grader shows them.
        cls.confinement = sandbox.probe(cls.scratch, [COURSE], trial,
                                        course.Course(COURSE).libraries(), trust=True)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.scratch, ignore_errors=True)

    def run_fixture(self, name, timeout=60):
        host = os.path.join(self.scratch, "host")
        tests = os.path.join(self.scratch, name + "-tests.so")
        learner = os.path.join(self.scratch, name + "-learner.so")
        rubric = os.path.join(self.scratch, name + ".json")
        subprocess.run([host, "--module", tests, "--rubric", "--json", rubric],
                       stdout=subprocess.DEVNULL, check=True)
        with open(rubric) as f:
            import json
            exercise = course.Exercise("selftest/" + name, json.load(f))
        env = {"PATH": "/usr/bin:/bin", "COURSE_SKIP_GPU_PROBE": "1", "COURSE_TEST_TIMEOUT": "2",
               "CK_FORK": "yes", "NO_COLOR": "1", "HOME": self.scratch,
               "CK_TMPDIR": self.confinement.home(os.path.join(self.scratch, "run"))}
        run = self.confinement.run([host, "--module", tests, "--learner", learner],
                                   os.path.join(self.scratch, "run"), env, timeout,
                                   sandbox.Limits(30, grade.HOST_FILE_BYTES,
                                                  256 if self.uid else None),
                                   self.uid, result_channel=True, sweep=True,
                                   visible=[self.scratch])
        return run, grade.parse_records(run.channel, [exercise]).get(exercise.id)

    def test_the_runners_record_arrives_and_bad_tests_fail_alone(self):
        run, record = self.run_fixture("behaviour")
        self.assertIsNotNone(record, run.output.decode(errors="replace"))
        self.assertEqual(record["status"], "failed")
        passed = [t["name"] for t in record["tests"] if t["passed"]]
        self.assertEqual(passed, ["a test that passes", "a test after the bad ones still passes"])
        messages = " ".join(t["message"] for t in record["tests"])
        for words in ("crashed", "did not finish within 2 s", "called exit(0)"):
            self.assertIn(words, messages)

    def test_a_test_cannot_write_on_the_result_channel(self):
        run, record = self.run_fixture("result_channel")
        self.assertIsNotNone(record, "the channel did not hold one whole record: %r"
                             % run.channel)
        self.assertNotIn("forged", record)  # the runner's own record, not the forged one
        self.assertEqual([t["passed"] for t in record["tests"]], [False, False, False])
        # Nothing of the checker's was within the learner's code's reach.
        self.assertIn("it reached 0 of the checker's", record["tests"][0]["message"])
        # What a test prints reaches its learner as the test's output, inside the diagnostic.
        self.assertIn("It printed", record["tests"][2]["message"])

    def test_output_is_counted_and_capped(self):
        run = self.confinement.run(["head", "-c", "20000000", "/dev/zero"], self.scratch,
                                   {"PATH": "/usr/bin:/bin"}, 30,
                                   sandbox.Limits(30, 1 << 20), self.uid, keep_output=4096)
        self.assertEqual(run.output_bytes, 20000000)
        self.assertEqual(len(run.output), 4096)

    def test_a_hang_is_stopped_and_nothing_it_started_survives(self):
        if not ("pid" in self.confinement.namespaces or self.confinement.uids or
                self.confinement.view):
            self.skipTest("neither a pid namespace nor a uid of its own here: a process that "
                          "leaves its session can outlive its run")
        marker = "313.%d" % os.getpid()
        started = time.monotonic()
        run = self.confinement.run(
            ["sh", "-c", "setsid sleep %s & setsid sh -c 'sleep %s' & sleep %s" % ((marker,) * 3)],
            os.path.join(self.scratch, "run"), {"PATH": "/usr/bin:/bin"}, 2,
            sandbox.Limits(30, 1 << 20, 64 if self.uid else None), self.uid, sweep=True)
        self.assertTrue(run.timed_out)
        self.assertLess(time.monotonic() - started, 15)
        deadline = time.monotonic() + 5
        while processes_with(marker) and time.monotonic() < deadline:
            time.sleep(0.1)
        self.assertEqual(processes_with(marker), [])

    def test_no_network(self):
        if "net" not in self.confinement.namespaces and not self.confinement.view:
            self.skipTest("no network namespace here")
        run = self.confinement.run(["cat", "/proc/net/dev"], self.scratch,
                                   {"PATH": "/usr/bin:/bin"}, 10, sandbox.Limits(10, 1 << 20),
                                   self.uid)
        interfaces = [line.split(":")[0].strip() for line in
                      run.output.decode().splitlines()[2:]]
        self.assertEqual(interfaces, ["lo"])

    def test_proc_describes_the_process_that_reads_it(self):
        # In a pid namespace that kept its parent's /proc, /proc/self is another pid
        # than getpid() says, and the CUDA driver fails (cudaErrorOperatingSystem).
        run = self.confinement.run(
            ["sh", "-c", 'read -r pid rest </proc/self/stat; echo "$pid $$"'], self.scratch,
            {"PATH": "/usr/bin:/bin"}, 10, sandbox.Limits(10, 1 << 20), self.uid)
        proc_pid, own_pid = run.output.decode().split()
        self.assertEqual(proc_pid, own_pid, "confined as: %s" % self.confinement.describe())

    def test_the_protected_folders_are_read_only(self):
        if "mount" not in self.confinement.namespaces and not self.confinement.uids and \
                not self.confinement.view:
            self.skipTest("neither a mount namespace nor a uid of its own here")
        target = os.path.join(COURSE, "build", "grader-test-%d" % os.getpid())
        run = self.confinement.run(["touch", target], self.scratch, {"PATH": "/usr/bin:/bin"},
                                   10, sandbox.Limits(10, 1 << 20), self.uid)
        self.assertNotEqual(run.returncode, 0)
        self.assertFalse(os.path.exists(target))


class Views(unittest.TestCase):
    """With bubblewrap: what a run sees of the machine, and what it may do there."""

    @classmethod
    def setUpClass(cls):
        cls.scratch = tempfile.mkdtemp()
        os.chmod(cls.scratch, 0o755)
        cls.uid = grade.claim_uids(1)[0] if os.geteuid() == 0 else None
        seccomp, _ = sandbox.seccomp_program(cls.scratch)
        cls.confinement = sandbox.Confinement(cls.scratch, [], uids=cls.uid is not None,
                                              view=True, seccomp=seccomp)
        cls.confinement.tmp_bytes = 4 << 20
        run = cls.sh(cls, "true")
        if run.returncode != 0:
            raise unittest.SkipTest("bubblewrap does not run here: %s" % run.output.decode(
                errors="replace").strip())

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.scratch, ignore_errors=True)

    def sh(self, script, visible=()):
        return self.confinement.run(["sh", "-c", script], self.scratch,
                                    {"PATH": "/usr/bin:/bin"}, 20, sandbox.Limits(20, 64 << 20),
                                    self.uid, visible=list(visible))

    def test_only_what_the_run_needs_is_there(self):
        marker = tempfile.NamedTemporaryFile(prefix="grader-host-", dir="/tmp")
        self.addCleanup(marker.close)
        run = self.sh("ls /tmp /dev/shm; ls -d /run %s %s %s 2>&1; ls %s" % (
            os.path.join(COURSE, "solutions"), os.path.join(COURSE, "selftest"),
            os.path.expanduser("~"), self.scratch), visible=[self.scratch])
        text = run.output.decode(errors="replace")
        self.assertNotIn("grader-host-", text)
        self.assertEqual(text.count("No such file or directory"), 4, text)

    def test_tmp_is_private_and_limited(self):
        run = self.sh("head -c 8000000 /dev/zero > /tmp/big; echo status $?; "
                      "head -c 8000000 /dev/zero > /dev/shm/big; echo status $?")
        self.assertEqual(run.output.decode(errors="replace").count("status 1"), 2,
                         run.output.decode(errors="replace"))

    def test_the_view_is_read_only_outside_tmp(self):
        shown = os.path.join(self.scratch, "shown")
        os.makedirs(shown, exist_ok=True)
        run = self.sh("touch %s/x /usr/x /x 2>/dev/null; ls %s" % (shown, shown),
                      visible=[shown])
        self.assertFalse(os.path.exists(os.path.join(shown, "x")))
        self.assertEqual(run.output.strip(), b"")

    def test_the_seccomp_filter_denies_new_namespaces(self):
        if not self.confinement.seccomp:
            self.skipTest("no seccomp filter here (python3-seccomp)")
        run = self.sh("unshare --user --map-root-user true && echo escaped || echo denied")
        self.assertIn(b"denied", run.output)


if __name__ == "__main__":
    unittest.main()

"""Finding students and their exercise files in folders and archives, whatever they hold."""
import io
import os
import shutil
import sys
import tarfile
import tempfile
import unittest
import zipfile

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import submissions  # noqa: E402

EXERCISES = ["ch01-memory/roundtrip", "ch01-memory/directions"]


def found(path):
    submission = submissions.Submission("s", path)
    submissions.read_files(submission, EXERCISES)
    return submission


class Folders(unittest.TestCase):
    def setUp(self):
        self.root = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.root, True)

    def write(self, relative, data=b"int x;\n"):
        path = os.path.join(self.root, relative)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(data)
        return path

    def test_exercise_files_are_found_with_or_without_the_exercises_prefix(self):
        self.write("alice/exercises/ch01-memory/roundtrip.c", b"A")
        self.write("alice/ch01-memory/directions.c", b"B")
        got = found(os.path.join(self.root, "alice"))
        self.assertEqual(got.files, {"ch01-memory/roundtrip.c"[:-2]: b"A",
                                     "ch01-memory/directions": b"B"})

    def test_one_extra_top_folder_is_tolerated_two_are_not(self):
        self.write("bob/bob/ch01-memory/roundtrip.c")
        self.write("bob/a/b/ch01-memory/directions.c")
        got = found(os.path.join(self.root, "bob"))
        self.assertEqual(list(got.files), ["ch01-memory/roundtrip"])

    def test_headers_tests_and_unknown_files_are_ignored_and_listed(self):
        self.write("c/ch01-memory/roundtrip.h")
        self.write("c/ch01-memory/mine.c")
        got = found(os.path.join(self.root, "c"))
        self.assertEqual(got.files, {})
        self.assertEqual(len(got.notes), 2)

    def test_a_symbolic_link_is_not_followed(self):
        target = self.write("secret.c", b"SECRET")
        os.makedirs(os.path.join(self.root, "d", "ch01-memory"))
        os.symlink(target, os.path.join(self.root, "d", "ch01-memory", "roundtrip.c"))
        got = found(os.path.join(self.root, "d"))
        self.assertEqual(got.files, {})
        self.assertIn("not a regular file", got.notes[0])

    def test_a_file_too_large_is_ignored(self):
        self.write("e/ch01-memory/roundtrip.c", b"x" * (submissions.MAX_FILE_BYTES + 1))
        got = found(os.path.join(self.root, "e"))
        self.assertEqual(got.files, {})
        self.assertIn("larger than", got.notes[0])

    def test_the_copy_nearest_the_top_is_taken(self):
        self.write("f/ch01-memory/roundtrip.c", b"TOP")
        self.write("f/exercises/ch01-memory/roundtrip.c", b"DEEPER")
        self.assertEqual(found(os.path.join(self.root, "f")).files["ch01-memory/roundtrip"],
                         b"TOP")

    def test_a_file_uploaded_alone_is_taken_by_its_name(self):
        self.write("g/roundtrip.c", b"FLAT")
        self.write("g/g/directions.c", b"FLAT IN A TOP FOLDER")
        self.assertEqual(found(os.path.join(self.root, "g")).files,
                         {"ch01-memory/roundtrip": b"FLAT",
                          "ch01-memory/directions": b"FLAT IN A TOP FOLDER"})

    def test_a_file_in_its_chapters_folder_wins_over_a_bare_one(self):
        self.write("h/roundtrip.c", b"BARE")
        self.write("h/exercises/ch01-memory/roundtrip.c", b"IN ITS FOLDER")
        got = found(os.path.join(self.root, "h"))
        self.assertEqual(got.files["ch01-memory/roundtrip"], b"IN ITS FOLDER")
        self.assertTrue(any(note.startswith("ignored roundtrip.c:") for note in got.notes))

    def test_a_bare_name_two_exercises_share_is_not_guessed(self):
        self.write("i/roundtrip.c")
        got = submissions.Submission("s", os.path.join(self.root, "i"))
        submissions.read_files(got, EXERCISES + ["ch02-pinned/roundtrip"])
        self.assertEqual(got.files, {})
        self.assertIn("several exercises are called that", got.notes[0])

    def test_students_are_named_safely_and_told_apart(self):
        self.write("alice/ch01-memory/roundtrip.c")
        with zipfile.ZipFile(os.path.join(self.root, "alice.zip"), "w") as z:
            z.writestr("ch01-memory/roundtrip.c", "x")
        self.write("notes.txt")
        self.write("we ird;name$/ch01-memory/roundtrip.c")
        self.write("=formula/ch01-memory/roundtrip.c")
        self.write(".hidden/ch01-memory/roundtrip.c")
        students, skipped = submissions.discover(self.root)
        self.assertEqual(sorted(s.student for s in students),
                         ["_formula", "alice", "alice-2", "we_ird_name_"])
        self.assertEqual(len(skipped), 2)


    def test_names_that_are_not_utf8_are_graded_and_shown_escaped(self):
        root = os.fsencode(self.root)
        folder = os.path.join(root, b"st\xffudent")
        os.makedirs(os.path.join(folder, b"ch01-memory"))
        with open(os.path.join(folder, b"ch01-memory", b"roundtrip.c"), "wb") as f:
            f.write(b"A")
        open(os.path.join(folder, b"ch01-memory", b"n\xfe.c"), "wb").close()
        (got,), _ = submissions.discover(self.root)
        submissions.read_files(got, EXERCISES)
        self.assertEqual(got.files, {"ch01-memory/roundtrip": b"A"})
        self.assertEqual(got.student, "st_udent")
        self.assertEqual(got.shown_name, "st\\xffudent")
        self.assertIn("ch01-memory/n\\xfe.c", got.notes[0])
        for text in [got.shown_name] + got.notes:
            text.encode("utf-8")  # what a feedback file can hold


class Archives(unittest.TestCase):
    def setUp(self):
        self.root = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.root, True)

    def test_a_zip_with_a_top_folder(self):
        path = os.path.join(self.root, "s.zip")
        with zipfile.ZipFile(path, "w") as z:
            z.writestr("work/exercises/ch01-memory/roundtrip.c", "R")
            z.writestr("__MACOSX/work/ch01-memory/._directions.c", "junk")
        self.assertEqual(found(path).files, {"ch01-memory/roundtrip": b"R"})

    def test_a_zip_link_member_is_ignored(self):
        path = os.path.join(self.root, "s.zip")
        with zipfile.ZipFile(path, "w") as z:
            info = zipfile.ZipInfo("ch01-memory/roundtrip.c")
            info.external_attr = (0o120777 << 16)
            z.writestr(info, "/etc/passwd")
        got = found(path)
        self.assertEqual(got.files, {})
        self.assertIn("not a regular file", got.notes[0])

    def test_a_tar_gz_never_yields_links_devices_or_paths_outside_it(self):
        path = os.path.join(self.root, "s.tar.gz")
        with tarfile.open(path, "w:gz") as t:
            for name, kind in (("../ch01-memory/roundtrip.c", tarfile.REGTYPE),
                               ("/abs/ch01-memory/roundtrip.c", tarfile.REGTYPE),
                               ("ch01-memory/roundtrip.c", tarfile.SYMTYPE),
                               ("exercises/ch01-memory/roundtrip.c", tarfile.CHRTYPE),
                               ("ch01-memory/directions.c", tarfile.REGTYPE)):
                info = tarfile.TarInfo(name)
                info.type = kind
                data = b"D" if kind == tarfile.REGTYPE else b""
                info.size = len(data)
                info.linkname = "/etc/passwd" if kind == tarfile.SYMTYPE else ""
                t.addfile(info, io.BytesIO(data))
        got = found(path)
        self.assertEqual(got.files, {"ch01-memory/directions": b"D"})
        self.assertEqual(len(got.notes), 4)

    def test_a_broken_archive_is_a_problem_not_a_crash(self):
        path = os.path.join(self.root, "s.zip")
        with open(path, "wb") as f:
            f.write(b"PK\x03\x04 not really")
        got = found(path)
        self.assertIn("could not be read", got.problem)
        self.assertEqual(got.files, {})


if __name__ == "__main__":
    unittest.main()

"""submissions.py - the students in a submissions folder, and their exercise files.

A submission is a folder, a .zip or a .tar.gz (.tgz) named after the student.
Inside, an exercise file sits at chNN-slug/NAME.c, with or without an
exercises/ prefix, and possibly under one extra top-level folder (what zipping
a folder produces); or alone as NAME.c, where only one exercise has that name. Only files whose path names a course exercise are taken;
everything else (headers, tests, Makefiles, notes) is listed as ignored.

Archives are never unpacked to disk: members are read in memory, only regular
files, only the ones wanted, each up to MAX_FILE_BYTES. Member names with ".."
or an absolute path, links and devices are ignored and said so; so are links
in a folder submission. Nothing here follows a path the submission chose.
"""

import hashlib
import os
import re
import stat
import tarfile
import zipfile

MAX_FILE_BYTES = 1 << 20  # an exercise file is a page or two of C
MAX_MEMBERS = 20000  # members looked at in one archive
MAX_SCANNED_BYTES = 256 << 20  # uncompressed bytes a .tar.gz may make us read

ARCHIVE_SUFFIXES = (".tar.gz", ".tgz", ".zip")


def shown(name):
    """A file name as text that can be written anywhere: bytes that are not UTF-8 as \\xNN.

    Names from the file system and from tar archives keep such bytes as lone
    surrogates (Python's surrogateescape), which no UTF-8 file can hold.
    """
    return name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


class Submission:
    """One student's submission: where it is, and what was found in it."""

    def __init__(self, student, path):
        self.student = student  # a safe name: letters, digits, . _ - + @
        self.path = path
        self.shown_name = shown(os.path.basename(path))  # the entry's name, as reports show it
        self.files = {}  # exercise id -> bytes of its .c file
        self.notes = []  # what was ignored and why, for the feedback
        self.problem = None  # the submission as a whole could not be read

    def fingerprint(self):
        """Changes when the files graded change: a resubmission is graded again."""
        digest = hashlib.sha256()
        for exercise in sorted(self.files):
            digest.update(exercise.encode() + b"\0" + hashlib.sha256(
                self.files[exercise]).digest())
        return digest.hexdigest()


def safe_name(name):
    """A student name usable as a file name and a CSV cell."""
    cleaned = re.sub(r"[^A-Za-z0-9._@+-]", "_", name).lstrip(".")
    return cleaned[:100] or "unnamed"


def student_name(entry):
    """'alice.tar.gz' -> 'alice'; a folder's name as it is."""
    for suffix in ARCHIVE_SUFFIXES:
        if entry.lower().endswith(suffix):
            return entry[: -len(suffix)]
    return entry


def discover(folder):
    """The submissions in `folder`, sorted by student, and notes on entries skipped."""
    found, skipped, taken = [], [], set()
    for entry in sorted(os.listdir(folder)):
        path = os.path.join(folder, entry)
        info = os.lstat(path)
        is_archive = stat.S_ISREG(info.st_mode) and entry.lower().endswith(ARCHIVE_SUFFIXES)
        if entry.startswith(".") or not (stat.S_ISDIR(info.st_mode) or is_archive):
            skipped.append("%s: neither a folder nor a .zip/.tar.gz" % shown(entry))
            continue
        name = base = safe_name(student_name(entry))
        suffix = 2
        while name in taken:  # alice/ and alice.zip: both graded, told apart
            name = "%s-%d" % (base, suffix)
            suffix += 1
        taken.add(name)
        found.append(Submission(name, path))
    return found, skipped


def exercise_of(member, exercises):
    """The exercise a member path holds, or None.

    Accepted: [TOP/][exercises/]chNN-slug/NAME.c where chNN-slug/NAME is an exercise,
    and [TOP/]NAME.c alone (a file uploaded as it is) where exactly one exercise of
    the course is called NAME.
    """
    parts = member.split("/")
    for drop_top in (False, True):
        rest = parts[1:] if drop_top else parts
        if rest[:1] == ["exercises"]:
            rest = rest[1:]
        if len(rest) == 2 and rest[1].endswith(".c"):
            exercise = rest[0] + "/" + rest[1][:-2]
            if exercise in exercises:
                return exercise
        if len(rest) == 1 and rest[0].endswith(".c"):
            named = [e for e in exercises if e.split("/")[-1] == rest[0][:-2]]
            if len(named) == 1:
                return named[0]
    return None


def _clean_member_name(name):
    """A member name as a relative path, or None when it climbs out or is absolute."""
    name = name.replace("\\", "/")
    if name.startswith("/") or re.match(r"^[A-Za-z]:", name):
        return None
    parts = [p for p in name.split("/") if p not in ("", ".")]
    if any(p == ".." for p in parts):
        return None
    return "/".join(parts)


class _Collector:
    """Gathers candidates for each exercise; keeps the one nearest the top."""

    def __init__(self, submission, exercises):
        self.submission = submission
        self.exercises = exercises
        self.chosen = {}  # exercise -> (depth, member)

    def ignore(self, member, why):
        if len(self.submission.notes) < 20:
            self.submission.notes.append("ignored %s: %s" % (shown(member), why))

    def consider(self, raw_name, kind, size, read):
        """kind: 'file', 'dir' or a word for anything else; read() returns bytes (capped)."""
        name = _clean_member_name(raw_name)
        if name is None:
            if raw_name.endswith(".c"):
                self.ignore(raw_name, "its path leaves the submission")
            return
        if kind == "dir" or name.startswith("__MACOSX/") or "/__MACOSX/" in name:
            return
        exercise = exercise_of(name, self.exercises)
        if exercise is None:
            same_name = [e for e in self.exercises
                         if e.split("/")[-1] + ".c" == name.split("/")[-1]]
            if len(same_name) > 1:
                self.ignore(name, "several exercises are called that (%s): put it in its "
                                  "chapter's folder" % ", ".join(same_name))
            elif name.endswith((".c", ".h")):
                self.ignore(name, "not an exercise file of this course (only chNN-slug/NAME.c, "
                                  "or NAME.c for an exercise's NAME, is graded; headers and "
                                  "tests come from the course)")
            return
        if kind != "file":
            self.ignore(name, "a %s, not a regular file" % kind)
            return
        if size is not None and size > MAX_FILE_BYTES:
            self.ignore(name, "larger than %d KiB" % (MAX_FILE_BYTES >> 10))
            return
        # A file in its chapter's folder wins over a bare NAME.c; then the one nearest the top.
        bare = exercise.split("/")[0] not in name.split("/")[:-1]
        depth = (bare, name.count("/"))
        earlier = self.chosen.get(exercise)
        if earlier is not None and earlier[0] <= depth:
            self.ignore(name, "%s was already taken from %s" % (exercise, shown(earlier[1])))
            return
        try:
            data = read()
        except (OSError, ValueError, RuntimeError, EOFError, zipfile.BadZipFile,
                tarfile.TarError) as err:
            self.ignore(name, "it could not be read (%s)" % err)
            return
        if len(data) > MAX_FILE_BYTES:
            self.ignore(name, "larger than %d KiB" % (MAX_FILE_BYTES >> 10))
            return
        if earlier is not None:
            self.ignore(earlier[1], "%s is taken from %s instead" % (exercise, shown(name)))
        self.chosen[exercise] = (depth, name)
        self.submission.files[exercise] = data


def _read_folder(submission, collector):
    root = submission.path
    for folder, dirs, files in os.walk(root):
        dirs.sort()
        relative = os.path.relpath(folder, root)
        for entry in sorted(files) + [d for d in dirs if os.path.islink(os.path.join(folder, d))]:
            path = os.path.join(folder, entry)
            name = entry if relative == "." else relative + "/" + entry
            info = os.lstat(path)
            if stat.S_ISLNK(info.st_mode):
                collector.consider(name, "symbolic link", None, None)
            elif not stat.S_ISREG(info.st_mode):
                collector.consider(name, "special file", None, None)
            else:
                collector.consider(name, "file", info.st_size, lambda p=path: _read_capped(p))
        dirs[:] = [d for d in dirs if not os.path.islink(os.path.join(folder, d))]


def _read_capped(path):
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(path, flags)
    with os.fdopen(fd, "rb") as f:
        return f.read(MAX_FILE_BYTES + 1)


def _read_zip(submission, collector):
    with zipfile.ZipFile(submission.path) as archive:
        members = archive.infolist()
        if len(members) > MAX_MEMBERS:
            raise ValueError("more than %d members" % MAX_MEMBERS)
        for info in members:
            kind_bits = stat.S_IFMT((info.external_attr >> 16) & 0xFFFF)  # 0: not recorded
            if info.is_dir():
                kind = "dir"
            elif kind_bits == stat.S_IFLNK:
                kind = "symbolic link"
            elif kind_bits and kind_bits != stat.S_IFREG:
                kind = "special file"
            else:
                kind = "file"

            def read(info=info):
                with archive.open(info) as member:
                    return member.read(MAX_FILE_BYTES + 1)

            collector.consider(info.filename, kind, info.file_size, read)


def _read_tar(submission, collector):
    scanned = 0
    with tarfile.open(submission.path, "r:*") as archive:
        for count, info in enumerate(archive):
            if count >= MAX_MEMBERS:
                raise ValueError("more than %d members" % MAX_MEMBERS)
            scanned += info.size
            if scanned > MAX_SCANNED_BYTES:
                raise ValueError("more than %d MiB to read through" % (MAX_SCANNED_BYTES >> 20))
            if info.isdir():
                kind = "dir"
            elif info.issym() or info.islnk():
                kind = "link"
            elif not info.isfile():
                kind = "special file"
            else:
                kind = "file"

            def read(info=info):
                member = archive.extractfile(info)
                return member.read(MAX_FILE_BYTES + 1) if member else b""

            collector.consider(info.name, kind, info.size, read)


def read_files(submission, exercises):
    """Fills submission.files with the exercise files found; never raises."""
    collector = _Collector(submission, set(exercises))
    path = submission.path.lower()
    try:
        if os.path.isdir(submission.path):
            _read_folder(submission, collector)
        elif path.endswith(".zip"):
            _read_zip(submission, collector)
        else:
            _read_tar(submission, collector)
    except (OSError, ValueError, EOFError, zipfile.BadZipFile, tarfile.TarError, RuntimeError) as err:
        submission.problem = "the submission could not be read (%s)" % shown(str(err))
        submission.files.clear()
    return submission

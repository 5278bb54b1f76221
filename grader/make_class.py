#!/usr/bin/env python3
"""make_class.py - classes of submissions to grade: the self-test's and the benchmark's.

    make_class.py sample DEST       the self-test's class, and DEST.expected.tsv
    make_class.py benchmark DEST N [CHAPTER...]
                                    N students mixing good, partial and broken work
                                    (only the exercises of the chapters named, if any)
    make_class.py chapters [CHAPTER...]
                                    the exercises of those chapters, one a line

Built from the course itself (solutions/, exercises/, mutants/ and the
hostile samples in selftest/submissions/), so a new exercise joins both
classes by itself. Submissions come as folders, .zip and .tar.gz, some with an
extra top-level folder, some with the exercises/ prefix.

Expectations (DEST.expected.tsv, tab-separated): student, exercise (chNN-slug/*
for every exercise of a chapter not listed, * for every other one), points,
status, a phrase the feedback must hold (- for none). Points: a number, max,
all-but:TEST, only:TEST, or oracle:FILE, the points the course's own test
program gives FILE (a mutant or a stub), which the self-test measures.
"""

import io
import os
import random
import subprocess
import sys
import tarfile
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
COURSE = os.path.dirname(HERE)
SAMPLES = os.path.join(COURSE, "selftest", "submissions")


def course_exercises():
    run = subprocess.run(["make", "-s", "--no-print-directory", "list-exercises"], cwd=COURSE,
                         stdout=subprocess.PIPE, universal_newlines=True, check=True,
                         env={k: v for k, v in os.environ.items()
                              if k not in ("MAKEFLAGS", "MAKELEVEL", "MFLAGS")})
    return run.stdout.split()


def needing_more_gpus(exercises):
    """The exercises whose tests need more than one GPU (the rubric's gpus lines). make grade
    gives each test program one GPU, so a student who handed one in is never graded in full:
    the classes leave them out (grader/README.md, "Exercises about two GPUs")."""
    run = subprocess.run(["awk", "-f", "harness/report/rubric.awk"]
                         + ["tests/%s.c" % e for e in exercises], cwd=COURSE,
                         stdout=subprocess.PIPE, universal_newlines=True, check=True)
    return {fields[1] for fields in (line.split("\t") for line in run.stdout.splitlines())
            if fields[0] == "gpus" and int(fields[2]) > 1}


def read(*parts):
    with open(os.path.join(COURSE, *parts), "rb") as f:
        return f.read()


def mutants_of(exercise, made=[]):
    """The known mistakes of an exercise, as files: make applies each patch of mutants/ to its
    solution, into build/mutants/ (the first call asks it to)."""
    if not made:
        subprocess.run(["make", "-s", "--no-print-directory", "mutant-sources"], cwd=COURSE,
                       check=True, env={k: v for k, v in os.environ.items()
                                        if k not in ("MAKEFLAGS", "MAKELEVEL", "MFLAGS")})
        made.append(True)
    chapter, name = exercise.split("/")
    folder = os.path.join(COURSE, "mutants", chapter)
    return sorted("build/mutants/%s/%s.c" % (chapter, f[:-len(".patch")])
                  for f in os.listdir(folder)
                  if f.startswith(name + "--") and f.endswith(".patch")) \
        if os.path.isdir(folder) else []


# --- Writing submissions ------------------------------------------------------------------

def write_folder(dest, student, files):
    for path, data in files.items():
        target = os.path.join(dest, student, path)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(target, "wb") as f:
            f.write(data)


def write_zip(dest, student, files, top=None):
    with zipfile.ZipFile(os.path.join(dest, student + ".zip"), "w",
                         zipfile.ZIP_DEFLATED) as archive:
        for path, data in files.items():
            archive.writestr((top + "/" if top else "") + path, data)


def write_tar(dest, student, files, top=None, suffix=".tar.gz", extra=()):
    with tarfile.open(os.path.join(dest, student + suffix), "w:gz") as archive:
        for path, data in files.items():
            info = tarfile.TarInfo((top + "/" if top else "") + path)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
        for info in extra:
            archive.addfile(info)


def hostile_samples():
    return sorted(d for d in os.listdir(SAMPLES) if os.path.isdir(os.path.join(SAMPLES, d)))


def sample_files(name):
    files = {}
    root = os.path.join(SAMPLES, name)
    for folder, _, names in os.walk(root):
        for n in names:
            path = os.path.join(folder, n)
            files[os.path.relpath(path, root)] = read(os.path.relpath(path, COURSE))
    return files


# --- The self-test's class ------------------------------------------------------------------

def write_hostile_samples(dest):
    """The hostile samples of selftest/submissions/, some as archives, the rest as folders;
    their rows of expected.tsv are read from there."""
    expected = []
    packing = {"hostile-does-not-compile": "zip", "hostile-crash": "tar",
               "hostile-constructor": "zip-top"}
    # Solutions some samples hand in beside their own file: their points must not suffer from it.
    beside = {"hostile-stray-byte": ["ch01-memory/directions"]}
    for name in hostile_samples():
        files = sample_files(name)
        for exercise in beside.get(name, []):
            files[exercise + ".c"] = read("solutions", exercise + ".c")
        how = packing.get(name, "folder")
        if how == "zip":
            write_zip(dest, name, {"exercises/" + p: d for p, d in files.items()})
        elif how == "zip-top":
            write_zip(dest, name, files, top=name)
        elif how == "tar":
            write_tar(dest, name, files, top="submission")
        else:
            write_folder(dest, name, files)
        expected.append((name, "*", "0", "missing", "-"))
    return expected


def write_good_students(dest, exercises, everything):
    """A good student: the solutions of chapters 1 and 2, in a folder, with the exercises/
    prefix. And another, whose name sorts before the hostile samples, as the good one's sorts
    after them, with chapter 3's: both are graded beside them, and must lose nothing by it,
    their timed tests passing at their own speeds. The hostile samples aim at chapter 1's
    exercises and at the timed tests of chapters 1 to 3 beside them; make grade runs every
    chapter's solutions, timed tests included, in the agreement's class
    (selftest/sections/64-agreement.sh), so the class's honest students take the GPU for no
    more than that. (Each with all three chapters, they were the class's longest lanes: 85 s
    each, on an H100.) Returns their rows of the expectations."""
    expected = []
    for good, chapters in (("student-good", ("ch01", "ch02")), ("honest-first", ("ch03",))):
        solved = [e for e in exercises if e.split("-")[0] in chapters]
        write_folder(dest, good,
                     {"exercises/%s.c" % e: read("solutions", e + ".c") for e in solved})
        expected.append((good, "*", "max", "passed", "-"))
        expected += [(good, e, "0", "missing", "is missing")
                     for e in sorted(set(everything) - set(solved))]
    return expected


def sample_class(dest):
    everything = course_exercises()
    left_out = needing_more_gpus(everything)
    exercises = [e for e in everything if e not in left_out]
    os.makedirs(dest)
    expected = []

    expected += write_good_students(dest, exercises, everything)

    # A partial one, zipped with a top folder and no prefix: a third solved, a third
    # with a typical mistake (a mutant) or untouched, a third not handed in.
    files = {"Makefile": b"all:\n", "ch01-memory/notes.h": b"/* mine */\n"}
    for i, exercise in enumerate(exercises):
        if i % 3 == 0:
            files[exercise + ".c"] = read("solutions", exercise + ".c")
            expected.append(("student-partial", exercise, "max", "passed", "-"))
        elif i % 3 == 1:
            mutants = mutants_of(exercise)
            source = mutants[0] if mutants else "exercises/%s.c" % exercise
            files[exercise + ".c"] = read(source)
            expected.append(("student-partial", exercise, "oracle:" + source, "any", "-"))
        else:
            expected.append(("student-partial", exercise, "0", "missing", "is missing"))
    expected += [("student-partial", e, "0", "missing", "is missing") for e in sorted(left_out)]
    write_zip(dest, "student-partial", files, top="partial-work")

    # One who handed in chapter 1's stubs as they came: not started, with or without a GPU.
    # (Every chapter's took 87 s of a lane on an H100: the longest but one.)
    stubs = [e for e in everything if e.startswith("ch01-")]
    write_folder(dest, "student-not-started",
                 {"%s.c" % e: read("exercises", e + ".c") for e in stubs})
    expected.append(("student-not-started", "ch01-memory/*", "0", "not_started",
                     "replace its TODO"))
    expected.append(("student-not-started", "*", "0", "missing", "is missing"))

    # One whose files all sit in the wrong places, as a .tar.gz.
    write_tar(dest, "student-missing", {
        "notes.txt": b"I did them all!\n",
        "src/roundtrip.c": read("solutions", "ch01-memory/roundtrip.c"),
        "ch01-memory/Roundtrip.c": read("solutions", "ch01-memory/roundtrip.c"),
        "ch01-memory/roundtrip.h": b"/* a header of my own */\n",
    }, top="student-missing")
    expected.append(("student-missing", "*", "0", "missing", "is missing"))

    # One who uploaded two files as they are, NAME.c with no folder at all.
    uploaded = exercises[:2]
    write_folder(dest, "student-uploads", {e.split("/")[-1] + ".c": read("solutions", e + ".c")
                                           for e in uploaded})
    for exercise in everything:
        expected.append(("student-uploads", exercise, "max", "passed", "-") if exercise in uploaded
                        else ("student-uploads", exercise, "0", "missing", "is missing"))

    # An archive that tries to reach outside itself: a link to the course's solution,
    # a path that climbs out, a device. All ignored.
    link = tarfile.TarInfo("ch01-memory/roundtrip.c")
    link.type = tarfile.SYMTYPE
    link.linkname = os.path.join(COURSE, "solutions", "ch01-memory", "roundtrip.c")
    device = tarfile.TarInfo("exercises/ch01-memory/roundtrip.c")
    device.type = tarfile.CHRTYPE
    write_tar(dest, "hostile-bad-archive",
              {"../../ch01-memory/roundtrip.c": read("solutions", "ch01-memory/roundtrip.c")},
              suffix=".tgz", extra=(link, device))
    expected.append(("hostile-bad-archive", "*", "0", "missing", "not a regular file"))

    expected += write_hostile_samples(dest)
    with open(os.path.join(SAMPLES, "expected.tsv")) as f:
        expected += [tuple(line.rstrip("\n").split("\t")) for line in f
                     if line.strip() and not line.startswith("#")]
    with open(dest.rstrip("/") + ".expected.tsv", "w") as f:
        for row in expected:
            f.write("\t".join(row) + "\n")


# --- The benchmark's class ----------------------------------------------------------------

class NoSuchChapter(ValueError):
    """A chapter named for the benchmark's class that has no exercises."""


def in_chapters(exercises, chapters):
    """The exercises of the chapters named as make run's CH names one (1, 01, ch01 or
    ch01-memory); all of them where none is named. A name that matches no chapter is an error."""
    if not chapters:
        return exercises
    kept = set()
    for name in chapters:
        forms = {name, "ch0" + name, "ch" + name}
        found = {e for e in exercises if e.split("/")[0] in forms
                 or e.split("/")[0].split("-")[0] in forms}
        if not found:
            raise NoSuchChapter("CH=%s names no chapter with exercises; the chapters: %s" % (
                name, " ".join(sorted({e.split("/")[0] for e in exercises}))))
        kept |= found
    return [e for e in exercises if e in kept]


def benchmark_class(dest, count, seed=1, chapters=()):
    """count students: good, partial, broken, missing files, crashing and hanging work.

    Roughly 55% solve everything, 23% some of it (solutions, mutants, stubs,
    gaps), 8% hand in files that do not compile, 7% miss files, 5% crash in
    one test and 2% hang in one (which costs a test's whole time limit).
    Folders, .zip with a top folder and .tar.gz without the exercises/ prefix.
    Only the exercises of `chapters` where it names some (in_chapters): a class
    as a course of those chapters alone would have, to compare with runs made
    before the others existed.
    """
    exercises = in_chapters(course_exercises(), chapters)
    left_out = needing_more_gpus(exercises)
    exercises = [e for e in exercises if e not in left_out]
    rng = random.Random(seed)
    os.makedirs(dest)
    broken = b"#include <stdio.h>\nint oops(void) { return undeclared; }\n"
    shares = [("good", 0.55), ("partial", 0.78), ("broken", 0.86), ("missing", 0.93),
              ("crashing", 0.98), ("hanging", 1.0)]
    kinds = {}
    for i in range(count):
        roll = rng.random()
        kind = next(name for name, upto in shares if roll < upto)
        kinds[kind] = kinds.get(kind, 0) + 1
        files = {}
        for exercise in exercises:
            solution = read("solutions", exercise + ".c")
            if kind == "partial":
                choice = rng.choice(["solution", "mutant", "stub", "missing"])
                mutants = mutants_of(exercise)
                if choice == "solution":
                    files[exercise] = solution
                elif choice == "mutant" and mutants:
                    files[exercise] = read(rng.choice(mutants))
                elif choice != "missing":
                    files[exercise] = read("exercises", exercise + ".c")
            elif kind == "broken":
                files[exercise] = broken if rng.random() < 0.5 else solution
            elif kind == "missing":
                if rng.random() < 0.5:
                    files[exercise] = solution
            elif kind in ("crashing", "hanging") and exercise == "ch01-memory/roundtrip":
                sample = "hostile-crash" if kind == "crashing" else "hostile-hang"
                files[exercise] = read("selftest", "submissions", sample, exercise + ".c")
            else:
                files[exercise] = solution
        name = "student-%03d" % i
        if i % 3 == 0:
            write_folder(dest, name, {"exercises/%s.c" % e: d for e, d in files.items()})
        elif i % 3 == 1:
            write_zip(dest, name, {"exercises/%s.c" % e: d for e, d in files.items()}, top=name)
        else:
            write_tar(dest, name, {"%s.c" % e: d for e, d in files.items()})
    return kinds


def main(argv):
    if len(argv) >= 2 and argv[0] == "sample":
        sample_class(argv[1])
    elif len(argv) >= 1 and argv[0] == "chapters":
        print("\n".join(in_chapters(course_exercises(), argv[1:])))
    elif len(argv) >= 3 and argv[0] == "benchmark":
        kinds = benchmark_class(argv[1], int(argv[2]), chapters=argv[3:])
        print(", ".join("%d %s" % (n, k) for k, n in sorted(kinds.items())))
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except NoSuchChapter as err:
        print("make grade-benchmark: %s" % err, file=sys.stderr)
        sys.exit(2)

#!/usr/bin/env python3
"""export.py - `make grade-export`: the gradebook in OUT as a file Canvas or Moodle imports.

    export.py --format canvas|moodle --roster ROSTER.csv --out OUT [--columns total|exercises]
              [--assignment NAME] [--moodle-id email|idnumber|username]

grades.csv is keyed by submission folder; an LMS knows students by its own identifiers. The
roster (a CSV file with a header row) maps one to the other: a `Submission` column holding the
folder's name as in grades.csv (or the entry's, alice.zip), and the LMS's columns: for Canvas
`Student`, `ID`, `SIS User ID`, `SIS Login ID`, `Section` (Canvas's own gradebook export, with
a `Submission` column added, is such a roster); for Moodle `Email address`, `ID number` or
`Username`, whichever user field the import is to match. Header names are matched without
regard to case, spaces or underscores.

A graded folder that the roster does not name is an error: its points would be lost without
a word (or the roster has a typo). A roster student with no graded submission is a warning:
they may not have handed anything in, and whether that is a 0 is the instructor's call, so
they are left out of the file. So is every student not graded yet: no LMS is given a 0 for
tests that never ran. Exit status: 0 written (warnings on stderr), 2 bad input, nothing written.
"""

import argparse
import csv
import io
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import results  # noqa: E402

CANVAS_COLUMNS = ("Student", "ID", "SIS User ID", "SIS Login ID", "Section")
# Moodle's "identify user by" fields, as its import names them, by the knob's value.
MOODLE_FIELDS = {"email": "Email address", "idnumber": "ID number", "username": "Username"}


class ExportError(Exception):
    """Bad input: the sentence says which file and what to change."""


def _key(header):
    return re.sub(r"[\s_]+", "", header).lower()


def read_roster(path, wanted):
    """The roster's rows as {column of `wanted`: value} plus "submission"; ExportError if a
    column is missing or a submission is named twice."""
    try:
        with open(path, newline="", encoding="utf-8-sig") as f:
            rows = list(csv.reader(f))
    except (OSError, UnicodeError) as err:
        raise ExportError("ROSTER=%s cannot be read (%s)" % (path, getattr(err, "strerror", err)))
    if not rows:
        raise ExportError("ROSTER=%s is empty: it needs a header row, then a row per student"
                          % path)
    by_key = {_key(name): n for n, name in enumerate(rows[0])}
    missing = [name for name in ("Submission",) + tuple(wanted) if _key(name) not in by_key]
    if missing:
        raise ExportError("ROSTER=%s has no column %s (its columns: %s)" % (
            path, ", ".join(repr(m) for m in missing), ", ".join(rows[0])))
    roster, seen = [], {}
    for line, row in enumerate(rows[1:], 2):
        cells = {name: (row[by_key[_key(name)]] if by_key[_key(name)] < len(row) else "").strip()
                 for name in ("Submission",) + tuple(wanted)}
        if not any(cells.values()) or cells.get("Student", "").lower() == "points possible":
            continue  # a blank line; the points row of Canvas's own export
        if not cells["Submission"]:
            raise ExportError("ROSTER=%s, line %d: no submission folder is named for %s" % (
                path, line, cells.get("Student") or ", ".join(v for v in cells.values() if v)))
        if cells["Submission"] in seen:
            raise ExportError("ROSTER=%s names the submission %s twice (lines %d and %d)" % (
                path, cells["Submission"], seen[cells["Submission"]], line))
        seen[cells["Submission"]] = line
        roster.append(cells)
    return roster


def match(records, roster):
    """(rows, warnings): each roster row with its student's record, for the students graded in
    full. ExportError naming every graded folder that the roster does not name."""
    by_name = {}
    for student, record in records.items():
        by_name[student] = record
        by_name.setdefault(record.get("submission") or student, record)
    named = set()
    rows, absent, waiting = [], [], []
    for person in roster:
        record = by_name.get(person["Submission"])
        if record is None:
            absent.append(person["Submission"])
            continue
        named.add(record.get("student"))
        if record.get("complete"):
            rows.append((person, record))
        else:
            waiting.append(person["Submission"])
    unnamed = sorted(s for s, r in records.items() if r.get("student", s) not in named)
    if unnamed:
        raise ExportError("the roster names no student for the submission folder%s %s: add a "
                          "row for each (its Submission column the folder's name), or the "
                          "points of %s are lost" % (
                              "" if len(unnamed) == 1 else "s", ", ".join(unnamed),
                              "it" if len(unnamed) == 1 else "them"))
    warnings = []
    if absent:
        warnings.append("no graded submission for %s in the roster (%s): left out, not given "
                        "0" % (results.count_students(len(absent)), ", ".join(absent)))
    if waiting:
        warnings.append("%s not graded yet (%s): left out, not given 0; export again once "
                        "make grade has graded them" % (results.count_students(len(waiting)),
                                                         ", ".join(waiting)))
    return rows, warnings


def grade_columns(records, columns, assignment):
    """[(header, points possible, points of a record)]: the total, or one per exercise."""
    if columns == "total":
        maximum = max((r.get("max_points", 0) for r in records.values() if r.get("complete")),
                      default=0)
        return [(assignment, maximum, lambda record: record.get("points", 0))]
    exercise_ids = []
    for record in records.values():  # grade.json keeps the course's order
        exercise_ids += [e for e in record.get("exercises", {}) if e not in exercise_ids]
    return [(e, max(r.get("exercises", {}).get(e, {}).get("max_points", 0)
                    for r in records.values()),
             lambda record, e=e: record.get("exercises", {}).get(e, {}).get("points", ""))
            for e in exercise_ids]


def _cell(text):
    return results.csv_safe(str(text))


def canvas_csv(rows, grades):
    """Canvas's gradebook layout: its five identity columns, a points row as Canvas's own
    export has it, and a column per assignment (a new name makes a new assignment)."""
    text = io.StringIO()
    writer = csv.writer(text, lineterminator="\n")
    writer.writerow(list(CANVAS_COLUMNS) + [header for header, _, _ in grades])
    writer.writerow(["    Points Possible", "", "", "", ""] + [m for _, m, _ in grades])
    for person, record in rows:
        writer.writerow([_cell(person[c]) for c in CANVAS_COLUMNS] +
                        [points(record) for _, _, points in grades])
    return text.getvalue()


def moodle_csv(rows, grades, field):
    """Moodle's CSV import: the user field to match, then a column per grade item."""
    text = io.StringIO()
    writer = csv.writer(text, lineterminator="\n")
    writer.writerow([MOODLE_FIELDS[field]] + [header for header, _, _ in grades])
    for person, record in rows:
        writer.writerow([_cell(person[MOODLE_FIELDS[field]])] +
                        [points(record) for _, _, points in grades])
    return text.getvalue()


def export(args):
    """Writes OUT/export-FORMAT.csv: (its path, students in it, warnings); ExportError."""
    if args.format not in ("canvas", "moodle"):
        raise ExportError("FORMAT=%s: give FORMAT=canvas or FORMAT=moodle" % args.format)
    if args.moodle_id not in MOODLE_FIELDS:
        raise ExportError("MOODLE_ID=%s: give one of %s, the user field Moodle's import matches"
                          % (args.moodle_id, ", ".join(MOODLE_FIELDS)))
    if not args.roster:
        raise ExportError("say which roster maps submission folders to students: "
                          "ROSTER=FILE.csv (grader/README.md, Exporting to an LMS)")
    records = results.load_records(args.out)
    if not records:
        raise ExportError("OUT=%s holds no graded student (no students/*/grade.json): give the "
                          "OUT that make grade wrote" % args.out)
    wanted = CANVAS_COLUMNS if args.format == "canvas" else (MOODLE_FIELDS[args.moodle_id],)
    rows, warnings = match(records, read_roster(args.roster, wanted))
    grades = grade_columns(records, args.columns, args.assignment)
    text = (canvas_csv(rows, grades) if args.format == "canvas"
            else moodle_csv(rows, grades, args.moodle_id))
    path = os.path.join(args.out, "export-%s.csv" % args.format)
    try:
        results.write_atomically(path, text)
    except OSError as err:
        raise ExportError("OUT=%s: %s cannot be written (%s)" % (args.out, path,
                                                                 err.strerror or err))
    return path, len(rows), warnings


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--format", default="")
    parser.add_argument("--roster", default="")
    parser.add_argument("--out", default="grades")
    parser.add_argument("--columns", choices=("total", "exercises"), default="total")
    parser.add_argument("--assignment", default="GPU data movement exercises")
    parser.add_argument("--moodle-id", default="email")
    args = parser.parse_args(argv)
    try:
        path, count, warnings = export(args)
    except ExportError as err:
        print("make grade-export: %s" % err, file=sys.stderr)
        return 2
    for warning in warnings:
        print("make grade-export: warning: %s" % warning, file=sys.stderr)
    print("Written: %s, %s for %s" % (path, results.count_students(count),
                                      "Canvas's gradebook import" if args.format == "canvas"
                                      else "Moodle's CSV grade import"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

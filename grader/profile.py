#!/usr/bin/env python3
"""profile.py - where grading time went: mean seconds per exercise, building and testing.

    profile.py OUT        OUT is a make grade output folder

Reads each student's grade.json (the "seconds" the grader recorded for every
exercise) and prints one line per exercise, so a slow benchmark says whether
the compiler, the static checks or the tests on the GPU cost the time. The
means are over the students who handed the exercise in: a missing file costs
nothing, and an exercise nobody handed in (chapter 6's, in the benchmark's
class) has no line.
"""

import glob
import json
import os
import sys


def main(out):
    totals = {}
    for path in glob.glob(os.path.join(out, "students", "*", "grade.json")):
        with open(path) as f:
            record = json.load(f)
        for exercise, outcome in record["exercises"].items():
            if outcome.get("status") == "missing":
                continue
            seconds = outcome.get("seconds") or {}
            entry = totals.setdefault(exercise, [0, 0.0, 0.0])
            entry[0] += 1
            entry[1] += seconds.get("build", 0)
            entry[2] += seconds.get("tests", 0)
    if not totals:
        print("profile: no graded students in %s" % out)
        return 1
    width = max(len(exercise) for exercise in totals)
    print("%-*s %8s %10s %10s" % (width, "exercise", "students", "build s", "tests s"))
    for exercise, (count, build, tests) in sorted(totals.items()):
        print("%-*s %8d %10.2f %10.2f" % (width, exercise, count, build / count, tests / count))
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: profile.py OUT")
    sys.exit(main(sys.argv[1]))

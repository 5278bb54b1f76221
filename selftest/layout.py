#!/usr/bin/env python3
"""layout.py - the size rules of CONTRIBUTING.md, over the files git tracks: no source file over
500 lines, no function over 80, without splitting a function into pieces that only make sense
together (the rule is for reading: a file or a function that long is cut where its parts are).

    selftest/layout.py        prints a line for each file or function past its limit; exit 1 if any

Functions are found by the shape the tree's style gives them: in C, a definition whose body
opens with "{" at the start of a line and closes with "}" there; in Python, by its syntax tree;
in Lua, "function" or "local function" at the start of a line to its "end" there; in the shell,
"name() {" to "}" at the start of a line.
"""

import ast
import re
import subprocess
import sys

FILE_LINES = 500
FUNCTION_LINES = 80
SOURCES = ("*.c", "*.h", "*.cu", "*.py", "*.sh", "*.awk", "*.lua", "*.mk", "Makefile")


def c_functions(lines):
    """A definition: a line that opens a call's parentheses and is no declaration, then its
    body from a "{" at the start of a line to the "}" that closes it there."""
    name = start = None
    for number, line in enumerate(lines, 1):
        if start is None and line.startswith("{") and name is not None:
            start = number
        elif start is not None and line.startswith("}"):
            yield name, number - start
            name = start = None
        elif start is None and re.match(r"[A-Za-z_].*\(", line) and not line.startswith("#") \
                and not line.rstrip().endswith(";"):
            name = line.split("(")[0].split()[-1].lstrip("*")


def python_functions(text):
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield node.name, node.end_lineno - node.lineno


def delimited(lines, opening, closing):
    start = name = None
    for number, line in enumerate(lines, 1):
        found = opening.match(line)
        if found:
            start, name = number, found.group(1)
        elif start is not None and closing.match(line):
            yield name, number - start
            start = None


def functions(path, text):
    lines = text.split("\n")
    if path.endswith((".c", ".h", ".cu")):
        return c_functions(lines)
    if path.endswith(".py"):
        return python_functions(text)
    if path.endswith(".lua"):
        return delimited(lines, re.compile(r"(?:local )?function ([\w.]+)"), re.compile(r"end\b"))
    if path.endswith(".sh"):
        return delimited(lines, re.compile(r"([A-Za-z_]\w*)\(\) *\{"), re.compile(r"\}"))
    return iter(())


def main():
    files = subprocess.run(["git", "ls-files", "--"] + list(SOURCES), check=True,
                           stdout=subprocess.PIPE, universal_newlines=True).stdout.split()
    problems = []
    for path in files:
        try:
            text = open(path, encoding="utf-8", errors="replace").read()
        except OSError:
            continue  # deleted in the working tree
        count = text.count("\n")
        if count > FILE_LINES:
            problems.append("%s: %d lines (at most %d)" % (path, count, FILE_LINES))
        for name, length in functions(path, text):
            if length > FUNCTION_LINES:
                problems.append("%s: %s is %d lines (at most %d)" % (path, name, length,
                                                                     FUNCTION_LINES))
    for problem in problems:
        print(problem)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())

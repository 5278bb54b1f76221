#!/usr/bin/env python3
"""compile_guard.py - a compiler launcher (like ccache) for compiling a submission.

    GRADE_REAL_CC=cc make CC="python3 grader/compile_guard.py" ...

The course's Makefile rule compiles the student's file exactly as for
`make check`; this launcher sits in front of the compiler for that one file
(GRADE_STUDENT_SOURCE) and first preprocesses it with the same flags. Then:

  - every file the preprocessor entered must be the student's own file, one of
    the course's headers (common/, harness/, exercises/), or a system header
    (the compiler's search list and the -I folders outside the course). So
    `#include "../solutions/ch01-memory/roundtrip.c"` or `#include "/etc/passwd"`
    is refused before the compiler can show a line of it in an error message;
    the check reads the preprocessor's own line markers, so macros, comments
    and line splices cannot hide an include;
  - the student's own lines may not contain inline assembly or the builtins
    that reach the stack frames around them, and may not rename themselves
    with #line (which would hide them from this check).

A refusal is written as JSON to GRADE_GUARD_REPORT and the compile fails. Any
other compile (the link, the course's own objects) passes straight through.
"""

import json
import os
import re
import subprocess
import sys

FORBIDDEN_WORDS = {
    "asm": "inline assembly (asm)",
    "__asm": "inline assembly (__asm)",
    "__asm__": "inline assembly (__asm__)",
}
for _builtin in ("frame_address", "return_address", "extract_return_addr", "frob_return_addr",
                 "eh_return", "unwind_init", "setjmp", "longjmp", "apply", "apply_args", "return",
                 "dwarf_cfa"):
    FORBIDDEN_WORDS["__builtin_" + _builtin] = "__builtin_" + _builtin
WHY_WORD = {
    True: "the grader runs no assembly: the exercises are written in C",
    False: "it reaches into the stack frames of the tests that call your code",
}

LINE_MARKER = re.compile(r'^# (\d+) "((?:[^"\\]|\\.)*)"((?: \d+)*)\s*$')
LITERAL = re.compile(r'"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'')
IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
OPTIONS_WITH_VALUE = {"-o", "-MF", "-MT", "-MQ"}
DEPENDENCY_FLAGS = {"-MMD", "-MD", "-MP", "-M", "-MM", "-MG"}


def unescape(name):
    """A file name from a line marker, where gcc escapes \\ and " and writes octal escapes."""
    return re.sub(r"\\([0-7]{3}|.)",
                  lambda m: chr(int(m.group(1), 8)) if len(m.group(1)) == 3 else m.group(1),
                  name)


def scan_preprocessed(text, main_file, file_allowed):
    """Reasons to refuse, from preprocessed text (gcc -E).

    main_file: the name the compiler was given for the student's file.
    file_allowed(name) says whether an entered file may be included.
    """
    reasons = []
    stack = []  # files entered, innermost last; the main file at the bottom
    seen_pseudo = in_body = False  # past the compiler's preamble (<built-in>, <command-line>)
    words_seen, refused_files = set(), set()
    for line in text.splitlines():
        marker = LINE_MARKER.match(line)
        if marker:
            name = unescape(marker.group(2))
            flags = marker.group(3).split()
            seen_pseudo = seen_pseudo or name.startswith("<")
            if "1" in flags:  # entering an included file
                stack.append(name)
                if not name.startswith("<") and not file_allowed(name) and name not in refused_files:
                    refused_files.add(name)
                    reasons.append(
                        "it includes %s, which is not a header an exercise may use (system "
                        "headers and the course's headers in common/, harness/ and exercises/ "
                        "are)" % name)
            elif "2" in flags:  # back in the file that included it
                while len(stack) > 1 and stack[-1] != name:
                    stack.pop()
                stack[-1:] = [name]
                in_body = in_body or (seen_pseudo and len(stack) == 1 and name == main_file)
            elif len(stack) <= 1:  # the top level: the preamble, a line jump, or #line
                if in_body and name != main_file:
                    reasons.append("it uses #line to give its lines another file's name (%s), "
                                   "which the grader does not accept" % name)
                stack = [name]
                in_body = in_body or (seen_pseudo and name == main_file)
            else:  # a line jump inside a header
                stack[-1] = name
            continue
        if len(stack) != 1 or stack[0] != main_file or line.startswith("#"):
            continue
        for word in IDENTIFIER.findall(LITERAL.sub(" ", line)):
            if word in FORBIDDEN_WORDS and word not in words_seen:
                words_seen.add(word)
                reasons.append("it uses %s: %s" % (FORBIDDEN_WORDS[word],
                                                   WHY_WORD["asm" in word]))
    return reasons


def split_arguments(args):
    """(preprocessing arguments without outputs or dependency flags, source file or None)."""
    kept, source, skip = [], None, False
    for i, arg in enumerate(args):
        if skip:
            skip = False
            continue
        if arg in OPTIONS_WITH_VALUE:
            skip = True
            continue
        if arg in DEPENDENCY_FLAGS or arg == "-c" or (arg.startswith("-o") and len(arg) > 2):
            continue
        if not arg.startswith("-") and arg.endswith(".c"):
            source = arg
        kept.append(arg)
    return kept, source


def include_folders(args):
    folders = []
    for i, arg in enumerate(args):
        for flag in ("-I", "-isystem", "-idirafter"):
            if arg == flag and i + 1 < len(args):
                folders.append(args[i + 1])
            elif arg.startswith(flag) and len(arg) > len(flag):
                folders.append(arg[len(flag):])
    return folders


def compiler_search_list(compiler):
    """The compiler's own system include folders (gcc -v says them)."""
    run = subprocess.run(compiler + ["-E", "-v", "-x", "c", "/dev/null", "-o", "/dev/null"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                         universal_newlines=True, errors="replace")
    folders, inside = [], False
    for line in run.stderr.splitlines():
        if line.startswith("#include <...> search starts here"):
            inside = True
        elif line.startswith("End of search list"):
            inside = False
        elif inside and line.startswith(" "):
            folders.append(line.strip())
    return folders


def allowed_predicate(compiler, args, course_root, source):
    """Which files the student's file may include."""
    course_root = os.path.realpath(course_root)
    course_header_folders = [os.path.join(course_root, d) for d in ("common", "harness")]
    exercises_folder = os.path.join(course_root, "exercises")
    student_folder = os.path.dirname(os.path.realpath(source))

    def inside(path, folder):
        return path == folder or path.startswith(folder.rstrip("/") + "/")

    roots = []
    for folder in compiler_search_list(compiler) + include_folders(args):
        real = os.path.realpath(folder)
        if inside(real, os.path.join(course_root, "common")) or inside(
                real, os.path.join(course_root, "harness")) or inside(
                    real, exercises_folder) or inside(real, student_folder):
            continue  # course folders: headers only, below
        roots.append(real)
    student_file = os.path.realpath(source)

    def allowed(name):
        real = os.path.realpath(name)
        if real == student_file:
            return True
        if real.endswith((".h", ".def")):
            if any(os.path.dirname(real) == folder for folder in course_header_folders):
                return True
            if os.path.dirname(os.path.dirname(real)) == exercises_folder:
                return True
        return any(inside(real, root) for root in roots)

    return allowed


def guard(compiler, args, source, course_root, report_path):
    """Returns the exit status to give (0: go on and compile)."""
    preprocess_args, _ = split_arguments(args)
    # The preprocessed text comes through a pipe: gcc deletes an output file when it
    # fails, and its own words on stderr are what a failure must show.
    run = subprocess.run(compiler + preprocess_args + ["-E"], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    text = run.stdout.decode("utf-8", errors="replace")
    stderr = run.stderr.decode("utf-8", errors="replace")
    allowed = allowed_predicate(compiler, args, course_root, source)
    reasons = scan_preprocessed(text, source, allowed)
    report = {"rejected": reasons, "preprocessor_failed": run.returncode != 0}
    if run.returncode != 0 and not reasons:
        # Only the preprocessor's words about the student's file and the course's
        # headers: never lines of some other file it was pointed at.
        # The driver's own lines ("cc: error: ...") name no file's content either.
        driver = os.path.basename(compiler[0])
        shown = [line for line in stderr.splitlines()
                 if line.split(":", 1)[0] and (line.split(":", 1)[0] == driver or
                                               allowed(line.split(":", 1)[0]))]
        report["diagnostics"] = "\n".join(shown[:40] or [
            "the preprocessor stopped (exit status %d) and named no file" % run.returncode])
    with open(report_path + ".tmp", "w") as f:
        json.dump(report, f)
    os.replace(report_path + ".tmp", report_path)
    if reasons:
        for reason in reasons:
            print("grader: %s: %s" % (source, reason), file=sys.stderr)
        return 1
    if run.returncode != 0:
        print(report.get("diagnostics", ""), file=sys.stderr)
        return 1
    return 0


def main(argv):
    # The real compiler comes from the environment: CC may be several words ("ccache gcc").
    compiler = os.environ.get("GRADE_REAL_CC", "cc").split()
    args = argv[1:]
    student_source = os.environ.get("GRADE_STUDENT_SOURCE")
    _, source = split_arguments(args)
    if student_source and "-c" in args and source == student_source:
        status = guard(compiler, args, source, os.environ["GRADE_COURSE_ROOT"],
                       os.environ["GRADE_GUARD_REPORT"])
        if status != 0:
            return status
    sys.stdout.flush()
    os.execvp(compiler[0], compiler + args)


if __name__ == "__main__":
    sys.exit(main(sys.argv))

#!/usr/bin/env python3
"""compile_guard.py - a compiler launcher (like ccache) for compiling a submission.

    GRADE_REAL_CC=cc make CC="python3 grader/compile_guard.py" ...

The course's Makefile rule compiles the student's file exactly as for
`make check`; this launcher sits in front of the compiler for that one file
(GRADE_STUDENT_SOURCE). The text that is checked is the text that is
compiled: the file is preprocessed once, with the same flags, the result is
checked and saved beside the object (NAME.i), and the compiler is given that
saved text (-fpreprocessed -x cpp-output), never the file again. So nothing
that changes between the check and the compile (a header in /tmp that another
process writes and removes) reaches the compiler unchecked.

  - before anything is read, the file's own directives: no line markers
    (`# 1 "harness.h" 1`) or #line, which would rename its lines and hide them
    from the checks below; no #ident or #sccs (strings copied into the
    object); includes only of a header's name written out (.h), neither absolute
    nor climbing with `..` (`#include "/dev/zero"`, a FIFO, a name a macro
    builds, or a C file, the student's own included in itself among them, are
    refused before the preprocessor opens anything);
  - every file the preprocessor entered must be one of the course's headers
    (common/, harness/, exercises/) or a system header (the compiler's search
    list and the -I folders outside the course), never the student's file a
    second time: a copy of it entered again would hide its text from the
    checks below, which read the student's own lines. So
    `#include "../solutions/ch01-memory/roundtrip.c"` is refused before the
    compiler can show a line of it in an error message; the check reads the
    preprocessor's own line markers, so macros, comments and line splices
    cannot hide an include;
  - the student's own lines may not contain assembly in any form (asm,
    __asm__, at file scope or in a function), attributes that place code or
    data or name symbols for the assembler (section, alias, symver...), the
    pragmas that rename symbols, or the builtins that reach the stack frames
    around them.

The preprocessor and the compiler run with limits on memory, time and output,
so a macro that multiplies itself cannot take the machine down. A refusal is
written as JSON to GRADE_GUARD_REPORT and the compile fails. Any other compile
(the link, the course's own objects) passes straight through.
"""

import json
import os
import re
import resource
import signal
import subprocess
import sys
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from guard_directives import directive_reasons, logical_lines  # noqa: E402,F401

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

# Attributes whose strings gcc copies into its assembly output as they are (a section's
# name, a symbol's alias or version), or that make a function of assembly alone. Those
# whose effect shows in the object (a constructor, an indirect function) are left to the
# object check (static_checks.py), which names them.
FORBIDDEN_ATTRIBUTES = {
    "section": "places code or data in a section of its choosing",
    "alias": "makes a symbol another's alias",
    "weakref": "makes a symbol another's alias",
    "symver": "writes a symbol version for the assembler",
    "naked": "makes a function of assembly alone",
}
FORBIDDEN_PRAGMAS = {
    "redefine_extname": "renames a symbol",
    "weak": "makes a symbol weak or another's alias",
    "ident": "copies a string into the object",
    "sccs": "copies a string into the object",
}
# Limits on the preprocessor and the compiler: no honest exercise comes near them.
COMPILER_MEMORY = 1 << 30  # bytes of address space (these are not CUDA processes)
COMPILER_SECONDS = 60  # of CPU, each
PREPROCESSED_MAX = 32 << 20  # bytes of preprocessed text

LINE_MARKER = re.compile(r'^# (\d+) "((?:[^"\\]|\\.)*)"((?: \d+)*)\s*$')
LITERAL = re.compile(r'"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'')
# A literal (kept) or a comment (blanked): the preprocessed text keeps its comments (-C), since
# gcc reads "/* fall through */" from them, and a comment's text is no code, line markers and
# all.
LITERAL_OR_COMMENT = re.compile(r'"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'|/\*.*?\*/|//[^\n]*',
                                re.S)
IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
OPTIONS_WITH_VALUE = {"-o", "-MF", "-MT", "-MQ"}
DEPENDENCY_FLAGS = {"-MMD", "-MD", "-MP", "-M", "-MM", "-MG"}


def without_comments(text):
    """The text with each comment a space, its lines kept (so line markers still count)."""
    def blank(match):
        token = match.group(0)
        return token if token[0] in "\"'" else " " + "\n" * token.count("\n")
    return LITERAL_OR_COMMENT.sub(blank, text)


def unescape(name):
    """A file name from a line marker, where gcc escapes \\ and " and writes octal escapes."""
    return re.sub(r"\\([0-7]{3}|.)",
                  lambda m: chr(int(m.group(1), 8)) if len(m.group(1)) == 3 else m.group(1),
                  name)


def attribute_reasons(text):
    """Reasons to refuse, from the student's preprocessed lines with literals blanked."""
    reasons = []
    groups = []  # the text inside each __attribute__((...)) and [[...]]
    for start in re.finditer(r"\b__attribute(?:__)?\s*\(|\[\s*\[", text):
        depth, i = 1, start.end()
        closing = "(" if start.group(0).endswith("(") else "["
        pair = {"(": ")", "[": "]"}[closing]
        while i < len(text) and depth:
            depth += {closing: 1, pair: -1}.get(text[i], 0)
            i += 1
        groups.append(text[start.end():i])
    for group in groups:
        for word in IDENTIFIER.findall(group):
            bare = word.strip("_") if word.startswith("__") and word.endswith("__") else word
            if bare in FORBIDDEN_ATTRIBUTES:
                reason = "it uses the attribute %s, which %s: the grader does not accept it" % (
                    bare, FORBIDDEN_ATTRIBUTES[bare])
                if reason not in reasons:
                    reasons.append(reason)
    return reasons


def scan_preprocessed(text, main_file, file_allowed):
    """Reasons to refuse, from preprocessed text (gcc -E).

    main_file: the name the compiler was given for the student's file.
    file_allowed(name) says whether an entered file may be included.
    """
    reasons = []
    text = without_comments(text)
    stack = []  # files entered, innermost last; the main file at the bottom
    seen_pseudo = in_body = False  # past the compiler's preamble (<built-in>, <command-line>)
    words_seen, refused_files = set(), set()
    student_text = []
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
        if len(stack) != 1 or stack[0] != main_file:
            continue
        if line.lstrip().startswith("#"):  # #pragma (from _Pragma too), #ident
            words = re.findall(r"\w+", line)
            what = words[1] if len(words) > 1 and words[0] == "pragma" else words[0] if words \
                else ""
            if words[:1] != ["pragma"] or what in FORBIDDEN_PRAGMAS:
                reason = "it uses #%s%s, which %s: the grader does not accept it" % (
                    "pragma " if words[:1] == ["pragma"] else "", what,
                    FORBIDDEN_PRAGMAS.get(what, "the grader does not know"))
                if reason not in reasons:
                    reasons.append(reason)
            continue
        student_text.append(LITERAL.sub('""', line))
        for word in IDENTIFIER.findall(LITERAL.sub(" ", line)):
            if word in FORBIDDEN_WORDS and word not in words_seen:
                words_seen.add(word)
                reasons.append("it uses %s: %s" % (FORBIDDEN_WORDS[word],
                                                   WHY_WORD["asm" in word]))
    return reasons + attribute_reasons("\n".join(student_text))


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
    def allowed(name):
        """Headers alone: never the student's file itself, nor any other C file, which would
        bring text into the compile that no check of the student's own lines reads."""
        real = os.path.realpath(name)
        if not real.endswith((".h", ".def")):
            return False
        if any(inside(os.path.dirname(real), folder) for folder in course_header_folders):
            return True
        if os.path.dirname(os.path.dirname(real)) == exercises_folder:
            return True
        return any(inside(real, root) for root in roots)

    return allowed


def limit_compiler():
    """In the child, before exec: limits a compiler (not a CUDA process) may have."""
    resource.setrlimit(resource.RLIMIT_AS, (COMPILER_MEMORY, COMPILER_MEMORY))
    resource.setrlimit(resource.RLIMIT_CPU, (COMPILER_SECONDS, COMPILER_SECONDS))


def preprocess(compiler, args):
    """(preprocessed bytes or None when too long, stderr text, exit status): limited."""
    # -C: the comments stay, for the compile (gcc takes "/* fall through */" from them).
    process = subprocess.Popen(compiler + args + ["-E", "-C"], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, preexec_fn=limit_compiler,
                               start_new_session=True)
    errors = []

    def read_errors():  # kept to its start: a failing include can say a lot
        while True:
            chunk = process.stderr.read(65536)
            if not chunk:
                return
            if sum(len(c) for c in errors) < (256 << 10):
                errors.append(chunk)

    reader = threading.Thread(target=read_errors, daemon=True)
    reader.start()
    text, size = [], 0
    while True:
        chunk = process.stdout.read(1 << 20)
        if not chunk:
            break
        size += len(chunk)
        if size > PREPROCESSED_MAX:  # the driver and cc1, which holds the pipes
            os.killpg(process.pid, signal.SIGKILL)
            text = None
            break
        text.append(chunk)
    status = process.wait()
    reader.join()
    process.stdout.close()
    process.stderr.close()
    return (b"".join(text) if text is not None else None,
            b"".join(errors).decode("utf-8", errors="replace"), status)


def check_source(compiler, args, source, course_root):
    """The student's file, read and preprocessed once, and checked.

    Returns (reasons to refuse it, the preprocessed bytes, the preprocessor's exit status and
    standard error, the predicate of the files it may include). make check asks the same of a
    learner's file (refusals.py), so that a learner hears of a refusal before the gradebook.
    """
    preprocess_args, _ = split_arguments(args)
    with open(source, "rb") as f:
        reasons = directive_reasons(f.read().decode("utf-8", errors="replace"))
    run_status, stderr, text = 0, "", b""
    if not reasons:
        # The preprocessed text comes through a pipe: gcc deletes an output file when it
        # fails, and its own words on stderr are what a failure must show.
        text, stderr, run_status = preprocess(compiler, preprocess_args)
        if text is None:
            reasons = ["it preprocesses to more than %d MiB of text (a macro that multiplies "
                       "itself?): the grader stops there" % (PREPROCESSED_MAX >> 20)]
        elif run_status < 0 or "out of memory" in stderr or "memory exhausted" in stderr:
            reasons = ["the preprocessor was stopped: it needed more than %d MiB of memory or "
                       "%d s (a macro that multiplies itself?)"
                       % (COMPILER_MEMORY >> 20, COMPILER_SECONDS)]
    allowed = allowed_predicate(compiler, args, course_root, source)
    if not reasons:
        reasons = scan_preprocessed(text.decode("utf-8", errors="replace"), source, allowed)
    return reasons, text, run_status, stderr, allowed


def guard(compiler, args, source, course_root, report_path, preprocessed_path):
    """Checks the student's file; writes the text to compile to preprocessed_path.

    Returns the exit status to give (0: go on and compile preprocessed_path).
    """
    reasons, text, run_status, stderr, allowed = check_source(compiler, args, source,
                                                              course_root)
    report = {"rejected": reasons, "preprocessor_failed": run_status != 0}
    if run_status != 0 and not reasons:
        # Only the preprocessor's words about the student's file and the course's
        # headers: never lines of some other file it was pointed at.
        # The driver's own lines ("cc: error: ...") name no file's content either.
        driver = os.path.basename(compiler[0])
        student = os.path.realpath(source)

        def may_show(name):
            return name == driver or os.path.realpath(name) == student or allowed(name)

        shown = [line for line in stderr.splitlines()
                 if line.split(":", 1)[0] and may_show(line.split(":", 1)[0])]
        report["diagnostics"] = "\n".join(shown[:40] or [
            "the preprocessor stopped (exit status %d) and named no file" % run_status])
    with open(report_path + ".tmp", "w") as f:
        json.dump(report, f)
    os.replace(report_path + ".tmp", report_path)
    if reasons:
        for reason in reasons:
            print("grader: %s: %s" % (source, reason), file=sys.stderr)
        return 1
    if run_status != 0:
        print(report.get("diagnostics", ""), file=sys.stderr)
        return 1
    with open(preprocessed_path, "wb") as f:
        f.write(text)
    return 0


def compile_arguments(args, source, preprocessed_path):
    """The compile's arguments, for the saved text in place of the source.

    Dependency flags are dropped: they would name the .i, and make needs none
    for a file built once.
    """
    kept, skip = [], False
    for arg in args:
        if skip:
            skip = False
        elif arg in ("-MF", "-MT", "-MQ"):
            skip = True
        elif arg not in DEPENDENCY_FLAGS and arg != source:
            kept.append(arg)
    return kept + ["-fpreprocessed", "-x", "cpp-output", preprocessed_path]


def output_of(args):
    for i, arg in enumerate(args):
        if arg == "-o" and i + 1 < len(args):
            return args[i + 1]
        if arg.startswith("-o") and len(arg) > 2:
            return arg[2:]
    return None


def main(argv):
    # The real compiler comes from the environment: CC may be several words ("ccache gcc").
    compiler = os.environ.get("GRADE_REAL_CC", "cc").split()
    args = argv[1:]
    student_source = os.environ.get("GRADE_STUDENT_SOURCE")
    _, source = split_arguments(args)
    if student_source and source == student_source:
        if "-c" not in args or not output_of(args):  # not the compile the guard knows: refuse
            print("grader: %s is compiled only with -c and -o" % source, file=sys.stderr)
            return 1
        preprocessed = os.path.splitext(output_of(args))[0] + ".i"
        status = guard(compiler, args, source, os.environ["GRADE_COURSE_ROOT"],
                       os.environ["GRADE_GUARD_REPORT"], preprocessed)
        if status != 0:
            return status
        args = compile_arguments(args, source, preprocessed)
        limit_compiler()
    sys.stdout.flush()
    os.execvp(compiler[0], compiler + args)


if __name__ == "__main__":
    sys.exit(main(sys.argv))

"""guard_directives.py - the student's file as written, read before the preprocessor opens
anything (compile_guard.py): its own directives, with comments, line splices, trigraphs and
digraphs undone as the preprocessor would, so that no spelling hides one. A line marker or
#line (which would rename the lines after it and hide them from the checks), #ident or #sccs
(strings copied into the object), and an include that is not a header's name written out (a
name a macro builds, an absolute path, one that climbs with "..", a C file: the student's own
among them) are refused, each with a sentence that names it.
"""

import re

TRIGRAPHS = {"=": "#", "/": "\\", "'": "^", "(": "[", ")": "]", "!": "|", "<": "{", ">": "}",
             "-": "~"}


def logical_lines(source):
    """The source's lines as the preprocessor sees them: trigraphs (on in -std=c11) replaced,
    backslash-newlines joined, comments a space, string and character literals kept."""
    text = re.sub(r"\?\?([=/'()!<>-])", lambda m: TRIGRAPHS[m.group(1)], source)
    text = re.sub(r"\\[ \t]*\r?\n", "", text)
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if c in "\"'":
            end = i + 1
            while end < n and text[end] not in (c, "\n"):
                end += 2 if text[end] == "\\" else 1
            out.append(text[i:end + 1])
            i = end + 1
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            out.append(" ")
            i = n if end < 0 else end + 2
        elif text.startswith("//", i):
            end = text.find("\n", i)
            i = n if end < 0 else end
        else:
            out.append(c)
            i += 1
    return "".join(out).splitlines()


DIRECTIVE = re.compile(r"^\s*(?:#|%:)\s*(\w*)\s*(.*)$")


def directive_reasons(source):
    """Reasons to refuse, from the student's file as written, before the preprocessor runs."""
    reasons = []

    def refuse(reason):
        if reason not in reasons:
            reasons.append(reason)

    for line in logical_lines(source):
        directive = DIRECTIVE.match(line)
        if not directive:
            continue
        name, operand = directive.group(1), directive.group(2).strip()
        if (name.isdigit() or name == "line") and not any("#line" in r for r in reasons):
            refuse("it has a line marker or #line (%s), which gives its lines another file's "
                   "name or number and would hide them from the grader's checks"
                   % line.strip()[:80])
        elif name in ("ident", "sccs"):
            refuse("it uses #%s, which copies a string into the object" % name)
        elif name in ("include", "include_next", "import"):
            header = re.match(r'^(?:"([^"]*)"|<([^>]*)>)', operand)
            if name != "include":
                refuse("it uses #%s: write #include and the header's name" % name)
            elif not header:
                refuse("it includes a file whose name a macro builds (#include %s): write the "
                       "header's name out, in quotes or angle brackets" % operand[:60])
            else:
                named = header.group(1) or header.group(2) or ""
                if named.startswith("/") or ".." in named.split("/"):
                    refuse("it includes %s: an absolute path or one that climbs with .. is not "
                           "a header an exercise may use (system headers and the course's "
                           "headers, by their names, are)" % named)
                elif not named.endswith(".h"):
                    refuse("it includes %s, which is no header: an exercise's file may include "
                           "headers (.h) alone. A C file included in it, itself or another "
                           "exercise's, would hide its text from the grader's checks" % named)
    return reasons

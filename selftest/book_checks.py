#!/usr/bin/env python3
"""book_checks.py - what the self-test checks in the rendered book, from the outside.

    book_checks.py text FILE...    its text is valid UTF-8 with no replacement character
    book_checks.py pages BOOK.pdf  no page of the printed book is left more than half blank
    book_checks.py same-measured EN.html ZH.html
                                   the two editions show the same measured values

text: each FILE is read as UTF-8; an EPUB (a zip archive) is opened and each of
its text members (XHTML, SVG, CSS, the package files) read the same way. A
byte sequence that is not UTF-8, or a U+FFFD that a program wrote where it lost
a character (a multibyte one cut in two, as a byte-wise string reversal does),
is a finding.

pages: BOOK.pdf is the book as headless Chromium prints it (make book-pdf). For
each page, the lowest point at which anything is drawn (text, or a path that is
filled or stroked in a colour other than white) is found in its content stream;
a page whose lowest drawing is above its middle is more than half blank:
something that may not break (a listing, a figure, a table) moved on to the
next page and left the room behind it empty. The last page, and the page before
each chapter (a level-one heading, which starts a page), may end anywhere. The
PDF is read as Chromium writes it: uncompressed objects, Flate-compressed page
streams, tagged with its headings.

same-measured: each value the filter filled in from the measurements (a span of class
"measured", titled with what it is) appears in both editions as often, with the same text: a
translation may move a number within its sentence, never change or lose one.

Prints one line per finding and exits 1 when there is any, 2 when a file
cannot be read (or is not what it should be).
"""

import collections
import re
import sys
import zipfile
import zlib

TEXT_MEMBERS = (".xhtml", ".html", ".svg", ".css", ".opf", ".ncx", ".xml")


def findings(name, data):
    """What is wrong with DATA, the bytes of NAME, one line per thing."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        near = data[max(0, error.start - 40):error.start + 20].decode("utf-8", "replace")
        return [f"{name}: not UTF-8 at byte {error.start}: {near!r}"]
    found, start = [], text.find("\ufffd")
    while start >= 0 and len(found) < 5:
        found.append(f"{name}: U+FFFD at character {start}: {text[max(0, start - 40):start + 20]!r}")
        start = text.find("\ufffd", start + 1)
    return found


NUMBER = re.compile(rb"[-+]?(?:\d+\.?\d*|\.\d+)")
TOKEN = re.compile(rb"\[[^\]]*\]|<[^>]*>|\((?:\\.|[^\\)])*\)|/[^\s/\[\]<>()]+|[-+]?(?:\d+\.?\d*|\.\d+)|[A-Za-z*'\"]+")
PAINT = {b"f", b"f*", b"F", b"S", b"s", b"B", b"B*", b"b", b"b*"}


def objects(data):
    return {int(m.group(1)): m.group(2) for m in re.finditer(rb"(\d+) 0 obj(.*?)endobj", data, re.S)}


def page_order(objs):
    """The page objects, in reading order, from the root of the page tree."""
    roots = [n for n, body in objs.items() if re.search(rb"/Type\s*/Pages\b", body) and b"/Parent" not in body]
    if len(roots) != 1:
        raise ValueError("no single root of the page tree")

    def walk(n):
        body = objs[n]
        if re.search(rb"/Type\s*/Page\b", body):
            return [n]
        kids = re.search(rb"/Kids\s*\[(.*?)\]", body, re.S).group(1)
        return [page for kid in re.findall(rb"(\d+) 0 R", kids) for page in walk(int(kid))]

    return walk(roots[0])


def chapter_pages(objs):
    """The page objects on which a level-one heading starts (in the tagged PDF's structure)."""
    pages = set()
    for body in objs.values():
        if re.search(rb"/S\s*/H1\b", body):
            page = re.search(rb"/Pg (\d+) 0 R", body)
            if not page:  # on the heading's first part instead
                kid = re.search(rb"/K (\d+) 0 R", body)
                page = kid and re.search(rb"/Pg (\d+) 0 R", objs[int(kid.group(1))])
            if page:
                pages.add(int(page.group(1)))
    return pages


def multiply(a, b):
    return [a[0] * b[0] + a[1] * b[2], a[0] * b[1] + a[1] * b[3],
            a[2] * b[0] + a[3] * b[2], a[2] * b[1] + a[3] * b[3],
            a[4] * b[0] + a[5] * b[2] + b[4], a[4] * b[1] + a[5] * b[3] + b[5]]


def lowest_drawn(stream):
    """The smallest y (PDF units, from the bottom) at which STREAM draws, or None."""
    matrix, saved, operands, path, white, lowest = [1, 0, 0, 1, 0, 0], [], [], [], False, None
    for token in TOKEN.findall(stream):
        if NUMBER.fullmatch(token):
            operands.append(float(token))
            continue
        if token.startswith(b"/"):
            continue
        if token == b"q":
            saved.append((matrix, white))
        elif token == b"Q" and saved:
            matrix, white = saved.pop()
        elif token == b"cm" and len(operands) >= 6:
            matrix = multiply(operands[-6:], matrix)
        elif token == b"rg":
            white = operands[-3:] == [1.0, 1.0, 1.0]
        elif token in (b"m", b"l", b"c", b"v", b"y") and len(operands) >= 2:
            path.append(operands[-2:])
        elif token == b"re" and len(operands) >= 4:
            x, y, _, height = operands[-4:]
            path += [[x, y], [x, y + height]]
        elif token in PAINT or token == b"n":
            if token != b"n" and not white:
                for x, y in path:
                    drawn = x * matrix[1] + y * matrix[3] + matrix[5]
                    lowest = drawn if lowest is None else min(lowest, drawn)
            path = []
        elif token == b"Tm" and len(operands) >= 6:  # where a run of text starts
            drawn = multiply(operands[-6:], matrix)[5]
            lowest = drawn if lowest is None else min(lowest, drawn)
        operands = []
    return lowest


def check_text(paths):
    found = []
    for path in paths:
        if zipfile.is_zipfile(path):
            with zipfile.ZipFile(path) as archive:
                for member in archive.namelist():
                    if member.endswith(TEXT_MEMBERS):
                        found += findings(f"{path}:{member}", archive.read(member))
        else:
            with open(path, "rb") as file:
                found += findings(path, file.read())
    return found


def check_pages(paths):
    if len(paths) != 1:
        raise ValueError("one PDF, please")
    with open(paths[0], "rb") as file:
        objs = objects(file.read())
    pages = page_order(objs)
    starts = chapter_pages(objs)
    if not starts:
        raise ValueError("no chapter headings found (an untagged PDF?)")
    found = []
    for number, page in enumerate(pages[:-1], 1):
        if pages[number] in starts:
            continue  # the page before a chapter
        body = objs[page]
        height = float(re.search(rb"/MediaBox\s*\[\s*\S+\s+\S+\s+\S+\s+([\d.]+)", body).group(1))
        stream = objs[int(re.search(rb"/Contents (\d+) 0 R", body).group(1))]
        lowest = lowest_drawn(zlib.decompress(re.search(rb"stream\r?\n(.*)endstream", stream, re.S).group(1)))
        if lowest is not None and lowest > height / 2:
            found.append(f"page {number} of {len(pages)}: drawn down to "
                         f"{100 * (height - lowest) / height:.0f}% of its height, the rest blank")
    return found


MEASURED_SPAN = re.compile(r'<span class="measured" title="([^"]*)">(.*?)</span>', re.S)


def check_same_measured(paths):
    if len(paths) != 2:
        raise ValueError("two HTML files, please: the English edition, then the other")
    counts = []
    for path in paths:
        with open(path, encoding="utf-8") as file:
            counts.append(collections.Counter(MEASURED_SPAN.findall(file.read())))
    english, other = counts
    if not english:
        raise ValueError(f"{paths[0]} shows no measured value")
    found = [f"{paths[1]} lacks {what} = {value!r} ({n} of them)"
             for (what, value), n in sorted((english - other).items())]
    found += [f"{paths[1]} has {what} = {value!r}, which {paths[0]} has not ({n} of them)"
              for (what, value), n in sorted((other - english).items())]
    return found


CHECKS = {"text": check_text, "pages": check_pages, "same-measured": check_same_measured}


def main(argv):
    if len(argv) < 2 or argv[0] not in CHECKS:
        print("usage: book_checks.py text FILE... | book_checks.py pages BOOK.pdf |"
              " book_checks.py same-measured EN.html ZH.html", file=sys.stderr)
        return 2
    try:
        found = CHECKS[argv[0]](argv[1:])
    except (OSError, ValueError, AttributeError, KeyError, zipfile.BadZipFile, zlib.error) as error:
        print(f"book_checks.py {argv[0]}: {' '.join(argv[1:])}: cannot be read as expected ({error})",
              file=sys.stderr)
        return 2
    for line in found:
        print(line)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

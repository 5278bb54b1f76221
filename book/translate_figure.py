#!/usr/bin/env python3
"""translate_figure.py - a figure's source with its words in another language, before it is drawn.

    book/translate_figure.py TABLE SOURCE OUT_DIR      writes OUT_DIR/NAME (SOURCE's name)
    book/translate_figure.py --check TABLE SVG...      names each text of the drawn figures left
                                                       in English

The book's figures are drawn from sources (book/plots/*.gp for gnuplot, book/figures/*.dot for
Graphviz) whose labels, titles and legends are English. The Chinese edition draws the same
sources from the same measurements, with each of those texts replaced by its line in TABLE
(book/figures/zh.tsv: English, a tab, the translation). A text is a gnuplot string that is
shown (after title, xlabel, ylabel, label, sprintf or in a ?: choice), or in a Graphviz
source the text between two of its marks (<, >, "): a label, or a piece of an HTML-like one. It
is replaced only when it is a whole line of the table, so that names of data columns and of
nodes are never touched. A table line may hold printf conversions (%.1f, %d, %%), which match
the same string in a sprintf() format, and %s, which matches any text and keeps it (a number
the diagram's template filled in).
A gnuplot `load "book/plots/X.gp"` loads the translated X.gp, written beside OUT.

--check reads drawn SVG files and prints each text element that still has two English words
or more (the GPU's name and the title line made from a CSV file's provenance excepted), then
exits 1 when there was any: a new label without its translation cannot go unnoticed.
"""

import os
import re
import sys

# In gnuplot, only the strings that are shown: after title, xlabel, ylabel, label or sprintf(;
# others name data columns or rows ("batch", pick("naive", ...)), which must not change.
SHOWN = re.compile(r'(?:(?<=title )|(?<=label )|(?<=printf\()|(?<=\? )|(?<=: ))'
                   r'"((?:[^"\\\n]|\\.)*)"')
# In a Graphviz source (its template filled in), any run of text between <, > and " marks: a
# label, or a piece of an HTML-like label between its tags.
PIECE = re.compile(r'(?<=[<>"])([^<>"\n]+)(?=[<>"])')
LOAD = re.compile(r'load\s+"(book/plots/[^"]+)"')
SVG_TEXT = re.compile(r"<text[^>]*>(.*?)</text>", re.S)
TAG = re.compile(r"<[^>]+>")
# Words that stay as they are in any edition: API names, units, the GPU's and the firm's names.
KEPT = re.compile(r"^(?:cuda\w*|PCIe|GB|GiB|MiB|KiB|ms|GPU|CPU|NVIDIA|H\d+|HBM|DMA|DRAM|CUDA|"
                  r"D2H|H2D|malloc|SMs?|Gen\d|x\d+|GT|us)$")


def read_table(path):
    table = {}
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line or line.startswith("#"):
                continue
            parts = line.split("\t")
            if len(parts) != 2 or not parts[0] or not parts[1]:
                sys.exit("translate_figure: %s:%d: not 'English<TAB>translation'" % (path, number))
            table[parts[0]] = parts[1]
    return table


def lookup(key, table):
    """key's translation: its own line of the table, or a line with %s (any text, kept)."""
    if key in table:
        return table[key]
    for english, translated in table.items():
        if "%s" not in english:
            continue
        pattern = "^" + re.escape(english).replace("%s", "(.+?)") + "$"
        m = re.match(pattern, key)
        if m:
            parts = iter(m.groups())
            return re.sub("%s", lambda _: next(parts), translated)
    return None


def translate_text(text, table, pattern):
    def one(match):
        key = match.group(1).strip()
        translated = lookup(key, table) if key else None
        return match.group(0).replace(key, translated, 1) if translated else match.group(0)
    return pattern.sub(one, text)


def translate(table_path, source, out_dir):
    table = read_table(table_path)
    with open(source, encoding="utf-8") as f:
        text = f.read()
    if source.endswith(".gp"):
        for loaded in LOAD.findall(text):
            translate(table_path, loaded, out_dir)
        text = LOAD.sub(lambda m: 'load "%s"' % os.path.join(out_dir, os.path.basename(m.group(1))),
                        text)
        text = translate_text(text, table, SHOWN)
    else:
        text = translate_text(text, table, PIECE)
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, os.path.basename(source)), "w", encoding="utf-8") as f:
        f.write(text)


def check(svgs):
    left = []
    for path in svgs:
        with open(path, encoding="utf-8") as f:
            svg = f.read()
        title = re.search(r"<title>(.*?)</title>", svg, re.S)
        for raw in SVG_TEXT.findall(svg):
            text = TAG.sub("", raw).replace("&amp;", "&").strip()
            if not text or "NVIDIA" in text or "PLACEHOLDER" in text or "driver" in text:
                continue
            if title and text == title.group(1).strip():
                continue
            english = [w for w in re.findall(r"[A-Za-z][A-Za-z'-]+", text) if not KEPT.match(w)]
            if len(english) >= 2 and not re.search(r"[\u3400-\u9fff]", text):
                left.append("%s: %s" % (path, text))
    for line in left:
        print("translate_figure: left in English: " + line)
    return 1 if left else 0


def main():
    if len(sys.argv) >= 3 and sys.argv[1] == "--check":
        return check(sys.argv[2:])
    if len(sys.argv) != 4:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    translate(sys.argv[1], sys.argv[2], sys.argv[3])
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""check_editions.py - the book's two editions say the same things in two languages.

    book/check_editions.py book.md book.zh.md      (make test runs it; so can a translator, on
                                                    a part of each)

The Chinese edition is the English one with its prose translated: the same markup, which the
book's filters turn into the same listings, measured numbers, figures and cross references. This
reads both as a sequence of blocks (runs of lines between blank lines; a fenced code block, an
HTML comment or a YAML header is one block) and compares them block by block:

- the same kinds of block in the same order (heading, code, div fence, table, list, paragraph);
- headings with the same attributes (ids), code blocks and comments byte for byte (listings are
  code blocks), div fences byte for byte;
- in each block the same markup, in any order (a translation may move a number within its
  sentence): measured spans with their placeholder, choose spans with their condition and number
  of alternatives, cross references, figures, links' targets, inline code;
- the same number of rows and cells in each table;
- no prose block, list item or table row of the translation without Chinese in it, where the
  English one has words (an untranslated paragraph).

It prints each difference with its line numbers, or "editions agree"; exit 0 when they agree,
1 when they do not, 2 when a file cannot be read.
"""

import collections
import re
import sys

CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff\u3000-\u303f\uff00-\uffef]")
MEASURED = re.compile(r"\[([^\[\]]*)\]\{(\.measured[^{}]*)\}")
CROSSREF = re.compile(r"\[\]\(#([^()\s]+)\)")
FIGURE = re.compile(r"!\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(([^()\s]+)\)(\{[^{}]*\})?")
LINK = re.compile(r"(?<!!)\[(?:[^\[\]]|\[[^\[\]]*\])+\]\(([^()\s]+)\)")
INLINE_CODE = re.compile(r"(`+)(.+?)\1")
ATTRIBUTES = re.compile(r"\{[^{}]*\}")
LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d+\.)\s+")


def read(path):
    try:
        with open(path, encoding="utf-8") as f:
            return f.read().split("\n")
    except (OSError, UnicodeDecodeError) as e:
        print("check_editions: cannot read %s: %s" % (path, e), file=sys.stderr)
        sys.exit(2)


def blocks(lines):
    """(kind, first line number, lines) for each block."""
    found, i = [], 0
    if lines and lines[0] == "---":  # the YAML header: title and language differ by design
        end = lines.index("---", 1) if "---" in lines[1:] else len(lines) - 1
        i = end + 1
    while i < len(lines):
        line = lines[i]
        if not line.strip():
            i += 1
            continue
        start = i
        if line.lstrip().startswith("```"):
            fence = line.lstrip()[: len(line.lstrip()) - len(line.lstrip().lstrip("`"))]
            i += 1
            while i < len(lines) and not lines[i].lstrip().startswith(fence):
                i += 1
            i += 1
            found.append(("code", start + 1, lines[start:i]))
            continue
        if line.lstrip().startswith("<!--"):
            while i < len(lines) and "-->" not in lines[i]:
                i += 1
            i += 1
            found.append(("comment", start + 1, lines[start:i]))
            continue
        if line.startswith(":::"):
            found.append(("div", start + 1, [line]))
            i += 1
            continue
        if line.startswith("#"):
            found.append(("heading", start + 1, [line]))
            i += 1
            continue
        while i < len(lines) and lines[i].strip() and not lines[i].startswith(":::") \
                and not lines[i].lstrip().startswith("```"):
            i += 1
        text = lines[start:i]
        kind = "table" if text[0].lstrip().startswith("|") else \
            "list" if LIST_ITEM.match(text[0]) else \
            "caption" if text[0].startswith(": ") else "paragraph"
        found.append((kind, start + 1, text))
    return found


def choose_spans(text):
    """(condition, alternatives) of each [a|b]{.choose if="..."} in text, nested ones too."""
    spans, stack = [], []
    i = 0
    while i < len(text):
        c = text[i]
        if c == "`":  # inline code holds no markup
            end = text.find("`", i + 1)
            i = len(text) if end < 0 else end + 1
            continue
        if c == "[":
            stack.append([i, 1])
        elif c == "|" and stack:
            stack[-1][1] += 1
        elif c == "]" and stack:
            opened, alternatives = stack.pop()
            m = re.match(r"\{(\.choose[^{}]*)\}", text[i + 1:])
            if m:
                spans.append((m.group(1), alternatives))
        i += 1
    return spans


def markup(text):
    """What a block's filters act on, as a multiset."""
    found = collections.Counter()
    for placeholder, attributes in MEASURED.findall(text):
        found[("measured span", "[%s]{%s}" % (placeholder, attributes))] += 1
    for condition, alternatives in choose_spans(text):
        found[("choose span", "{%s} with %d alternatives" % (condition, alternatives))] += 1
    for target in CROSSREF.findall(text):
        found[("cross reference", "[](#%s)" % target)] += 1
    for path, attributes in FIGURE.findall(text):
        found[("figure", path + attributes)] += 1
    for target in LINK.findall(text):
        if not target.startswith("#"):
            found[("link to", target)] += 1
    for _, code in INLINE_CODE.findall(text):
        found[("inline code", "`%s`" % code)] += 1
    return found


def words(text):
    """The prose of a line: markup, code, attributes and links' targets taken out."""
    text = INLINE_CODE.sub(" ", text)
    text = MEASURED.sub(" ", text)
    text = ATTRIBUTES.sub(" ", text)
    text = re.sub(r"\]\([^()]*\)", "] ", text)
    return text


def untranslated(kind, line):
    """True for a line of prose with English words and no Chinese."""
    prose = words(line)
    if CJK.search(prose):
        return False
    latin = re.findall(r"[A-Za-z]{2,}", prose)
    return len(latin) >= (3 if kind == "table" else 4)


def compare(english, chinese, en_path, zh_path):
    problems = []
    en_blocks, zh_blocks = blocks(english), blocks(chinese)
    en_kinds = [b[0] for b in en_blocks]
    zh_kinds = [b[0] for b in zh_blocks]
    pairs = list(zip(en_blocks, zh_blocks))
    for (ek, eline, etext), (zk, zline, ztext) in pairs:
        where = "%s:%d / %s:%d" % (en_path, eline, zh_path, zline)
        if ek != zk:
            problems.append("%s: a %s in English, a %s in Chinese (a block added, lost or "
                            "merged before here?)" % (where, ek, zk))
            break
        if ek in ("code", "comment", "div") and etext != ztext:
            problems.append("%s: this %s must be the same in both editions" % (where, ek))
        if ek == "heading":
            e_attr, z_attr = ATTRIBUTES.findall(etext[0]), ATTRIBUTES.findall(ztext[0])
            e_level = len(etext[0]) - len(etext[0].lstrip("#"))
            z_level = len(ztext[0]) - len(ztext[0].lstrip("#"))
            if e_attr != z_attr or e_level != z_level:
                problems.append("%s: the heading's level or attributes differ: %r, %r"
                                % (where, etext[0], ztext[0]))
        if ek in ("code", "comment", "div"):
            continue
        e_markup, z_markup = markup(" ".join(etext)), markup(" ".join(ztext))
        for item in sorted((e_markup - z_markup).keys()):
            problems.append("%s: the Chinese lacks the %s %s" % (where, item[0], item[1]))
        for item in sorted((z_markup - e_markup).keys()):
            problems.append("%s: the Chinese has a %s the English lacks: %s"
                            % (where, item[0], item[1]))
        if ek == "table":
            e_shape = [line.count("|") for line in etext]
            z_shape = [line.count("|") for line in ztext]
            if e_shape != z_shape:
                problems.append("%s: the table's rows or cells differ (%d rows, %d rows)"
                                % (where, len(etext), len(ztext)))
        if ek == "heading":
            title = ATTRIBUTES.sub("", ztext[0]).lstrip("#")
            if untranslated("paragraph", title) or (not CJK.search(words(title)) and
                                                    len(re.findall(r"[A-Za-z]{3,}",
                                                                   words(title))) >= 2):
                problems.append("%s: the heading is not translated: %s" % (where, ztext[0]))
            continue
        for offset, line in enumerate(ztext):
            if untranslated(zk, line):
                problems.append("%s:%d: no Chinese in this line: %s"
                                % (zh_path, zline + offset, line.strip()[:100]))
    if len(en_kinds) != len(zh_kinds) and not any("block added" in p for p in problems):
        problems.append("%s has %d blocks, %s %d" % (en_path, len(en_kinds), zh_path,
                                                       len(zh_kinds)))
    return problems


def main():
    if len(sys.argv) != 3:
        print("usage: check_editions.py ENGLISH.md CHINESE.md", file=sys.stderr)
        return 2
    en_path, zh_path = sys.argv[1], sys.argv[2]
    problems = compare(read(en_path), read(zh_path), en_path, zh_path)
    for problem in problems:
        print(problem)
    if problems:
        print("editions differ: %d problems" % len(problems))
        return 1
    print("editions agree")
    return 0


if __name__ == "__main__":
    sys.exit(main())

# book_editions.sh - the book's second edition checked against the first: sourced by
# sections/50-book.sh, whose helpers (pass, fail, skip, book_print_check, book_layout_checks,
# $book_work) it uses.

# book_edition_checks DIR: the Chinese edition (book.zh.md), built into DIR/zh beside the
# English one, says what the English one says: the same markup block by block with every
# paragraph translated (book/check_editions.py), the same measured values, every figure drawn
# with its words translated; and it prints and lays out as well as the English one.
book_edition_checks() {
    local dir=$1 zh=$1/zh log
    if [[ ! -f book.zh.md ]]; then
        skip "the Chinese edition (skipped: there is no book.zh.md)"
        return
    fi
    if log=$(python3 book/check_editions.py book.md book.zh.md 2>&1); then
        pass "book.zh.md has book.md's sections, listings, figures, tables and measured values, block by block, every paragraph translated"
    else
        fail "book.zh.md has book.md's sections, listings, figures, tables and measured values, block by block, every paragraph translated" "$(tail -n 20 <<<"$log")"
    fi
    # ... a check that can fail: a paragraph left in English, a listing lost.
    local planted=$book_work/planted.zh.md
    python3 - book.zh.md "$planted" <<'PLANT'
import re, sys
lines = open(sys.argv[1], encoding="utf-8").read().split("\n")
prose = next(i for i, line in enumerate(lines)
             if i > 40 and re.match(r"[\u4e00-\u9fff]", line) and not lines[i - 1].strip())
lines[prose] = "This paragraph was left in English, which the check must name."
listing = next(i for i, line in enumerate(lines) if line.startswith("```{") and "include=" in line)
del lines[listing:listing + 2]
open(sys.argv[2], "w", encoding="utf-8").write("\n".join(lines))
PLANT
    log=$(python3 book/check_editions.py book.md "$planted" 2>&1)
    if [[ $? -eq 1 && $log == *"no Chinese in this line: This paragraph was left in English"* &&
          $log == *"code"* ]]; then
        pass "the editions' check names a paragraph left in English and a listing lost"
    else
        fail "the editions' check names a paragraph left in English and a listing lost" "$(tail -n 5 <<<"$log")"
    fi
    if [[ -s $zh/index.html && $(head -c 2 "$zh/book.epub" 2>/dev/null) == PK ]] &&
       grep -q 'href="zh/index.html"' "$dir/index.html" && grep -q 'href="../index.html"' "$zh/index.html"; then
        pass "the Chinese edition renders to HTML and EPUB, and each edition links to the other"
    else
        fail "the Chinese edition renders to HTML and EPUB, and each edition links to the other" "$(ls -l "$zh" 2>&1)"
    fi
    if log=$(python3 selftest/book_checks.py same-measured "$dir/index.html" "$zh/index.html" 2>&1); then
        pass "both editions show the same measured values, each as often"
    else
        fail "both editions show the same measured values" "$log"
    fi
    local missing=() src
    while read -r src; do
        [[ -f $zh/$src ]] || missing+=("$src")
    done < <(grep -o '<img src="[^"]*"' "$zh/index.html" | sed 's/<img src="//; s/"$//')
    if [[ ${#missing[@]} -eq 0 && $(grep -c '<img src="figures/' "$zh/index.html") == $(grep -c '<img src="figures/' "$dir/index.html") ]]; then
        pass "the Chinese edition shows every figure the English one shows, each drawn in its folder"
    else
        fail "the Chinese edition shows every figure the English one shows, each drawn in its folder" "${missing[*]}"
    fi
    if log=$(python3 book/translate_figure.py --check "$zh"/figures/*.svg 2>&1); then
        pass "no text of the Chinese edition's figures is left in English (book/figures/zh.tsv)"
    else
        fail "no text of the Chinese edition's figures is left in English (book/figures/zh.tsv)" "$log"
    fi
    book_edition="the Chinese edition: "
    book_print_check "$zh"
    book_layout_checks "$zh"
    book_edition=
}

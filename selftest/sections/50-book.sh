# 50-book.sh - the book builds, with every listing, region, rubric, figure and internal link in place.
#
# First the filter on small documents (a missing file, region, figure or link target must stop
# pandoc); then `make book` itself, checked from the outside: the figures it references exist,
# every #anchor it links to is there, no listing marker leaked into it, and each exercise's
# rubric table says what its test module's --rubric says, and its text is valid UTF-8; then its
# layout in headless Chromium, as wide as a phone and as a desktop (nothing may stick out, no
# caption be cut off, figure text must stay legible), and in print (no page half blank).
# Needs no GPU; without pandoc, Graphviz and gnuplot (and no way to install them) it is skipped,
# saying so, and without Chromium the layout alone is.
section "The book"

book_work=build/selftest/book

# filter_run NAME MARKDOWN: renders MARKDOWN with the book's filter; leaves output and status.
filter_run() {
    printf '%s\n' "$2" >"$book_work/$1.md"
    output=$(pandoc "$book_work/$1.md" --from markdown --to html5 --no-highlight --lua-filter book/filter.lua \
        --resource-path=. 2>&1)
    status=$?
}

# expect_stop WHAT NAME MARKDOWN PATTERN: the filter must fail, with PATTERN in its message.
expect_stop() {
    filter_run "$2" "$3"
    if [[ $status -ne 0 ]] && grep -qF -- "$4" <<<"$output"; then
        pass "$1 stops the build, naming it"
    else
        fail "$1 stops the build, naming it (exit $status, expected \"$4\")" "$output"
    fi
}

book_filter_checks() {
    mkdir -p "$book_work"
    cat >"$book_work/sample.c" <<'EOF'
/* sample.c - a file with two listing regions, one inside the other. */
int outside;
/* listing: outer */
int a;
    /* listing: inner */
    int b;
    /* end listing: inner */
/* end listing: outer */
EOF
    local src=$book_work/sample.c
    filter_run region "\`\`\`{.c include=\"$src\" listing=\"outer\"}
\`\`\`"
    if [[ $status -eq 0 ]] && grep -q 'int a' <<<"$output" && grep -q 'int b' <<<"$output" &&
       ! grep -q 'outside\|listing:' <<<"$output"; then
        pass "a region is included without the lines around it or its marker lines"
    else
        fail "a region is included without the lines around it or its marker lines" "$output"
    fi
    filter_run inner "\`\`\`{.c include=\"$src\" listing=\"inner\"}
\`\`\`"
    if [[ $status -eq 0 ]] && grep -q '^<pre class="c"><code>int b;' <<<"$output"; then
        pass "an indented region is included flush left"
    else
        fail "an indented region is included flush left" "$output"
    fi
    expect_stop "a missing region" missing-region "\`\`\`{.c include=\"$src\" listing=\"nowhere\"}
\`\`\`" "has no region 'nowhere'"
    expect_stop "a missing file" missing-file "\`\`\`{.c include=\"$book_work/no-such-file.c\"}
\`\`\`" "$book_work/no-such-file.c"
    printf 'int x;\n/* listing: open */\nint y;\n' >"$book_work/open.c"
    expect_stop "a region without its end marker" open-region "\`\`\`{.c include=\"$book_work/open.c\" listing=\"open\"}
\`\`\`" "has no line '/* end listing: open */'"
    expect_stop "a missing figure" missing-figure "![a figure](figures/no-such-figure.svg)" \
        "figures/no-such-figure.svg"
    expect_stop "a link to a missing anchor" broken-link "# Title {#here}

See [there](#nowhere)." "#nowhere"
    expect_stop "an exercise that does not exist" missing-exercise "::: {.exercise name=\"ch01-memory/no_such_exercise\"}
:::" "tests/ch01-memory/no_such_exercise.c"
}

# Wording and numbers that follow the data: expressions, .choose and .when, on made-up data.
book_measured_checks() {
    local data=$book_work/data front
    mkdir -p "$data"
    printf 'key,value\nsmall,1.5\nlarge,30\nwhole,4200\nmany,30073\nnegative,-1167055.25\n' >"$data/summary.csv"
    printf '# made up\nbytes,rising,peaking\n1024,1.0,5.0\n2048,2.0,9.0\n4096,4.0,6.0\n' >"$data/bandwidth.csv"
    front="---
measurements: $data
---
"
    filter_run choose "$front[less|more]{.choose if=\"small < large\"}, [less|more]{.choose if=\"large < small\"}."
    if [[ $status -eq 0 ]] && grep -q '<p>less, more.</p>' <<<"$output"; then
        pass "a .choose span says the first wording when its condition holds, the second when not"
    else
        fail "a .choose span says the first wording when its condition holds, the second when not" "$output"
    fi
    # Five digits or more in groups of three, split by a thin space (U+2009), after the sign and
    # before the decimals; four stay whole.
    local thin=$'\xe2\x80\x89'
    filter_run digits "$front[v]{.measured key=\"whole\" digits=\"0\"} [v]{.measured key=\"many\" digits=\"0\"} [v]{.measured key=\"negative\" digits=\"2\"}"
    if [[ $status -eq 0 ]] && [[ $(tr '\n' ' ' <<<"$output" | sed 's/<[^>]*>//g; s/ *$//') == "4200 30${thin}073 -1${thin}167${thin}055.25" ]]; then
        pass "a measured number of five digits or more is grouped in threes by a thin space, a negative one too"
    else
        fail "a measured number of five digits or more is grouped in threes by a thin space, a negative one too" "$output"
    fi
    local when='::: {.when if="bandwidth.COLUMN.largest < 0.9 * bandwidth.COLUMN.max"}
FELL to [v]{.measured expr="bandwidth.COLUMN.largest" digits="1"}

:::: else
LEVEL at [v]{.measured expr="bandwidth.COLUMN.max_bytes" as="size"}
::::
:::'
    filter_run when-peaking "$front${when//COLUMN/peaking}"
    local peaking peaking_status=$status rising
    peaking=$(tr '\n' ' ' <<<"$output" | sed 's/<[^>]*>//g; s/  */ /g')
    filter_run when-rising "$front${when//COLUMN/rising}"
    rising=$(tr '\n' ' ' <<<"$output" | sed 's/<[^>]*>//g; s/  */ /g')
    if [[ $peaking_status -eq 0 && $status -eq 0 && $peaking == "FELL to 6.0 " &&
          $rising == "LEVEL at 4"?"KiB " ]]; then
        pass "a .when div keeps its text or its else's as the data says, with values from a measured table"
    else
        fail "a .when div keeps its text or its else's as the data says, with values from a measured table" \
            "peaking: $peaking
rising: $rising"
    fi
    # A part of the book whose measurements the folder lacks is replaced by a notice naming them.
    printf '# made up\nmethod,bytes,get_ms\nfast,4096,1.5\nslow,4096,\n' >"$data/costs.csv"
    filter_run needs-present "$front::: {.needs-measurements files=\"costs.csv\"}
KEPT [v]{.measured expr=\"costs.get_ms.fast\" digits=\"1\"} [v]{.measured csv=\"costs\" column=\"get_ms\" row=\"slow\" none=\"never\"}
:::"
    local present=$output present_status=$status
    filter_run needs-missing "$front::: {.needs-measurements files=\"costs.csv no_such.csv\"}
KEPT
:::"
    if [[ $present_status -eq 0 && $present == *"KEPT"*"1.5"*"never"* && $status -eq 0 &&
          $output != *KEPT* && $output == *'data-missing="no_such.csv"'* && $output == *"Not measured yet"* ]]; then
        pass "a .needs-measurements div keeps its text when its files are there (rows by name, empty cells), and says which are missing otherwise"
    else
        fail "a .needs-measurements div keeps its text when its files are there (rows by name, empty cells), and says which are missing otherwise" \
            "present: $present
missing: $output"
    fi
    expect_stop "an expression naming no measured value" missing-value \
        "$front[x]{.measured expr=\"no_such_value * 2\"}" "no_such_value"
    filter_run table-number "::: {#tbl-sample}
| a |
|---|
| 1 |

: A sample.
:::

See [](#tbl-sample)."
    # The caption after the table's scroll box, not inside it (on a phone it would scroll away).
    if [[ $status -eq 0 ]] &&
       tr '\n' ' ' <<<"$output" | grep -q '</table> *</div> *<div class="table-caption"> *<strong>Table 1.</strong> A sample. *</div>' &&
       grep -q 'href="#tbl-sample">Table.1</a>' <<<"$output"; then
        pass "a table with a caption is numbered, the caption below its scroll box, and an empty link to it says its number"
    else
        fail "a table with a caption is numbered, the caption below its scroll box, and an empty link to it says its number" "$output"
    fi
}

# rubric_in_html FILE EXERCISE: "points<TAB>sentence" for each row of the exercise's rubric table.
rubric_in_html() {
    awk -v start="data-exercise=\"$2\"" '
        index($0, start) { inside = 1 }
        inside && /<\/table>/ { exit }
        inside && /<td/ && !/<strong>/ {
            cell = $0; sub(/^[^>]*>/, "", cell); sub(/<\/td>.*$/, "", cell)
            if (sentence == "") sentence = cell; else { print cell "\t" sentence; sentence = "" }
        }' "$1"
}

book_build_checks() {
    local log dir=build/book
    if ! log=$($MAKE -s --no-print-directory book 2>&1); then
        if grep -q "there is no measured data" <<<"$log"; then
            fail "the book builds from measured data (measurements/ has none yet: run \`make measure\` on a GPU and commit measurements/)" "$log"
            # The rest of the book can still be checked, on made-up numbers.
            dir=build/book-placeholder
            if ! log=$($MAKE -s --no-print-directory book-placeholder 2>&1); then
                fail "the book builds (on placeholder data)" "$log"
                return
            fi
        else
            fail "the book builds" "$log"
            return
        fi
    else
        pass "the book builds: $dir/index.html and book.epub ($(grep -o 'measured data: [^)]*' <<<"$log"))"
    fi
    local html=$dir/index.html
    if [[ -s $html && $(head -c 2 "$dir/book.epub" 2>/dev/null) == PK ]]; then
        pass "it renders to HTML and EPUB"
    else
        fail "it renders to HTML and EPUB ($html, $dir/book.epub)"
    fi

    book_print_check "$dir"
    book_text_check "$dir"

    local missing=() src
    while read -r src; do
        [[ -f $dir/$src ]] || missing+=("$src")
    done < <(grep -o '<img src="[^"]*"' "$html" | sed 's/<img src="//; s/"$//')
    local figures
    figures=$(grep -c '<img src="figures/' "$html")
    # A plot whose data the measurements lack (a chapter measured later) is not shown, and the
    # book says so in its place: a notice naming its CSV file.
    local unmeasured=() source
    for source in book/figures/*.dot book/plots/*.gp; do
        [[ $source == book/plots/common.gp ]] && continue
        src=$(basename "${source%.*}")
        if grep -q "<img src=\"figures/$src.svg\"" "$html"; then
            continue
        elif [[ $source == *.gp ]] && grep -q "class=\"unmeasured\" data-missing=\"[^\"]*\\b$src\\.csv\\b" "$html"; then
            unmeasured+=("$src")
        else
            missing+=("figures/$src.svg (not in the book)")
        fi
    done
    if [[ ${#missing[@]} -eq 0 && $figures -gt 0 ]]; then
        pass "every figure it shows exists, and every figure source is shown ($figures figures${unmeasured[*]:+; not measured yet, and the book says so: ${unmeasured[*]}})"
    else
        fail "every figure it shows exists, and every figure source is shown" "${missing[*]}"
    fi

    local broken=() anchor
    while read -r anchor; do
        grep -q "id=\"$anchor\"" "$html" || broken+=("#$anchor")
    done < <(grep -o 'href="#[^"]*"' "$html" | sed 's/href="#//; s/"$//' | sort -u)
    if [[ ${#broken[@]} -eq 0 ]]; then
        pass "every internal link leads to an anchor that exists"
    else
        fail "every internal link leads to an anchor that exists" "broken: ${broken[*]}"
    fi

    if grep -q 'listing: \|include=' "$html"; then
        fail "no listing marker or include attribute is left in the book" "$(grep -n 'listing: \|include=' "$html" | head -n 5)"
    else
        pass "no listing marker or include attribute is left in the book"
    fi

    book_by_hand_check
    book_layout_checks "$dir"
    book_rubric_checks "$html"
    book_edition_checks "$dir"
}


# book_rubric_checks HTML: each exercise's rubric in the book is the one its tests compile to.
book_rubric_checks() {
    local html=$1 exercise expected got
    for exercise in $($MAKE -s --no-print-directory list-exercises); do
        build build/tests/host "build/modules/tests/$exercise.so" || continue
        expected=$(build/tests/host --module "build/modules/tests/$exercise.so" --rubric 2>&1 |
                   awk -F'\t' '$1 == "test" { print $3 "\t" $4 }')
        got=$(rubric_in_html "$html" "$exercise")
        if [[ -n $got && $got == "$expected" ]]; then
            pass "the book's rubric of $exercise is its tests' own ($(wc -l <<<"$got") tests)"
        else
            fail "the book's rubric of $exercise is its tests' own" \
                "$(diff <(echo "$expected") <(echo "$got") | head -n 20)"
        fi
    done
}

# book_print_check DIR: the book in DIR printed as make book-pdf prints it, with no page left
# more than half blank by something that would not break (a listing, a figure, a table).
book_print_check() {
    local dir=$1 log
    if ! command -v "${CHROMIUM:-chromium}" >/dev/null 2>&1 || ! command -v python3 >/dev/null 2>&1; then
        skip "${book_edition}the printed book leaves no page more than half blank (skipped: it takes Chromium and python3)"
        return
    elif [[ $dir != build/book && $dir != build/book/zh ]]; then
        skip "${book_edition}the printed book leaves no page more than half blank (skipped: make book-pdf prints the measured book only)"
        return
    fi
    # make book-pdf prints both editions: the second edition's check finds its PDF made.
    if [[ ! $dir/book.pdf -nt $dir/index.html ]] && ! log=$($MAKE -s --no-print-directory book-pdf 2>&1) ||
       [[ ! $dir/book.pdf -nt $dir/index.html ]]; then
        fail "${book_edition}the book prints to a PDF (make book-pdf)" "$log"
    elif log=$(python3 selftest/book_checks.py pages "$dir/book.pdf" 2>&1); then
        pass "${book_edition}the printed book leaves no page more than half blank, but before a chapter and at its end"
    else
        fail "${book_edition}the printed book leaves no page more than half blank, but before a chapter and at its end" "$log"
    fi
}

# book_text_check DIR: the book's text in DIR, as HTML, EPUB and its figures (and the PDF's text,
# where make book-pdf printed one and pdftotext can read it), is UTF-8 with no U+FFFD: a
# character lost in the making (a thin space taken apart) shows there and nowhere else.
book_text_check() {
    local dir=$1 files=("$1/index.html" "$1/book.epub" "$1"/figures/*.svg) what="HTML, EPUB and figures" log
    if ! command -v python3 >/dev/null 2>&1; then
        skip "the book's text is valid UTF-8 (skipped: no python3 to read it)"
        return
    fi
    if [[ -s $dir/book.pdf && $dir/book.pdf -nt $dir/index.html ]] && command -v pdftotext >/dev/null 2>&1 &&
       pdftotext -enc UTF-8 "$dir/book.pdf" "$book_work/book.pdf.txt" 2>/dev/null; then
        files+=("$book_work/book.pdf.txt")
        what+=", and the PDF's text"
    elif command -v pdftotext >/dev/null 2>&1; then
        what+="; not the PDF's text: no book.pdf newer than the HTML (make book-pdf)"
    else
        what+="; not the PDF's text: no pdftotext (poppler-utils) to read it"
    fi
    if log=$(python3 selftest/book_checks.py text "${files[@]}" 2>&1); then
        pass "the book's text is UTF-8 with no U+FFFD ($what)"
    else
        fail "the book's text is UTF-8 with no U+FFFD ($what)" "$log"
    fi
}

# The command book.md prints for building a chapter program by hand ({#build-by-hand}) builds
# it, as printed, against this course's toolkit; only the program's name is changed, so that
# it lands in build/. Running it is 40-chapters.sh's business, on a GPU.
book_by_hand_check() {
    local cuda_home command log
    cuda_home=$($MAKE -s --no-print-directory list-toolchain | sed -n 's/^CUDA_HOME=//p')
    command=$(awk '/^```.*#build-by-hand/ { inside = 1; next } inside && /^```/ { exit } inside' book.md |
              grep -v '^\./')
    if [[ -z $command ]]; then
        fail "book.md shows a command that builds a program by hand (a block {.sh #build-by-hand})"
        return
    fi
    if [[ ! -f $cuda_home/include/cuda_runtime.h ]]; then
        skip "the book's command to build a program by hand (skipped: no CUDA toolkit at $cuda_home)"
        return
    fi
    mkdir -p "$book_work"
    command=${command//-o first-copy/-o $book_work/first-copy}
    if log=$(CUDA_HOME=$cuda_home bash -euo pipefail -c "$command" 2>&1) && [[ -x $book_work/first-copy ]]; then
        pass "the book's command to build a program by hand builds it (CUDA_HOME=$cuda_home)"
    else
        fail "the book's command to build a program by hand builds it (CUDA_HOME=$cuda_home)" "$command
$log"
    fi
}

# The layout, in headless Chromium: the book in a frame as wide as a phone (390 px) and in one
# as wide as a desktop window (1280 px). A script in the page reports what sticks out (the page
# wider than its window, so that it scrolls sideways, or a box whose content runs past its edge
# without a scroll bar of its own), a caption out of view (in a box that scrolls sideways, or
# wider than the window), a listing that scrolls sideways, and how wide each figure is drawn, from which the smallest
# text of each SVG (its font-size, in units of its viewBox) is worked out as the reader sees it.
# A frame rather than the window, since headless Chromium makes no window narrower than 500 px.
LAYOUT_WIDTHS=(390 1280)
LAYOUT_SMALLEST_TEXT_PX=9
# Listings wrap on screens this wide or less (book.css: max-width: 600px); wider, they may scroll.
LAYOUT_WRAPPED_BELOW=600
LAYOUT_SCRIPT='addEventListener("load", function () {
  var lines = [], root = document.documentElement, boxes = document.body.querySelectorAll("*");
  if (root.scrollWidth > root.clientWidth)
    lines.push("overflow: the page is " + root.scrollWidth + " px wide, its window " + root.clientWidth);
  for (var i = 0; i < boxes.length; i++) {
    var box = boxes[i], style = getComputedStyle(box);
    if (style.display.indexOf("inline") === 0 || style.overflowX !== "visible") continue;
    if (box.clientWidth > 0 && box.scrollWidth > box.clientWidth + 1)
      lines.push("overflow: " + box.tagName.toLowerCase() + (box.id ? "#" + box.id : "") +
                 (box.className ? "." + box.className.split(" ").join(".") : "") + ", " +
                 box.scrollWidth + " px of content in " + box.clientWidth + " px: " +
                 box.textContent.replace(/\s+/g, " ").slice(0, 60));
  }
  // A caption inside a box that scrolls sideways is cut off at the edge of the box; so is one wider
  // than the window.
  var captions = document.querySelectorAll("caption, figcaption, .table-caption");
  for (var c = 0; c < captions.length; c++) {
    var caption = captions[c], scroller = caption.parentElement, cut = "";
    for (; scroller && scroller !== document.body; scroller = scroller.parentElement)
      if (getComputedStyle(scroller).overflowX !== "visible" && scroller.scrollWidth > scroller.clientWidth + 1)
        cut = "inside a " + scroller.tagName.toLowerCase() + " that scrolls sideways";
    if (!cut && caption.getBoundingClientRect().right > root.clientWidth + 1) cut = "wider than the window";
    if (cut) lines.push("caption: " + cut + ": " + caption.textContent.replace(/\s+/g, " ").slice(0, 60));
  }
  // A listing that scrolls sideways, which on a phone it should not (it wraps there).
  var listings = document.querySelectorAll("pre");
  for (var l = 0; l < listings.length; l++)
    if (listings[l].scrollWidth > listings[l].clientWidth + 1)
      lines.push("listing: " + listings[l].scrollWidth + " px in " + listings[l].clientWidth + " px: " +
                 listings[l].textContent.replace(/\s+/g, " ").slice(0, 60));
  for (var j = 0; j < document.images.length; j++)
    lines.push("image " + document.images[j].getAttribute("src") + " " + document.images[j].clientWidth);
  parent.postMessage(lines.join("\n") + "\nend of report", "*");
});'

# svg_smallest_text SVG DRAWN_WIDTH: "SVG: N px ..." when its smallest text, drawn DRAWN_WIDTH
# px wide, is under LAYOUT_SMALLEST_TEXT_PX; nothing otherwise.
svg_smallest_text() {
    awk -v drawn="$2" -v least="$LAYOUT_SMALLEST_TEXT_PX" '
        !width && match($0, /viewBox="[-0-9. ]*"/) {
            split(substr($0, RSTART + 9, RLENGTH - 10), box, " "); width = box[3]
        }
        { while (match($0, /font-size="[0-9.]+"/)) {
              size = substr($0, RSTART + 11, RLENGTH - 12) + 0
              if (!smallest || size < smallest) smallest = size
              $0 = substr($0, RSTART + RLENGTH)
          } }
        END {
            if (width && smallest && smallest * drawn / width < least)
                printf "%s: %.1f px (font-size %g in a viewBox %g wide, drawn %d px wide)\n",
                       FILENAME, smallest * drawn / width, smallest, width, drawn
        }' "$1"
}

# book_layout_checks DIR: the rendered book in DIR, laid out at each of LAYOUT_WIDTHS.
book_layout_checks() {
    local dir=$1 chromium=${CHROMIUM:-chromium}
    if ! command -v "$chromium" >/dev/null 2>&1; then
        skip "${book_edition}the book's layout at ${LAYOUT_WIDTHS[*]} px (skipped: no Chromium to lay it out; make deps installs it with the book's tools, or apt-get install chromium)"
        return
    fi
    local work=$PWD/$book_work/layout
    mkdir -p "$work"
    printf '%s\n' "$LAYOUT_SCRIPT" >"$work/report.js"
    # The page's own folder stays its base, so that its style sheet and figures load.
    sed "s|<head>|<head><base href=\"file://$PWD/$dir/\">|
         s|</body>|<script src=\"file://$work/report.js\"></script></body>|" "$dir/index.html" >"$work/page.html"
    local width profile report overflow caption listing small image drawn
    for width in "${LAYOUT_WIDTHS[@]}"; do
        printf '%s\n' '<!DOCTYPE html><html><body style="margin: 0"><pre id="report">no report</pre>' \
            "<iframe src=\"page.html\" style=\"width: ${width}px; height: 900px; border: 0\"></iframe>" \
            '<script>addEventListener("message", function (e) { document.getElementById("report").textContent = e.data; });</script>' \
            '</body></html>' >"$work/frame-$width.html"
        profile=$(mktemp -d)
        report=$(timeout 120 "$chromium" --headless --no-sandbox --disable-gpu --hide-scrollbars \
                     --disable-background-networking --disable-component-update --disable-sync \
                     --no-first-run --user-data-dir="$profile" --window-size=$((width + 100)),1000 \
                     --virtual-time-budget=10000 --dump-dom "file://$work/frame-$width.html" \
                     2>"$work/chromium-$width.log" |
                 sed -n '/<pre id="report">/,/end of report/p' |
                 sed 's/<pre id="report">//; s/&lt;/</g; s/&gt;/>/g; s/&amp;/\&/g')
        rm -rf "$profile"
        if [[ $report != *"end of report"* ]]; then
            fail "${book_edition}the book lays out in headless Chromium at $width px (no report came back)" \
                "$(tail -n 5 "$work/chromium-$width.log")"
            continue
        fi
        overflow=$(sed -n 's/^overflow: //p' <<<"$report")
        if [[ -z $overflow ]]; then
            pass "${book_edition}at $width px nothing runs past its box and the page does not scroll sideways"
        else
            fail "${book_edition}at $width px nothing runs past its box and the page does not scroll sideways ($(wc -l <<<"$overflow") do)" "$overflow"
        fi
        caption=$(sed -n 's/^caption: //p' <<<"$report")
        if [[ -z $caption ]]; then
            pass "${book_edition}at $width px every caption is in view, none in a box that scrolls sideways"
        else
            fail "${book_edition}at $width px every caption is in view, none in a box that scrolls sideways ($(wc -l <<<"$caption") out of view)" "$caption"
        fi
        listing=$(sed -n 's/^listing: //p' <<<"$report")
        if [[ $width -le $LAYOUT_WRAPPED_BELOW && -z $listing ]]; then
            pass "${book_edition}at $width px every listing wraps rather than scroll sideways"
        elif [[ $width -le $LAYOUT_WRAPPED_BELOW ]]; then
            fail "${book_edition}at $width px every listing wraps rather than scroll sideways ($(wc -l <<<"$listing") scroll)" "$listing"
        fi
        small=
        while read -r _ image drawn; do
            [[ $image == *.svg && -f $dir/$image ]] && small+=$(svg_smallest_text "$dir/$image" "$drawn")
        done < <(grep '^image ' <<<"$report")
        if [[ -z $small ]]; then
            pass "${book_edition}at $width px the figures' smallest text is drawn at $LAYOUT_SMALLEST_TEXT_PX px or more"
        else
            fail "${book_edition}at $width px the figures' smallest text is drawn at $LAYOUT_SMALLEST_TEXT_PX px or more" "$small"
        fi
    done
}

source selftest/book_editions.sh
book_edition= # the Chinese edition's checks name it first
if ! book_deps_log=$(setup/install-deps.sh --if-missing --book 2>&1); then
    skip "the book (skipped: pandoc 2.17+, Graphviz or gnuplot is missing and could not be installed; run make deps as root)"
    sed 's/^/          /' <<<"$book_deps_log" | head -n 5
else
    book_filter_checks
    book_measured_checks
    book_build_checks
fi

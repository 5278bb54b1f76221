# rubric.awk - the one reader of the rubric: each exercise's title, hint and tests, read from its
# test file, where the harness compiles them from.
#
#   awk -f harness/report/rubric.awk tests/chNN-slug/NAME.c...
#
# prints, for each file, one line for the exercise and one per test, in the file's order (the
# order the runner runs them in), fields separated by tabs:
#
#   exercise  chNN-slug/NAME  TITLE   HINT
#   gpus      chNN-slug/NAME  COUNT     (only where COURSE_EXERCISE_NEEDS_GPUS says more than 1)
#   test      chNN-slug/NAME  POINTS  SENTENCE  timed|untimed|host
#
# (host: COURSE_HOST_TEST, a test that needs no GPU. gpus: how many GPUs its tests need at least;
# where the machine has fewer they do not run.)
#
# TITLE and HINT are the C string literals of COURSE_EXERCISE(title, hint) with their escapes
# read; in the output a backslash, a tab and a newline are written \\, \t and \n. A test's
# SENTENCE is its name with underscores read as spaces, as the runner reports it. `make check`,
# the grader and the book all read the rubric through this file; the self-test checks that it
# agrees with what each compiled test program says with --rubric.

function fail(message) {
    print "rubric.awk: " FILENAME ": " message > "/dev/stderr"
    failed = 1
    exit 2
}

# A character at a time: awks differ on backslashes in gsub's replacement.
function escaped(text,    out, i, c) {
    out = ""
    for (i = 1; i <= length(text); i++) {
        c = substr(text, i, 1)
        out = out (c == "\\" ? "\\\\" : c == "\t" ? "\\t" : c == "\n" ? "\\n" : c)
    }
    return out
}

# The arguments of COURSE_EXERCISE( in source, each the concatenation of its string literals.
function read_exercise(source, id,    start, i, c, n, argument, literal, escape) {
    start = index(source, "COURSE_EXERCISE(")
    if (start == 0)
        fail("no COURSE_EXERCISE(title, hint)")
    n = 0
    argument = ""
    for (i = start + length("COURSE_EXERCISE("); i <= length(source); i++) {
        c = substr(source, i, 1)
        if (c == "\"") {
            literal = ""
            for (i++; i <= length(source) && (c = substr(source, i, 1)) != "\""; i++) {
                if (c == "\\") {
                    escape = substr(source, ++i, 1)
                    c = escape == "n" ? "\n" : escape == "t" ? "\t" : escape
                }
                literal = literal c
            }
            if (i > length(source))
                fail("a string in COURSE_EXERCISE( is never closed")
            argument = argument literal
        } else if (c == "," || c == ")") {
            arguments[++n] = argument
            argument = ""
            if (c == ")")
                break
        }
    }
    if (n != 2)
        fail("COURSE_EXERCISE( needs two string arguments, a title and a hint")
    printf "exercise\t%s\t%s\t%s\n", id, escaped(arguments[1]), escaped(arguments[2])
}

function finish_file(    i) {
    if (FILENAME_SEEN == "")
        return
    read_exercise(source, id)
    if (gpus > 1)
        printf "gpus\t%s\t%d\n", id, gpus
    if (test_count == 0)
        fail("no COURSE_TEST(name, points)")
    for (i = 1; i <= test_count; i++)
        print tests[i]
    FILENAME_SEEN = ""
}

FNR == 1 {
    finish_file()
    FILENAME_SEEN = FILENAME
    id = FILENAME
    sub(/^(\.\/)?tests\//, "", id)
    sub(/\.c$/, "", id)
    source = ""
    test_count = 0
    gpus = 1
}

/^COURSE_EXERCISE_NEEDS_GPUS\([0-9]+\)/ {
    line = $0
    sub(/^COURSE_EXERCISE_NEEDS_GPUS\(/, "", line)
    gpus = line + 0
}

{ source = source $0 "\n" }

/^COURSE_(TIMED_|HOST_)?TEST\([A-Za-z0-9_]+, *[0-9]+\)/ {
    timed = $0 ~ /^COURSE_TIMED_TEST/ ? "timed" : $0 ~ /^COURSE_HOST_TEST/ ? "host" : "untimed"
    line = $0
    sub(/^COURSE_(TIMED_|HOST_)?TEST\(/, "", line)
    sub(/\).*/, "", line)
    split(line, parts, /, */)
    sentence = parts[1]
    gsub(/_/, " ", sentence)
    tests[++test_count] = sprintf("test\t%s\t%d\t%s\t%s", id, parts[2], sentence, timed)
}

END {
    if (!failed)
        finish_file()
}

# help.awk - `make help`: the "## make COMMAND  WHAT IT DOES" lines of the makefiles, grouped by
# who runs them (learners first) and wrapped to 80 columns.
#
#   sed -n 's/^## //p' MAKEFILES | awk -f mk/help.awk

BEGIN {
    split("learners readers instructors developers", order, " ")
    heading["learners"] = "For learners, doing the exercises"
    heading["readers"] = "For readers of the book and its programs"
    heading["instructors"] = "For instructors, grading a class"
    heading["developers"] = "For the course's developers"
    split("check watch hint reset list deps", names, " ")
    for (i in names) group[names[i]] = "learners"
    split("book book-pdf run", names, " ")
    for (i in names) group[names[i]] = "readers"
    split("grade grade-report grade-export grade-benchmark deps-cluster grade-deps", names, " ")
    for (i in names) group[names[i]] = "instructors"
    width = 80
    indent = 24
}

# Words of `text` in lines of at most `width` columns, the first after `first`, the others
# indented.
function wrapped(first, text,    out, line, n, words, i) {
    n = split(text, words, " ")
    out = ""
    line = first
    if (index(first, "\n")) { # a long command has a line of its own
        out = substr(first, 1, index(first, "\n"))
        line = substr(first, index(first, "\n") + 1)
    }
    for (i = 1; i <= n; i++) {
        if (length(line) + 1 + length(words[i]) > width && length(line) > indent) {
            out = out line "\n"
            line = sprintf("%" indent "s", "")
        }
        line = line (line ~ / $/ ? "" : " ") words[i]
    }
    return out line
}

{
    split($0, parts, /  +/)
    command = parts[1]
    what = substr($0, length(command) + 1)
    sub(/^ +/, "", what)
    word = command
    sub(/^make ?/, "", word)
    sub(/ .*/, "", word)
    g = word in group ? group[word] : "developers"
    first = length(command) >= indent - 1 ? command "\n" sprintf("%" indent "s", "") \
                                         : sprintf("%-" indent "s", command)
    lines[g] = lines[g] wrapped(first, what) "\n"
}

END {
    for (i = 1; i <= 4; i++)
        if (lines[order[i]] != "")
            printf "%s%s:\n%s", (i > 1 ? "\n" : ""), heading[order[i]], lines[order[i]]
}

# compiler_lines.awk - a build's words worth showing a learner, the one filter of them: make
# check (harness/check.sh) and make grade (grader/course.py) pass the compiler's and linker's
# output through it. The compiler's errors, warnings and notes and the linker's "multiple
# definition" as they are, at most 12 lines; the linker's "undefined reference to `f'" (said
# as often as f is called) once per function, in the learner's terms. make's own lines, the
# grader's and collect2's summary are dropped.
#
#   awk -f harness/report/compiler_lines.awk LOG
function show(line) {
    if (shown < 12)
        print line
    shown++
}
{
    line = $0
    if (line ~ /^make/ || line ~ /^grader:/ || line ~ /collect2: error: ld returned/)
        next
    if (match(line, /undefined reference to `[A-Za-z0-9_]*'/)) {
        name = substr(line, RSTART + 24, RLENGTH - 25)
        if (!(name in undefined)) {
            undefined[name] = 1
            order[++undefined_count] = name
        }
        next
    }
    if (line ~ /error|warning|note|multiple definition/)
        show(line)
}
END {
    for (i = 1; i <= undefined_count; i++)
        show("the linker found no definition of " order[i] ": define it in your file, spelled " \
             "as the header declares it")
}

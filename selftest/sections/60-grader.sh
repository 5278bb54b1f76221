# 60-grader.sh - make grade's parts that need no class: the grader's unit tests, its static
# checks against every stub and mutant, and bad input refused in a sentence. (The sample class
# is graded in 62-grader-class.sh, beside this.)
section "The grader (make grade): unit tests, static checks, bad input"

grader_work=build/selftest/grader
if ! command -v python3 >/dev/null 2>&1; then
    fail "python3 is there for the grader (make deps installs it)"
    return 0
fi

# make grade confines submissions with bubblewrap: run.sh installed it, if it could, before the
# sections started (make deps installs it; make test may not have run make deps).
if [[ $grade_deps_status != 0 ]]; then
    fail "the grader's prerequisite bubblewrap is installed" "$grade_deps_log"
elif [[ $grade_deps_log == *"python3-seccomp could not be installed"* ]]; then
    skip "the grader's system call filter (skipped: $grade_deps_log)"
fi

# --- Unit tests (host only) ----------------------------------------------------------------
unit_log=$(python3 -m unittest discover -s grader/tests -v 2>&1)
unit_status=$?
while read -r module; do
    total=$(grep -cE "^test_.* \($module\." <<<"$unit_log")
    bad=$(grep -E "^test_.* \($module\..*\.\.\. (FAIL|ERROR)" <<<"$unit_log")
    if [[ -n $bad ]]; then
        fail "grader unit tests, $module: $(grep -c . <<<"$bad") of $total failed" \
            "$(grep -A 30 -E "^(FAIL|ERROR): .*\($module\." <<<"$unit_log")"
    else
        pass "grader unit tests, $module: $total tests"
    fi
done < <(sed -n 's/^test_[a-z_0-9]* (\([a-z_]*\)\..*/\1/p' <<<"$unit_log" | sort -u)
while read -r skipped_line; do
    [[ -n $skipped_line ]] && skip "grader unit test ${skipped_line%% (*} (skipped: ${skipped_line#*skipped })"
done < <(grep -E "\.\.\. skipped " <<<"$unit_log")
if [[ $unit_status -ne 0 ]] && ! grep -qE "\.\.\. (FAIL|ERROR)" <<<"$unit_log"; then
    fail "grader unit tests run" "$unit_log"
fi

# --- The allow-list keeps up with the course ------------------------------------------------
# Stubs and mutants are what learners write; solutions are graded below.
inspect_log=$(python3 grader/grade.py inspect exercises/ch*/*.c build/mutants/ch*/*.c 2>&1)
if [[ $? -eq 0 ]]; then
    pass "the grader's static checks accept every stub and mutant ($(grep -c '^accepted' <<<"$inspect_log") files)"
else
    fail "the grader's static checks accept every stub and mutant" "$(grep -v '^accepted' <<<"$inspect_log")"
fi

# Device memory the harness would not see (its ledger, the memory share) is refused.
untraced=build/selftest/untraced-allocation/$(sed -n '/^ch/{p;q}' exercises/ORDER).c
mkdir -p "$(dirname "$untraced")"
{ cat "exercises/${untraced#build/selftest/untraced-allocation/}"
  printf '\n__attribute__((used)) static void *hidden_memory(void)\n{\n'
  printf '    void *p = NULL;\n    size_t pitch = 0;\n'
  printf '    return cudaMallocPitch(&p, &pitch, 1024, 1024) == cudaSuccess ? p : NULL;\n}\n'; } >"$untraced"
inspect_log=$(python3 grader/grade.py inspect "$untraced" 2>&1)
if grep -q "^not accepted.*cudaMallocPitch" <<<"$inspect_log"; then
    pass "the grader refuses device memory that the harness does not trace (cudaMallocPitch)"
else
    fail "the grader refuses device memory that the harness does not trace (cudaMallocPitch)" "$inspect_log"
fi

# --- Bad input: said plainly, nothing written --------------------------------------------
empty_out=$grader_work/no-grades-here
rm -rf "$grader_work" && mkdir -p "$grader_work"
report_log=$($MAKE -s --no-print-directory grade-report OUT="$empty_out" 2>&1)
if [[ $? -ne 0 && $report_log == *"holds no graded student"* && ! -e $empty_out ]]; then
    pass "make grade-report on a folder with no grades says so and writes nothing"
else
    fail "make grade-report on a folder with no grades says so and writes nothing" "$report_log"
fi
grade_log=$($MAKE -s --no-print-directory grade SUBMISSIONS="$grader_work/no-such-class" \
    OUT="$empty_out" 2>&1)
if [[ $? -ne 0 && $grade_log == *"no-such-class is not a folder"* ]]; then
    pass "make grade on a submissions folder that is not there names it"
else
    fail "make grade on a submissions folder that is not there names it" "$grade_log"
fi
# refused WHAT PHRASE MAKE-ARGS...: make says PHRASE, fails, shows no traceback, writes no OUT.
refused() {
    local what=$1 phrase=$2 log
    shift 2
    log=$($MAKE -s --no-print-directory "$@" 2>&1)
    if [[ $? -ne 0 && $log == *"$phrase"* && $log != *Traceback* && ! -e $empty_out ]]; then
        pass "$what: said in a sentence, nothing written"
    else
        fail "$what: said in a sentence ('$phrase'), nothing written" "$log"
    fi
}
mkdir -p "$grader_work/empty-class" "$grader_work/one-student/alice"
one=$grader_work/one-student
refused "make grade on an empty submissions folder" "holds no submission" \
    grade SUBMISSIONS="$grader_work/empty-class" OUT="$empty_out"
refused "make grade with OUT inside the submissions" "inside the submissions" \
    grade SUBMISSIONS="$one" OUT="$one/grades"
[[ -e $one/grades ]] && fail "make grade with OUT inside the submissions wrote there" "$(ls -R "$one")"
refused "make grade with an OUT that cannot be made" "OUT=/proc/no-such-folder" \
    grade SUBMISSIONS="$one" OUT=/proc/no-such-folder
for knob in JOBS=abc TEST_TIMEOUT=abc STUDENT_TIMEOUT=0 PER_GPU=-1 SLICE=3/3; do
    refused "make grade $knob" "$knob:" grade SUBMISSIONS="$one" OUT="$empty_out" "$knob"
done
for students in abc -3; do
    refused "make grade-benchmark STUDENTS=$students" "STUDENTS=$students:" \
        grade-benchmark STUDENTS="$students" BENCHMARK_DIR="$grader_work/benchmark"
done

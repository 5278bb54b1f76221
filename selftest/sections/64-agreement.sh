# 64-agreement.sh - what make check passes, make grade passes: the same files, the same verdicts.
#
# Every reference solution, every correct alternative written in another style
# (selftest/alternatives/: fall-through comments, semaphores, the course's thread pool, sysconf
# and registered memory...) and every known mistake (mutants/) is graded by make grade as a
# student's file, each student handing in one file of an exercise at most (below, how they are
# shared out); each test's verdict must be the one the exercises' section (30-exercises.sh, which
# runs the same files as make check does) gave it. A mistake whose header says it races (a line
# " * races: WHY": whether it shows depends on a race with the GPU in the tests that do not
# hold the GPU up) must fail under both; which of its tests fail may differ from run to run
# under either (the exercises' section proves its diagnostic). And make check's own word on a file make grade would
# refuse (build/refusals/, grader/refusals.py) must be that there is none.
section "make check and make grade agree: solutions, alternatives and known mistakes"

agreement=build/selftest/agreement
results_dir=build/selftest/results

# The refusals make check would show: none for a file of the course's.
refused=$(find build/refusals/solutions build/refusals/mutants build/refusals/selftest \
               -name '*.txt' -size +0 2>/dev/null)
if [[ -z $refused ]] && compgen -G "build/refusals/solutions/*/*.txt" >/dev/null; then
    pass "make grade's checks, asked by make check, refuse no solution, alternative or mistake"
else
    fail "make grade's checks, asked by make check, refuse no solution, alternative or mistake" \
        "$(for f in $refused; do echo "$f: $(head -n 3 "$f")"; done)"
fi

if [[ $grade_deps_status != 0 ]]; then
    skip "make grade's verdicts against make check's (skipped: bubblewrap is missing, as 60-grader says)"
elif ! section_in_run 30-exercises; then
    skip "make grade's verdicts against make check's (skipped: the exercises' section is not in this run)"
elif need_gpu "make grade's verdicts against make check's"; then
    rm -rf "$agreement" && mkdir -p "$agreement/class" "$agreement/mistakes"
    awk -f harness/report/rubric.awk tests/*/*.c >"$agreement/rubric.tsv" # read once, used twice
    # make grade gives each test program one GPU: an exercise whose tests need more is never
    # graded there, and is left out of the class (its files would keep it from being complete).
    many_gpus=$(awk -F '\t' '$1 == "gpus" && $3 > 1 { print $2 }' "$agreement/rubric.tsv")
    for exercise in $many_gpus; do
        skip "make grade's verdicts on $exercise against make check's (skipped: its tests need more GPUs than make grade gives a test program, which is one)"
    done
    # The class: the solutions and the alternatives; the known mistakes in a class of their own,
    # graded without their timed tests, which the exercises' section does not run either (a
    # timed test has the GPU alone: each costs every program beside it its time). A student
    # hands in one file of an exercise at most, so each class has as many students as the
    # exercise with the most files; the files are shared out among them by how long each took
    # in the exercises' section (module_seconds; a file not there counts its exercise's tests, a
    # timed test three), the longest first, each to the student with the least so far: a make
    # grade lasts as long as its longest student, whose tests run one after another. The
    # exercises whose worker needs one work queue (queue_group: a mistake, graded without its
    # timed tests, may need fewer than its solution) go to students of their own, as make
    # check's hosts have them: their workers' contexts, and the fresh ones after each test of a
    # mistake that ends its worker or leaves threads running, then have one work queue, and the
    # mistakes of several streams 2 or 4, not 8. That makes 28 students where 15 would do, and
    # more contexts (86 against 59 on an H100), but cheaper ones: make test took 90.8 s where
    # the tree before took 106.5 s on one machine (docs/performance.md, stop 50).
    awk -F '\t' '$1 == "test" { weight[$2] += $5 == "timed" ? 3 : 1 }
                  END { for (e in weight) print e "\t" weight[e] }' "$agreement/rubric.tsv" \
        >"$agreement/weights.tsv"
    python3 - "$agreement" "$agreement/programs.tsv" "$agreement/weights.tsv" "$(module_seconds)" \
        "$($MAKE -s --no-print-directory list-exercises)" \
        "$($MAKE -s --no-print-directory list-alternatives)" \
        "$($MAKE -s --no-print-directory list-mutants)" "$many_gpus" \
        "$(queue_group $($MAKE -s --no-print-directory list-exercises))" \
        "$(queue_group --untimed $($MAKE -s --no-print-directory list-exercises))" <<'EOF'
import os, shutil, sys
agreement, table, weights, seconds, exercises, alternatives, mutants, many_gpus = sys.argv[1:9]
# Whether each exercise's worker has one work queue (queue_group): the class's files with their
# timed tests, the mistakes without them. The others share students, whose workers take the
# most queues of their files: students of 2 queues apart from those of 4 would be more students,
# each a checker's context and a worker's, and cost more than they spare.
one_queue = {group: {line.split()[1]: line.split()[0] == "1" for line in listing.splitlines()}
             for group, listing in (("class", sys.argv[9]), ("mistakes", sys.argv[10]))}
tests = {e: int(w) for e, w in (line.split("\t") for line in open(weights))}
took = {line.split()[1]: float(line.split()[0]) for line in open(seconds)
        if not line.startswith("#") and len(line.split()) == 2}
files = {"class": [], "mistakes": []}  # (exercise, program, source)
for exercise in exercises.split():
    files["class"].append((exercise, "solutions/" + exercise, "solutions/%s.c" % exercise))
for group, names, folder, made in (("class", alternatives, "selftest/alternatives", ""),
                                   ("mistakes", mutants, "mutants", "build/")):
    for name in names.split():
        files[group].append((name.split("--")[0], "%s/%s" % (folder, name),
                             "%s%s/%s.c" % (made, folder, name)))
rows = []
def weight(f):
    return took.get(f[1], tests.get(f[0], 1))
for group, handed in files.items():
    handed = [f for f in handed if f[0] not in many_gpus.split()]
    students = []
    for kind in (True, False):  # the exercises of one queue, then the others
        of_kind = [f for f in handed if one_queue[group][f[0]] == kind]
        count = max([sum(f[0] == e for f in of_kind) for e, _, _ in of_kind] or [0])
        students += [("%s-%02d" % ("mistake" if group == "mistakes" else "student",
                                   len(students) + k + 1), set(), [0], kind)
                     for k in range(count)]
    for exercise, program, source in sorted(handed, key=lambda f: (-weight(f), f[1])):
        kind = one_queue[group][exercise]
        student, taken, load, _ = min((s for s in students
                                       if s[3] == kind and exercise not in s[1]),
                                      key=lambda s: s[2][0])
        taken.add(exercise)
        load[0] += weight((exercise, program))
        folder = os.path.join(agreement, group, student, os.path.dirname(exercise))
        os.makedirs(folder, exist_ok=True)
        shutil.copy(source, os.path.join(folder, os.path.basename(exercise) + ".c"))
        rows.append("%s\t%s\t%s\t%s" % (group, student, exercise, program))
open(table, "w").write("\n".join(rows) + "\n")
EOF
    chmod -R a+rX "$agreement/class" "$agreement/mistakes"
    scratch_class=$(scratch_for_grading "$PWD/$agreement/scratch-class")
    scratch_mistakes=$(scratch_for_grading "$PWD/$agreement/scratch-mistakes")
    # Graded while the exercises' section runs the same files: all share the GPU's locks.
    python3 grader/grade.py grade --submissions "$agreement/mistakes" --out "$agreement/out-mistakes" \
        --scratch "$scratch_mistakes" --skip-timed "${lanes_args[@]}" >"$agreement/grade-mistakes.log" 2>&1 &
    mistakes_pid=$!
    python3 grader/grade.py grade --submissions "$agreement/class" --out "$agreement/out-class" \
        --scratch "$scratch_class" "${lanes_args[@]}" >"$agreement/grade.log" 2>&1
    grade_status=$?
    wait "$mistakes_pid"
    mistakes_status=$?
    section_wait 30-exercises
    stand_in=''
    [[ $gpu_reason == Stand-in* ]] && stand_in=1
    # The timed tests, by the rubric the test host reads from each test module.
    for exercise in $($MAKE -s --no-print-directory list-exercises); do
        build/tests/host --module "build/modules/tests/$exercise.so" --rubric |
            awk -F '\t' -v e="$exercise" '$1 == "test" && $5 == "timed" { print e "\t" $4 }'
    done >"$agreement/timed.tsv"
    comparison=$(python3 - "$agreement/programs.tsv" "$agreement" "$results_dir" \
                 "$stand_in" "$agreement/timed.tsv" <<'EOF'
import json, os, sys
table, agreement, results, stand_in, timed_table = sys.argv[1:6]
timed = {tuple(line.rstrip("\n").split("\t", 1)) for line in open(timed_table) if "\t" in line}
agree, differ, loose = 0, [], []
def header_line(program, key):
    source = ("build/" if program.startswith("mutants/") else "") + program + ".c"
    for line in open(source, errors="replace"):
        if line.startswith(" * %s: " % key):
            return line.split(": ", 1)[1].strip()
    return None

for line in open(table):
    group, student, exercise, program = line.rstrip("\n").split("\t")
    check_path = os.path.join(results, program.replace("/", "_") + ".json")
    try:
        checked = json.load(open(check_path))
        graded = json.load(open(os.path.join(agreement, "out-" + group, "students", student,
                                             "grade.json")))
    except (OSError, ValueError) as err:
        differ.append("%s: no record to compare (%s)" % (program, err))
        continue
    outcome = graded["exercises"].get(exercise, {})
    if outcome.get("status") in ("rejected", "does_not_compile", "missing", "not_run"):
        differ.append("%s: make grade says %s: %s" % (program, outcome.get("status"),
                                                      "; ".join(outcome.get("details", []))[:300]))
        continue
    by_name = {t["name"]: t for t in outcome.get("tests", [])}
    if header_line(program, "races"):
        # Which test shows a racing mistake changes from run to run (the exercises' section
        # proves its diagnostic under make check): both runs must fail it, in any test.
        if outcome.get("status") != "failed" or checked.get("status") != "failed":
            differ.append("%s: a mistake that races, %s under make check and %s under make grade"
                          % (program, checked.get("status"), outcome.get("status")))
        else:
            agree += 1
        continue
    # Whether a passed test's points count rests on the exercise's other tests (the evidence
    # gate): where the exercises' section skipped some, only the verdicts are compared.
    partial = any(t["message"].startswith("not run:") for t in checked["tests"])
    for test in checked["tests"]:
        if test["message"].startswith("not run:") or test.get("not_graded"):
            continue  # the exercises' section skipped it (a mistake's timed test) or could not
        other = by_name.get(test["name"])
        if group == "mistakes" and other is not None and \
                other.get("message", "").startswith("not run:"):
            continue  # make grade graded the mistakes without their timed tests (--skip-timed)
        if other is None or other.get("not_graded"):
            differ.append("%s: make grade has no verdict for '%s'" % (program, test["name"]))
            continue
        same = test["passed"] == other["passed"] and (
            partial or test["counts"] == other.get("counts", True))
        if same:
            agree += 1
            continue
        def verdict(t):
            return "failed" if not t["passed"] else \
                "passed" if t.get("counts", True) else "passed, not counted"
        words = "%s: '%s' %s under make check, %s under make grade: %s" % (
            program, test["name"], verdict(test), verdict(other),
            (other["message"] or test["message"])[:240].replace("\n", " "))
        # The stand-in runtime's timing follows the host's CPUs, which the two runs share: its
        # timed tests, and the mistakes that only a real GPU's timing shows, judge nothing.
        gpu_only = program.startswith("mutants/") and header_line(program, "expect-on-gpu")
        (loose if stand_in and ((exercise, test["name"]) in timed or gpu_only)
         else differ).append(words)
print("agree %d" % agree)
for line in differ:
    print("differ " + line)
for line in loose:
    print("loose " + line)
EOF
)
    count=$(wc -l <"$agreement/programs.tsv")
    agreed=$(sed -n 's/^agree //p' <<<"$comparison")
    if [[ $grade_status -ne 0 ]]; then
        fail "make grade graded the agreement class (exit $grade_status)" "$(tail -n 15 "$agreement/grade.log")"
    elif [[ $mistakes_status -ne 0 ]]; then
        fail "make grade graded the agreement class's mistakes (exit $mistakes_status)" \
            "$(tail -n 15 "$agreement/grade-mistakes.log")"
    elif ! grep -q '^differ ' <<<"$comparison"; then
        pass "make grade gives each of $count files the verdicts make check gave them ($agreed tests)"
    else
        fail "make grade gives each of $count files the verdicts make check gave them" \
            "$(sed -n 's/^differ //p' <<<"$comparison" | head -n 20)"
    fi
    if grep -q '^loose ' <<<"$comparison"; then
        skip "timed tests, and mistakes only a GPU's timing shows, agree between the two runs (skipped: $stand_in_reason, which the runs share: $(grep -c '^loose ' <<<"$comparison") differ)"
    fi
fi

# grade.mk - `make grade`: grading a class's submissions (grader/README.md).
#
# The grader (grader/grade.py) finds the exercises with `make list-exercises`,
# builds the course's own objects, test modules and test host with the rules above, and
# builds each submission's learner module in a scratch folder with those same rules.

# The grading knobs count only when given on the command line: names such as OUT,
# SCRATCH or JOBS often mean something else in an environment (a cluster's scratch space).
grade_knob = $(if $(filter command line,$(origin $(1))),$($(1)))
GRADE_OUT = $(or $(call grade_knob,OUT),grades)
GRADER_OPTIONS = --course-build "$(BUILD)" --cc "$(CC)" --cflags "$(CFLAGS)" \
    --cppflags "$(CPPFLAGS)" --ldflags "$(LDFLAGS)" --ldlibs "$(LDLIBS)" --cuda-home "$(CUDA_HOME)" \
    $(if $(call grade_knob,JOBS),--jobs "$(JOBS)") $(if $(call grade_knob,GPUS),--gpus "$(GPUS)") \
    $(if $(call grade_knob,SCRATCH),--scratch "$(SCRATCH)") \
    $(if $(call grade_knob,TEST_TIMEOUT),--test-timeout "$(TEST_TIMEOUT)") \
    $(if $(call grade_knob,STUDENT_TIMEOUT),--student-timeout "$(STUDENT_TIMEOUT)") \
    $(if $(call grade_knob,SLICE),--slice "$(SLICE)") \
    $(if $(call grade_knob,PER_GPU),--per-gpu "$(PER_GPU)") \
    $(if $(filter 1 yes,$(call grade_knob,REGRADE)),--regrade) \
    $(if $(filter 1 yes,$(call grade_knob,TRUST_SUBMISSIONS)),--trust-submissions)

.PHONY: grade grade-report grade-export grade-benchmark deps-cluster grade-deps grade-prerequisites

# What the grader adds to the course's prerequisites: bubblewrap and python3-seccomp.
deps: grade-deps
grade-deps:
	@grader/install-deps.sh
grade-prerequisites:
	@grader/install-deps.sh --if-missing

## make grade SUBMISSIONS=DIR [OUT=grades] [REGRADE=1]   grade a class: gradebook, feedback, results.json
grade: prerequisites grade-prerequisites
	@$(if $(SUBMISSIONS),,echo "make grade: say where the submissions are: make grade SUBMISSIONS=DIR" >&2; exit 2)
	@$(PYTHON) grader/grade.py grade --submissions "$(SUBMISSIONS)" --out "$(GRADE_OUT)" $(GRADER_OPTIONS)

## make grade-report [OUT=grades]       rebuild grades.csv and the summary from OUT (after a sliced run)
grade-report:
	@$(PYTHON) grader/grade.py report --out "$(GRADE_OUT)" $(GRADER_OPTIONS)

## make grade-export FORMAT=canvas|moodle ROSTER=FILE.csv [OUT=grades]  the gradebook as Canvas or Moodle imports it
# COLUMNS=exercises for a column per exercise (default: one with the total, named ASSIGNMENT=);
# MOODLE_ID=email|idnumber|username, the user field Moodle's import matches (grader/README.md).
grade-export:
	@$(PYTHON) grader/export.py --format "$(FORMAT)" --roster "$(ROSTER)" --out "$(GRADE_OUT)" \
	    $(if $(COLUMNS),--columns "$(COLUMNS)") $(if $(ASSIGNMENT),--assignment "$(ASSIGNMENT)") \
	    $(if $(MOODLE_ID),--moodle-id "$(MOODLE_ID)")

## make grade-benchmark [STUDENTS=100] [CH="1 2 3"]  grade a generated class of good, partial and broken work (those chapters' exercises only); students per minute
grade-benchmark: prerequisites
	@PER_GPU="$(call grade_knob,PER_GPU)" BENCHMARK_CHAPTERS="$(call grade_knob,CH)" \
	    dev/grade-benchmark.sh "$(or $(STUDENTS),100)"

## make deps-cluster     install Slurm and munge (Debian's slurm-wlm), for make test's one-node cluster
# Optional: make test skips the cluster section where they are missing. As root, or through sudo.
SLURM_PACKAGES = slurm-wlm munge
deps-cluster:
	@if command -v slurmctld >/dev/null && command -v slurmd >/dev/null && command -v munged >/dev/null; then \
	    echo "deps: Slurm and munge are installed"; \
	elif ! command -v apt-get >/dev/null; then \
	    echo "deps: this is not Debian or Ubuntu: install Slurm (slurmctld, slurmd) and munge with your package manager" >&2; exit 1; \
	else \
	    run=; [ "$$(id -u)" -eq 0 ] || { sudo -n true 2>/dev/null && run=sudo; } || \
	        { echo "deps: installing Slurm needs root: run, as root, apt-get install $(SLURM_PACKAGES)" >&2; exit 1; }; \
	    echo "deps: installing $(SLURM_PACKAGES)"; \
	    export DEBIAN_FRONTEND=noninteractive; \
	    $$run apt-get install -y --no-install-recommends $(SLURM_PACKAGES) >/dev/null 2>&1 || \
	        { $$run apt-get update >/dev/null 2>&1 && $$run apt-get install -y --no-install-recommends $(SLURM_PACKAGES) >/dev/null; }; \
	fi

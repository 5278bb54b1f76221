# Makefile - every entry point of the course. `make help` lists them.
#
# Exercises, tests, known-wrong solutions (mutants) and chapter programs are
# found by wildcard: adding one means adding its files, never editing a list.

.DEFAULT_GOAL := all
# No built-in rules: only the ones below, so that no chain of them makes what nobody asked for.
MAKEFLAGS += --no-builtin-rules
.SUFFIXES:
SHELL := /bin/bash
.DELETE_ON_ERROR:
.SECONDARY:

# Reading a file of lines without a process (make check runs make a few times; each process it
# starts counts): $(call file_lines,FILE) is its lines, each one word with its spaces and tabs
# as the placeholder _space_; first_words drops what follows the first blank of each, and the
# lines that are blank or comments (#).
define newline


endef
empty :=
space := $(empty) $(empty)
tab := $(empty)	$(empty)
file_lines = $(subst $(newline), ,$(subst $(space),_space_,$(subst $(tab),_space_,$(file <$(1)))))
hash := \#
first_words = $(filter-out $(hash)%,$(foreach line,$(call file_lines,$(1)),$(firstword $(subst _space_, ,$(line)))))

# --- Toolchain ---------------------------------------------------------------
# The CUDA toolkit: CUDA_HOME, else CUDA_PATH, else the nvcc on the PATH, else /usr/local/cuda.
NVCC_ON_PATH := $(firstword $(wildcard $(addsuffix /nvcc,$(subst :, ,$(PATH)))))
CUDA_HOME ?= $(or $(CUDA_PATH),$(patsubst %/bin/nvcc,%,$(NVCC_ON_PATH)),/usr/local/cuda)
NVCC ?= $(CUDA_HOME)/bin/nvcc
PKG_CONFIG ?= pkg-config
CFLAGS ?= -O2 -g

# Check through pkg-config: the system's, or a local prefix in .deps/ that
# `make deps` fills without root (apt-get download + dpkg -x). What pkg-config said is kept in
# $(BUILD)/check-flags.mk, and asked again only when what it depends on changed (the
# pkg-config in use, its path, the .pc files there are): make runs several times a make check.
DEPS_PREFIX := $(CURDIR)/.deps/root/usr
CHECK_VERSION := check >= 0.13
CHECK_CACHE := build/check-flags.mk
CHECK_KEY := $(PKG_CONFIG)|$(PKG_CONFIG_PATH)|$(wildcard $(DEPS_PREFIX)/lib/*/pkgconfig/check.pc \
    $(DEPS_PREFIX)/lib/pkgconfig/check.pc /usr/lib/*/pkgconfig/check.pc /usr/lib/pkgconfig/check.pc \
    /usr/share/pkgconfig/check.pc /usr/local/lib/pkgconfig/check.pc)
-include $(CHECK_CACHE)
ifeq ($(CACHED_CHECK_KEY),$(CHECK_KEY))
  # CHECK_CFLAGS and CHECK_LIBS as the cache holds them
else ifeq ($(shell $(PKG_CONFIG) --exists '$(CHECK_VERSION)' 2>/dev/null && echo yes),yes)
  CHECK_PC := $(PKG_CONFIG)
else
  LOCAL_CHECK_PC := $(firstword $(wildcard $(DEPS_PREFIX)/lib/*/pkgconfig/check.pc \
                                           $(DEPS_PREFIX)/lib/pkgconfig/check.pc))
  ifneq ($(LOCAL_CHECK_PC),)
    LOCAL_PC_DIR := $(patsubst %/,%,$(dir $(LOCAL_CHECK_PC)))
    CHECK_PC := PKG_CONFIG_PATH=$(LOCAL_PC_DIR)$${PKG_CONFIG_PATH:+:$$PKG_CONFIG_PATH} \
                $(PKG_CONFIG) --define-variable=prefix=$(DEPS_PREFIX)
    CHECK_RPATH := -Wl,-rpath,$(patsubst %/pkgconfig,%,$(LOCAL_PC_DIR))
  endif
endif
ifdef CHECK_PC
  CHECK_CFLAGS := $(shell $(CHECK_PC) --cflags check)
  CHECK_LIBS := $(shell $(CHECK_PC) --libs check) $(CHECK_RPATH)
  # Kept only once found, so that installing Check is seen at the next run.
  ifneq ($(wildcard $(dir $(CHECK_CACHE))),)
    $(file >$(CHECK_CACHE),CACHED_CHECK_KEY := $(CHECK_KEY)$(newline)CHECK_CFLAGS := $(CHECK_CFLAGS)$(newline)CHECK_LIBS := $(CHECK_LIBS))
  endif
endif

# The harness by what each part does (CONTRIBUTING.md): the test host's processes and their
# protocol, the worker that runs the learner's code, the report, the record of calls, the checks.
HARNESS_PARTS := host worker report trace checks
COURSE_CPPFLAGS := -D_POSIX_C_SOURCE=200809L -I$(CUDA_HOME)/include -Icommon \
    $(HARNESS_PARTS:%=-Iharness/%)
# -fPIC: every object may go into an exercise module (a shared object) as well as a program.
COURSE_CFLAGS := -std=c11 -Wall -Wextra -Werror -fPIC
CUDA_LIBS := -L$(CUDA_HOME)/lib64 -Wl,-rpath,$(CUDA_HOME)/lib64 -lcudart
# The runtime calls the harness traces, read from the one list that names them.
OPEN_PAREN := (
COMMA := ,
WRAP_FLAGS := $(patsubst TRACED$(OPEN_PAREN)%$(COMMA),-Wl$(COMMA)--wrap=%,$(filter \
    TRACED$(OPEN_PAREN)%,$(call first_words,harness/trace/traced_calls.def)))
# And free(), which the learner's code may give CUDA's memory: the test says so, no crash.
WRAP_FLAGS += -Wl,--wrap=free
# The learner's own heap and memcpy, for learner modules only (harness/worker/worker_libc.c): blocks of
# a page or more come from memory the checker sees, as host memory the learner registers must,
# and a test may hold large memcpy calls up.
LEARNER_WRAP_FLAGS := $(patsubst %,-Wl$(COMMA)--wrap=%,malloc calloc realloc posix_memalign \
    aligned_alloc memcpy __memcpy_chk)

# --- What there is ---------------------------------------------------------------------------
BUILD := build
# The exercises in the book's order, from the one list of them; it must name exactly the
# exercises that have tests (a learner's exercise file may be missing: make check says so).
# The grader's build folders hold no list: they build one exercise each, named by the grader.
EXERCISES := $(if $(wildcard exercises/ORDER),$(call first_words,exercises/ORDER))
TESTED_EXERCISES := $(patsubst tests/%.c,%,$(wildcard tests/ch*/*.c))
ifneq ($(wildcard exercises/ORDER),)
ifneq ($(words $(EXERCISES)) $(sort $(EXERCISES)),$(words $(sort $(EXERCISES))) $(sort $(TESTED_EXERCISES)))
  $(error exercises/ORDER must list every exercise that has tests, once: \
    $(if $(filter-out $(EXERCISES),$(TESTED_EXERCISES)),not listed: $(filter-out $(EXERCISES),$(TESTED_EXERCISES));) \
    $(if $(filter-out $(TESTED_EXERCISES),$(EXERCISES)),no tests/NAME.c for: $(filter-out $(TESTED_EXERCISES),$(EXERCISES));) \
    $(if $(filter-out $(words $(sort $(EXERCISES))),$(words $(EXERCISES))),one is listed twice))
endif
endif
MUTANTS := $(patsubst mutants/%.patch,%,$(sort $(wildcard mutants/ch*/*.patch)))
ALTERNATIVES := $(patsubst selftest/alternatives/%.c,%,$(sort $(wildcard selftest/alternatives/ch*/*.c)))
VARIANTS := $(MUTANTS:%=mutants/%) $(ALTERNATIVES:%=selftest/alternatives/%)
CHAPTER_PROGRAMS := $(patsubst %.c,%,$(sort $(wildcard chapters/ch*/*.c)))
UNIT_TESTS := $(patsubst %.c,%,$(sort $(wildcard selftest/unit/*.c)))

# SOLUTIONS=1 (or yes, true, on) grades solutions/; anything else that is not a "no" is a typo.
ifneq ($(filter-out 1 yes true on 0 no false off,$(SOLUTIONS)),)
  $(error SOLUTIONS=$(SOLUTIONS) is neither yes nor no: say SOLUTIONS=1 to check solutions/, or leave it out)
endif
TREE := $(if $(filter 1 yes true on,$(SOLUTIONS)),solutions,exercises)
COMMON_LIB := $(BUILD)/lib/libcommon.a
# The harness in two halves: the checker's (the test host: the judge, the tests' bodies, every
# check that decides a verdict) and the worker's (the process that runs the learner's code:
# harness/worker/). The record of calls (trace.c) and the shared memory (arena.c) are both's.
HARNESS_LIB := $(BUILD)/lib/libharness.a
WORKER_LIB := $(BUILD)/lib/libworker.a
WORKER_SOURCES := $(wildcard harness/worker/*.c) harness/trace/trace.c harness/host/arena.c \
    harness/host/io.c
CHECKER_SOURCES := $(filter-out $(wildcard harness/worker/*.c),$(wildcard $(HARNESS_PARTS:%=harness/%/*.c)))

# --- Compiling ---------------------------------------------------------------------------------
# An exercise's header lives beside its stub; every tree compiles against it.
$(BUILD)/obj/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(COURSE_CPPFLAGS) -Iexercises/$(notdir $(@D)) $(CPPFLAGS) $(COURSE_CFLAGS) \
	    $(CHECK_CFLAGS) $(CFLAGS) -MMD -MP -c $< -o $@

# A learner's file (or a solution): the compiler's words are kept beside the object, and the
# linker's beside the module (NAME.o.log, NAME.so.log), where make check reads them; they go to
# standard error as well, for whoever runs make.
logged = { $(1); } 2>$@.log || { cat $@.log >&2; exit 1; }
$(BUILD)/obj/exercises/%.o: exercises/%.c
	@mkdir -p $(@D)
	@$(call logged,$(CC) $(COURSE_CPPFLAGS) -Iexercises/$(notdir $(@D)) $(CPPFLAGS) \
	    $(COURSE_CFLAGS) $(CHECK_CFLAGS) $(CFLAGS) -MMD -MP -c $< -o $@)
$(BUILD)/obj/solutions/%.o: solutions/%.c
	@mkdir -p $(@D)
	@$(call logged,$(CC) $(COURSE_CPPFLAGS) -Iexercises/$(notdir $(@D)) $(CPPFLAGS) \
	    $(COURSE_CFLAGS) $(CHECK_CFLAGS) $(CFLAGS) -MMD -MP -c $< -o $@)

# A test file learns which exercise it grades from its path.
$(BUILD)/obj/tests/%.o: tests/%.c
	@mkdir -p $(@D)
	$(CC) $(COURSE_CPPFLAGS) -Iexercises/$(notdir $(@D)) -DCOURSE_EXERCISE_ID='"$*"' \
	    $(CPPFLAGS) $(COURSE_CFLAGS) $(CHECK_CFLAGS) $(CFLAGS) -MMD -MP -c $< -o $@

# The functions an exercise's header declares, as the compiler reads them (gcc -aux-info): the
# stubs and dispatchers below are written from it, and the grader reads what a submission may
# define from it. gcc alone writes -aux-info, so gcc reads the headers whatever CC is (clang).
AUX_CC ?= gcc
read_header = $(AUX_CC) $(COURSE_CPPFLAGS) $(1) $(CPPFLAGS) $(COURSE_CFLAGS) $(CFLAGS) \
    -fsyntax-only -aux-info $@ -x c $<
$(BUILD)/api/%.aux: exercises/%.h
	@mkdir -p $(@D)
	$(call read_header,-Iexercises/$(notdir $(@D)))
# Each call of an exercise function crosses from the checker to the worker (harness/host/remote.h):
# the checker's stubs go into the test module, the worker's dispatchers into the learner's.
$(BUILD)/gen/%.stubs.c: $(BUILD)/api/%.aux harness/host/remote_stubs.awk
	@mkdir -p $(@D)
	awk -f harness/host/remote_stubs.awk -v side=stubs -v header=$(notdir $*).h \
	    -v source=exercises/$*.h $< >$@.tmp && mv $@.tmp $@
$(BUILD)/gen/%.dispatch.c: $(BUILD)/api/%.aux harness/host/remote_stubs.awk
	@mkdir -p $(@D)
	awk -f harness/host/remote_stubs.awk -v side=dispatch -v header=$(notdir $*).h \
	    -v source=exercises/$*.h $< >$@.tmp && mv $@.tmp $@
$(BUILD)/obj/gen/%.o: $(BUILD)/gen/%.c
	@mkdir -p $(@D)
	$(CC) $(COURSE_CPPFLAGS) -Iexercises/$(notdir $(@D)) $(CPPFLAGS) $(COURSE_CFLAGS) \
	    $(CHECK_CFLAGS) $(CFLAGS) -c $< -o $@

$(COMMON_LIB): $(patsubst %.c,$(BUILD)/obj/%.o,$(wildcard common/*.c))
$(HARNESS_LIB): $(patsubst %.c,$(BUILD)/obj/%.o,$(CHECKER_SOURCES))
$(WORKER_LIB): $(patsubst %.c,$(BUILD)/obj/%.o,$(WORKER_SOURCES))
$(BUILD)/lib/%.a:
	@mkdir -p $(@D)
	rm -f $@
	$(AR) rcs $@ $^

# The test host (harness/host/runner.c): the judge and the checker. It loads test modules (an
# exercise's tests and the stubs of its functions, never the learner's code); everything a test
# module may call is in it, whole, and exported. A static Check (Debian links libcheck_pic.a)
# is in the same group as the archives.
TEST_HOST := $(BUILD)/tests/host
$(TEST_HOST): $(HARNESS_LIB) $(COMMON_LIB)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -pthread -rdynamic -Wl,--whole-archive $^ $(CHECK_LIBS) \
	    -Wl,--no-whole-archive $(CUDA_LIBS) -ldl -lm $(LDLIBS) -o $@

# The worker (harness/worker/worker_main.c): the process that runs the learner's code. It loads
# learner modules (the learner's file and the dispatchers of its exercise), whose CUDA calls
# reach its wrappers through the same --wrap flags; everything a learner module may call is in
# it, whole, and exported.
WORKER := $(BUILD)/tests/worker
$(WORKER): $(WORKER_LIB) $(COMMON_LIB)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -pthread -rdynamic $(WRAP_FLAGS) -Wl,--whole-archive $^ \
	    -Wl,--no-whole-archive $(CUDA_LIBS) -ldl -lm $(LDLIBS) -o $@

# A test module: an exercise's test file and the stubs of its functions. -Bsymbolic keeps its
# own functions its own: two exercises may name a function alike.
LINK_TESTS_MODULE = $(CC) $(LDFLAGS) -shared -pthread $^ -Wl,-Bsymbolic -lm $(LDLIBS) -o $@
$(BUILD)/modules/tests/%.so: $(BUILD)/obj/tests/%.o $(BUILD)/obj/gen/%.stubs.o
	@mkdir -p $(@D)
	$(LINK_TESTS_MODULE)

# A learner module: the learner's file (or a solution, or a mutant) and the exercise's
# dispatchers, with the --wrap flags that send its CUDA calls to the worker's wrappers. The
# learner's file may use <math.h> (break_even does); -pthread: chapter 3's start host threads.
LINK_LEARNER_MODULE = $(CC) $(LDFLAGS) -shared -pthread $^ $(WRAP_FLAGS) $(LEARNER_WRAP_FLAGS) \
    -Wl,-Bsymbolic -lm $(LDLIBS) -o $@
$(BUILD)/modules/exercises/%.so: $(BUILD)/obj/exercises/%.o $(BUILD)/obj/gen/%.dispatch.o
	@mkdir -p $(@D)
	@$(call logged,$(LINK_LEARNER_MODULE))
$(BUILD)/modules/solutions/%.so: $(BUILD)/obj/solutions/%.o $(BUILD)/obj/gen/%.dispatch.o
	@mkdir -p $(@D)
	@$(call logged,$(LINK_LEARNER_MODULE))
# What make grade would refuse a learner's file for (grader/refusals.py: its compile guard and
# its inspection of the object, in its words), one sentence a line, empty where it accepts the
# file: make check says so in the exercise's place. Kept beside the build, remade only when the
# file or the grader's rules change.
REFUSALS_INPUTS = grader/refusals.py grader/compile_guard.py grader/static_checks.py \
    grader/allowed-symbols.txt $(COMMON_LIB) $(WORKER_LIB)
PYTHON ?= python3
# 1: the refusals file, 2: the learner's file, 3: its object, 4: its exercise (chNN-slug/NAME)
define refusals_of
	@mkdir -p $(@D)
	$(PYTHON) grader/refusals.py --object $(3) --aux $(BUILD)/api/$(4).aux \
	    --header exercises/$(4).h --dispatch $(BUILD)/obj/gen/$(4).dispatch.o \
	    --common $(COMMON_LIB) --worker $(WORKER_LIB) -- $(CC) $(COURSE_CPPFLAGS) \
	    -Iexercises/$(dir $(4)) $(CPPFLAGS) $(COURSE_CFLAGS) $(CHECK_CFLAGS) $(CFLAGS) -c $(2) \
	    >$(1).tmp && mv $(1).tmp $(1)
endef
$(BUILD)/refusals/exercises/%.txt: exercises/%.c $(BUILD)/obj/exercises/%.o $(BUILD)/api/%.aux \
    $(BUILD)/obj/gen/%.dispatch.o $(REFUSALS_INPUTS)
	$(call refusals_of,$@,$<,$(word 2,$^),$*)
$(BUILD)/refusals/solutions/%.txt: solutions/%.c $(BUILD)/obj/solutions/%.o $(BUILD)/api/%.aux \
    $(BUILD)/obj/gen/%.dispatch.o $(REFUSALS_INPUTS)
	$(call refusals_of,$@,$<,$(word 2,$^),$*)

# Learner files that stand for a learner's: the known mistakes and correct solutions written in
# other styles (selftest/alternatives/chNN-slug/EXERCISE--style.c), each graded by
# tests/chNN-slug/EXERCISE.c: a module, and what make grade would refuse it for, each.
variant_exercise = $(firstword $(subst --, ,$(patsubst mutants/%,%,$(patsubst selftest/alternatives/%,%,$(1)))))
variant_source = $(if $(filter mutants/%,$(1)),$(BUILD)/$(1).c,$(1).c)
define VARIANT_RULES
$(BUILD)/modules/$(1).so: $(BUILD)/obj/$(1).o $(BUILD)/obj/gen/$(call variant_exercise,$(1)).dispatch.o
	@mkdir -p $$(@D)
	$$(LINK_LEARNER_MODULE)
$(BUILD)/refusals/$(1).txt: $(call variant_source,$(1)) $(BUILD)/obj/$(1).o \
    $(BUILD)/api/$(call variant_exercise,$(1)).aux \
    $(BUILD)/obj/gen/$(call variant_exercise,$(1)).dispatch.o $$(REFUSALS_INPUTS)
	$$(call refusals_of,$$@,$$<,$$(word 2,$$^),$(call variant_exercise,$(1)))
endef
$(foreach v,$(VARIANTS),$(eval $(call VARIANT_RULES,$(v))))

# A known mistake is a patch (mutants/chNN-slug/EXERCISE--mistake.patch): its header comment
# says what the mistake is and the diagnostic it must get (" * expect: TEXT"), and its diff is
# against the file its "--- " line names, the exercise's solution (or an alternative). Applied
# here, with no fuzz: a patch that no longer applies stops the build, naming itself. The source
# made is the header, then the patched file.
PATCH ?= $(or $(wildcard $(DEPS_PREFIX)/bin/patch),patch)
define MUTANT_SOURCE_RULE
$(BUILD)/mutants/$(1).c: mutants/$(1).patch solutions/$(call variant_exercise,mutants/$(1)).c \
    $(wildcard selftest/alternatives/$(call variant_exercise,mutants/$(1))--*.c)
	@mkdir -p $$(@D)
	@base=$$$$(sed -n 's/^--- \([^[:space:]]*\).*/\1/p' $$< | head -n 1); \
	if ! $$(PATCH) --quiet --force --fuzz=0 --no-backup-if-mismatch -r - -o $$@.body "$$$$base" \
	        <$$< >$$@.log 2>&1; then \
	    echo "$$<: the patch no longer applies to $$$$base, which changed since it was written:" \
	        "make the mistake again in a copy of $$$$base and write the patch anew (diff -u)" >&2; \
	    sed 's/^/    /' $$@.log >&2; rm -f $$@.body $$@.log; exit 1; \
	fi; \
	{ sed -n '1,/\*\//p' $$<; cat $$@.body; } >$$@.tmp && rm -f $$@.body $$@.log && mv $$@.tmp $$@
endef
$(foreach m,$(MUTANTS),$(eval $(call MUTANT_SOURCE_RULE,$(m))))
$(BUILD)/obj/mutants/%.o: $(BUILD)/mutants/%.c
	@mkdir -p $(@D)
	$(CC) $(COURSE_CPPFLAGS) -Iexercises/$(notdir $(@D)) $(CPPFLAGS) $(COURSE_CFLAGS) \
	    $(CHECK_CFLAGS) $(CFLAGS) -MMD -MP -c $< -o $@
mutant-sources: $(MUTANTS:%=$(BUILD)/mutants/%.c)

# The harness's own fixtures (selftest/fixtures/NAME/): exercises of their own, a header, a
# "learner's" file that misbehaves on cue and its tests, built as the course's are, into
# build/modules/fixtures/NAME/{tests,learner}.so.
FIXTURES := $(notdir $(patsubst %/,%,$(dir $(wildcard selftest/fixtures/*/exercises))))
fixture_header = $(wildcard selftest/fixtures/$(1)/exercises/*/*.h)
define FIXTURE_SIDE
$(BUILD)/gen/fixtures/$(1)/$(2).c: $(BUILD)/api/fixtures/$(1).aux harness/host/remote_stubs.awk
	@mkdir -p $$(@D)
	awk -f harness/host/remote_stubs.awk -v side=$(2) -v header=$$(notdir $$(call fixture_header,$(1))) \
	    -v source=$$(call fixture_header,$(1)) $$< >$$@.tmp && mv $$@.tmp $$@
$(BUILD)/obj/fixtures/$(1)/$(2).o: $(BUILD)/gen/fixtures/$(1)/$(2).c
	@mkdir -p $$(@D)
	$$(CC) $$(COURSE_CPPFLAGS) -I$$(dir $$(call fixture_header,$(1))) $$(COURSE_CFLAGS) \
	    $$(CHECK_CFLAGS) $$(CFLAGS) -c $$< -o $$@
endef
define FIXTURE_RULES
$(BUILD)/api/fixtures/$(1).aux: $(call fixture_header,$(1))
	@mkdir -p $$(@D)
	$$(call read_header,)
$(call FIXTURE_SIDE,$(1),stubs)
$(call FIXTURE_SIDE,$(1),dispatch)
$(BUILD)/obj/fixtures/$(1)/tests.o: $(wildcard selftest/fixtures/$(1)/tests/*/*.c)
	@mkdir -p $$(@D)
	$$(CC) $$(COURSE_CPPFLAGS) -I$$(dir $$(call fixture_header,$(1))) \
	    -DCOURSE_EXERCISE_ID='"selftest/$(1)"' $$(COURSE_CFLAGS) $$(CHECK_CFLAGS) $$(CFLAGS) \
	    -MMD -MP -c $$< -o $$@
$(BUILD)/obj/fixtures/$(1)/learner.o: $(wildcard selftest/fixtures/$(1)/exercises/*/*.c)
	@mkdir -p $$(@D)
	$$(CC) $$(COURSE_CPPFLAGS) -I$$(dir $$(call fixture_header,$(1))) \
	    $$(COURSE_CFLAGS) $$(CFLAGS) -MMD -MP -c $$< -o $$@
$(BUILD)/modules/fixtures/$(1)/tests.so: $(BUILD)/obj/fixtures/$(1)/tests.o $(BUILD)/obj/fixtures/$(1)/stubs.o
	@mkdir -p $$(@D)
	$$(LINK_TESTS_MODULE)
$(BUILD)/modules/fixtures/$(1)/learner.so: $(BUILD)/obj/fixtures/$(1)/learner.o $(BUILD)/obj/fixtures/$(1)/dispatch.o
	@mkdir -p $$(@D)
	$$(LINK_LEARNER_MODULE)
endef
$(foreach f,$(FIXTURES),$(eval $(call FIXTURE_RULES,$(f))))
FIXTURE_MODULES := $(foreach f,$(FIXTURES),$(BUILD)/modules/fixtures/$(f)/tests.so \
                                          $(BUILD)/modules/fixtures/$(f)/learner.so)

# The harness's unit tests: both halves of it, as far as a test needs them, without the
# wrappers (the record and the pool are exercised directly).
$(BUILD)/selftest/%: $(BUILD)/obj/selftest/%.o $(HARNESS_LIB) $(WORKER_LIB) $(COMMON_LIB)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -pthread $(filter-out %.a,$^) -Wl,--start-group $(filter %.a,$^) \
	    $(CHECK_LIBS) -Wl,--end-group $(CUDA_LIBS) -ldl -lm $(LDLIBS) -o $@
$(BUILD)/selftest/unit/test_host_pool: LDLIBS += -pthread

# Chapter programs: plain C against the runtime (NVML is opened at run time); -pthread for
# the ones that run host threads (common/host_pool.c).
$(BUILD)/chapters/%: $(BUILD)/obj/chapters/%.o $(COMMON_LIB)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) $^ $(CUDA_LIBS) -pthread -ldl -lm $(LDLIBS) -o $@

# Further entry points (the book, grading, measuring) bring their own rules.
include $(sort $(wildcard mk/*.mk))

# The course's tools (tools/) and the developers' (dev/: measuring the machine, checking the
# kernels, the grading benchmark's; built for make test, not by plain make). The archive after
# every object, those a tool adds below too.
link_tool = $(CC) $(LDFLAGS) $(filter-out %.a,$^) $(filter %.a,$^) $(CUDA_LIBS) $(LDLIBS) -o $@
$(BUILD)/tools/%: $(BUILD)/obj/tools/%.o $(COMMON_LIB)
	@mkdir -p $(@D)
	$(link_tool)
$(BUILD)/dev/%: $(BUILD)/obj/dev/%.o $(COMMON_LIB)
	@mkdir -p $(@D)
	$(link_tool)
# The report's renderer, for blocks whose tests never ran here (make check, make grade).
$(BUILD)/tools/report_block: $(BUILD)/obj/harness/report/report.o $(BUILD)/obj/harness/report/text.o
# Sharing the GPU as test programs do, for the programs make test runs beside them.
$(BUILD)/tools/gpu_share: $(BUILD)/obj/harness/host/gpu_share.o $(BUILD)/obj/harness/host/processes.o

-include $(wildcard $(addprefix $(BUILD)/obj/,*.d */*.d */*/*.d */*/*/*.d */*/*/*/*.d))

# The modules the test host runs: each exercise's tests, and the learner modules they call.
TEST_MODULES := $(EXERCISES:%=$(BUILD)/modules/tests/%.so)
SOLUTION_MODULES := $(EXERCISES:%=$(BUILD)/modules/solutions/%.so)
MODULES := $(TEST_MODULES) $(SOLUTION_MODULES) $(EXERCISES:%=$(BUILD)/modules/exercises/%.so) \
    $(VARIANTS:%=$(BUILD)/modules/%.so)
# What make grade would refuse of each solution and variant (make test's agreement check).
REFUSALS := $(EXERCISES:%=$(BUILD)/refusals/solutions/%.txt) $(VARIANTS:%=$(BUILD)/refusals/%.txt)
CHAPTER_BINARIES := $(CHAPTER_PROGRAMS:%=$(BUILD)/%)
UNIT_BINARIES := $(UNIT_TESTS:%=$(BUILD)/%)
CHAPTERS := $(sort $(patsubst chapters/%/,%,$(dir $(CHAPTER_PROGRAMS))))
# make run CH=1, CH=01, CH=ch01 or CH=ch01-memory: that chapter's programs; all without CH.
RUN_CHAPTERS := $(if $(CH),$(filter ch0$(CH)-% ch$(CH)-% $(CH)-% $(CH),$(CHAPTERS)),$(CHAPTERS))
RUN_PROGRAMS := $(foreach c,$(RUN_CHAPTERS),$(filter $(BUILD)/chapters/$(c)/%,$(CHAPTER_BINARIES)))
TOOLS := $(patsubst %.c,$(BUILD)/%,$(sort $(wildcard tools/*.c)))
DEV_TOOLS := $(patsubst %.c,$(BUILD)/%,$(sort $(wildcard dev/*.c)))

# --- Entry points ----------------------------------------------------------------------------
.PHONY: all check test run deps prerequisites help clean check-now test-now course-build selftest-build \
        list-exercises list-mutants list-alternatives mutant-sources list-chapters list-unit-tests list-toolchain

## make                build every chapter program, the test host and the solutions' modules
all: prerequisites
	@$(MAKE) --no-print-directory course-build

course-build: $(CHAPTER_BINARIES) $(TEST_HOST) $(WORKER) $(TEST_MODULES) $(SOLUTION_MODULES) \
    $(UNIT_BINARIES) $(TOOLS)

# Everything make test runs, built at once before its sections run side by side (selftest/run.sh).
selftest-build: course-build $(MODULES) $(FIXTURE_MODULES) $(REFUSALS) $(DEV_TOOLS)

## make check          grade exercises/ (EX=ch01-memory/roundtrip for one; SOLUTIONS=1 grades solutions/)
# Without a make of their own in between, so that a failure ends in one line of make's, not two.
check: prerequisites
check check-now:
	@MAKE="$(MAKE)" COURSE_EXERCISES="$(EXERCISES)" harness/check.sh $(TREE) $(if $(EX),$(EX),$(EXERCISES))

## make test           the course's own test suite (REQUIRE_GPU=1: a missing GPU is a failure; SECTIONS="30 40": those only)
test: prerequisites
test test-now:
	@MAKE="$(MAKE)" REQUIRE_GPU="$(REQUIRE_GPU)" SECTIONS="$(SECTIONS)" selftest/run.sh

## make run            run the chapter programs (CH=1 for one chapter)
run: prerequisites
	@$(if $(RUN_CHAPTERS),,echo "run: there is no chapter '$(CH)': say CH=1, CH=ch01 or CH=ch01-memory (chapters: $(CHAPTERS))" >&2; exit 2)
	@$(MAKE) -s --no-print-directory $(RUN_PROGRAMS) $(BUILD)/tools/gpu_probe
	@why=$$($(BUILD)/tools/gpu_probe) || { echo "run: the chapter programs need a CUDA device, and there is none: $$why" >&2; exit 1; }
	@# 77 (EXIT_SKIPPED, common/chapter.h): the program found the machine lacking (two GPUs, say).
	@status=0; for program in $(RUN_PROGRAMS); do \
	    echo "=== $$program"; $$program; case $$? in 0) ;; 77) echo "--- $$program skipped" ;; \
	    *) echo "*** $$program failed"; status=1 ;; esac; echo; done; exit $$status

## make deps           install the prerequisites from the distribution: Check, pkg-config; pandoc, Graphviz, gnuplot for the book; inotify-tools for make watch
deps:
	@setup/install-deps.sh

prerequisites:
	@setup/install-deps.sh --if-missing

## make help           this list
# Each "## COMMAND  WHAT IT DOES" line, grouped by who runs it (mk/help.awk).
help:
	@sed -n 's/^## //p' $(MAKEFILE_LIST) | awk -f mk/help.awk

## make clean          remove build/
clean:
	rm -rf $(BUILD)

## make list-exercises  the exercises' ids, one a line, for scripts (make list is for people)
# Used by the scripts, which discover nothing themselves.
list-exercises: ; @printf '%s\n' $(EXERCISES)
list-mutants: ; @printf '%s\n' $(MUTANTS)
list-alternatives: ; @printf '%s\n' $(ALTERNATIVES)
list-chapters: ; @printf '%s\n' $(CHAPTER_PROGRAMS)
list-unit-tests: ; @printf "%s\n" $(UNIT_TESTS)
# The toolkit and compiler this make resolved, so that a build elsewhere (the
# grader's, with a clean environment) uses the same ones.
list-toolchain: ; @printf '%s\n' 'CC=$(CC)' 'CUDA_HOME=$(CUDA_HOME)'

# bench.mk - benchmarks: figures printed on this machine, against their references. Not tests.

BENCH_CH03_PROGRAMS := $(addprefix $(BUILD)/chapters/ch03-streams/,03-both-directions 04-pipeline \
                                                                   06-staged-pageable)

.PHONY: bench-ch3
## make bench-ch3      chapter 3 on this GPU: both directions against nvbandwidth (NVBANDWIDTH=path), the pipeline against its ideal, the staged copy against cudaMemcpy
bench-ch3: $(BENCH_CH03_PROGRAMS) $(BUILD)/tools/gpu_probe
	@tools/bench-ch3.sh $(BUILD)

# 03-cure only where its source is: where it is not, the script says so, not make's "no rule".
BENCH_CH05_CURE := $(BUILD)/chapters/ch05-training-loop/03-cure
# Knobs count only when given on the command line (grade_knob, mk/grade.mk): BATCH, DATA or CSV
# in an environment often mean something else.
BENCH_CH05_OPTIONS = $(if $(call grade_knob,BATCH),--batch "$(BATCH)") \
    $(if $(call grade_knob,STEP_MS),--step-ms "$(STEP_MS)") \
    $(if $(call grade_knob,LOADERS),--loaders "$(LOADERS)") \
    $(if $(call grade_knob,BATCHES),--batches "$(BATCHES)") \
    $(if $(call grade_knob,DATA),--data "$(DATA)") \
    $(if $(call grade_knob,DATA_SIZE),--data-size "$(DATA_SIZE)") \
    $(if $(call grade_knob,CSV),--csv "$(CSV)")

.PHONY: bench-ch5
## make bench-ch5      chapter 5's feeding loop against the same loop with PyTorch's DataLoader, where PyTorch is installed: batches a second, utilisation, the ratio (BATCH=64 STEP_MS=8 LOADERS=4 BATCHES=200 DATA=FILE DATA_SIZE=2G CSV=DIR)
bench-ch5: $(if $(wildcard chapters/ch05-training-loop/03-cure.c),$(BENCH_CH05_CURE)) \
    $(BUILD)/tools/gpu_probe
	@PYTHON="$(PYTHON)" dev/bench-ch5.sh --build "$(BUILD)" $(BENCH_CH05_OPTIONS)

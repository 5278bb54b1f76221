# bench.mk - benchmarks: figures printed on this machine, against their references. Not tests.

BENCH_CH03_PROGRAMS := $(addprefix $(BUILD)/chapters/ch03-streams/,03-both-directions 04-pipeline \
                                                                   06-staged-pageable)

.PHONY: bench-ch3
## make bench-ch3      chapter 3 on this GPU: both directions against nvbandwidth (NVBANDWIDTH=path), the pipeline against its ideal, the staged copy against cudaMemcpy
bench-ch3: $(BENCH_CH03_PROGRAMS) $(BUILD)/tools/gpu_probe
	@tools/bench-ch3.sh $(BUILD)

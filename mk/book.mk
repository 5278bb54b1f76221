# book.mk - `make book` renders the book; `make measure` measures the data behind its figures.
#
# book.md goes through pandoc with book/filter.lua, which includes the listings from the real
# files, the rubrics from the tests and the measured figures from a folder of measurements.
# The figures are drawn at build time: book/figures/*.dot with Graphviz, book/plots/*.gp with
# gnuplot, from the CSV files in that folder, which `make measure` wrote on a GPU
# (measurements/GPU/, committed). Which folder (MEASURED, below):
#   make book MEASUREMENTS=NAME    measurements/NAME;  MEASUREMENTS=DIR: any folder of them
#   make book                      the folder named in measurements/DEFAULT; with no such file,
#                                  the only folder there is; with several, it refuses and lists
#                                  them, rather than pick one by its name's spelling.
# `make book` says one line for each file it makes (a failing command's own messages in full)
# and ends by naming the folder it used, and why.
# Nothing here runs unless asked: every other entry point includes this file too.

BOOK_DIR ?= $(BUILD)/book
PANDOC ?= pandoc
MEASURED_FILES := summary.csv bandwidth.csv latency.csv
# Chapter 2's, which a folder measured before its programs existed lacks: the book is built all
# the same, and says where each missing file's figures and sentences would be (book.md's
# .needs-measurements divs), and `make book` names them at its end.
MEASURED_LATER_FILES := staging.csv pinning_cost.csv break_even.csv zero_copy.csv limits.csv
# And chapter 3's.
MEASURED_LATER_FILES += bidirectional.csv overlap.csv timeline.csv staged_h2d.csv staged_d2h.csv
# And chapter 5's (its against_pytorch.csv, which `make bench-ch5` writes where PyTorch sees the
# GPU, is left out, as nvbandwidth.csv is: a folder may lack it for good).
MEASURED_LATER_FILES += naive_loop.csv stages.csv cure.csv sweep.csv
# And chapter 6's, which only a machine with two GPUs writes: a folder measured on one GPU lacks
# them for good, and the book says so in their place.
MEASURED_LATER_FILES += peer_copies.csv remote_read.csv peer_sweep.csv
MEASURED_FOLDERS := $(patsubst measurements/%/summary.csv,%,$(sort $(wildcard measurements/*/summary.csv)))
MEASURED_DEFAULT := $(if $(wildcard measurements/DEFAULT),$(firstword $(call first_words,measurements/DEFAULT)))
MEASURED_NAME := $(or $(MEASUREMENTS),$(MEASURED_DEFAULT),$(if $(filter 1,$(words $(MEASURED_FOLDERS))),$(MEASURED_FOLDERS)))
MEASURED := $(if $(MEASURED_NAME),$(if $(wildcard measurements/$(MEASURED_NAME)/summary.csv),measurements/$(MEASURED_NAME),$(MEASURED_NAME:%/=%)))
MEASURED_WHY := $(if $(MEASUREMENTS),MEASUREMENTS=$(MEASUREMENTS),$(if $(MEASURED_DEFAULT),named in measurements/DEFAULT,the only folder in measurements/))
PLACEHOLDER_DATA := $(BUILD)/placeholder-data/PLACEHOLDER
SWEEP := $(BUILD)/chapters/ch01-memory/07-bandwidth-sweep
PINNED := $(BUILD)/chapters/ch02-pinned
PINNED_MEASURING := $(addprefix $(PINNED)/,01-staging-detour 02-ways-to-pin 03-when-pinning-pays \
                                           04-zero-copy 05-limits)

# Discovered: a new .dot or .gp file is a new figure; a plot whose data the folder does not
# have is not drawn (the book shows a notice in its place).
BOOK_PLOTS := $(filter-out book/plots/common.gp,$(wildcard book/plots/*.gp))
MEASURED_MISSING := $(filter-out $(notdir $(wildcard $(addprefix $(MEASURED)/,$(MEASURED_LATER_FILES)))),\
                      $(MEASURED_LATER_FILES))
BOOK_FIGURES := $(patsubst book/figures/%.dot,$(BOOK_DIR)/figures/%.svg,$(wildcard book/figures/*.dot)) \
                $(patsubst book/plots/%.gp,$(BOOK_DIR)/figures/%.svg,\
                  $(filter-out $(MEASURED_MISSING:%.csv=book/plots/%.gp),$(BOOK_PLOTS)))
# What the filter reads: a change to any of these re-renders the book.
BOOK_INPUTS := book.md book/filter.lua $(wildcard book/filter/*.lua) book/book.css mk/book.mk \
               $(wildcard chapters/*/*.c common/*.h common/*.c exercises/*/*.h tests/*/*.c) \
               $(addprefix $(MEASURED)/,$(MEASURED_FILES)) $(BOOK_DIR)/.measured-from \
               $(wildcard $(addprefix $(MEASURED)/,$(MEASURED_LATER_FILES)))
PANDOC_FLAGS = --standalone --wrap=none --toc --toc-depth=2 --number-sections \
               --highlight-style=tango --lua-filter book/filter.lua \
               --metadata measurements=$(MEASURED) --metadata cuda-include=$(CUDA_HOME)/include \
               $(if $(BOOK_ZH),--metadata other-edition=true)

# The Chinese edition, book.zh.md: the same filters, listings and measurements, into
# $(BOOK_DIR)/zh/, its figures drawn from the same sources with their words translated
# (book/figures/zh.tsv, book/translate_figure.py). Each edition's first lines link to the other.
BOOK_ZH := $(wildcard book.zh.md)
BOOK_ZH_DIR := $(BOOK_DIR)/zh
BOOK_ZH_FIGURES := $(if $(BOOK_ZH),$(patsubst $(BOOK_DIR)/figures/%,$(BOOK_ZH_DIR)/figures/%,$(BOOK_FIGURES)))
BOOK_ZH_OUTPUTS := $(if $(BOOK_ZH),$(BOOK_ZH_DIR)/index.html $(BOOK_ZH_DIR)/book.epub)
FIGURE_WORDS := book/figures/zh.tsv book/translate_figure.py

.PHONY: book book-now book-placeholder book-pdf measure

## make book           render book.md to build/book/index.html and book.epub, book.zh.md to build/book/zh/ (MEASUREMENTS=NAME)
book:
	@setup/install-deps.sh --if-missing --book
	@$(MAKE) --no-print-directory book-now

## make book-placeholder  the same with made-up data, for work without measurements (build/ only)
book-placeholder:
	@setup/install-deps.sh --if-missing --book
	@[[ $(PLACEHOLDER_DATA)/summary.csv -nt book/placeholder-data.sh ]] || book/placeholder-data.sh $(PLACEHOLDER_DATA)
	@$(MAKE) --no-print-directory book-now MEASUREMENTS=$(PLACEHOLDER_DATA) \
	    BOOK_DIR=$(BUILD)/book-placeholder

ifeq ($(wildcard $(MEASURED)/summary.csv),)
book-now:
ifneq ($(MEASURED_NAME),)
	@echo "book: no measured data at '$(MEASURED_NAME)' ($(MEASURED_WHY)): neither measurements/$(MEASURED_NAME)/" >&2
	@echo "      nor $(MEASURED_NAME)/ holds summary.csv. The folders in measurements/: $(or $(MEASURED_FOLDERS),none)" >&2
else ifeq ($(MEASURED_FOLDERS),)
	@echo "book: there is no measured data: measurements/ has no GPU folder with $(MEASURED_FILES)." >&2
	@echo "      Run \`make measure\` on a machine with an NVIDIA GPU and commit measurements/," >&2
	@echo "      or name a folder that has them: make book MEASUREMENTS=DIR" >&2
	@echo "      (make book-placeholder renders the book with made-up numbers, into build/ only)" >&2
else
	@echo "book: measurements/ holds data from several GPUs: $(MEASURED_FOLDERS)." >&2
	@echo "      Say which: make book MEASUREMENTS=NAME, or put its name in measurements/DEFAULT" >&2
endif
	@exit 1
else
book-now: $(BOOK_DIR)/index.html $(BOOK_DIR)/book.epub $(BOOK_ZH_OUTPUTS)
	@echo "book: $(BOOK_DIR)/index.html and $(BOOK_DIR)/book.epub (measured data: $(MEASURED), $(MEASURED_WHY))"
	$(if $(BOOK_ZH),@echo "book: the Chinese edition: $(BOOK_ZH_DIR)/index.html and $(BOOK_ZH_DIR)/book.epub")
	$(if $(MEASURED_MISSING),@echo "book: NOT MEASURED in $(MEASURED): $(MEASURED_MISSING) (the later chapters' programs write them): \
	    the book says so where their figures and numbers belong; run \`make measure\` on the GPU")
endif

# The folder the book was last rendered from: another folder re-renders it and its figures,
# even where that folder's files are older than the book.
.PHONY: book-measured-from-check
$(BOOK_DIR)/.measured-from: book-measured-from-check
	@mkdir -p $(@D)
	@[[ "$$(cat $@ 2>/dev/null)" == "$(MEASURED)" ]] || echo "$(MEASURED)" >$@

# A measured file that is not there is not made here: it comes from a GPU.
$(addprefix $(MEASURED)/,$(MEASURED_FILES)):
	@echo "book: $@ is missing: run \`make measure\` on a machine with the GPU" >&2
	@exit 1

# edition_rules SOURCE DIR FIGURES FORMAT: DIR/index.html and DIR/book.epub from SOURCE, read as
# FORMAT (the Chinese edition's: a line break between two Chinese characters is no space).
define edition_rules
$(2)/index.html: $(1) $$(BOOK_INPUTS) $(3)
	@mkdir -p $$(@D)
	@echo "book: rendering $$@"
	@cp book/book.css $$(@D)/book.css
	@$$(PANDOC) $(1) --from $(4) $$(PANDOC_FLAGS) --resource-path=$(2):. --to html5 --css book.css \
	    --output $$@

$(2)/book.epub: $(1) $$(BOOK_INPUTS) $(3)
	@mkdir -p $$(@D)
	@echo "book: rendering $$@"
	@$$(PANDOC) $(1) --from $(4) $$(PANDOC_FLAGS) --resource-path=$(2):. --to epub3 \
	    --css book/book.css --output $$@
endef
$(eval $(call edition_rules,book.md,$(BOOK_DIR),$(BOOK_FIGURES),markdown))
$(if $(BOOK_ZH),$(eval $(call edition_rules,book.zh.md,$(BOOK_ZH_DIR),$(BOOK_ZH_FIGURES),markdown+east_asian_line_breaks)))

# The diagram: its @key@ fields filled from the summary, then laid out by Graphviz.
$(BOOK_DIR)/figures/%.svg: book/figures/%.dot book/fill-template.awk $(MEASURED)/summary.csv mk/book.mk \
                           $(BOOK_DIR)/.measured-from
	@mkdir -p $(@D)
	@echo "book: drawing $@"
	@awk -f book/fill-template.awk $(MEASURED)/summary.csv $< >$(@:.svg=.dot)
	@set -o pipefail; dot -Tsvg $(@:.svg=.dot) | sed '/<!DOCTYPE/,/>/d' >$@  # EPUB 3: no external DTD

# The same in the Chinese edition: the filled-in diagram's words translated, then laid out.
$(BOOK_ZH_DIR)/figures/%.svg: book/figures/%.dot book/fill-template.awk $(MEASURED)/summary.csv mk/book.mk \
                              $(BOOK_DIR)/.measured-from $(FIGURE_WORDS)
	@mkdir -p $(@D)/source
	@echo "book: drawing $@"
	@awk -f book/fill-template.awk $(MEASURED)/summary.csv $< >$(@D)/source/$*.dot
	@python3 book/translate_figure.py book/figures/zh.tsv $(@D)/source/$*.dot $(@D)
	@set -o pipefail; dot -Tsvg $(@:.svg=.dot) | sed '/<!DOCTYPE/,/>/d' >$@

# A plot: book/plots/NAME.gp draws MEASURED/NAME.csv, titled from the file's "# gpu:" line,
# whose "driver X" is the newest CUDA version the driver supports, not the driver's version;
# `link` is the PCIe link's theoretical GB/s where the measurement knew it.
$(BOOK_DIR)/figures/%.svg: book/plots/%.gp book/plots/common.gp $(MEASURED)/%.csv mk/book.mk \
                           $(MEASURED)/summary.csv $(BOOK_DIR)/.measured-from
	@mkdir -p $(@D)
	@echo "book: plotting $@"
	$(call plot,$<,$(PLOT_DRIVER_EN))

# The same in the Chinese edition, from the plot's source with its words translated.
$(BOOK_ZH_DIR)/figures/%.svg: book/plots/%.gp book/plots/common.gp $(MEASURED)/%.csv mk/book.mk \
                              $(MEASURED)/summary.csv $(BOOK_DIR)/.measured-from $(FIGURE_WORDS)
	@mkdir -p $(@D)/source
	@echo "book: plotting $@"
	@python3 book/translate_figure.py book/figures/zh.tsv $< $(@D)/source
	$(call plot,$(@D)/source/$*.gp,$(PLOT_DRIVER_ZH))

# plot SOURCE DRIVER: gnuplot draws SOURCE, its title the GPU and DRIVER's words for the CUDA
# version its driver supports.
PLOT_DRIVER_EN := driver for CUDA
PLOT_DRIVER_ZH := 驱动支持 CUDA
plot = @gnuplot -e "data='$(MEASURED)/$*.csv'; out='$@'" \
	    -e "gpu='$$(sed -n "s/^\# gpu: \(.*\), driver \(.*\), runtime .*, date \([0-9-]*\).*/\1, $(2) \2, \3/p" \
	                $(MEASURED)/$*.csv | head -n 1 | tr -d "'\\\\")'" \
	    -e "link=$$(sed -n 's/^pcie_gb_per_s,//p' $(MEASURED)/summary.csv | grep . || echo 0)" $(1)

# --- make book-pdf: optional, since Chromium is large; `make book` does not need it ---------
CHROMIUM ?= chromium

## make book-pdf       the book as a PDF too (build/book/book.pdf, and zh/book.pdf), printed by headless Chromium
book-pdf: book
	@command -v $(CHROMIUM) >/dev/null || \
	    { echo "book-pdf: needs Chromium: apt-get install chromium (or CHROMIUM=PATH)" >&2; exit 1; }
	@for edition in $(BOOK_DIR) $(if $(BOOK_ZH),$(BOOK_ZH_DIR)); do \
	    profile=$$(mktemp -d); \
	    $(CHROMIUM) --headless --no-sandbox --disable-gpu --disable-background-networking \
	        --disable-component-update --disable-sync --no-first-run --user-data-dir=$$profile \
	        --no-pdf-header-footer --print-to-pdf-no-header --print-to-pdf=$$edition/book.pdf \
	        file://$(CURDIR)/$$edition/index.html >/dev/null 2>&1; \
	    status=$$?; rm -rf "$$profile"; \
	    [[ $$status -eq 0 && -s $$edition/book.pdf ]] || exit 1; \
	    echo "book: $$edition/book.pdf"; \
	done

# --- make measure --------------------------------------------------------------------------
# measurements/NAME/ where NAME is MEASURE_NAME, or the GPU's name in lower case without its
# vendor ("NVIDIA H200" -> h200). Needs a GPU, not Check: it builds only what it runs.

## make measure        re-measure the book's data on this GPU into measurements/NAME/ (MEASURE_NAME=)
# Chapter 1's sweep, then chapter 2's programs, each with the sizes the book plots; their
# output goes to sweep.txt and pinned.txt beside the CSV files. Then NVIDIA's nvbandwidth,
# where it is found (NVBANDWIDTH=PATH or on the PATH), for the book's comparison.
measure: $(SWEEP) $(PINNED_MEASURING) $(BUILD)/tools/gpu_probe
	@set -o pipefail; \
	gpu=$$($(BUILD)/tools/gpu_probe) || { echo "measure: no CUDA device ($$gpu)" >&2; exit 1; }; \
	name=$${MEASURE_NAME:-$$(tr 'A-Z' 'a-z' <<<"$$gpu" | sed 's/^nvidia //; s/[^a-z0-9.]\{1,\}/-/g; s/^-//; s/-$$//')}; \
	dir=measurements/$$name; \
	mkdir -p "$$dir"; \
	echo "measure: $$gpu, into $$dir/"; \
	$(SWEEP) --min 4 --max 1G --csv "$$dir" | tee "$$dir/.sweep.txt" && \
	mv "$$dir/.sweep.txt" "$$dir/sweep.txt" && \
	{ grep -q '^pcie_gb_per_s,' "$$dir/summary.csv" || \
	  echo "measure: WARNING: NVML did not report the PCIe link (see sweep.txt); the book needs it" >&2; } && \
	{ $(PINNED)/01-staging-detour --min 1M --max 1G --csv "$$dir" && echo && \
	  $(PINNED)/02-ways-to-pin --size 1G --csv "$$dir" && echo && \
	  $(PINNED)/03-when-pinning-pays --min 4K --max 1G --csv "$$dir" && echo && \
	  $(PINNED)/04-zero-copy --size 256M --max-passes 64 --csv "$$dir" && echo && \
	  $(PINNED)/05-limits --csv "$$dir"; } | tee "$$dir/.pinned.txt" && \
	mv "$$dir/.pinned.txt" "$$dir/pinned.txt" && \
	{ $(MEASURE_CH03) } && \
	{ $(MEASURE_CH04) } && \
	{ $(MEASURE_CH05) } && \
	tools/nvbandwidth-csv.sh "$$dir" && \
	{ $(MEASURE_CH06) } && \
	echo "measure: done; check $$dir/sweep.txt, $$dir/pinned.txt, $$dir/ch03.txt, $$dir/ch04.txt and $$dir/ch05.txt$$ch06_txt, then commit $$dir/"

# Chapter 3: both directions, the pipeline and its timeline, the staged pageable copy; their
# output in ch03.txt. A shell fragment for the recipe above, where $$dir is the folder.
MEASURE_CH03_PROGRAMS := $(addprefix $(BUILD)/chapters/ch03-streams/,03-both-directions 04-pipeline \
                                                                      06-staged-pageable)
measure: $(MEASURE_CH03_PROGRAMS)
MEASURE_CH03 = { $(word 1,$(MEASURE_CH03_PROGRAMS)) --sizes 4M,16M,64M,256M,1G --csv "$$dir" && \
                 $(word 2,$(MEASURE_CH03_PROGRAMS)) --floats 256M --chunks 32 --csv "$$dir" && \
                 $(word 3,$(MEASURE_CH03_PROGRAMS)) --sweep --csv "$$dir"; } | tee "$$dir/.ch03.txt" && \
               mv "$$dir/.ch03.txt" "$$dir/ch03.txt";

# Chapter 4: what managed memory's page faults cost, against copying first; prefetching; the
# advice; their output in ch04.txt. Each program refuses a buffer of more than a quarter of the
# GPU's free memory.
MEASURE_CH04_PROGRAMS := $(addprefix $(BUILD)/chapters/ch04-managed/,02-page-faults 03-prefetch \
                                                                      04-advice)
measure: $(MEASURE_CH04_PROGRAMS)
MEASURE_CH04 = { $(word 1,$(MEASURE_CH04_PROGRAMS)) --size 1G --csv "$$dir" && echo && \
                 $(word 2,$(MEASURE_CH04_PROGRAMS)) --size 1G --csv "$$dir" && echo && \
                 $(word 3,$(MEASURE_CH04_PROGRAMS)) --size 1G --csv "$$dir"; } | \
                 tee "$$dir/.ch04.txt" && mv "$$dir/.ch04.txt" "$$dir/ch04.txt";

# Chapter 5: the training loop, naive, taken apart, cured and swept; their output in ch05.txt.
# One data set of 4 GiB for the four, written by the first and reused by the others (a
# temporary file each would be written four times); removed at the end.
MEASURE_CH05_PROGRAMS := $(addprefix $(BUILD)/chapters/ch05-training-loop/,01-naive-loop \
                             02-where-time-goes 03-cure 04-sweep)
measure: $(MEASURE_CH05_PROGRAMS)
MEASURE_CH05_DATA = --data "$(BUILD)/measure-feed.data" --data-size 4G
MEASURE_CH05 = { $(word 1,$(MEASURE_CH05_PROGRAMS)) $(MEASURE_CH05_DATA) --csv "$$dir" && echo && \
                 $(word 2,$(MEASURE_CH05_PROGRAMS)) $(MEASURE_CH05_DATA) --csv "$$dir" && echo && \
                 $(word 3,$(MEASURE_CH05_PROGRAMS)) $(MEASURE_CH05_DATA) --csv "$$dir" && echo && \
                 $(word 4,$(MEASURE_CH05_PROGRAMS)) $(MEASURE_CH05_DATA) --steps 0.5,1,2,4,8,16 \
                     --batch-count 24 --csv "$$dir"; } | \
                 tee "$$dir/.ch05.txt" && mv "$$dir/.ch05.txt" "$$dir/ch05.txt" && \
                 rm -f "$(BUILD)/measure-feed.data";

# Chapter 6: two GPUs, last, since most machines have one. The topology, then the copies between
# GPUs 0 and 1 three ways and both ways at once, 1 GiB each way, then a kernel on GPU 1 reading
# GPU 0's memory directly against copying first, 1 GiB, then the sweep; their output in ch06.txt,
# the topology's table at its top. With fewer than two GPUs the first program says so and exits
# 77 (EXIT_SKIPPED): then nothing of chapter 6 is written, `make measure` says plainly that it
# was not measured, and succeeds with the other chapters' measurements.
MEASURE_CH06_PROGRAMS := $(addprefix $(BUILD)/chapters/ch06-two-gpus/,01-topology 02-peer-copies \
                                                                      03-remote-read 04-sweep)
measure: $(MEASURE_CH06_PROGRAMS)
MEASURE_CH06 = status=0; ch06_txt=; \
               { $(word 1,$(MEASURE_CH06_PROGRAMS)) && echo && \
                 $(word 2,$(MEASURE_CH06_PROGRAMS)) --size 1G --csv "$$dir" && echo && \
                 $(word 3,$(MEASURE_CH06_PROGRAMS)) --size 1G --csv "$$dir" && echo && \
                 $(word 4,$(MEASURE_CH06_PROGRAMS)) --min 4K --max 1G --csv "$$dir"; } | \
                 tee "$$dir/.ch06.txt" || status=$$?; \
               case $$status in \
                 0) mv "$$dir/.ch06.txt" "$$dir/ch06.txt"; ch06_txt=", $$dir/ch06.txt" ;; \
                 77) rm -f "$$dir/.ch06.txt"; \
                     echo "measure: chapter 6 NOT MEASURED: its programs need two GPUs and this machine has fewer \
                           (above); $$dir/ has no peer_copies.csv, remote_read.csv, peer_sweep.csv or ch06.txt from this run" ;; \
                 *) rm -f "$$dir/.ch06.txt"; false ;; \
               esac;

# learner.mk - `make watch` and `make reset`: the learner's companions to `make check`.
#
# Both act on exercises/ only, in the order `make list-exercises` gives (the book's);
# the scripts behind them say what they do.

.PHONY: watch reset hint list

## make watch          re-check the exercise you are on each time you save it, then the next (EX= to start there)
watch: prerequisites
	@setup/install-deps.sh --if-missing --watch
	@MAKE="$(MAKE)" COURSE_EXERCISES="$(EXERCISES)" harness/watch.sh $(EX)

## make reset EX=...   put an exercise's stub back; your file is kept beside it as NAME.c.N.bak
reset:
	@MAKE="$(MAKE)" COURSE_EXERCISES="$(EXERCISES)" harness/reset.sh $(EX)

## make hint EX=...    an exercise's hint, mild first (LEVEL=2 a closer one); make check only points to it
hint:
	@MAKE="$(MAKE)" COURSE_EXERCISES="$(EXERCISES)" harness/hint.sh $(EX) $(LEVEL)

## make list           the exercises in the book's order: each one's title, and done, failing or not started
list:
	@MAKE="$(MAKE)" COURSE_EXERCISES="$(EXERCISES)" harness/list.sh

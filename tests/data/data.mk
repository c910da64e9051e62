# Recorded profiles and sweeps with golden outputs (tests/data/README).
#
#   tests/data/progs/*.c      small programs that each provoke one rule
#                             -> $(BUILD)/tests/data/progs/NAME
#   tests/data/regenerate     re-records profiles/ and sweeps/ and rewrites golden/
#   tests/analyzer/golden.c   compares `report --json` and `scale --replay --json`
#                             with golden/ exactly (part of test_analyzer)

DATA_PROGS_DIR := $(BUILD)/tests/data/progs
DATA_PROGS := $(patsubst tests/data/progs/%.c,$(DATA_PROGS_DIR)/%,$(wildcard tests/data/progs/*.c))

$(DATA_PROGS_DIR)/%: tests/data/progs/%.c tests/data/progs/data_progs.h include/convoy.h | check-deps
	@mkdir -p $(@D)
	$(CC) $(TEST_PROG_CFLAGS) $< -o $@

$(BUILD)/obj/tests/analyzer/golden.o: TEST_UTIL_CFLAGS += -DDATA_DIR='"$(abspath tests/data)"'

.PHONY: data-progs
data-progs: $(DATA_PROGS)

# Recorded profiles and sweeps with golden outputs (tests/data/README).
#
#   tests/data/progs/*.c      small programs that each provoke one rule
#                             -> $(BUILD)/tests/data/progs/NAME
#   tests/data/regenerate     re-records profiles/ and sweeps/ and rewrites golden/
#   tests/analyzer/golden.c   compares `report --json` and `scale --replay --json`
#                             with golden/ exactly (part of test_analyzer)

DATA_PROGS_DIR := $(BUILD)/tests/data/progs
DATA_PROGS := $(patsubst tests/data/progs/%.c,$(DATA_PROGS_DIR)/%,$(wildcard tests/data/progs/*.c))

# OpenMP programs (omp_*.c): GCC's libgomp, found by the shim's gomp.c.
$(DATA_PROGS_DIR)/omp_%: TEST_PROG_CFLAGS += -fopenmp
# Frame pointers, so the launcher's sampled switch chains reach its callers.
$(DATA_PROGS_DIR)/inline_futex: TEST_PROG_CFLAGS += -fno-omit-frame-pointer
# None, as Debian builds: the launcher's unwind from call-frame information
# reaches its callers.
$(DATA_PROGS_DIR)/serial_memset: TEST_PROG_CFLAGS += -fomit-frame-pointer

$(DATA_PROGS_DIR)/%: tests/data/progs/%.c tests/data/progs/data_progs.h include/convoy.h | check-deps
	@mkdir -p $(@D)
	$(CC) $(TEST_PROG_CFLAGS) $< -o $@

$(BUILD)/obj/tests/analyzer/golden.o: TEST_UTIL_CFLAGS += -DDATA_DIR='"$(abspath tests/data)"'

.PHONY: data-progs
data-progs: $(DATA_PROGS)

# Rust: the same program in both manglings, with debug info; and mutexes
# under contention (sampled recordings), one used from inlined functions.
DATA_RUST_PROGS := $(DATA_PROGS_DIR)/rust_lock_v0 $(DATA_PROGS_DIR)/rust_lock_legacy $(DATA_PROGS_DIR)/rust_mutex \
	$(DATA_PROGS_DIR)/rust_inlined

$(DATA_PROGS_DIR)/rust_mutex: tests/data/progs/rust_mutex.rs | check-deps
	@mkdir -p $(@D)
	rustc -g -O $< -o $@

$(DATA_PROGS_DIR)/rust_inlined: tests/data/progs/rust_inlined.rs | check-deps
	@mkdir -p $(@D)
	rustc -g -O $< -o $@

$(DATA_PROGS_DIR)/rust_lock_v0: tests/data/progs/rust_lock.rs | check-deps
	@mkdir -p $(@D)
	rustc -g -O -C symbol-mangling-version=v0 $< -o $@

$(DATA_PROGS_DIR)/rust_lock_legacy: tests/data/progs/rust_lock.rs | check-deps
	@mkdir -p $(@D)
	rustc -g -O $< -o $@   # stable rustc's default mangling

# tests/analyzer/rust.c runs them.
$(BUILD)/tests/test_analyzer: $(DATA_RUST_PROGS)
data-progs: $(DATA_RUST_PROGS)

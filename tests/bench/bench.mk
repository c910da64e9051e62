# make bench-shim: the shim's overhead, native and preloaded side by side
# (tests/bench/overhead.sh; figures recorded in docs/performance.md).

BENCH_DIR := $(BUILD)/bench
# The same shim built with the seeds' trylock-first fast path, for comparison.
TRYLOCK_OBJS := $(SHIM_SRCS:%.c=$(BENCH_DIR)/obj-trylock/%.o)

$(BENCH_DIR)/obj-trylock/%.o: %.c $(wildcard preload/*.h) $(wildcard include/convoy/*.h) | check-deps
	@mkdir -p $(@D)
	$(CC) $(SHIM_CFLAGS) -DCV_TRYLOCK_FIRST=1 -c $< -o $@

$(BENCH_DIR)/libconvoy-trylock.so: $(TRYLOCK_OBJS) preload/exports.map
	$(CC) $(SHIM_CFLAGS) $(SHIM_LDFLAGS) $(TRYLOCK_OBJS) -o $@ $(SHIM_LIBS)

$(BENCH_DIR)/lockpair: tests/bench/lockpair.c | check-deps
	@mkdir -p $(@D)
	$(CC) $(BASE_CFLAGS) $(CFLAGS) -pthread $< -o $@

.PHONY: bench-shim bench-whatif bench-report bench-sampling bench-trace
# The launcher's CPU sampling: its cost side by side with sampling off, and
# how much CPU time a false-sharing line takes to be located (docs/performance.md).
bench-sampling: $(BUILD)/convoy $(BUILD)/libconvoy.so $(BUILD)/tests/data/progs/spin_counter $(BUILD)/demos/barrier $(BUILD)/demos/false_sharing
	@tests/bench/sampling.sh $(BUILD)

# What `convoy report` costs on 10,000 locks and on 100,000 objects with
# 10,000 threads (docs/performance.md); OTHER=path/to/convoy runs an older
# build beside it.
bench-report: $(BUILD)/convoy $(BUILD)/libconvoy.so $(BUILD)/tests/data/progs/many_locks
	@tests/bench/report_cost.sh $(BUILD) $(OTHER)
# What trace mode (CONVOY_TRACE=1) costs, off against on (docs/viewer.md).
bench-trace: $(BUILD)/libconvoy.so $(BENCH_DIR)/lockpair $(BUILD)/demos/pingpong
	@tests/bench/trace.sh $(BUILD)

# convoy's what-if prediction against the measured fix (docs/findings.md).
bench-whatif: $(BUILD)/convoy $(BUILD)/libconvoy.so $(BUILD)/demos/global_queue $(BUILD)/demos/work_stealing
	@tests/bench/whatif.sh $(BUILD)

bench-shim: $(BUILD)/libconvoy.so $(BENCH_DIR)/libconvoy-trylock.so $(BENCH_DIR)/lockpair
	@tests/bench/overhead.sh $(BUILD)

# This shim against another build of it (OTHER=path/to/libconvoy.so), e.g.
# the commit before a fast-path change, interleaved.
.PHONY: bench-shim-ab
bench-shim-ab: $(BUILD)/libconvoy.so $(BENCH_DIR)/lockpair
	@test -n "$(OTHER)" || { echo "usage: make bench-shim-ab OTHER=path/to/libconvoy.so" >&2; exit 2; }
	@tests/bench/shim_ab.sh $(BUILD) $(OTHER)

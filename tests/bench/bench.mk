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

$(BENCH_DIR)/buckets: tests/bench/buckets.c | check-deps
	@mkdir -p $(@D)
	$(CC) $(BASE_CFLAGS) $(CFLAGS) -pthread $< -o $@

$(BENCH_DIR)/omp_critical: tests/bench/omp_critical.c | check-deps
	@mkdir -p $(@D)
	$(CC) $(BASE_CFLAGS) $(CFLAGS) -fopenmp $< -o $@

# preload/gomp.c's cost on an uncontended `omp critical`: native and
# preloaded interleaved, 5 runs each, medians of ns per entry.
bench-omp: $(BUILD)/libconvoy.so $(BENCH_DIR)/omp_critical
	@rm -rf $(BENCH_DIR)/omp-profiles && mkdir -p $(BENCH_DIR)/omp-profiles
	@for i in 1 2 3 4 5; do \
	  echo "native $$($(BENCH_DIR)/omp_critical)"; \
	  echo "shim $$(CONVOY_QUIET=1 CONVOY_DIR=$(BENCH_DIR)/omp-profiles LD_PRELOAD=$(abspath $(BUILD))/libconvoy.so $(BENCH_DIR)/omp_critical)"; \
	done | sort -k1,1 -k2,2n | awk '{ v[$$1] = v[$$1] " " $$2; c[$$1]++ } \
	  END { for (k in v) { split(substr(v[k], 2), a, " "); print k ": median " a[int((c[k] + 1) / 2)] " ns per entry (" substr(v[k], 2) ")" } }'

.PHONY: bench-shim bench-whatif bench-report bench-sampling bench-omp bench-trace
# The launcher's CPU sampling: its cost side by side with sampling off, and
# how much CPU time a false-sharing line takes to be located, and the user
# stacks' cost (docs/performance.md).
bench-sampling: $(BUILD)/convoy $(BUILD)/libconvoy.so $(BUILD)/tests/data/progs/spin_counter $(BUILD)/demos/barrier $(BUILD)/demos/false_sharing \
		$(BUILD)/tests/data/progs/packed_stats
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

# The same on real programs (pigz, xz, sort, sqlite3, bench-peers-deps
# installs them; node, java, zstd, git and openssl where they are installed):
# peers.sh's workloads,
# native, OTHER and this build interleaved, 15 rounds.
.PHONY: bench-programs-ab
bench-programs-ab: $(BUILD)/libconvoy.so $(BENCH_DIR)/lockpair $(BENCH_DIR)/buckets
	@test -n "$(OTHER)" || { echo "usage: make bench-programs-ab OTHER=path/to/libconvoy.so" >&2; exit 2; }
	@PEER_OTHER=$(realpath $(OTHER)) PEER_TOOLS="native other convoy" PEER_WORKLOADS="start buckets pigz xz sort sqlite3 node pyssl java zstd gitgrep openssl" \
	  tests/bench/peers.sh $(BUILD) 15

# The overhead proof (tests/bench/peers.sh, docs/performance.md): convoy
# beside valgrind's DRD and Helgrind, the LTTng-UST pthread wrapper (tracing
# off and on), perf trace and perf lock, on the same workloads, interleaved.
# The peers are installed here, for this benchmark only (make deps and make
# test never need them), each attempt bounded in time.
PEER_PACKAGES := valgrind liblttng-ust1 lttng-tools pigz xz-utils sqlite3
.PHONY: bench-peers bench-peers-deps
bench-peers-deps:
	@missing=$$(for p in $(PEER_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || echo $$p; done); \
	if [ -n "$$missing" ]; then \
	  echo "bench-peers: installing" $$missing; \
	  timeout 600 apt-get install -y --no-install-recommends $$missing >/dev/null || \
	  { timeout 300 apt-get update >/dev/null && \
	    timeout 600 apt-get install -y --no-install-recommends $$missing >/dev/null; } || \
	  echo "bench-peers: could not install" $$missing "(peers.sh says which tools are missing)"; \
	fi

bench-peers: bench-peers-deps $(BUILD)/libconvoy.so $(BUILD)/convoy $(BENCH_DIR)/lockpair $(BENCH_DIR)/buckets \
		$(BUILD)/demos/global_queue
	@tests/bench/peers.sh $(BUILD) $(ROUNDS)

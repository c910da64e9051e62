# The seed experiments as programs in build/demos/ (docs/seeds.md).
#
# Every demo is dynamically linked against libc and libpthread (convoy preloads
# into it), built with -g, and links the reference scheduler library. Each one
# takes --workers N for a single run and prints the seed's sweep with no
# arguments; `make bench-demos` reproduces the seed tables into docs/seeds.md.

DEMOS := global_queue work_stealing scheduler_compare \
         racy_counter atomic_scaling cas_retry false_sharing mutex_vs_atomic \
         deadlock thread_per_task granularity worker_count imbalance \
         backpressure nested_submit cancel futures \
         barrier pingpong

# -g always (convoy symbolizes the demos), frame pointers for cheap stacks.
DEMO_CFLAGS := $(BASE_CFLAGS) $(CFLAGS) -g -fno-omit-frame-pointer -pthread -Idemo-workloads
DEMO_LIBS   := $(WORKPOOL_LIB) -pthread
DEMO_HDRS   := demo-workloads/demo_common.h demo-workloads/seed000.h \
               demo-workloads/workpool.h include/convoy.h
DEMO_COMMON := $(BUILD)/obj/demos/demo_common.o $(BUILD)/obj/demos/seed000.o

.PHONY: demos bench-demos
.SECONDARY: $(DEMOS:%=$(BUILD)/obj/demos/%.o) $(DEMO_COMMON)
demos: $(DEMOS:%=$(BUILD)/demos/%)

$(BUILD)/obj/demos/%.o: demo-workloads/%.c $(DEMO_HDRS) | check-deps
	@mkdir -p $(@D)
	$(CC) $(DEMO_CFLAGS) -c $< -o $@

# scheduler_compare and work_stealing need global_queue.c without its main.
$(BUILD)/obj/demos/%.nomain.o: demo-workloads/%.c $(DEMO_HDRS) | check-deps
	@mkdir -p $(@D)
	$(CC) $(DEMO_CFLAGS) -DDEMO_NO_MAIN -c $< -o $@

$(BUILD)/demos/%: $(BUILD)/obj/demos/%.o $(DEMO_COMMON) $(WORKPOOL_LIB)
	@mkdir -p $(@D)
	$(CC) $(DEMO_CFLAGS) $(filter %.o,$^) -o $@ $(DEMO_LIBS)

$(BUILD)/demos/scheduler_compare: $(BUILD)/obj/demos/global_queue.nomain.o

# --- tests: every demo's CLI contract and its verified results --------------
DEMO_TEST_BIN := $(BUILD)/tests/test_demos
TESTS += $(DEMO_TEST_BIN)

$(BUILD)/obj/tests/demos/%.o: tests/demos/%.c | check-deps
	@mkdir -p $(@D)
	$(CC) $(TEST_CFLAGS) -DDEMO_BIN_DIR='"$(abspath $(BUILD)/demos)"' -c $< -o $@

$(DEMO_TEST_BIN): $(patsubst %.c,$(BUILD)/obj/%.o,$(wildcard tests/demos/*.c)) \
    $(DEMOS:%=$(BUILD)/demos/%)
	@mkdir -p $(@D)
	$(CC) $(TEST_CFLAGS) $(filter %.o,$^) -o $@ $(TEST_LIBS)

# --- bench: the seed tables on this machine, into docs/seeds.md --------------
bench-demos: demos
	demo-workloads/bench_demos.sh $(BUILD)/demos docs/seeds.md

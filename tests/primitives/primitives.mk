# Tests of rwlocks, spinlocks, barriers, semaphores, futexes (libc's
# syscall()), C11 mtx/cnd, and the cost of parking and waking.
#
#   tests/primitives/progs/*.c, *.cc  the programs -> $(BUILD)/tests/primitives/NAME
#   tests/primitives/progs/*.rs       compiled by the test itself with `rustc -O`
#                                     (skipped, with a message, when rustc is absent)
#   tests/primitives/*.c              Criterion tests -> $(BUILD)/tests/test_primitives

PRIM_DIR  := $(BUILD)/tests/primitives
PRIM_SRC  := tests/primitives/progs
PRIM_BINS := $(patsubst $(PRIM_SRC)/%.c,$(PRIM_DIR)/%,$(wildcard $(PRIM_SRC)/*.c)) \
             $(patsubst $(PRIM_SRC)/%.cc,$(PRIM_DIR)/%,$(wildcard $(PRIM_SRC)/*.cc))
PRIM_TEST_OBJS := $(patsubst tests/%.c,$(BUILD)/obj/tests/%.o,$(wildcard tests/primitives/*.c))

$(PRIM_DIR)/%: $(PRIM_SRC)/%.c $(PRIM_SRC)/prim_util.h | check-deps
	@mkdir -p $(@D)
	$(CC) $(TEST_PROG_CFLAGS) $< -o $@

$(PRIM_DIR)/%: $(PRIM_SRC)/%.cc $(PRIM_SRC)/prim_util.h | check-deps
	@mkdir -p $(@D)
	$(CXX) $(TEST_PROG_CXXFLAGS) $< -o $@

$(PRIM_TEST_OBJS): $(BUILD)/obj/tests/%.o: tests/%.c tests/primitives/prim_test.h \
		tests/common/testutil.h | check-deps
	@mkdir -p $(@D)
	$(CC) $(TEST_UTIL_CFLAGS) -DPRIM_DIR='"$(abspath $(PRIM_DIR))"' \
	  -DPRIM_SRC_DIR='"$(abspath $(PRIM_SRC))"' -c $< -o $@

$(BUILD)/tests/test_primitives: $(PRIM_TEST_OBJS) $(TEST_COMMON_OBJS) $(PRIM_BINS) \
		$(BUILD)/libconvoy.so $(BUILD)/convoy $(BUILD)/demos/barrier $(BUILD)/demos/pingpong
	$(CC) $(TEST_CFLAGS) $(PRIM_TEST_OBJS) $(TEST_COMMON_OBJS) -o $@ $(TEST_LIBS) -ljson-c

TESTS += $(BUILD)/tests/test_primitives

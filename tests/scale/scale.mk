# Tests of convoy scale, the speedup stack and the findings (issue 4).
TEST_SCALE_OBJS := $(patsubst tests/%.c,$(BUILD)/obj/tests/%.o,$(wildcard tests/scale/*.c))

$(TEST_SCALE_OBJS): $(BUILD)/obj/tests/%.o: tests/%.c tests/common/testutil.h | check-deps
	@mkdir -p $(@D)
	$(CC) $(TEST_UTIL_CFLAGS) -c $< -o $@

$(BUILD)/tests/test_scale: $(TEST_SCALE_OBJS) $(TEST_COMMON_OBJS) $(TEST_RUNTIME_DEPS) $(DEMOS:%=$(BUILD)/demos/%)
	$(CC) $(TEST_CFLAGS) $(TEST_SCALE_OBJS) $(TEST_COMMON_OBJS) -o $@ $(TEST_LIBS) -ljson-c -lm
	echo 1 > $@.jobs   # sweeps measure the machine: one at a time

TESTS += $(BUILD)/tests/test_scale

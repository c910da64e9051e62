# Tests of convoy scale, the speedup stack and the findings (issue 4).
#
#   tests/scale/test_scale.c       the command's contract -> $(BUILD)/tests/test_scale (make test)
#   tests/scale/test_scale_live.c  diagnoses of live sweeps of the demos, each
#                                  skipped (saying why) when the machine cannot
#                                  give it two CPUs -> $(BUILD)/tests/test_scale_live
#                                  (make test-live, never make test)

$(BUILD)/obj/tests/scale/%.o: tests/scale/%.c tests/common/testutil.h | check-deps
	@mkdir -p $(@D)
	$(CC) $(TEST_UTIL_CFLAGS) -c $< -o $@

$(BUILD)/tests/test_scale: $(BUILD)/obj/tests/scale/test_scale.o $(TEST_COMMON_OBJS) $(TEST_RUNTIME_DEPS) \
		$(DEMOS:%=$(BUILD)/demos/%)
	$(CC) $(TEST_CFLAGS) $< $(TEST_COMMON_OBJS) -o $@ $(TEST_LIBS) -ljson-c -lm

$(BUILD)/tests/test_scale_live: $(BUILD)/obj/tests/scale/test_scale_live.o $(TEST_COMMON_OBJS) \
		$(TEST_RUNTIME_DEPS) $(DEMOS:%=$(BUILD)/demos/%) $(DATA_PROGS) $(BUILD)/tests/data/progs/rust_mutex
	$(CC) $(TEST_CFLAGS) $< $(TEST_COMMON_OBJS) -o $@ $(TEST_LIBS) -ljson-c -lm
	echo 1 > $@.jobs   # sweeps measure the machine: one at a time

TESTS += $(BUILD)/tests/test_scale
LIVE_TESTS += $(BUILD)/tests/test_scale_live

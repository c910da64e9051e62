# The conformance suite: every interposed function, natively and under the
# shim (tests/conformance/cases.c, run by test_conformance).
#
#   tests/conformance/cases.c            -> $(TEST_PROGS_DIR)/conformance_cases
#   tests/conformance/test_conformance.c -> $(BUILD)/tests/test_conformance

# cases.c and the test read CV_REAL_FUNCS from preload/shim.h; -fopenmp for
# the cases of libgomp's entry points (preload/gomp.c).
$(TEST_PROGS_DIR)/conformance_cases: tests/conformance/cases.c preload/shim.h | check-deps
	@mkdir -p $(@D)
	$(CC) $(TEST_PROG_CFLAGS) -fopenmp -Ipreload $< -o $@

$(BUILD)/obj/tests/conformance/test_conformance.o: tests/conformance/test_conformance.c preload/shim.h \
		tests/common/testutil.h | check-deps
	@mkdir -p $(@D)
	$(CC) $(TEST_UTIL_CFLAGS) -Ipreload -DSRC_DIR='"$(abspath .)"' -c $< -o $@

$(BUILD)/tests/test_conformance: $(BUILD)/obj/tests/conformance/test_conformance.o $(TEST_COMMON_OBJS) \
		$(TEST_RUNTIME_DEPS) $(TEST_PROGS_DIR)/conformance_cases
	$(CC) $(TEST_CFLAGS) $< $(TEST_COMMON_OBJS) -o $@ $(TEST_LIBS) -ljson-c

TESTS += $(BUILD)/tests/test_conformance

# workpool: the reference scheduler library (issue 3, library part).
#
#   $(WORKPOOL_LIB)        build/libworkpool.a, what the demos link
#   $(WORKPOOL_TSAN_LIB)   build/tsan/libworkpool.a, -fsanitize=thread -O1 -g
#   tests                  build/tests/test_workpool (Criterion),
#                          build/tests/test_workpool_tsan (Criterion wrapper
#                          that runs build/tests/workpool_tsan_stress, the
#                          stress tests built with TSan at reduced size)
#
# Demos: add -Idemo-workloads to their CFLAGS, link $(WORKPOOL_LIB) -pthread.

WORKPOOL_SRCS   := $(wildcard demo-workloads/workpool/*.c)
WORKPOOL_HDRS   := demo-workloads/workpool.h $(wildcard demo-workloads/workpool/*.h) \
                   include/convoy.h
WORKPOOL_INC    := -Idemo-workloads -Idemo-workloads/workpool
WORKPOOL_CFLAGS := $(BASE_CFLAGS) $(CFLAGS) -pthread $(WORKPOOL_INC)
WORKPOOL_OBJS   := $(WORKPOOL_SRCS:%.c=$(BUILD)/obj/%.o)
WORKPOOL_LIB    := $(BUILD)/libworkpool.a

# ThreadSanitizer flavour: no $(CFLAGS), so -O1 is what it is built with.
WORKPOOL_TSAN_FLAGS  := -fsanitize=thread -O1 -g
WORKPOOL_TSAN_CFLAGS := $(BASE_CFLAGS) $(WORKPOOL_TSAN_FLAGS) -pthread $(WORKPOOL_INC)
WORKPOOL_TSAN_OBJS   := $(WORKPOOL_SRCS:%.c=$(BUILD)/tsan/obj/%.o)
WORKPOOL_TSAN_LIB    := $(BUILD)/tsan/libworkpool.a

WORKPOOL_TEST_SRCS   := $(wildcard tests/workpool/test_*.c)
WORKPOOL_TEST_HDRS   := $(wildcard tests/workpool/*.h)
# The stress tests the TSan binary runs (a plain program: see
# tests/workpool/tsan_main.c for why it is not Criterion itself).
WORKPOOL_STRESS_SRCS := tests/workpool/stress.c tests/workpool/tsan_main.c

.PHONY: workpool
workpool: $(WORKPOOL_LIB) $(WORKPOOL_TSAN_LIB)

$(BUILD)/obj/demo-workloads/workpool/%.o: demo-workloads/workpool/%.c $(WORKPOOL_HDRS) | check-deps
	@mkdir -p $(@D)
	$(CC) $(WORKPOOL_CFLAGS) -c $< -o $@

$(WORKPOOL_LIB): $(WORKPOOL_OBJS)
	@mkdir -p $(@D)
	rm -f $@
	$(AR) rcs $@ $^

$(BUILD)/tsan/obj/demo-workloads/workpool/%.o: demo-workloads/workpool/%.c $(WORKPOOL_HDRS) | check-deps
	@mkdir -p $(@D)
	$(CC) $(WORKPOOL_TSAN_CFLAGS) -c $< -o $@

$(WORKPOOL_TSAN_LIB): $(WORKPOOL_TSAN_OBJS)
	@mkdir -p $(@D)
	rm -f $@
	$(AR) rcs $@ $^

# --- tests ------------------------------------------------------------------
$(BUILD)/tests/test_workpool: $(WORKPOOL_TEST_SRCS) tests/workpool/stress.c $(WORKPOOL_TEST_HDRS) $(WORKPOOL_LIB) | check-deps
	@mkdir -p $(@D)
	$(CC) $(TEST_CFLAGS) $(WORKPOOL_INC) $(WORKPOOL_TEST_SRCS) tests/workpool/stress.c \
	  -o $@ $(WORKPOOL_LIB) $(TEST_LIBS)

$(BUILD)/tests/workpool_tsan_stress: $(WORKPOOL_STRESS_SRCS) $(WORKPOOL_TEST_HDRS) $(WORKPOOL_TSAN_LIB) | check-deps
	@mkdir -p $(@D)
	$(CC) $(WORKPOOL_TSAN_CFLAGS) -DWP_TEST_TSAN $(WORKPOOL_STRESS_SRCS) \
	  -o $@ $(WORKPOOL_TSAN_LIB)

$(BUILD)/tests/test_workpool_tsan: tests/workpool/tsan_wrapper.c $(BUILD)/tests/workpool_tsan_stress | check-deps
	@mkdir -p $(@D)
	$(CC) $(TEST_CFLAGS) -DWP_TSAN_STRESS_BIN='"$(abspath $(BUILD)/tests/workpool_tsan_stress)"' \
	  tests/workpool/tsan_wrapper.c -o $@ $(TEST_LIBS)

TESTS += $(BUILD)/tests/test_workpool $(BUILD)/tests/test_workpool_tsan

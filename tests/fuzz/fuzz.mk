# Fuzzing the profile reader and the module/symbol layer that consumes what
# it read, with libFuzzer (clang), under ASan and UBSan.
#
#   tests/fuzz/fuzz_profile.c   the harness -> $(BUILD)/fuzz/fuzz_profile
#   tests/fuzz/seeds.sh         seed corpus from real profiles -> $(BUILD)/fuzz/seeds
#   tests/fuzz/regressions/     inputs that once crashed or hung it, checked in;
#                               each runs in every make test
#   tests/fuzz/test_fuzz.c      make test: the regressions, then a short run
#                               ($(FUZZ_SHORT_RUNS) inputs) -> $(BUILD)/tests/test_fuzz
#   make fuzz                   the long run: FUZZ_TIME seconds (default 600),
#                               corpus kept in $(BUILD)/fuzz/corpus, crashes in
#                               $(BUILD)/fuzz/crashes (check each one into
#                               tests/fuzz/regressions with its fix)

FUZZ_DIR      := $(BUILD)/fuzz
FUZZ_CC       := clang
FUZZ_FLAGS    := -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -g -O1
FUZZ_SRCS     := analyzer/profile.c analyzer/symbols.c analyzer/symindex.c analyzer/util.c
FUZZ_SHORT_RUNS ?= 1000
FUZZ_TIME     ?= 600

$(FUZZ_DIR)/fuzz_profile: tests/fuzz/fuzz_profile.c $(FUZZ_SRCS) $(wildcard analyzer/*.h) include/convoy/profile.h | check-deps
	@mkdir -p $(@D)
	$(FUZZ_CC) -std=gnu11 -Wall -Wextra -Wno-unused-parameter -Iinclude -Ianalyzer -I/usr/include/libiberty -D_GNU_SOURCE $(FUZZ_FLAGS) \
	  tests/fuzz/fuzz_profile.c $(FUZZ_SRCS) -o $@ -ldw -lelf -lz -lstdc++ -liberty

$(FUZZ_DIR)/seeds: tests/fuzz/seeds.sh $(BUILD)/libconvoy.so $(TEST_PROG_BINS) $(TEST_PROG_LIBS) $(STK_BINS)
	tests/fuzz/seeds.sh $(BUILD) $@

$(BUILD)/obj/tests/fuzz/test_fuzz.o: tests/fuzz/test_fuzz.c tests/common/testutil.h | check-deps
	@mkdir -p $(@D)
	$(CC) $(TEST_UTIL_CFLAGS) -DFUZZ_DIR='"$(abspath $(FUZZ_DIR))"' -DFUZZ_SHORT_RUNS=$(FUZZ_SHORT_RUNS) \
	  -DREGRESSIONS_DIR='"$(abspath tests/fuzz/regressions)"' -c $< -o $@

$(BUILD)/tests/test_fuzz: $(BUILD)/obj/tests/fuzz/test_fuzz.o $(TEST_COMMON_OBJS) $(FUZZ_DIR)/fuzz_profile $(FUZZ_DIR)/seeds
	$(CC) $(TEST_CFLAGS) $< $(TEST_COMMON_OBJS) -o $@ $(TEST_LIBS) -ljson-c

TESTS += $(BUILD)/tests/test_fuzz

.PHONY: fuzz
fuzz: $(FUZZ_DIR)/fuzz_profile $(FUZZ_DIR)/seeds
	@mkdir -p $(FUZZ_DIR)/corpus $(FUZZ_DIR)/crashes
	$(FUZZ_DIR)/fuzz_profile -max_total_time=$(FUZZ_TIME) -timeout=30 -rss_limit_mb=4096 \
	  -artifact_prefix=$(FUZZ_DIR)/crashes/ $(FUZZ_DIR)/corpus $(FUZZ_DIR)/seeds tests/fuzz/regressions

# convoy — build, test, demo, bench, install.
#
#   make            build build/libconvoy.so, build/convoy and build/demos/*
#   make test       build and run every test that does not depend on timing;
#                   ends with "N passed, N failed, N skipped"
#   make test-live  live sweeps whose diagnosis needs a free second CPU (slow)
#   make test-asan  the analyzer and its tests under ASan+UBSan (build/asan)
#   make fuzz       the profile reader under libFuzzer, FUZZ_TIME s (default 600)
#   make demo       build, run a demo under convoy and print the report
#   make bench      overhead and seed benchmarks (timings live here, never in tests)
#   make test-nptl  glibc's own NPTL tests with and without the shim (slow tier, < 18 min)
#   make deps       install the Debian packages the build and tests need
#   make install    PREFIX=/usr/local DESTDIR=

BUILD    ?= build
PREFIX   ?= /usr/local
DESTDIR  ?=
CC       ?= gcc
CXX      ?= g++

# Debian packages the build, the tests and the benchmarks need, and one header
# (or program) per package that proves it is installed. npm is added only where
# no npm exists: a NodeSource nodejs bundles its own and conflicts with it.
# libdebuginfod1: not needed, but where it is installed convoy must not load
# it unasked (tests/analyzer/cli.c).
DEB_PACKAGES := gcc g++ make pkg-config libdw-dev libelf-dev libcapstone-dev \
                libjson-c-dev libcriterion-dev zlib1g-dev hyperfine rustc time libiberty-dev \
                clang libclang-rt-14-dev libomp-14-dev \
                wrk python3 perl zstd chromium nodejs xz-utils libdebuginfod1 valgrind
DEP_FILES    := /usr/lib/*/perl/*/threads.pm /usr/include/elfutils/libdwfl.h /usr/bin/zstd \
                /usr/lib/gcc/*/*/libgomp.so \
                /usr/include/gelf.h /usr/include/json-c/json.h /usr/include/capstone/capstone.h \
                /usr/include/criterion/criterion.h /usr/include/zlib.h /usr/bin/pkg-config \
                /usr/bin/hyperfine /usr/bin/g++ /usr/bin/rustc /usr/bin/time \
                /usr/include/libiberty/demangle.h /usr/bin/clang /usr/lib/llvm-14/lib/libomp.so \
                /usr/lib/llvm-14/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a \
                /usr/bin/wrk /usr/bin/python3 /usr/bin/xz /usr/include/valgrind/valgrind.h \
                /usr/bin/chromium /usr/bin/node /usr/bin/npm

WARN     := -Wall -Wextra -Wno-unused-parameter
CFLAGS   ?= -O2 -g
BASE_CFLAGS := -std=gnu11 $(WARN) -Iinclude -D_GNU_SOURCE

# The shim runs inside other programs: hidden by default, initial-exec TLS so the
# first TLS access never enters the loader, only interposed names exported.
# Frame pointers in every function that calls another (preload/stacks.c's
# reuse of recent captures reads the frame pointer each caller saved); none
# in a leaf, which is never a caller (tail jumps are not calls): the lock
# fast paths that read their caller's return address no longer push, set and
# pop a frame they never use (fastpath::no_call_without_a_frame checks the
# rule over the built library's call-frame information).
SHIM_CFLAGS  := $(BASE_CFLAGS) $(CFLAGS) -fPIC -fvisibility=hidden \
                -ftls-model=initial-exec -fno-omit-frame-pointer -momit-leaf-frame-pointer
SHIM_LDFLAGS := -shared -Wl,--version-script=preload/exports.map -Wl,-z,now \
                -Wl,--wrap=_Unwind_Find_FDE
# The unwinder (stacks.c) is libgcc's, linked in: libgcc_eh.a, not libgcc_s.so.
SHIM_LIBS    := -ldl -lpthread -static-libgcc

# make test-asan sets SANITIZE for the analyzer and the test binaries only:
# the shim and the programs it is preloaded into stay as they ship.
SANITIZE ?=
ANALYZER_CFLAGS := $(BASE_CFLAGS) $(CFLAGS) $(SANITIZE) -I/usr/include/libiberty -DCONVOY_LIBDIR='"$(PREFIX)/lib/convoy"'
ANALYZER_LIBS   := -ldw -lelf -ljson-c -lz -lm -liberty -pthread

TEST_CFLAGS := $(BASE_CFLAGS) $(CFLAGS) $(SANITIZE) -pthread
# Every Criterion binary loads libgit2_stub.c's library in the place of
# Debian's libgit2 (the file says why): named by the binary itself, kept
# though it calls nothing in it, found in $ORIGIN/lib (tests/tests.mk
# builds it there).
TEST_GIT_STUB := $(BUILD)/tests/lib/libgit2.so.1.5
TEST_LIBS   := -Wl,--push-state,--no-as-needed $(TEST_GIT_STUB) -Wl,--pop-state -Wl,-rpath,'$$ORIGIN/lib' \
	       -lcriterion -pthread

SHIM_SRCS     := $(wildcard preload/*.c)
SHIM_OBJS     := $(SHIM_SRCS:%.c=$(BUILD)/obj/%.o)
ANALYZER_SRCS := $(wildcard analyzer/*.c)
ANALYZER_OBJS := $(ANALYZER_SRCS:%.c=$(BUILD)/obj/%.o) $(BUILD)/obj/viewer/assets.o
VIEWER_FILES  := viewer/page.html viewer/convoy.css viewer/convoy.js

# Every test binary is build/tests/test_*: a Criterion executable, each test in
# its own process. Components add theirs to TESTS, or to LIVE_TESTS when
# what they check needs the machine's CPUs free (make test-live).
TESTS :=
LIVE_TESTS :=

.PHONY: all deps check-deps test test-deep test-live test-asan test-nptl demo bench install clean
all: $(BUILD)/libconvoy.so $(BUILD)/convoy demos

# --- dependencies -----------------------------------------------------------
MISSING_DEPS := $(strip $(foreach f,$(DEP_FILES),$(if $(wildcard $(f)),,$(f))))
deps:
	@if [ "$$(id -u)" = 0 ]; then \
	  pkgs="$(DEB_PACKAGES)"; \
	  command -v npm >/dev/null || pkgs="$$pkgs npm"; \
	  echo "convoy: installing $$pkgs"; \
	  DEBIAN_FRONTEND=noninteractive apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$pkgs && \
	  $(MAKE) --no-print-directory viewer-deps; \
	else \
	  echo "convoy: missing build dependencies; run as root:"; \
	  echo "  apt-get install -y $(DEB_PACKAGES)"; exit 1; \
	fi

# Objects wait for this (order-only), so a fresh machine installs before compiling.
check-deps:
ifneq ($(MISSING_DEPS),)
	@echo "convoy: missing $(MISSING_DEPS)"
	@$(MAKE) --no-print-directory deps
endif

# --- shim and analyzer ------------------------------------------------------
$(BUILD)/obj/preload/%.o: preload/%.c $(wildcard preload/*.h) $(wildcard include/convoy/*.h) include/convoy.h | check-deps
	@mkdir -p $(@D)
	$(CC) $(SHIM_CFLAGS) -c $< -o $@

# The unwinder linked in (libgcc_eh.a) must find frames with glibc's
# _dl_find_object (libgcc 12, glibc 2.35): an older one takes the loader's
# lock in every capture (preload/stacks.c).
$(BUILD)/libconvoy.so: $(SHIM_OBJS) preload/exports.map
	$(CC) $(SHIM_CFLAGS) $(SHIM_LDFLAGS) $(SHIM_OBJS) -o $@.tmp $(SHIM_LIBS)
	@nm -D $@.tmp | grep -q ' U _dl_find_object@' || \
		{ echo "convoy: this toolchain's unwinder does not use _dl_find_object (needs GCC >= 12 and glibc >= 2.35)" >&2; rm -f $@.tmp; exit 1; }
	mv $@.tmp $@

$(BUILD)/obj/analyzer/%.o: analyzer/%.c $(wildcard analyzer/*.h) $(wildcard include/convoy/*.h) | check-deps
	@mkdir -p $(@D)
	$(CC) $(ANALYZER_CFLAGS) -c $< -o $@

# The HTML viewer's files, embedded in the binary (analyzer/html.c).
$(BUILD)/obj/viewer/assets.o: viewer/assets.S $(VIEWER_FILES)
	@mkdir -p $(@D)
	$(CC) -c $< -o $@

# dlopen exported: libdw's open of libdebuginfod reaches analyzer/dlopen.c's.
$(BUILD)/convoy: $(ANALYZER_OBJS)
	$(CC) $(ANALYZER_CFLAGS) $(ANALYZER_OBJS) -o $@ -Wl,--export-dynamic-symbol=dlopen $(ANALYZER_LIBS)

# --- components -------------------------------------------------------------
include demo-workloads/workpool.mk
include demo-workloads/demos.mk
include demo-workloads/fileserver/fileserver.mk
include tests/tests.mk
include tests/data/data.mk   # before the tiers whose prerequisites name DATA_PROGS
include tests/primitives/primitives.mk
include tests/stacks/stacks.mk
include tests/scale/scale.mk
include tests/fuzz/fuzz.mk
include tests/bench/bench.mk
include tests/conformance/conformance.mk
include tests/viewer/viewer.mk

# --- test, demo, bench ------------------------------------------------------
# The binaries with the longest runs first: the others fill the lanes
# around them (tests/run).
TESTS_FIRST := $(BUILD)/tests/test_shim $(BUILD)/tests/test_analyzer $(BUILD)/tests/test_viewer
$(TESTS) $(LIVE_TESTS): $(TEST_GIT_STUB)
test: all $(TESTS)
	@tests/run $(filter $(TESTS_FIRST),$(TESTS)) $(filter-out $(TESTS_FIRST),$(TESTS))

# The exhaustive run of a test that make test samples (TEST_DEEP): a fork
# in a signal handler at every instruction of the shim's, not every 4th.
test-deep: all $(BUILD)/tests/test_shim
	@TEST_DEEP=1 TEST_FILTER='trust/a_handler_that_locks_and_forks_*' tests/run $(BUILD)/tests/test_shim

# Bounded: each live test has its own timeout and skips itself when the
# machine is too busy for its sweep to mean anything.
test-live: all $(LIVE_TESTS)
	@tests/run $(LIVE_TESTS)

# The analyzer and the tests that drive it (reading, symbolizing, reporting,
# scale's contract) built with ASan+UBSan in their own tree; any report is
# fatal. Sanitized code runs slower: the tests' time limits are stretched.
ASAN_BUILD    := $(BUILD)/asan
ASAN_FLAGS    := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
ASAN_TESTS    := test_analyzer test_stacks test_scale test_viewer
test-asan:
	@$(MAKE) --no-print-directory BUILD=$(ASAN_BUILD) SANITIZE="$(ASAN_FLAGS)" \
	  $(ASAN_TESTS:%=$(ASAN_BUILD)/tests/%)
	@ASAN_OPTIONS=abort_on_error=1:verify_asan_link_order=0 UBSAN_OPTIONS=print_stacktrace=1 \
	  TEST_TIMEOUT_MULT=$${TEST_TIMEOUT_MULT:-3} tests/run $(ASAN_TESTS:%=$(ASAN_BUILD)/tests/%)

# glibc's NPTL tests are built from Debian's glibc-source (tests/nptl/run),
# which only this tier needs. Bounded: 245 tests took 7 minutes (424 s) on two
# busy CPUs (load 8-16), 9-11 since tst-robust-fork's longer limit, and once
# more than 14 beside other work; the timeout (within CI's 20 minutes for
# the tier) stops a hang from holding CI.
NPTL_DEB_PACKAGES := glibc-source
NPTL_DEP_FILES    := /usr/src/glibc/glibc-*.tar.*
test-nptl: $(BUILD)/libconvoy.so
	@if [ -z "$(wildcard $(NPTL_DEP_FILES))" ]; then \
	  $(MAKE) --no-print-directory deps DEB_PACKAGES="$(NPTL_DEB_PACKAGES)"; fi
	@BUILD=$(BUILD) timeout -k 10 1080 nice tests/nptl/run -j2

# The showcase: seed 000's global queue and the same work with per-worker
# deques and stealing, each swept over 1, 2 and 4 workers by convoy scale,
# each explained; then the two sweeps side by side.
DEMO_DIR := $(BUILD)/demo
demo: all
	@rm -rf $(DEMO_DIR)
	@echo "== Seed 000's global queue: every task taken from one mutex-protected queue"
	@$(BUILD)/convoy scale --threads 1,2,4 --repeat 3 -o $(DEMO_DIR)/global_queue --html $(DEMO_DIR)/global_queue.html -- $(BUILD)/demos/global_queue --workers {threads}
	@echo
	@echo "== The same tasks with per-worker deques and work stealing"
	@$(BUILD)/convoy scale --threads 1,2,4 --repeat 3 -o $(DEMO_DIR)/work_stealing --html $(DEMO_DIR)/work_stealing.html -- $(BUILD)/demos/work_stealing --workers {threads}
	@echo
	@echo "== Side by side"
	@$(BUILD)/convoy diff $(DEMO_DIR)/global_queue $(DEMO_DIR)/work_stealing
	@$(BUILD)/convoy diff --html $(DEMO_DIR)/diff.html $(DEMO_DIR)/global_queue $(DEMO_DIR)/work_stealing
	@echo
	@echo "== In a browser: $(DEMO_DIR)/global_queue.html, $(DEMO_DIR)/work_stealing.html, $(DEMO_DIR)/diff.html"

bench: all bench-shim bench-whatif bench-demos bench-report bench-sampling bench-omp bench-trace bench-peers

# --- install ----------------------------------------------------------------
install: $(BUILD)/libconvoy.so $(BUILD)/convoy
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib/convoy \
	  $(DESTDIR)$(PREFIX)/include $(DESTDIR)$(PREFIX)/share/man/man1
	install -m 755 $(BUILD)/convoy $(DESTDIR)$(PREFIX)/bin/convoy
	install -m 644 $(BUILD)/libconvoy.so $(DESTDIR)$(PREFIX)/lib/convoy/libconvoy.so
	install -m 644 include/convoy.h $(DESTDIR)$(PREFIX)/include/convoy.h
	install -m 644 docs/convoy.1 $(DESTDIR)$(PREFIX)/share/man/man1/convoy.1

clean:
	rm -rf $(BUILD)

# Tests for the shim and the analyzer.
#
#   tests/progs/*.c, *.cc   one small program per behaviour the shim must
#                           count or leave unchanged -> $(BUILD)/tests/progs/NAME
#   tests/progs/lib/*.c     helper libraries -> $(BUILD)/tests/progs/libNAME.so
#   tests/shim/*.c          Criterion tests of libconvoy.so -> $(BUILD)/tests/test_shim
#   tests/analyzer/*.c      Criterion tests of the convoy command -> $(BUILD)/tests/test_analyzer
#   tests/common/           helpers both link (run a program, read its report)
#
# The programs are built like the programs convoy is for: dynamically linked,
# -g -O2 -pthread, nothing convoy-specific (the annotation API header only).

TEST_PROGS_DIR := $(BUILD)/tests/progs
TEST_PROG_CFLAGS := -std=gnu11 $(WARN) -Iinclude -D_GNU_SOURCE -g -O2 -pthread
TEST_PROG_CXXFLAGS := -std=gnu++17 $(WARN) -Iinclude -g -O2 -pthread

TEST_PROG_C   := $(wildcard tests/progs/*.c)
TEST_PROG_CXX := $(wildcard tests/progs/*.cc)
TEST_PROG_LIB := $(wildcard tests/progs/lib/*.c)
TEST_PROG_BINS := $(TEST_PROG_C:tests/progs/%.c=$(TEST_PROGS_DIR)/%) \
                  $(TEST_PROG_CXX:tests/progs/%.cc=$(TEST_PROGS_DIR)/%)
TEST_PROG_LIBS := $(TEST_PROG_LIB:tests/progs/lib/%.c=$(TEST_PROGS_DIR)/lib%.so)
# Stripped, with a build-id and no debug file anywhere: libdw's search for
# one goes as far as debuginfod (tests/analyzer/cli.c).
TEST_PROG_BINS += $(TEST_PROGS_DIR)/exit_status_stripped

$(TEST_PROGS_DIR)/lib%.so: tests/progs/lib/%.c | check-deps
	@mkdir -p $(@D)
	$(CC) $(TEST_PROG_CFLAGS) -fPIC -shared $< -o $@

$(TEST_PROGS_DIR)/%: tests/progs/%.c tests/progs/progs.h include/convoy.h | check-deps
	@mkdir -p $(@D)
	$(CC) $(TEST_PROG_CFLAGS) $< -o $@

$(TEST_PROGS_DIR)/%: tests/progs/%.cc | check-deps
	@mkdir -p $(@D)
	$(CXX) $(TEST_PROG_CXXFLAGS) $< -o $@

$(TEST_PROGS_DIR)/exit_status_stripped: $(TEST_PROGS_DIR)/exit_status
	strip --strip-all -o $@ $<

# Code without frame pointers, as Debian builds its programs: only the
# launcher's unwind from call-frame information names their call sites.
$(TEST_PROGS_DIR)/offcpu_nofp $(TEST_PROGS_DIR)/serial_nofp $(TEST_PROGS_DIR)/offcpu_dlopen \
$(TEST_PROGS_DIR)/libblockread.so: TEST_PROG_CFLAGS += -fomit-frame-pointer

# clang's AddressSanitizer: its runtime in the executable, whose
# interceptors come before the shim's functions and glibc's.
$(TEST_PROGS_DIR)/clang_asan: tests/progs/clang_asan.c tests/progs/progs.h | check-deps
	@mkdir -p $(@D)
	clang -std=gnu11 -D_GNU_SOURCE -Iinclude -g -O1 -pthread -fsanitize=address $< -o $@

# A clock_gettime of the program's own, which libraries bind to.
$(TEST_PROGS_DIR)/clock_locked: TEST_PROG_CFLAGS += -rdynamic

# GCC OpenMP (libgomp): preload/gomp.c's interposers.
$(TEST_PROGS_DIR)/count_omp $(TEST_PROGS_DIR)/omp_lock_wait $(TEST_PROGS_DIR)/omp_lock_alone \
$(TEST_PROGS_DIR)/libompplugin.so $(TEST_PROGS_DIR)/libompctor.so $(TEST_PROGS_DIR)/libompctorthread.so: \
  TEST_PROG_CFLAGS += -fopenmp
$(TEST_PROGS_DIR)/count_omp $(TEST_PROGS_DIR)/libompplugin.so $(TEST_PROGS_DIR)/libompplugin_copy.so: \
  tests/progs/omp_counts.h

# A copy of libgomp under a soname of its own, as Python wheels ship one
# (the name, of the same length, replaced in the file), and ompplugin.c
# built against it: omp_plugin opens both plugins, each with its libgomp.
$(TEST_PROGS_DIR)/libgomq.so.1: | check-deps
	@mkdir -p $(@D)
	sed 's/libgomp\.so\.1/libgomq.so.1/g' "$$($(CC) -print-file-name=libgomp.so.1)" >$@
$(TEST_PROGS_DIR)/libompplugin_copy.so: tests/progs/lib/ompplugin.c $(TEST_PROGS_DIR)/libgomq.so.1
	$(CC) $(TEST_PROG_CFLAGS) -fopenmp -fPIC -c $< -o $@.o
	$(CC) -shared $@.o -o $@ -L$(TEST_PROGS_DIR) -l:libgomq.so.1 -Wl,-rpath,$(abspath $(TEST_PROGS_DIR))
TEST_PROG_LIBS += $(TEST_PROGS_DIR)/libompplugin_copy.so

# ompplugin.c built with clang against LLVM's libomp, for count_omp, whose
# libgomp is in the global scope: the plugin's omp_set_lock@VERSION is
# libomp's; and ompold.c's OMP_1.0 nest-lock references, against libgomp.
$(TEST_PROGS_DIR)/libompclang.so: tests/progs/lib/ompplugin.c tests/progs/omp_counts.h | check-deps
	@mkdir -p $(@D)
	clang -std=gnu11 -Iinclude -D_GNU_SOURCE -g -O2 -fopenmp -fPIC -shared $< -o $@
TEST_PROG_LIBS += $(TEST_PROGS_DIR)/libompclang.so
$(TEST_PROGS_DIR)/libompold.so: tests/progs/lib/ompold.c | check-deps
	@mkdir -p $(@D)
	$(CC) $(TEST_PROG_CFLAGS) -fPIC -shared $< -o $@ -lgomp

# OpenMP in a library linked without libgomp, through the plugin that
# loads it; and a library loaded below the address it is linked at.
$(TEST_PROGS_DIR)/libompnolink.so: tests/progs/lib/ompnolink.c | check-deps
	@mkdir -p $(@D)
	$(CC) $(TEST_PROG_CFLAGS) -fopenmp -fPIC -c $< -o $@.o
	$(CC) -shared $@.o -o $@
$(TEST_PROGS_DIR)/libompnolinkuser.so: tests/progs/lib/ompnolinkuser.c $(TEST_PROGS_DIR)/libompnolink.so | check-deps
	$(CC) $(TEST_PROG_CFLAGS) -fPIC -shared $< -o $@ -L$(TEST_PROGS_DIR) -lompnolink -Wl,--no-as-needed -lgomp \
	  -Wl,-rpath,$(abspath $(TEST_PROGS_DIR))
$(TEST_PROGS_DIR)/libompnestnolink.so: tests/progs/lib/ompnestnolink.c | check-deps
	@mkdir -p $(@D)
	$(CC) $(TEST_PROG_CFLAGS) -fopenmp -fPIC -c $< -o $@.o
	$(CC) -shared $@.o -o $@
# Not position-independent, a GNU hash table only, exporting nothing.
$(TEST_PROGS_DIR)/omp_old_nopie: tests/progs/omp_old_nopie.c tests/progs/lib/ompold.c | check-deps
	@mkdir -p $(@D)
	$(CC) $(TEST_PROG_CFLAGS) -no-pie -fuse-ld=bfd -Wl,--hash-style=gnu $< -o $@ -lgomp
$(TEST_PROGS_DIR)/libomphigh.so $(TEST_PROGS_DIR)/libomphighfirst.so: TEST_PROG_CFLAGS += -Wl,-Ttext-segment=0x7ffff0000000
$(TEST_PROGS_DIR)/libomphigh.so: TEST_PROG_CFLAGS += -fopenmp

# Linked against libctorlock.so, whose constructor locks and starts a thread.
$(TEST_PROGS_DIR)/ctor_main: tests/progs/ctor_main.c tests/progs/progs.h $(TEST_PROGS_DIR)/libctorlock.so | check-deps
	@mkdir -p $(@D)
	$(CC) $(TEST_PROG_CFLAGS) $< -o $@ -L$(TEST_PROGS_DIR) -lctorlock \
	  -Wl,-rpath,$(abspath $(TEST_PROGS_DIR))

# Linked against libdtorsay.so, whose destructor runs after the shim's.
$(TEST_PROGS_DIR)/dtor_order: tests/progs/dtor_order.c tests/progs/progs.h $(TEST_PROGS_DIR)/libdtorsay.so | check-deps
	@mkdir -p $(@D)
	$(CC) $(TEST_PROG_CFLAGS) $< -o $@ -L$(TEST_PROGS_DIR) -ldtorsay \
	  -Wl,-rpath,$(abspath $(TEST_PROGS_DIR))

# Linked against libforkrequest.so, whose fork handler runs inside the shim's.
$(TEST_PROGS_DIR)/snapshot_fork: tests/progs/snapshot_fork.c tests/progs/progs.h $(TEST_PROGS_DIR)/libforkrequest.so | check-deps
	@mkdir -p $(@D)
	$(CC) $(TEST_PROG_CFLAGS) $< -o $@ -L$(TEST_PROGS_DIR) -lforkrequest \
	  -Wl,-rpath,$(abspath $(TEST_PROGS_DIR))

# Linked against libforkwait.so, whose fork handler runs inside the shim's.
$(TEST_PROGS_DIR)/fork_handler_signals: tests/progs/fork_handler_signals.c tests/progs/progs.h $(TEST_PROGS_DIR)/libforkwait.so | check-deps
	@mkdir -p $(@D)
	$(CC) $(TEST_PROG_CFLAGS) $< -o $@ -L$(TEST_PROGS_DIR) -lforkwait \
	  -Wl,-rpath,$(abspath $(TEST_PROGS_DIR))

# Linked against libjumpalarm.so, whose constructor installs a handler before the shim starts.
$(TEST_PROGS_DIR)/jump_before_shim: tests/progs/jump_before_shim.c tests/progs/progs.h $(TEST_PROGS_DIR)/libjumpalarm.so | check-deps
	@mkdir -p $(@D)
	$(CC) $(TEST_PROG_CFLAGS) $< -o $@ -L$(TEST_PROGS_DIR) -ljumpalarm \
	  -Wl,-rpath,$(abspath $(TEST_PROGS_DIR))

# White-box: the shim's mutex cache (preload/shim.h).
$(TEST_PROGS_DIR)/order_memo: tests/progs/order_memo.c tests/progs/progs.h include/convoy.h preload/shim.h | check-deps
	@mkdir -p $(@D)
	$(CC) $(TEST_PROG_CFLAGS) $< -o $@

# Tracers of the shim (tests/progs/shimtrace.h).
$(TEST_PROGS_DIR)/signal_every_step: tests/progs/shimtrace.h
$(TEST_PROGS_DIR)/exit_on_carved_altstack: tests/progs/shimtrace.h

# White-box: the shim's mutex cache (preload/shim.h); a tracer.
$(TEST_PROGS_DIR)/order_memo_signal: tests/progs/order_memo_signal.c tests/progs/progs.h include/convoy.h \
                                     preload/shim.h tests/progs/shimtrace.h | check-deps
	@mkdir -p $(@D)
	$(CC) $(TEST_PROG_CFLAGS) $< -o $@ -lelf

# White-box: the shim's rwlock cache (preload/shim.h); a tracer.
$(TEST_PROGS_DIR)/partner_back_home: tests/progs/partner_back_home.c preload/shim.h tests/progs/shimtrace.h | check-deps
	@mkdir -p $(@D)
	$(CC) $(TEST_PROG_CFLAGS) $< -o $@ -lelf

# White-box: the shim's layout (preload/shim.h) and its symbol table (libelf);
# Capstone for the width of a write where page protection watches.
$(TEST_PROGS_DIR)/fastpath_writes: tests/progs/fastpath_writes.c preload/shim.h tests/progs/shimtrace.h | check-deps
	@mkdir -p $(@D)
	$(CC) $(TEST_PROG_CFLAGS) $< -o $@ -lelf -ldl -lcapstone

# The shim's calls against its call-frame information (libdw, libelf,
# Capstone).
$(TEST_PROGS_DIR)/call_frames: tests/progs/call_frames.c | check-deps
	@mkdir -p $(@D)
	$(CC) $(TEST_PROG_CFLAGS) $< -o $@ -ldw -lelf -lcapstone

# --- Criterion binaries ------------------------------------------------------
TEST_UTIL_CFLAGS := $(TEST_CFLAGS) -Itests/common -DBUILD_DIR='"$(abspath $(BUILD))"'

TEST_COMMON_OBJS := $(BUILD)/obj/tests/common/testutil.o
TEST_SHIM_OBJS := $(patsubst tests/%.c,$(BUILD)/obj/tests/%.o,$(wildcard tests/shim/*.c))
TEST_ANALYZER_OBJS := $(patsubst tests/%.c,$(BUILD)/obj/tests/%.o,$(wildcard tests/analyzer/*.c))

$(TEST_COMMON_OBJS) $(TEST_SHIM_OBJS) $(TEST_ANALYZER_OBJS): $(BUILD)/obj/tests/%.o: tests/%.c \
		tests/common/testutil.h include/convoy/profile.h | check-deps
	@mkdir -p $(@D)
	$(CC) $(TEST_UTIL_CFLAGS) -c $< -o $@
# Stands in for libgit2 in every Criterion binary (the file says why).
$(TEST_GIT_STUB): tests/common/libgit2_stub.c | check-deps
	@mkdir -p $(@D)
	$(CC) $(BASE_CFLAGS) $(CFLAGS) -fPIC -shared -Wl,-soname,$(@F) $< -o $@
	@readelf -d "$$($(CC) -print-file-name=libcriterion.so)" 2>/dev/null | grep -q 'NEEDED.*\[$(@F)\]' || \
	  echo "note: libcriterion.so does not need $(@F): the libgit2 it needs is loaded in every test" \
	       "(tests/common/libgit2_stub.c)" >&2

TEST_RUNTIME_DEPS := $(BUILD)/libconvoy.so $(BUILD)/convoy $(TEST_PROG_BINS) $(TEST_PROG_LIBS)

$(BUILD)/tests/test_shim: $(TEST_SHIM_OBJS) $(TEST_COMMON_OBJS) $(TEST_RUNTIME_DEPS)
	$(CC) $(TEST_CFLAGS) $(TEST_SHIM_OBJS) $(TEST_COMMON_OBJS) -o $@ $(TEST_LIBS) -ljson-c -lz

# The analyzer's symbol index is tested against libdw itself (tests/analyzer/symindex.c).
TEST_ANALYZER_UNITS := $(BUILD)/obj/analyzer/symindex.o
$(BUILD)/tests/test_analyzer: $(TEST_ANALYZER_OBJS) $(TEST_ANALYZER_UNITS) $(TEST_COMMON_OBJS) $(TEST_RUNTIME_DEPS)
	$(CC) $(TEST_CFLAGS) $(TEST_ANALYZER_OBJS) $(TEST_ANALYZER_UNITS) $(TEST_COMMON_OBJS) -o $@ $(TEST_LIBS) \
		-ljson-c -lz -ldw -lelf

TESTS += $(BUILD)/tests/test_shim $(BUILD)/tests/test_analyzer

.PHONY: test-progs
test-progs: $(TEST_PROG_BINS) $(TEST_PROG_LIBS)

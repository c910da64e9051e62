# Call stacks and names (issue 5): programs with known stacks, built the ways
# symbolization must handle, and the Criterion tests that profile them.
#
#   $(STK_PROGS)/deep              -O0: the golden deep stack
#   $(STK_PROGS)/site-{pie,nopie}  one wait at a known line, PIE and not
#   $(STK_PROGS)/site-dynsym       -rdynamic, then stripped: .dynsym names only
#   $(STK_PROGS)/site-stripped     stripped bare: module+offset only
#   $(STK_PROGS)/site-debuglink    stripped, debug info in site-debuglink.debug beside it
#   $(STK_PROGS)/site-buildid      stripped, debug info under debugroot/.build-id/
#   $(STK_PROGS)/site-minidebug    stripped, its symbol table xz-compressed in .gnu_debugdata
#   $(STK_PROGS)/runtime_state     -rdynamic, stripped: a lock inside an exported _PyRuntime
#   $(STK_PROGS)/label_area        -rdynamic, stripped: a lock 4 KiB past an exported label without a size
#   $(STK_PROGS)/dlmain + libdl_{one,two}.so   contention in dlopen'd, dlclose'd libraries
#   $(STK_PROGS)/replug + libreplug_v{1,2}.so  one path, one address, two builds in turn
#   $(STK_PROGS)/lambda            C++ -O2: std::mutex in a lambda
#   $(STK_PROGS)/{members,heap,hammer,reuse,sigstack_gone,stack_switch,uncontended,nocfi,forker,init_many,inline_chain,interrupted,reinit}
#   $(STK_PROGS)/nested_fork + libforkinside.so   a fork inside another fork's steps
#   $(BUILD)/tests/test_stacks     the tests (tests/stacks/test_stacks.c)

STK_PROGS := $(BUILD)/tests/stacks/progs
STK_HDR   := tests/stacks/progs/stacks_progs.h
STK_CFLAGS   := -std=gnu11 $(WARN) -D_GNU_SOURCE -g -O1 -pthread
STK_CXXFLAGS := -std=gnu++17 $(WARN) -g -O2 -pthread -Itests/stacks/progs

STK_BINS := $(addprefix $(STK_PROGS)/,deep site-pie site-nopie site-dynsym site-stripped \
	site-debuglink site-buildid site-minidebug runtime_state label_area dlmain libdl_one.so libdl_two.so replug libreplug_v1.so libreplug_v2.so lambda members heap hammer reuse sigstack_gone stack_switch \
	uncontended nocfi forker nested_fork libforkinside.so init_many inline_chain interrupted reinit)

$(STK_PROGS)/deep: tests/stacks/progs/deep.c $(STK_HDR) | check-deps
	@mkdir -p $(@D)
	$(CC) $(STK_CFLAGS) -O0 $< -o $@

$(STK_PROGS)/site-pie: tests/stacks/progs/site.c $(STK_HDR) | check-deps
	@mkdir -p $(@D)
	$(CC) $(STK_CFLAGS) -fPIE -pie $< -o $@

$(STK_PROGS)/site-nopie: tests/stacks/progs/site.c $(STK_HDR) | check-deps
	@mkdir -p $(@D)
	$(CC) $(STK_CFLAGS) -fno-pie -no-pie $< -o $@

$(STK_PROGS)/site-dynsym: tests/stacks/progs/site.c $(STK_HDR) | check-deps
	@mkdir -p $(@D)
	$(CC) $(STK_CFLAGS) -rdynamic $< -o $@
	strip --strip-all $@

$(STK_PROGS)/site-stripped: tests/stacks/progs/site.c $(STK_HDR) | check-deps
	@mkdir -p $(@D)
	$(CC) $(STK_CFLAGS) $< -o $@
	strip --strip-all $@

# Debug info found through .gnu_debuglink, in the same directory.
$(STK_PROGS)/site-debuglink: tests/stacks/progs/site.c $(STK_HDR) | check-deps
	@mkdir -p $(@D)
	$(CC) $(STK_CFLAGS) $< -o $@
	objcopy --only-keep-debug $@ $@.debug
	strip --strip-all $@
	objcopy --add-gnu-debuglink=$@.debug $@

# Debug info found by build-id, as under /usr/lib/debug/.build-id/xx/rest.debug
# (the test points CONVOY_DEBUGINFO_PATH at debugroot).
$(STK_PROGS)/site-buildid: tests/stacks/progs/site.c $(STK_HDR) | check-deps
	@mkdir -p $(@D)
	$(CC) $(STK_CFLAGS) -Wl,--build-id=sha1 $< -o $@
	id=$$(readelf -n $@ | sed -n 's/.*Build ID: *//p'); \
	  dir=$(STK_PROGS)/debugroot/.build-id/$$(echo $$id | cut -c1-2); \
	  mkdir -p $$dir && objcopy --only-keep-debug $@ $$dir/$$(echo $$id | cut -c3-).debug
	strip --strip-all $@

$(STK_PROGS)/runtime_state: tests/stacks/progs/runtime_state.c $(STK_HDR) | check-deps
	@mkdir -p $(@D)
	$(CC) $(STK_CFLAGS) -rdynamic $< -o $@
	strip --strip-all $@

$(STK_PROGS)/label_area: tests/stacks/progs/label_area.c $(STK_HDR) | check-deps
	@mkdir -p $(@D)
	$(CC) $(STK_CFLAGS) -rdynamic $< -o $@
	strip --strip-all $@

# MiniDebugInfo as Fedora and others ship it: the debug info dropped, the
# symbol table kept, xz-compressed into a .gnu_debugdata section of the
# stripped binary (libdwfl reads it when elfutils was built with lzma).
$(STK_PROGS)/site-minidebug: tests/stacks/progs/site.c $(STK_HDR) | check-deps
	@mkdir -p $(@D)
	$(CC) $(STK_CFLAGS) $< -o $@
	objcopy --only-keep-debug $@ $@.mini
	objcopy --strip-debug $@.mini
	rm -f $@.mini.xz && xz $@.mini
	strip --strip-all $@
	objcopy --add-section .gnu_debugdata=$@.mini.xz $@
	rm -f $@.mini.xz

$(STK_PROGS)/lib%.so: tests/stacks/progs/%.c | check-deps
	@mkdir -p $(@D)
	$(CC) $(STK_CFLAGS) -fPIC -shared $< -o $@

$(STK_PROGS)/libreplug_%.so: tests/stacks/progs/replug_%.S | check-deps
	@mkdir -p $(@D)
	$(CC) -shared $< -o $@

$(STK_PROGS)/replug: tests/stacks/progs/replug.c | check-deps
	@mkdir -p $(@D)
	$(CC) $(STK_CFLAGS) $< -o $@ -ldl

$(STK_PROGS)/dlmain: tests/stacks/progs/dlmain.c $(STK_HDR) | check-deps
	@mkdir -p $(@D)
	$(CC) $(STK_CFLAGS) $< -o $@ -ldl

# Linked against libforkinside.so, whose prepare handler runs inside the shim's.
$(STK_PROGS)/nested_fork: tests/stacks/progs/nested_fork.c $(STK_HDR) $(STK_PROGS)/libforkinside.so | check-deps
	@mkdir -p $(@D)
	$(CC) $(STK_CFLAGS) $< -o $@ -L$(STK_PROGS) -lforkinside -Wl,-rpath,$(abspath $(STK_PROGS))

$(STK_PROGS)/lambda: tests/stacks/progs/lambda.cc $(STK_HDR) | check-deps
	@mkdir -p $(@D)
	$(CXX) $(STK_CXXFLAGS) $< -o $@

$(STK_PROGS)/%: tests/stacks/progs/%.c $(STK_HDR) | check-deps
	@mkdir -p $(@D)
	$(CC) $(STK_CFLAGS) $< -o $@

$(BUILD)/obj/tests/stacks/%.o: tests/stacks/%.c tests/common/testutil.h include/convoy/profile.h | check-deps
	@mkdir -p $(@D)
	$(CC) $(TEST_CFLAGS) -Itests/common -DBUILD_DIR='"$(abspath $(BUILD))"' \
	  -DSRC_DIR='"$(abspath .)"' -c $< -o $@

$(BUILD)/tests/test_stacks: $(BUILD)/obj/tests/stacks/test_stacks.o $(BUILD)/obj/tests/common/testutil.o \
		$(STK_BINS) $(BUILD)/libconvoy.so $(BUILD)/convoy
	$(CC) $(TEST_CFLAGS) $(BUILD)/obj/tests/stacks/test_stacks.o $(BUILD)/obj/tests/common/testutil.o \
	  -o $@ $(TEST_LIBS) -ljson-c -lz

TESTS += $(BUILD)/tests/test_stacks

# --- make bench-stacks: what stacks cost (never part of make test) ----------
$(BUILD)/bench/stackcost: tests/stacks/bench/stackcost.c | check-deps
	@mkdir -p $(@D)
	$(CC) $(BASE_CFLAGS) $(CFLAGS) -pthread $< -o $@

.PHONY: bench-stacks
bench-stacks: $(BUILD)/libconvoy.so $(BUILD)/bench/lockpair $(BUILD)/bench/stackcost
	@tests/stacks/bench/stacks.sh $(BUILD)

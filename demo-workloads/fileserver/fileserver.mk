# fileserver: seed 004's HTTP/1.1 file server (docs/fileserver.md).
#
#   $(BUILD)/demos/fileserver   the server (and, with --client, its load generator)
#   $(BUILD)/tests/test_fileserver   Criterion tests over loopback only
#   make bench-server           wrk against every scheduler -> docs/fileserver/
#   make scale-server           convoy scale of rr and rs, then convoy diff

FILESERVER_SRCS := $(wildcard demo-workloads/fileserver/*.c)
FILESERVER_OBJS := $(FILESERVER_SRCS:%.c=$(BUILD)/obj/%.o)
FILESERVER_BIN  := $(BUILD)/demos/fileserver

$(BUILD)/obj/demo-workloads/fileserver/%.o: demo-workloads/fileserver/%.c \
    demo-workloads/fileserver/fileserver.h $(WORKPOOL_HDRS) | check-deps
	@mkdir -p $(@D)
	$(CC) $(DEMO_CFLAGS) -c $< -o $@

$(FILESERVER_BIN): $(FILESERVER_OBJS) $(WORKPOOL_LIB)
	@mkdir -p $(@D)
	$(CC) $(DEMO_CFLAGS) $(FILESERVER_OBJS) -o $@ $(DEMO_LIBS) -ljson-c

demos: $(FILESERVER_BIN)

# --- tests -------------------------------------------------------------------
FILESERVER_TEST_BIN := $(BUILD)/tests/test_fileserver
TESTS += $(FILESERVER_TEST_BIN)

$(FILESERVER_TEST_BIN): $(wildcard tests/fileserver/*.c) $(wildcard tests/fileserver/*.h) \
    $(FILESERVER_BIN) | check-deps
	@mkdir -p $(@D)
	$(CC) $(TEST_CFLAGS) -DFILESERVER_BIN='"$(abspath $(FILESERVER_BIN))"' \
	  $(filter %.c,$^) -o $@ $(TEST_LIBS)

# --- bench: wrk, every scheduler at 1, 2, 4, 8 workers ------------------------
.PHONY: bench-server
bench-server: $(FILESERVER_BIN)
	demo-workloads/fileserver/bench_server.sh $(FILESERVER_BIN) docs/fileserver

# --- under convoy: round robin vs random stealing, explained -------------------
.PHONY: scale-server
scale-server: $(FILESERVER_BIN) $(BUILD)/convoy $(BUILD)/libconvoy.so
	demo-workloads/fileserver/scale_server.sh $(BUILD) $(BUILD)/scale-server

# Browser tests of the HTML page, and the Perfetto export (issue 15).
#
# check.mjs drives Debian's chromium with playwright-core, installed from
# tests/viewer/package-lock.json by `npm ci` (make viewer-deps, part of make deps).
# Without chromium or playwright-core the browser tests skip and say why.
#
#   make test-viewer         these tests alone
#   make viewer-screenshot   docs/viewer.png: the page of make demo's first sweep,
#                            taken by check.mjs's sections check

VIEWER_NODE_MODULES := tests/viewer/node_modules/playwright-core/package.json
TEST_VIEWER_OBJS := $(BUILD)/obj/tests/viewer/test_viewer.o

$(TEST_VIEWER_OBJS): $(BUILD)/obj/tests/%.o: tests/%.c tests/common/testutil.h include/convoy/profile.h | check-deps
	@mkdir -p $(@D)
	$(CC) $(TEST_UTIL_CFLAGS) -DSOURCE_DIR='"$(abspath .)"' -c $< -o $@

$(BUILD)/tests/test_viewer: $(TEST_VIEWER_OBJS) $(TEST_COMMON_OBJS) $(TEST_RUNTIME_DEPS) $(DEMOS:%=$(BUILD)/demos/%) \
		| $(VIEWER_NODE_MODULES)
	$(CC) $(TEST_CFLAGS) $(TEST_VIEWER_OBJS) $(TEST_COMMON_OBJS) -o $@ $(TEST_LIBS) -ljson-c -lz
	echo 2 > $@.jobs   # two browser checks at a time in the one chromium (test_viewer.c)

TESTS += $(BUILD)/tests/test_viewer

# Without the npm registry the build goes on and the browser tests skip, saying why.
$(VIEWER_NODE_MODULES): tests/viewer/package.json tests/viewer/package-lock.json
	@cd tests/viewer && npm ci --no-audit --no-fund --loglevel=error && touch node_modules/playwright-core/package.json \
	  || echo "convoy: npm ci in tests/viewer failed; the browser tests will be skipped"

.PHONY: viewer-deps test-viewer viewer-screenshot
viewer-deps: $(VIEWER_NODE_MODULES)

test-viewer: all $(BUILD)/tests/test_viewer
	@tests/run $(BUILD)/tests/test_viewer

viewer-screenshot: demo viewer-deps
	node tests/viewer/check.mjs sections $(DEMO_DIR)/global_queue.html --screenshot docs/viewer.png

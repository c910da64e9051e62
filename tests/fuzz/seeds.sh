#!/usr/bin/env bash
# Makes the fuzzer's seed corpus from real profiles: small programs of the
# test suite run under the shim (threads, locks, condvars, stacks, dlopen'd
# and dlclose'd libraries, fork), one profile each.
# Usage: tests/fuzz/seeds.sh BUILD_DIR CORPUS_DIR
set -eu
build=$1 corpus=$2
rm -rf "$corpus.tmp"
mkdir -p "$corpus.tmp"
run() { CONVOY_DIR=$corpus.tmp CONVOY_QUIET=1 LD_PRELOAD=$build/libconvoy.so "$@" >/dev/null 2>&1 || true; }
run "$build/tests/progs/count_two_threads"
run "$build/tests/progs/count_cond"
CONVOY_TRACE=1 run "$build/tests/progs/count_cond"   # trace records (docs/profile-format.md "Trace")
run "$build/tests/progs/count_trylock"
run "$build/tests/progs/annotate"
run "$build/tests/progs/ident_reinit"
run "$build/tests/progs/exit_fork"
run "$build/tests/stacks/progs/deep"
run "$build/tests/stacks/progs/dlmain" "$build/tests/stacks/progs"
n=$(find "$corpus.tmp" -name '*.convoy' | wc -l)
if [ "$n" -lt 4 ]; then
	echo "tests/fuzz/seeds.sh: only $n profiles written" >&2
	exit 1
fi
rm -rf "$corpus"
mv "$corpus.tmp" "$corpus"

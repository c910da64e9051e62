#!/usr/bin/env bash
# What trace mode costs (docs/viewer.md, "Trace mode"): the shim with trace
# off and on, side by side, interleaved round by round so a noisy neighbour
# hits both alike. Medians and the ratio on/off.
#   lockpair uncontended / contended: ns per lock+unlock pair (the fast path
#     must not change; contended pairs take the slow path trace mode records)
#   pingpong: whole-process wall time of a park/wake-bound demo, every hop a
#     condvar wait and wake (the path trace mode records most)
# Usage: tests/bench/trace.sh BUILD_DIR [ROUNDS]
set -euo pipefail
build=${1:-build} rounds=${2:-11}
pair=$build/bench/lockpair pingpong=$build/demos/pingpong
shim=$(realpath "$build/libconvoy.so")
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
export CONVOY_QUIET=1 CONVOY_DIR=$tmp

median() { sort -g | awk '{v[NR]=$1} END {print (NR%2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }
wall_ms() { local t0 t1; t0=$(date +%s%N); "$@" >/dev/null; t1=$(date +%s%N); echo $(((t1 - t0) / 1000)) | awk '{printf "%.1f\n", $1 / 1000}'; }

run_case() {   # name unit command...
	local name=$1 unit=$2; shift 2
	: >"$tmp/off"; : >"$tmp/on"
	for _ in $(seq "$rounds"); do
		LD_PRELOAD=$shim "$@" >>"$tmp/off"
		CONVOY_TRACE=1 LD_PRELOAD=$shim "$@" >>"$tmp/on"
		rm -f "$tmp"/*.convoy
	done
	local a b
	a=$(median <"$tmp/off"); b=$(median <"$tmp/on")
	printf '%-22s %12s %12s %8s  %s\n' "$name" "$a" "$b" "$(awk -v x="$b" -v y="$a" 'BEGIN{printf "%.2fx", x/y}')" "$unit"
}

echo "trace mode off and on; median of $rounds interleaved rounds"
printf '%-22s %12s %12s %8s\n' case "trace off" "trace on" ratio
run_case uncontended "ns per pair" "$pair" uncontended 20000000
run_case contended "ns per pair" "$pair" contended 2000000
run_case "pingpong 2 workers" "ms wall" wall_ms "$pingpong" --workers 2 --idle-spin 0 --iterations 50000

#!/usr/bin/env bash
# What call stacks cost (make bench-stacks; figures in docs/performance.md).
# Usage: tests/stacks/bench/stacks.sh BUILD_DIR [ROUNDS]
#
#  1. the uncontended lock+unlock pair: native, shim with CONVOY_STACKS=0,
#     shim with stacks on (the default): the fast path never unwinds, so the
#     last two must agree
#  2. one capture, timed inside the shim (CONVOY_STACK_STATS=1), at three
#     stack depths: module-map check + unwind + stack table
#  3. certainly-contended waits (a hand-off between two threads): ns per wait
#     and captures per wait, stacks off / default sampling / every wait kept
set -euo pipefail
build=${1:-build} rounds=${2:-7}
shim=$(realpath "$build/libconvoy.so")
pair=$build/bench/lockpair cost=$build/bench/stackcost
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
export CONVOY_QUIET=1 CONVOY_DIR=$tmp   # CONVOY_QUIET=0 where the statistics line is read

median() { sort -g | awk '{v[NR]=$1} END {print (NR%2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }
clean() { rm -f "$tmp"/*.convoy; }

echo "1. uncontended lock+unlock pair, ns (median of $rounds interleaved rounds)"
: >"$tmp/n"; : >"$tmp/off"; : >"$tmp/on"
for _ in $(seq "$rounds"); do
	"$pair" uncontended 20000000 >>"$tmp/n"
	CONVOY_STACKS=0 LD_PRELOAD=$shim "$pair" uncontended 20000000 >>"$tmp/off"
	LD_PRELOAD=$shim "$pair" uncontended 20000000 >>"$tmp/on"
	clean
done
printf '   native %s   shim, stacks off %s   shim, stacks on %s\n' "$(median <"$tmp/n")" \
	"$(median <"$tmp/off")" "$(median <"$tmp/on")"

echo "2. one capture, ns (CONVOY_STACK_STATS; median of $rounds runs of 100,000 first uses)"
for depth in 0 10 40; do
	: >"$tmp/t"; : >"$tmp/m"; : >"$tmp/u"; : >"$tmp/i"
	for _ in $(seq "$rounds"); do
		line=$(CONVOY_QUIET=0 CONVOY_STACK_STATS=1 LD_PRELOAD=$shim "$cost" firstuse 20000 "$depth" 2>&1 >/dev/null |
			grep 'convoy: stacks:')
		sed -E 's/.*per capture ([0-9]+) ns.*/\1/' <<<"$line" >>"$tmp/t"
		sed -E 's/.*check ([0-9]+),.*/\1/' <<<"$line" >>"$tmp/m"
		sed -E 's/.*unwind ([0-9]+) .*/\1/' <<<"$line" >>"$tmp/u"
		sed -E 's/.*table ([0-9]+).*/\1/' <<<"$line" >>"$tmp/i"
		frames=$(sed -E 's/.*\(([0-9.]+) frames\).*/\1/' <<<"$line")
		clean
	done
	printf '   %5s frames: %5s ns = module-map check %s + unwind %s + table %s\n' "$frames" \
		"$(median <"$tmp/t")" "$(median <"$tmp/m")" "$(median <"$tmp/u")" "$(median <"$tmp/i")"
done

echo "3. contended hand-off, ns per wait and captures (median of $rounds runs of 5 x 20,000 waits)"
for mode in native off default every; do
	: >"$tmp/w"; : >"$tmp/c"
	for _ in $(seq "$rounds"); do
		case $mode in
		native)  "$cost" handoff 20000 >>"$tmp/w"; echo 0 >>"$tmp/c" ;;
		off)     CONVOY_STACKS=0 LD_PRELOAD=$shim "$cost" handoff 20000 >>"$tmp/w"; echo 0 >>"$tmp/c" ;;
		default) CONVOY_QUIET=0 CONVOY_STACK_STATS=1 LD_PRELOAD=$shim "$cost" handoff 20000 2>"$tmp/e" >>"$tmp/w"
			 sed -nE 's/.*stacks: ([0-9]+) captures.*/\1/p' "$tmp/e" >>"$tmp/c" ;;
		every)   CONVOY_QUIET=0 CONVOY_STACK_PERIOD=1 CONVOY_STACK_STATS=1 LD_PRELOAD=$shim "$cost" handoff 20000 \
				 2>"$tmp/e" >>"$tmp/w"
			 sed -nE 's/.*stacks: ([0-9]+) captures.*/\1/p' "$tmp/e" >>"$tmp/c" ;;
		esac
		clean
	done
	printf '   %-8s %9s ns per wait, %7s captures for 100,000 waits\n' "$mode" "$(median <"$tmp/w")" "$(median <"$tmp/c")"
done

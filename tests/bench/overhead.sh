#!/usr/bin/env bash
# The shim's overhead, measured side by side in one run: native, the shim, and
# the shim built trylock-first, interleaved round by round so that a noisy
# neighbour hits all three alike. Prints medians and ratios to native.
# Usage: [LOCKPAIR_N=pairs] [LOCKPAIR_CASES="case ..."] tests/bench/overhead.sh BUILD_DIR [ROUNDS]
set -euo pipefail
build=${1:-build} rounds=${2:-11}
pair=$build/bench/lockpair
shim=$(realpath "$build/libconvoy.so") trylock=$(realpath "$build/bench/libconvoy-trylock.so")
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
export CONVOY_QUIET=1 CONVOY_DIR=$tmp

median() { sort -g | awk '{v[NR]=$1} END {print (NR%2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }

run_case() {   # name iterations
	[[ -z ${LOCKPAIR_CASES:-} || " $LOCKPAIR_CASES " == *" $1 "* ]] || return 0   # LOCKPAIR_CASES: only these
	local name=$1 n=${LOCKPAIR_N:-$2}   # LOCKPAIR_N: the same count for every case (quicker runs),
	[ "$n" -le "$2" ] || n=$2          # but never more than the case's own (syscall and churn are slow)
	: >"$tmp/native" ; : >"$tmp/shim" ; : >"$tmp/trylock"
	for _ in $(seq "$rounds"); do
		"$pair" "$name" "$n" >>"$tmp/native"
		LD_PRELOAD=$shim "$pair" "$name" "$n" >>"$tmp/shim"
		LD_PRELOAD=$trylock "$pair" "$name" "$n" >>"$tmp/trylock"
	done
	local a b c
	a=$(median <"$tmp/native"); b=$(median <"$tmp/shim"); c=$(median <"$tmp/trylock")
	printf '%-12s %10s %10s %8s %14s %8s\n' "$name" "$a" "$b" \
		"$(awk -v x="$b" -v y="$a" 'BEGIN{printf "%.2fx", x/y}')" "$c" \
		"$(awk -v x="$c" -v y="$a" 'BEGIN{printf "%.2fx", x/y}')"
}

echo "ns per lock+unlock pair; median of $rounds interleaved rounds (each the best of 5 loops)"
printf '%-12s %10s %10s %8s %14s %8s\n' case native convoy ratio trylock-first ratio
run_case uncontended 20000000
run_case contended 2000000
run_case nested 10000000
run_case nested-rdlock 10000000
run_case nested-spin 10000000
run_case alternate 10000000
run_case rdlock3 10000000
run_case spin2 10000000
run_case semwait2 10000000
run_case semwait4 10000000
run_case rdlock-same-entry 10000000
run_case nested-rdlock3 10000000
run_case mutex16 10000000
run_case rdlock16 10000000
run_case striped 10000000
run_case striped-contended 2000000
run_case trylock 10000000
run_case mtx 10000000
# The other families (trylock-first changes only mutexes: its column is a
# second sample of the same shim there). docs/performance.md, "Other primitives".
run_case rdlock 10000000
run_case wrlock 10000000
run_case spin 10000000
run_case spin-contended 2000000
run_case semtry 10000000
run_case semwait 10000000
run_case signal 10000000
run_case signal2 10000000
run_case broadcast 10000000
run_case syscall 200000
# Objects made and destroyed (the registry, docs/performance.md "Object churn").
run_case churn 100000
run_case churn-many 100000
run_case churn-late 100000
run_case churn-heap 100000
run_case churn-cond 100000
run_case churn-sig 100000
run_case churn-many-sig 100000

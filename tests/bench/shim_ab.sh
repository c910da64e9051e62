#!/usr/bin/env bash
# Two builds of the shim against native, interleaved round by round (a noisy
# neighbour hits all three alike): the cost of a change to the fast paths.
# Prints medians of ns per lock+unlock pair and the ratios.
# Usage: [LOCKPAIR_N=pairs] [LOCKPAIR_CASES="case ..."] tests/bench/shim_ab.sh BUILD_DIR OTHER_LIBCONVOY_SO [ROUNDS]
set -euo pipefail
build=${1:?build dir} other=$(realpath "${2:?the other libconvoy.so}") rounds=${3:-11}
pair=$build/bench/lockpair
shim=$(realpath "$build/libconvoy.so")
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
export CONVOY_QUIET=1 CONVOY_DIR=$tmp

median() { sort -g | awk '{v[NR]=$1} END {print (NR%2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }

run_case() {   # name iterations
	[[ -z ${LOCKPAIR_CASES:-} || " $LOCKPAIR_CASES " == *" $1 "* ]] || return 0   # LOCKPAIR_CASES: only these
	local name=$1 n=${LOCKPAIR_N:-$2}   # LOCKPAIR_N: the same count for every case (quicker runs),
	[ "$n" -le "$2" ] || n=$2          # but never more than the case's own (churn is slow)
	: >"$tmp/native" ; : >"$tmp/other" ; : >"$tmp/this"
	for _ in $(seq "$rounds"); do
		"$pair" "$name" "$n" >>"$tmp/native"
		LD_PRELOAD=$other "$pair" "$name" "$n" >>"$tmp/other"
		LD_PRELOAD=$shim "$pair" "$name" "$n" >>"$tmp/this"
	done
	local a b c
	a=$(median <"$tmp/native"); b=$(median <"$tmp/other"); c=$(median <"$tmp/this")
	printf '%-12s %8s %8s %7s %8s %7s %9s\n' "$name" "$a" "$b" \
		"$(awk -v x="$b" -v y="$a" 'BEGIN{printf "%.2fx", x/y}')" "$c" \
		"$(awk -v x="$c" -v y="$a" 'BEGIN{printf "%.2fx", x/y}')" \
		"$(awk -v x="$c" -v y="$b" 'BEGIN{printf "%+.1f", x-y}')"
}

echo "ns per lock+unlock pair; median of $rounds interleaved rounds (each the best of 5 loops)"
echo "other: $other"
printf '%-12s %8s %8s %7s %8s %7s %9s\n' case native other ratio this ratio this-other
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
run_case recursive 10000000
run_case recursive2 10000000
run_case errorcheck 10000000
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
# Objects made and destroyed (docs/performance.md, "Object churn").
run_case churn 50000
run_case churn-many 50000
run_case churn-late 50000
run_case churn-heap 50000
run_case churn-cond 50000
run_case churn-sig 50000
run_case churn-many-sig 50000

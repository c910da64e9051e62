#!/bin/bash
# tests/bench/report_cost.sh BUILD [OTHER_CONVOY] — what `convoy report` costs
# on large profiles: 10,000 locks, and 100,000 objects with 10,000 threads
# (tests/data/progs/many_locks). Text and --json, wall seconds and peak
# memory (GNU time), median of 3 runs; with OTHER_CONVOY (an older build)
# both binaries run interleaved, side by side, and the ratio is printed.
set -uo pipefail
BUILD=${1:?usage: report_cost.sh BUILD [OTHER_CONVOY]}
OTHER=${2:-}
TIME=/usr/bin/time
[[ -x $TIME ]] || { echo "report_cost.sh: needs GNU time (apt-get install time)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

record() {   # record NAME ARGS...
	local name=$1
	shift
	mkdir -p "$tmp/$name"
	CONVOY_DIR=$tmp/$name CONVOY_QUIET=1 LD_PRELOAD=$BUILD/libconvoy.so "$BUILD/tests/data/progs/many_locks" "$@"
	ls "$tmp/$name"/*.convoy
}

median() { sort -n | sed -n 2p; }

# measure PROFILE MODE CONVOY... -> "seconds kilobytes" per binary (median
# of 3 each, the binaries interleaved run by run)
measure() {
	local profile=$1 mode=$2 i b
	shift 2
	local n=$#
	local -a s k
	for i in 1 2 3; do
		b=0
		for bin in "$@"; do
			read -r sec kb < <($TIME -f "%e %M" "$bin" report $mode "$profile" 2>&1 >/dev/null | tail -1)
			s[b * 3 + i]=$sec
			k[b * 3 + i]=$kb
			b=$((b + 1))
		done
	done
	for ((b = 0; b < n; b++)); do
		printf '%s %s ' "$(printf '%s\n' "${s[b * 3 + 1]}" "${s[b * 3 + 2]}" "${s[b * 3 + 3]}" | median)" \
			"$(printf '%s\n' "${k[b * 3 + 1]}" "${k[b * 3 + 2]}" "${k[b * 3 + 3]}" | median)"
	done
	echo
}

locks=$(record locks --workers 2 --count 10000)
big=$(record big --workers 1 --count 100000 --threads-total 10000)
printf '%-34s %-6s %10s %10s' profile mode seconds "peak MB"
[[ -n $OTHER ]] && printf ' %10s %10s %8s' "other s" "other MB" "time x"
echo
for p in "10,000 locks:$locks" "100,000 objects, 10,000 threads:$big"; do
	for mode in text --json; do
		arg=$([[ $mode == text ]] && echo "" || echo --json)
		read -r s k os ok < <(measure "${p#*:}" "$arg" "$BUILD/convoy" ${OTHER:+"$OTHER"})
		printf '%-34s %-6s %10s %10d' "${p%%:*}" "$mode" "$s" $((k / 1024))
		[[ -n $OTHER ]] && printf ' %10s %10d %7sx' "$os" $((ok / 1024)) "$(awk -v a="$os" -v b="$s" 'BEGIN { printf "%.1f", a / b }')"
		echo
	done
done

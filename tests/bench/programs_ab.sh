#!/usr/bin/env bash
# Real programs natively, under another build of the shim and under this one,
# interleaved program by program and round by round (a noisy neighbour hits
# all three alike): the cost of a change to the shim on programs nobody here
# wrote. The workloads are peers.sh's: pigz -p 2 and xz -T2 on generated
# text, sort --parallel=2 on 2,000,000 lines, sqlite3 building an index with
# PRAGMA threads=2. Prints medians of wall milliseconds and the ratios.
# Usage: tests/bench/programs_ab.sh BUILD_DIR OTHER_LIBCONVOY_SO [ROUNDS]
set -euo pipefail
export LC_ALL=C   # EPOCHREALTIME with a decimal point
build=${1:?build dir} other=$(realpath "${2:?the other libconvoy.so}") rounds=${3:-15}
shim=$(realpath "$build/libconvoy.so")
for p in pigz xz sort sqlite3; do
	command -v "$p" >/dev/null || { echo "programs_ab: $p is not installed (make bench-peers-deps)" >&2; exit 1; }
done
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
export CONVOY_QUIET=1 CONVOY_DIR=$tmp/profiles
mkdir -p "$CONVOY_DIR"
cd "$tmp"
head -c 4500000 /dev/urandom | base64 >data                       # 6 MB of text
head -c 2097152 data >data.xz-in
awk 'BEGIN{srand(1); for (i = 0; i < 2000000; i++) printf "%08d %s\n", int(rand()*1e8), i}' >lines
sqlite3 base.db "CREATE TABLE t(a, b); WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c
	WHERE x < 1000000) INSERT INTO t SELECT abs(random()) % 1000000, x FROM c;"

names=(pigz xz sort sqlite3)
run() {   # name: one run, its wall time in microseconds on stdout
	local t0 t1
	[ "$1" != sqlite3 ] || cp base.db db
	t0=$EPOCHREALTIME
	case $1 in
	pigz)    LD_PRELOAD=${preload:-} pigz -p 2 -c data ;;
	xz)      LD_PRELOAD=${preload:-} xz -T2 -0 --block-size=512KiB -c data.xz-in ;;
	sort)    LD_PRELOAD=${preload:-} sort --parallel=2 -S 64M lines ;;
	sqlite3) LD_PRELOAD=${preload:-} sqlite3 db "PRAGMA threads=2; CREATE INDEX i ON t(a);" ;;
	esac >/dev/null
	t1=$EPOCHREALTIME
	echo $((${t1/./} - ${t0/./}))
}

median() { sort -g | awk '{v[NR]=$1} END {print (NR%2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }

for _ in $(seq "$rounds"); do
	for n in "${names[@]}"; do
		run "$n" >>"$n.native"
		preload=$other run "$n" >>"$n.other"
		preload=$shim run "$n" >>"$n.this"
		rm -f "$CONVOY_DIR"/*
	done
done

echo "wall ms, median of $rounds interleaved rounds; ratio to native in brackets"
echo "other: $other"
printf '%-8s %18s %18s %18s\n' program native other this
for n in "${names[@]}"; do
	a=$(median <"$n.native") b=$(median <"$n.other") c=$(median <"$n.this")
	printf '%-8s %18s %18s %18s\n' "$n" \
		"$(awk -v x="$a" 'BEGIN{printf "%.1f (1.000x)", x/1000}')" \
		"$(awk -v x="$b" -v y="$a" 'BEGIN{printf "%.1f (%.3fx)", x/1000, x/y}')" \
		"$(awk -v x="$c" -v y="$a" 'BEGIN{printf "%.1f (%.3fx)", x/1000, x/y}')"
done

#!/usr/bin/env bash
# The CPU sampler's cost and its detection latency (docs/performance.md).
#
# Cost: `convoy run` of two workloads with sampling off and at RATE (default
# 1000 Hz), interleaved REPEAT times (default 7), the median of the program's
# own wall (its profile's: convoy's analysis afterwards is not the program's
# cost) of each and their ratio. The workloads: spin_counter (7M spinlock acquisitions, many
# short critical sections) and pingpong-like park-heavy work (the demo
# barrier, which switches context all the time: the context-switch samples'
# worst case).
#
# Detection latency: false_sharing at offset 8 with growing work; for each,
# the CPU time the run took and whether its report located the line
# (cpu_samples.cache_lines has a false-sharing entry).
#
# Watchpoints: the same workloads' wall at RATE with the write watchpoints
# off (CONVOY_WATCHPOINTS=0) and on (the default), interleaved, medians and
# their ratio; on false_sharing --offset 8 and packed_stats, whose watched
# words are written all the time (the watchpoints' worst case: every write
# to an armed word traps), and on the barrier demo (park-heavy: a context
# switch must not pay for the watchpoints between windows); and how many
# watch records a run wrote.
#
# User stacks: the same workloads with CONVOY_SAMPLE_STACK=0 (the kernel's
# frame-pointer chains only) and unset (4 KiB of stack per sample, unwound
# by the launcher from call-frame information), interleaved: the program's
# wall and thread CPU, and the launcher's own cost, the CPU time of its
# draining thread per sample (the samples file's drain_cpu_ns).
# Usage: tests/bench/sampling.sh BUILD_DIR [RATE] [REPEAT]
set -euo pipefail
build=${1:-build} rate=${2:-1000} repeat=${3:-7}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
wall() {   # the program's own wall (its profile's, start to exit), seconds, at hz $1 of the rest
	local hz=$1; shift
	"$build/convoy" run -o "$tmp/run" --json --sample-hz "$hz" -- "$@" 2>/dev/null |
		python3 -c 'import json, sys; print(json.load(sys.stdin)["process"]["wall_ns"] / 1e9)'
	rm -rf "$tmp/run"
}
windows() {   # the watchpoint windows' records of the last run kept in $tmp/w
	cat "$tmp"/w/*.samples 2>/dev/null | grep -c '^watch ' || true
}
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
echo "| workload | sampling off (median of $repeat) | at $rate Hz | ratio |"
echo "|---|---|---|---|"
for w in "$build/tests/data/progs/spin_counter --workers 2" \
	 "$build/demos/barrier --workers 2 --idle-spin 0 --iterations 20000"; do
	: >"$tmp/off"; : >"$tmp/on"
	for ((i = 0; i < repeat; i++)); do
		wall 0 $w >>"$tmp/off"
		wall "$rate" $w >>"$tmp/on"
	done
	off=$(median <"$tmp/off") on=$(median <"$tmp/on")
	python3 -c "print(f'| {\"$w\".split(\"/\")[-1]} | {$off*1000:.0f} ms | {$on*1000:.0f} ms | {$on/$off:.3f} |')"
done
echo
echo "| false_sharing --offset 8, increments per worker | thread CPU | samples | line located |"
echo "|---|---|---|---|"
for inc in 20000 100000 500000 2000000 10000000; do
	"$build/convoy" run -o "$tmp/fs" --json --sample-hz "$rate" -- "$build/demos/false_sharing" --workers 2 \
		--offset 8 --increments "$inc" >"$tmp/fs.json" 2>/dev/null
	python3 - "$tmp/fs.json" "$inc" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
cpu = sum(t["cpu_ns"] for t in r["threads"])
c = r.get("cpu_samples") or {}
found = any(l["verdict"] == "false-sharing" for l in c.get("cache_lines", []))
print(f"| {int(sys.argv[2]):,} | {cpu/1e6:.1f} ms | {c.get('samples', 0)} | {'yes' if found else 'no'} |")
PY
	rm -rf "$tmp/fs"
done
echo
run_json() {   # the program's wall and its threads' CPU time, seconds, of a convoy run kept in $tmp/w
	"$build/convoy" run -o "$tmp/w" --json --sample-hz "$rate" -- "$@" 2>/dev/null |
		python3 -c 'import json, sys
r = json.load(sys.stdin)
print(r["process"]["wall_ns"] / 1e9, sum(t["cpu_ns"] for t in r["threads"]) / 1e9)'
}
echo "| workload (at $rate Hz) | watchpoints off: wall, thread CPU (medians of $repeat) | on | ratio wall, CPU | watch records per run (median) |"
echo "|---|---|---|---|---|"
for w in "$build/demos/false_sharing --workers 2 --offset 8 --increments 15000000" \
	 "$build/tests/data/progs/packed_stats --workers 2" \
	 "$build/demos/barrier --workers 2 --idle-spin 0 --iterations 20000"; do
	: >"$tmp/off"; : >"$tmp/on"; : >"$tmp/n"
	for ((i = 0; i < repeat; i++)); do
		CONVOY_WATCHPOINTS=0 run_json $w >>"$tmp/off"
		rm -rf "$tmp/w"
		run_json $w >>"$tmp/on"
		windows >>"$tmp/n"
		rm -rf "$tmp/w"
	done
	offw=$(cut -d' ' -f1 "$tmp/off" | median) offc=$(cut -d' ' -f2 "$tmp/off" | median)
	onw=$(cut -d' ' -f1 "$tmp/on" | median) onc=$(cut -d' ' -f2 "$tmp/on" | median) n=$(median <"$tmp/n")
	python3 -c "print(f'| {\"$w\".split(\"/\")[-1]} | {$offw*1000:.0f} ms, {$offc*1000:.0f} ms | {$onw*1000:.0f} ms, {$onc*1000:.0f} ms | {$onw/$offw:.3f}, {$onc/$offc:.3f} | {$n} |')"
done
echo
drain_json() {   # run_json's two, then the drain thread's CPU and the samples, of the run kept in $tmp/w
	run_json "$@" | tr '\n' ' '
	cat "$tmp"/w/*.samples | awk '$1 == "drain_cpu_ns" { ns = $2 } $1 ~ /^(cpu|sys|cs)$/ { n++ }
		END { print ns / 1e9, n }'
	rm -rf "$tmp/w"
}
per_sample() { awk '$4 > 0 { print $3 / $4 * 1e6 }' "$1" | median; }
echo "| workload (at $rate Hz) | CONVOY_SAMPLE_STACK=0: wall, thread CPU, launcher CPU per sample (medians of $repeat) | 4096 | ratio wall, CPU |"
echo "|---|---|---|---|"
for w in "$build/tests/data/progs/spin_counter --workers 2" \
	 "$build/demos/barrier --workers 2 --idle-spin 0 --iterations 20000"; do
	: >"$tmp/off"; : >"$tmp/on"
	for ((i = 0; i < repeat; i++)); do
		CONVOY_SAMPLE_STACK=0 drain_json $w >>"$tmp/off"
		drain_json $w >>"$tmp/on"
	done
	offw=$(cut -d' ' -f1 "$tmp/off" | median) offc=$(cut -d' ' -f2 "$tmp/off" | median) offp=$(per_sample "$tmp/off")
	onw=$(cut -d' ' -f1 "$tmp/on" | median) onc=$(cut -d' ' -f2 "$tmp/on" | median) onp=$(per_sample "$tmp/on")
	python3 -c "print(f'| {\"$w\".split(\"/\")[-1]} | {$offw*1000:.0f} ms, {$offc*1000:.0f} ms, {$offp:.1f} µs | {$onw*1000:.0f} ms, {$onc*1000:.0f} ms, {$onp:.1f} µs | {$onw/$offw:.3f}, {$onc/$offc:.3f} |')"
done

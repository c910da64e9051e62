#!/usr/bin/env bash
# bench_demos.sh DEMO_DIR DOC — `make bench-demos`: reproduces the seed tables
# on this machine and rewrites the generated part of DOC (docs/seeds.md), the
# text between the BEGIN/END GENERATED markers. Text outside the markers is
# hand-written and kept.
#
# Timings only live here, never in tests. The machine is shared and noisy, so
# the goal figures are medians of interleaved repetitions: every round runs
# every configuration once, in the same order; a ratio is taken within each
# round and the median across rounds.
#
# Before each round and each sweep the script waits (at most BENCH_QUIET_WAIT
# seconds, default 10) until a control run (independent work at 1 and 2
# workers) shows the second core free; the doc says how many starts got one.
#
# Environment: BENCH_ROUNDS (default 9) rounds per kind of goal run;
# BENCH_QUIET_WAIT (default 10); BENCH_QUICK=1 shrinks the seed sweeps (for
# trying the script, not for docs).
set -euo pipefail

D=${1:?usage: bench_demos.sh DEMO_DIR DOC}
DOC=${2:?usage: bench_demos.sh DEMO_DIR DOC}
ROUNDS=${BENCH_ROUNDS:-9}
QUICK=${BENCH_QUICK:-0}
QUIET_WAIT=${BENCH_QUIET_WAIT:-10}
quiet_rounds=0 all_rounds=0
command -v hyperfine >/dev/null || { echo "bench-demos: hyperfine not found (make deps)" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
gen=$tmp/generated.md

say() { echo "bench-demos: $*" >&2; }
median() { sort -g | awk '{a[NR]=$1} END {if (NR == 0) print "nan"; else if (NR % 2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }
span() { sort -g | awk 'NR == 1 {lo = $1} {hi = $1} END {printf "%.*f-%.*f", p, lo, p, hi}' p="${1:-2}"; }
# field KEY= from a result line: the number after it (units stripped)
field() { grep -o "$1[0-9.]*" | head -n1 | sed "s|^$1||"; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {if (b + 0 == 0) print "nan"; else printf "%.2f", a / b}'; }
fmt() { awk -v a="$1" -v p="${2:-2}" 'BEGIN {printf "%.*f", p, a}'; }
# The control: independent arithmetic (no shared state) at 1 and 2 workers;
# prints its 1 -> 2 worker speedup, i.e. how much of the second core the
# machine's other users leave us right now (2.00x: all of it).
control() {
	local t1 t2
	t1=$("$D/worker_count" --workers 1 --total 50000000 | field 'time=')
	t2=$("$D/worker_count" --workers 2 --total 50000000 | field 'time=')
	ratio "$t1" "$t2"
}
# Waits (at most QUIET_WAIT seconds) for a control of at least 1.8x; leaves
# the last control in GATE. Counts the starts that found the second core free
# (so it must not run in a subshell).
gate() {
	local deadline=$((SECONDS + QUIET_WAIT)) c
	all_rounds=$((all_rounds + 1))
	while :; do
		c=$(control)
		if awk -v c="$c" 'BEGIN {exit !(c >= 1.8)}'; then
			quiet_rounds=$((quiet_rounds + 1))
			break
		fi
		((SECONDS < deadline)) || break
		sleep 0.5
	done
	GATE=$c
}
out() { printf '%s\n' "$@" >>"$gen"; }
block() { out '```' "$(cat "$1")" '```' ''; }

load_before=$(cut -d' ' -f1-3 /proc/loadavg)
say "machine load before: $load_before"

# --- 1-3. the goals: interleaved rounds, bracketed by a control -------------
# Three kinds of short round: every seed-000 configuration once in-process;
# each of them whole-process under hyperfine; the barrier at each idle spin.
# Each round is bracketed by a control: independent arithmetic (no shared
# state) at 1 and 2 workers, a gauge of how much of a second core the VM
# delivered. Goal ratios are computed per round and judged on the median over
# all rounds; the doc also shows them over the rounds whose controls both
# reached 1.8x.
configs=(
	"gq-port-1|$D/global_queue --impl port --workers 1"
	"gq-port-2|$D/global_queue --impl port --workers 2"
	"gq-wp-1|$D/global_queue --impl workpool --workers 1"
	"gq-wp-2|$D/global_queue --impl workpool --workers 2"
	"ws-cl-1|$D/work_stealing --deque chase-lev --workers 1"
	"ws-cl-2|$D/work_stealing --deque chase-lev --workers 2"
	"ws-lk-1|$D/work_stealing --deque locked --workers 1"
	"ws-lk-2|$D/work_stealing --deque locked --workers 2"
)
BIT=100000
round_inproc() {
	local c name cmd line
	for c in "${configs[@]}"; do
		name=${c%%|*} cmd=${c#*|}
		line=$($cmd)
		echo "tp.$name $(echo "$line" | field 'tasks/s=')"
		echo "co.$name $(echo "$line" | grep -o '\(lock-waits\|steals\)=[0-9]*' | sed 's/.*=//')"
	done
}
round_wall() {
	local c name cmd
	for c in "${configs[@]}"; do
		name=${c%%|*} cmd=${c#*|}
		hyperfine -N --style none --warmup 1 --runs 3 --export-csv "$tmp/hf.csv" "$cmd" >/dev/null 2>&1 ||
			hyperfine --style none --warmup 1 --runs 3 --export-csv "$tmp/hf.csv" "$cmd" >/dev/null
		# command,mean,stddev,median,user,system,min,max (seconds)
		echo "wall.$name $(awk -F, 'NR == 2 {print $4 * 1000}' "$tmp/hf.csv")"
	done
}
round_barrier() {
	local s line
	for s in 0 1 10; do
		line=$("$D/barrier" --workers 2 --iterations $BIT --idle-spin $s)
		echo "bar.$s $(echo "$line" | field 'us/iteration=')"
		echo "barp.$s $(echo "$line" | field 'parks/iteration=')"
	done
}
# Every kind gets ROUNDS rounds. Each starts at the gate (which waits for a
# control of 1.8x, at most QUIET_WAIT seconds) and ends with another control;
# a round's control is the smaller of the two.
declare -A CTLS
for kind in inproc wall barrier; do
	say "goals: $ROUNDS bracketed rounds of $kind"
	for ((r = 0; r < ROUNDS; r++)); do
		f=$tmp/round.$kind.$r
		gate
		echo "ctlA $GATE" >"$f"
		"round_$kind" >>"$f"
		echo "ctlB $(control)" >>"$f"
		say "$kind round $((r + 1)): controls $(awk '$1 ~ /^ctl/ {printf "%s%s", sep, $2; sep = " / "}' "$f")"
	done
	CTLS[$kind]=$(for ((k = 0; k < ROUNDS; k++)); do
		awk '$1 == "ctlA" {a = $2} $1 == "ctlB" {b = $2} END {printf "%s/%s ", a, b}' "$tmp/round.$kind.$k"
	done)
done
# per_round KIND AWK-EXPR: one line per round, "value control", where the
# expression reads the round's figures as v["key"].
per_round() {
	local k
	for ((k = 0; k < ROUNDS; k++)); do
		awk '{v[$1] = $2} END {
			c = v["ctlA"] < v["ctlB"] ? v["ctlA"] : v["ctlB"]
			printf "%.4f %s\n", '"$2"', c
		}' "$tmp/round.$1.$k"
	done
}
# metric NAME KIND EXPR: medians of a per-round figure, over all rounds and
# over the rounds whose controls both reached 1.8x.
declare -A M_ALL M_FULL M_N
metric() { # name kind expr
	local rows
	rows=$(per_round "$2" "$3")
	M_ALL[$1]=$(echo "$rows" | awk '{print $1}' | median)
	M_FULL[$1]=$(echo "$rows" | awk '$2 >= 1.8 {print $1}' | median)
	M_N[$1]=$(echo "$rows" | awk '$2 >= 1.8' | wc -l)
}
metric ws_cl inproc 'v["tp.ws-cl-2"] / v["tp.ws-cl-1"]'
metric ws_lk inproc 'v["tp.ws-lk-2"] / v["tp.ws-lk-1"]'
metric gq_port inproc 'v["tp.gq-port-2"] / v["tp.gq-port-1"]'
metric gq_wp inproc 'v["tp.gq-wp-2"] / v["tp.gq-wp-1"]'
metric ws_gq inproc 'v["tp.ws-cl-2"] / v["tp.gq-port-2"]'
metric ws_gqwp inproc 'v["tp.ws-cl-2"] / v["tp.gq-wp-2"]'
metric cl_lk2 inproc 'v["tp.ws-cl-2"] / v["tp.ws-lk-2"]'
metric cl_lk1 inproc 'v["tp.ws-cl-1"] / v["tp.ws-lk-1"]'
metric ctl_in inproc 'c'
metric w_gq_port wall 'v["wall.gq-port-1"] / v["wall.gq-port-2"]'
metric w_gq_wp wall 'v["wall.gq-wp-1"] / v["wall.gq-wp-2"]'
metric w_ws_cl wall 'v["wall.ws-cl-1"] / v["wall.ws-cl-2"]'
metric w_ws_lk wall 'v["wall.ws-lk-1"] / v["wall.ws-lk-2"]'
metric bar_gain barrier 'v["bar.0"] / v["bar.10"]'
# Per-configuration medians over all rounds, for the absolute tables.
allvals() { cat "$tmp"/round."$1".* | awk -v k="$2" '$1 == k {print $2}'; }
declare -A TP CO TPR WALL WALLR
for c in "${configs[@]}"; do
	name=${c%%|*}
	TP[$name]=$(allvals inproc "tp.$name" | median)
	TPR[$name]=$(allvals inproc "tp.$name" | span 1)
	CO[$name]=$(allvals inproc "co.$name" | median)
	WALL[$name]=$(allvals wall "wall.$name" | median)
	WALLR[$name]=$(allvals wall "wall.$name" | span 0)
done
declare -A BAR BARP BARR
for s in 0 1 10; do
	BAR[$s]=$(allvals barrier "bar.$s" | median)
	BARR[$s]=$(allvals barrier "bar.$s" | span 2)
	BARP[$s]=$(allvals barrier "barp.$s" | median)
done

# --- 4. the seed tables, each sweep once --------------------------------------
run_sweep() { # name, then the command
	local name=$1
	shift
	gate
	say "sweep: $*"
	local rc=0
	"$@" >"$tmp/sweep.$name" 2>"$tmp/err.$name" || rc=$?
	if [ $rc -ne 0 ]; then # recorded in the doc, not hidden
		say "FAILED (exit $rc): $*"
		{ echo "FAILED: exit status $rc"; sed 's/^/stderr: /' "$tmp/err.$name"; } >>"$tmp/sweep.$name"
	fi
}
if [ "$QUICK" = 1 ]; then
	S0="--tasks 200000" S3A="--total 20000000" S3F="--increments 2000000 --runs 3"
	S3W="--total 60000000 --runs 3" S3G="--total 12000000 --runs 3" S2="--iterations 20000"
	S2P="--iterations 20000"
else
	S0="" S3A="" S3F="" S3W="" S3G="" S2="" S2P=""
fi
run_sweep gq "$D/global_queue" $S0
run_sweep gqport "$D/global_queue" --impl port $S0
run_sweep ws "$D/work_stealing" $S0
run_sweep wslk "$D/work_stealing" --deque locked $S0
run_sweep cmp "$D/scheduler_compare" $S0
run_sweep racy "$D/racy_counter"
run_sweep atom "$D/atomic_scaling" $S3A
run_sweep cas "$D/cas_retry"
run_sweep fs "$D/false_sharing" $S3F
run_sweep mva "$D/mutex_vs_atomic"
run_sweep dl "$D/deadlock"
run_sweep tpt "$D/thread_per_task"
run_sweep gran "$D/granularity" $S3G
run_sweep wc "$D/worker_count" $S3W
run_sweep imb "$D/imbalance"
run_sweep bp "$D/backpressure"
run_sweep nest "$D/nested_submit"
run_sweep cancel "$D/cancel"
run_sweep fut "$D/futures"
run_sweep bar "$D/barrier" $S2
run_sweep pp "$D/pingpong" $S2P
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

# Column `col` of the table row whose first field is `key` (leading blanks ok).
col() { awk -v k="$2" -v c="$3" '$1 == k {gsub(/[xM]$/, "", $c); print $c; exit}' "$tmp/sweep.$1"; }

# --- the generated markdown -------------------------------------------------
: >"$gen"
out "<!-- BEGIN GENERATED by \`make bench-demos\` ($(date -u '+%Y-%m-%d %H:%M UTC')); edit outside the markers -->" ''
out "Machine: $(nproc) vCPU, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(uname -r)." \
	"Load average before / after: $load_before / $load_after (other work shares this machine)." \
	"Seed tables: one run of each sweep. $quiet_rounds of $all_rounds measurement starts (goal rounds and sweeps) found a control ≥ 1.8x within ${QUIET_WAIT} s." ''

out '## Goals of the issue, measured' '' \
	"Each goal figure is computed per round (both sides of a ratio come from the same round); the verdict uses" \
	"the median over all $ROUNDS rounds. Each round is bracketed by a control: independent arithmetic" \
	'(`worker_count`, no shared state) at 1 and 2 workers, a rough gauge of how much of a second core the VM' \
	'delivered. It is only a gauge: it moves between about 1.3x and 2.0x from minute to minute even with this' \
	'guest idle, and a scheduler that scales past it in the same round shows that the cores were there.' '' \
	'| goal | seed | median, all rounds | median, rounds with both controls ≥ 1.8x (n) | verdict |' \
	'|---|---|---|---|---|'
goal_row() { # label seed metric threshold(or -)
	local label=$1 seed=$2 m=$3 t=$4 verdict="" fullcell
	if ((M_N[$m] > 0)); then fullcell="$(fmt "${M_FULL[$m]}")x (${M_N[$m]})"; else fullcell="- (0)"; fi
	if [ "$t" != - ]; then
		verdict=$(awk -v a="${M_ALL[$m]}" -v b="$t" 'BEGIN {print (a >= b) ? "met" : "**missed**"}')
	fi
	out "| $label | $seed | $(fmt "${M_ALL[$m]}")x | $fullcell | $verdict |"
}
goal_row "control: independent work, 2 workers / 1 worker" "2.00x" ctl_in -
goal_row "work stealing (Chase-Lev), 2 workers / 1 worker ≥ 1.8x" "2.05x" ws_cl 1.8
goal_row "work stealing (locked deques), 2 workers / 1 worker" "2.05x" ws_lk -
goal_row "work stealing (Chase-Lev) / global queue (direct port), 2 workers ≥ 2x" "7.8x" ws_gq 2
goal_row "work stealing (Chase-Lev) / global queue (workpool), 2 workers" "" ws_gqwp -
goal_row "global queue (direct port), 2 workers / 1 worker (DESIGN: 0.27-0.5x)" "0.29x" gq_port -
goal_row "global queue (workpool), 2 workers / 1 worker" "0.29x" gq_wp -
goal_row "Chase-Lev / locked deques, 2 workers ≥ 1x" "" cl_lk2 1
goal_row "Chase-Lev / locked deques, 1 worker" "" cl_lk1 -
goal_row "whole process, global queue (port), 1 / 2 workers (DESIGN: 0.27-0.5x)" "0.29x" w_gq_port -
goal_row "whole process, global queue (workpool), 1 / 2 workers" "" w_gq_wp -
goal_row "whole process, work stealing (Chase-Lev), 1 / 2 workers (DESIGN, mutex deques: 1.76x)" "" w_ws_cl -
goal_row "whole process, work stealing (locked), 1 / 2 workers (DESIGN: 1.76x)" "" w_ws_lk -
goal_row "barrier, 2 workers: µs/iteration at --idle-spin 0 / at the default 10 (> 1x)" "4.1x" bar_gain 1.0001
out '' "Controls per round (before/after), in-process: ${CTLS[inproc]}" '' \
	"Whole-process rounds: ${CTLS[wall]}" '' "Barrier rounds: ${CTLS[barrier]}" ''

out 'In-process throughput (the seeds'"'"' own metric: first spawn to last join, the serial fill excluded),' \
	'weight 20, 2,000,000 tasks; median (and range) over all rounds of `DEMO --workers N`:' '' \
	'| configuration | 1 worker | 2 workers | last column at 2 (median) |' \
	'|---|---|---|---|'
for pair in "gq-port|global queue, direct port (\`global_queue --impl port\`)|lock waits" \
	"gq-wp|global queue, workpool \`global\`|lock waits" \
	"ws-cl|work stealing, workpool Chase-Lev|steals" \
	"ws-lk|work stealing, workpool locked deques|steals"; do
	IFS='|' read -r k label what <<<"$pair"
	out "| $label | $(fmt "${TP[$k-1]}")M/s (${TPR[$k-1]}) | $(fmt "${TP[$k-2]}")M/s (${TPR[$k-2]}) | ${CO[$k-2]} $what |"
done
out '' 'Whole process (`hyperfine -N --warmup 1 --runs 3`, the median of each round, then the median and range over' \
	'all rounds; includes the serial fill of 2M tasks and the pool start and stop):' '' \
	'| configuration | 1 worker | 2 workers |' '|---|---|---|'
for pair in "gq-port|global queue, direct port" "gq-wp|global queue, workpool" \
	"ws-cl|work stealing, Chase-Lev" "ws-lk|work stealing, locked"; do
	IFS='|' read -r k label <<<"$pair"
	out "| $label | $(fmt "${WALL[$k-1]}" 1) ms (${WALLR[$k-1]}) | $(fmt "${WALL[$k-2]}" 1) ms (${WALLR[$k-2]}) |"
done
out '' "DESIGN.md's figures for this machine class: global queue port 40 ms → 80-150 ms (0.27-0.5x), work stealing with mutex deques 51 ms → 29 ms (1.76x)." ''
out "Barrier (seed 002), 2 workers, $BIT iterations; µs per iteration, median (and range) over all rounds:" '' \
	'| `--idle-spin` | µs / iteration | parks / iteration |' '|---|---|---|' \
	"| 0 (park at once) | $(fmt "${BAR[0]}" 3) (${BARR[0]}) | $(fmt "${BARP[0]}" 3) |" \
	"| 1 | $(fmt "${BAR[1]}" 3) (${BARR[1]}) | $(fmt "${BARP[1]}" 3) |" \
	"| 10 (default) | $(fmt "${BAR[10]}" 3) (${BARR[10]}) | $(fmt "${BARP[10]}" 3) |" '' \
	'Seed 002 at w=2: 3.3 µs (master) → 0.80 µs (10 µs poll) on an M4.' ''

out '## Seed 000: global queue vs work stealing' '' \
	'Seed (6-core machine with hyper-threading):' '' '```' \
	'workers      time   tasks/s   speedup   lock waits' \
	'      1      63ms     31.57M     1.00x            0' \
	'      2     220ms      9.09M     0.29x       321878' \
	'      4     190ms     10.52M     0.33x       483512' \
	'      8     290ms      6.90M     0.22x       614838' \
	'     16     313ms      6.39M     0.20x       633691' '```' '' \
	"Here, \`global_queue\` (workpool's global FIFO):" ''
block "$tmp/sweep.gq"
out "Here, \`global_queue --impl port\` (the seed's appendix ported directly):" ''
block "$tmp/sweep.gqport"
out '| workers | seed speedup | here (workpool) | here (port) |' '|---|---|---|---|'
for w in 1 2 4 8 16; do
	case $w in 1) s=1.00 ;; 2) s=0.29 ;; 4) s=0.33 ;; 8) s=0.22 ;; 16) s=0.20 ;; esac
	out "| $w | ${s}x | $(col gq $w 4)x | $(col gqport $w 4)x |"
done
out '' 'Seed, local queues + stealing:' '' '```' \
	'workers      time   tasks/s   speedup   steals' \
	'      1      58ms     34.51M     1.00x        0' \
	'      2      28ms     70.62M     2.05x        2' \
	'      4      16ms    124.05M     3.60x        7' \
	'      8      11ms    173.94M     5.04x      138' \
	'     16      12ms    173.25M     5.02x      197' '```' '' "Here, \`work_stealing\` (Chase-Lev):" ''
block "$tmp/sweep.ws"
out "Here, \`work_stealing --deque locked\`:" ''
block "$tmp/sweep.wslk"
out '| workers | seed speedup | here (Chase-Lev) | here (locked) |' '|---|---|---|---|'
for w in 1 2 4 8 16; do
	case $w in 1) s=1.00 ;; 2) s=2.05 ;; 4) s=3.60 ;; 8) s=5.04 ;; 16) s=5.02 ;; esac
	out "| $w | ${s}x | $(col ws $w 4)x | $(col wslk $w 4)x |"
done
out '' 'Seed, both schedulers by task weight (ratio = local+steal / global q):' '' '```' \
	'weight   workers   global q   local+steal   ratio' \
	'     4         1     55.17M        59.56M    1.08x' \
	'     4         4     14.67M       232.41M   15.84x' \
	'     4        16     10.59M       300.96M   28.41x' '' \
	'    20         1     35.19M        33.83M    0.96x' \
	'    20         4      9.86M       121.82M   12.35x' \
	'    20        16      7.52M       145.72M   19.37x' '' \
	'   400         1      1.44M         1.44M    1.00x' \
	'   400         4      5.44M         5.74M    1.06x' \
	'   400        16      6.75M        10.73M    1.59x' '```' '' "Here, \`scheduler_compare\`:" ''
block "$tmp/sweep.cmp"

out '## Seed 003: atomics, sharing, locks' '' \
	'Seed: `-O0` loses about half (1012274 ... 1034456), `-O2` folds to 2000000 every run, released together' \
	'it loses a whole thread (1000000 x 20), volatile loses half again, atomic is exact.' '' "Here, \`racy_counter\`:" ''
block "$tmp/sweep.racy"
out 'Seed, one shared atomic, 200M increments split across threads (M4): 1.60, 2.81, 6.23, 18.83, 24.16 ns per increment at 1, 2, 4, 8, 10 threads (1.76x, 3.89x, 11.8x, 15.1x the 1-thread cost).' '' \
	"Here, \`atomic_scaling\`:" ''
block "$tmp/sweep.atom"
a1=$(awk '$1 == 1 && $2 == "threads" {print $5}' "$tmp/sweep.atom")
out '| threads | seed ns/increment vs 1 thread | here |' '|---|---|---|'
for t in 2 4 8 10; do
	case $t in 2) s=1.76 ;; 4) s=3.89 ;; 8) s=11.8 ;; 10) s=15.1 ;; esac
	here=$(awk -v t=$t '$1 == t && $2 == "threads" {print $5}' "$tmp/sweep.atom")
	out "| $t | ${s}x | $(ratio "$here" "$a1")x |"
done
out '' 'Seed, CAS retry: 0.0%, 6.3%, 32.1%, 68.3% of CAS attempts failed at 1, 2, 4, 8 threads.' '' "Here, \`cas_retry\`:" ''
block "$tmp/sweep.cas"
out 'Seed, false sharing (M4, 128-byte lines; 7 runs): medians 148-163 ms at offsets 8-32, 32 ms from 64 on (about 4.6x).' '' \
	"Here, \`false_sharing\`:" ''
block "$tmp/sweep.fs"
f8=$(col fs 8 4)
f64=$(col fs 64 4)
out "Median at offset 8 / median at offset 64: seed 148/32 = 4.6x, here $f8/$f64 = $(ratio "$f8" "$f64")x." '' \
	'Seed, atomic vs mutex, 2 threads x 20M: 3.33 vs 7.18 ns/op, mutex / atomic = 2.2x.' '' "Here, \`mutex_vs_atomic\`:" ''
block "$tmp/sweep.mva"
out 'Seed: opposite lock order freezes; the watchdog reports `A_got_L1=1 A_got_L2=0  B_got_L2=1 B_got_L1=0` after 2 s; one order finishes.' '' \
	"Here, \`deadlock\`:" ''
block "$tmp/sweep.dl"

out '## Seed 003: the task runtime' '' \
	'Seed: `dispatch fresh-threads-ms=41 pool-ms=1 tasks=2000 sum=1999000` (about 41x).' '' "Here, \`thread_per_task\`:" ''
block "$tmp/sweep.tpt"
out 'Seed, granularity (4 workers, 120M iterations): median 45 ms at 4 tasks ... 165 ms at 400,000 tasks (3.7x; about 300 ns per task).' '' \
	"Here, \`granularity\`:" ''
block "$tmp/sweep.gran"
g4=$(col gran 4 4)
g400k=$(col gran 400,000 4)
out "Median at 400,000 tasks / median at 4 tasks: seed 165/45 = 3.7x, here $g400k/$g4 = $(ratio "$g400k" "$g4")x." '' \
	'Seed, worker count (10 hardware threads; 600M iterations): medians 820, 410, 229, 138, 120, 118, 114 ms at 1, 2, 4, 8, 10, 16, 32 workers.' '' \
	"Here, \`worker_count\` (2 cores: everything above 2 workers is oversubscribed):" ''
block "$tmp/sweep.wc"
w1=$(col wc 1 3)
w2=$(col wc 2 3)
w32=$(col wc 32 3)
out "1 → 2 workers: seed 2.0x, here $(ratio "$w1" "$w2")x. 2 → 32 workers: here $(ratio "$w2" "$w32")x (flat is 1.0x)." '' \
	'Seed: `steal=off ms=234 steals=0 executed=40,0,0,0`, `steal=on ms=62 steals=30 executed=10,10,10,10`.' '' "Here, \`imbalance\`:" ''
block "$tmp/sweep.imb"
out 'Seed: `backpressure max-queued=4 blocked-submissions=14`, `submit-ms=85 total-ms=120 sum=190`.' '' "Here, \`backpressure\`:" ''
block "$tmp/sweep.bp"
out 'Seed: a one-worker pool whose task waits on its child deadlocks without helping; described, not run, in the seed.' '' "Here, \`nested_submit\`:" ''
block "$tmp/sweep.nest"
out 'Seed: `cancel-requested=yes task-observed=yes`.' '' "Here, \`cancel\`:" ''
block "$tmp/sweep.cancel"
out 'Seed: `future-value=42`, `future-exception=task failed`, `drain-completed=12 last-value=11`, `submit-after-shutdown=submit on stopped pool`.' '' \
	"Here, \`futures\`:" ''
block "$tmp/sweep.fut"

out '## Seed 002: poll before parking' '' \
	'Seed, barrier, µs per iteration (M4): master 0.58, 3.3, 2.7, 2.6 at w=1..4; with the 10 µs poll 0.58, 0.80, 1.07, 1.31.' \
	'Seed, x86-64 with 32 CPUs, `--idle-spin 0` vs default at w=4: 2.71 vs 2.49.' '' "Here, \`barrier\`:" ''
block "$tmp/sweep.bar"
out 'Seed: `examples/pingpong.rs` with 200k rounds and four workers: 1.5 s to 0.54 s (typed).' '' "Here, \`pingpong\`:" ''
block "$tmp/sweep.pp"
out '<!-- END GENERATED -->'

# --- splice into DOC ----------------------------------------------------------
if [ ! -f "$DOC" ] || ! grep -q '^<!-- BEGIN GENERATED' "$DOC"; then
	mkdir -p "$(dirname "$DOC")"
	{
		[ -f "$DOC" ] && cat "$DOC"
		[ -f "$DOC" ] || printf '# The seed experiments on this machine\n\n'
		cat "$gen"
	} >"$tmp/doc"
else
	awk -v gen="$gen" '
		/^<!-- BEGIN GENERATED/ {while ((getline l < gen) > 0) print l; skip = 1; next}
		/^<!-- END GENERATED/ {skip = 0; next}
		!skip {print}' "$DOC" >"$tmp/doc"
fi
cp "$tmp/doc" "$DOC"
say "wrote $DOC"

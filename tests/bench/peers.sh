#!/usr/bin/env bash
# The overhead proof (issue 11, docs/performance.md): the same workloads
# natively, under convoy, and under the tools that record the same events
# (valgrind's DRD and Helgrind, the LTTng-UST pthread wrapper with tracing
# off and on, perf trace and perf lock), interleaved round by round (each
# round in an order of its own: shuffled) so that
# a noisy neighbour hits every tool alike. Prints the median of each cell
# and its ratio to native. Tools that cannot run here say why on one line.
#
# Workloads: lockpair's uncontended pair, two-thread contended loop and
# condvar ping-pong (its own ns per operation), global_queue at 2 and 4
# workers, a process's own cost (start: 100 short runs of lockpair, ms a
# process), a thread's (threads: 1,000 made and joined one at a time, ns
# a thread), a lock per bucket (buckets: 20,000 mutexes each taken by two
# threads, the shim's cost per object), pigz -p 2, xz -T2, sort
# --parallel=2, sqlite3 building an index with PRAGMA threads=2, node
# hashing on its thread pool, python3 making an SSL context (pyssl:
# OpenSSL's locks for each certificate), python3 running 20,000 tiny tasks
# on a pool of two threads (pypool: a lock made, taken by both threads and
# destroyed for each task's future), a JVM running eight tasks on a
# pool of two threads (java: HotSpot's own monitors and threads, about
# 1,200 mutexes and condvars made at its start), zstd -T2, git grep
# --threads=2 over this repository and openssl verify against the system's
# certificates (OpenSSL 3's read locks, 400,000 in 40 ms), in wall seconds.
# Then global_queue's observer effect: the failed trylocks it counts itself
# natively against what convoy counts under the shim.
#
# PEER_OTHER=path/to/libconvoy.so adds another build of the shim ("other")
# beside this one: the A/B of a change on the same workloads, printed
# paired by round from 5 rounds up, and on global_queue's observer effect
# (convoy's count over the other build's, round by round). Every tool's
# run goes through env (an exec of it costs milliseconds), the native one
# too.
#
# Usage: [PEER_TIMEOUT=s] [PEER_WORKLOADS="pair xz ..."] [PEER_TOOLS="native convoy ..."]
#        [PEER_OTHER=libconvoy.so] tests/bench/peers.sh BUILD_DIR [ROUNDS]
set -uo pipefail
build=${1:?build dir} rounds=${2:-3}
shim=$(realpath "$build/libconvoy.so")
pair=$(realpath "$build/bench/lockpair") gq=$(realpath "$build/demos/global_queue")
buckets=$(realpath "$build/bench/buckets")
convoy=$(realpath "$build/convoy")
tmp=$(mktemp -d)
session=convoy-peers-$$
cleanup() {
	command -v lttng >/dev/null && lttng destroy "$session" >/dev/null 2>&1
	[ -n "${sessiond_pid:-}" ] && kill "$sessiond_pid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

median() { sort -g | awk '{v[NR]=$1} END {if (NR) print (NR%2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }

# ---- the tools -------------------------------------------------------------
tools=(native convoy)
[ -z "${PEER_OTHER:-}" ] || tools=(native other convoy)
declare -A why_not
command -v valgrind >/dev/null && tools+=(drd helgrind) || why_not[valgrind]="valgrind is not installed"
wrapper=$(ls /usr/lib/*/liblttng-ust-pthread-wrapper.so.1 2>/dev/null | head -1)
if [ -z "$wrapper" ]; then
	why_not[lttng]="liblttng-ust1 (liblttng-ust-pthread-wrapper.so.1) is not installed"
else
	tools+=(lttng-off)
	if ! command -v lttng >/dev/null; then
		why_not[lttng-on]="lttng-tools is not installed"
	else
		lttng-sessiond --no-kernel >"$tmp/sessiond.log" 2>&1 & sessiond_pid=$!
		sleep 1
		if lttng create "$session" --output="$tmp/trace" >"$tmp/lttng.log" 2>&1 &&
		   lttng enable-event -u 'lttng_ust_pthread:*' -s "$session" >>"$tmp/lttng.log" 2>&1 &&
		   lttng start "$session" >>"$tmp/lttng.log" 2>&1; then
			tools+=(lttng-on)
		else
			why_not[lttng-on]="lttng session: $(tail -1 "$tmp/lttng.log")"
		fi
	fi
fi
if perf trace -o /dev/null -- true >/dev/null 2>"$tmp/perf.err"; then tools+=(perf-trace)
else why_not[perf-trace]="perf trace: $(head -1 "$tmp/perf.err")"; fi
if perf lock record -o "$tmp/lock.data" -- true >/dev/null 2>"$tmp/perf.err"; then tools+=(perf-lock)
else why_not[perf-lock]="perf lock record: $(grep -m1 -v '^$' "$tmp/perf.err")"; fi
# PEER_TOOLS="native convoy ...": only those (native first: the ratios' base)
if [ -n "${PEER_TOOLS:-}" ]; then
	chosen=()
	for tool in "${tools[@]}"; do [[ " $PEER_TOOLS " == *" $tool "* ]] && chosen+=("$tool"); done
	tools=("${chosen[@]}")
fi

# run TOOL CMD...: runs CMD under TOOL, stdout to $tmp/out; each run is
# stopped after PEER_TIMEOUT seconds (default 300) and shown as "timeout"
run() {
	local tool=$1; shift
	local limit=(timeout -k 10 "${PEER_TIMEOUT:-300}")   # -k: valgrind's guest may not die of SIGTERM (drd on buckets ran 12 minutes past 60 s)
	case $tool in
	# through env like the preloading tools: an exec of env costs 2.4 ms
	# here (pigz on 1 KB: 6.7 ms straight, 9.0 ms through env), which
	# counted against the shim before
	native)     "${limit[@]}" env "$@" ;;
	convoy)     "${limit[@]}" env LD_PRELOAD="$shim" CONVOY_QUIET=1 CONVOY_DIR="$tmp/profiles" "$@" ;;
	other)      "${limit[@]}" env LD_PRELOAD="$PEER_OTHER" CONVOY_QUIET=1 CONVOY_DIR="$tmp/profiles" "$@" ;;
	drd)        "${limit[@]}" valgrind --tool=drd -q --log-file="$tmp/vg.log" "$@" ;;
	helgrind)   "${limit[@]}" valgrind --tool=helgrind -q --log-file="$tmp/vg.log" "$@" ;;
	# registered with the session daemon, the session stopped / started
	lttng-off)  "${limit[@]}" env LD_PRELOAD="$wrapper" "$@" ;;
	lttng-on)   "${limit[@]}" env LD_PRELOAD="$wrapper" "$@" ;;
	perf-trace) "${limit[@]}" perf trace -o "$tmp/trace.txt" -- "$@" ;;
	perf-lock)  "${limit[@]}" perf lock record -q -o "$tmp/lock.data" -- "$@" ;;
	esac >"$tmp/out" 2>>"$tmp/err"
}

# ---- the workloads ---------------------------------------------------------
head -c 4500000 /dev/urandom | base64 >"$tmp/data"                   # 6 MB of text
head -c 2097152 "$tmp/data" >"$tmp/data.xz-in"
awk 'BEGIN{srand(1); for (i = 0; i < 2000000; i++) printf "%08d %s\n", int(rand()*1e8), i}' >"$tmp/lines"
sqlite3 "$tmp/base.db" "CREATE TABLE t(a, b); WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c
	WHERE x < 1000000) INSERT INTO t SELECT abs(random()) % 1000000, x FROM c;"
mkdir -p "$tmp/profiles"

names=(pair contended pingpong gq2 gq4 start threads buckets pigz xz sort sqlite3 node pyssl pypool java zstd gitgrep openssl)
units=(ns/pair ns/pair ns/hop s s ms/proc ns/thr s s s s s s s s s s s s)
bundle=/etc/ssl/certs/ca-certificates.crt
cert=$(ls /etc/ssl/certs/*.pem 2>/dev/null | head -n 1)
openssl_ready() { command -v openssl >/dev/null && [ -f "$bundle" ] && [ -n "$cert" ]; }
starts=100   # processes in one run of "start"
workload() {   # name -> the command
	case $1 in
	pair)      echo "$pair uncontended 200000" ;;
	contended) echo "$pair contended 100000" ;;
	pingpong)  echo "$pair pingpong 5000" ;;
	gq2)       echo "$gq --workers 2 --tasks 300000 --weight 0" ;;
	gq4)       echo "$gq --workers 4 --tasks 300000 --weight 0" ;;
	# what a process pays once: start-up, five threads made and joined, one
	# lock each, the profile at exit (wall per process, of $starts)
	start)     echo "sh -c 'i=0; while [ \$i -lt $starts ]; do $pair uncontended 1 >/dev/null || exit 1; i=\$((i+1)); done'" ;;
	# a thread made, run and joined at a time, each taking one lock: what
	# a program that makes a thread per piece of work pays for each
	threads)   echo "$pair threads 1000" ;;
	buckets)   echo "$buckets 20000" ;;
	pigz)      echo "pigz -p 2 -c $tmp/data" ;;
	xz)        echo "xz -T2 -0 --block-size=512KiB -c $tmp/data.xz-in" ;;   # 4 blocks, 2 threads
	sort)      echo "sort --parallel=2 -S 64M $tmp/lines" ;;
	sqlite3)   echo "sh -c 'cp $tmp/base.db $tmp/db && exec sqlite3 $tmp/db \"PRAGMA threads=2; CREATE INDEX i ON t(a);\"'" ;;
	# its thread pool hashes; OpenSSL 3's locks as node starts (docs/performance.md)
	node)      echo "node -e \"const c = require('crypto'); for (let i = 0; i < 16; i++) c.pbkdf2('pw', 's' + i, 20000, 64, 'sha512', () => {});\"" ;;
	# a short process that makes thousands of locks down many paths: OpenSSL 3
	# reading the system's certificates (docs/performance.md, recent frames)
	pyssl)     echo "/usr/bin/python3 -c 'import ssl; ssl.create_default_context()'" ;;
	# many short-lived locks between two threads: each task's future makes a
	# lock (a semaphore) that the worker and the main thread both take, then
	# destroys it (docs/performance.md, "A Python thread pool")
	pypool)    echo "/usr/bin/python3 -c 'import concurrent.futures as f; x = f.ThreadPoolExecutor(2); print(sum(x.map(abs, range(20000), chunksize=1)))'" ;;
	java)      echo "java -cp $tmp/java Pool" ;;
	zstd)      echo "zstd -q -T2 -3 -c $tmp/data" ;;
	gitgrep)   echo "git -C $repo grep -c --threads=2 pthread_" ;;
	# one certificate checked against the bundle: OpenSSL 3 loads each of
	# its certificates, about 2,000 locks made and 400,000 read locks taken
	openssl)   echo "openssl verify -CAfile $bundle $cert" ;;
	esac
}
# PEER_WORKLOADS="pair sort ...": only those
have() {
	[ -z "${PEER_WORKLOADS:-}" ] || [[ " $PEER_WORKLOADS " == *" $1 "* ]] || return 1
	[ "$1" != pigz ] || command -v pigz >/dev/null || return 1
	[ "$1" != node ] || command -v node >/dev/null || return 1
	[ "$1" != pyssl ] || /usr/bin/python3 -c 'import ssl' 2>/dev/null || return 1
	[ "$1" != pypool ] || [ -x /usr/bin/python3 ] || return 1
	[ "$1" != java ] || [ -f "$tmp/java/Pool.class" ] || return 1
	[ "$1" != zstd ] || command -v zstd >/dev/null || return 1
	[ "$1" != gitgrep ] || [ -n "$repo" ] || return 1
	[ "$1" != openssl ] || openssl_ready
}
have_asked() {   # asked for, whether or not it can run
	[ -z "${PEER_WORKLOADS:-}" ] || [[ " $PEER_WORKLOADS " == *" $1 "* ]]
}
have_asked pigz && ! command -v pigz >/dev/null && why_not[pigz]="pigz is not installed (Debian's pigz)"
have_asked node && ! command -v node >/dev/null && why_not[node]="node is not installed (Debian's nodejs)"
have_asked pyssl && ! /usr/bin/python3 -c 'import ssl' 2>/dev/null && why_not[pyssl]="/usr/bin/python3 with ssl is not installed (Debian's python3)"
have_asked pypool && [ ! -x /usr/bin/python3 ] && why_not[pypool]="/usr/bin/python3 is not installed (Debian's python3)"
have_asked openssl && ! openssl_ready &&
	why_not[openssl]="openssl or the system's certificates are not installed (Debian's openssl, ca-certificates)"
# java: a pool of two threads running eight tasks, compiled here
if have_asked java; then
	mkdir -p "$tmp/java"
	cat >"$tmp/java/Pool.java" <<'JAVA'
import java.util.*;
import java.util.concurrent.*;
public class Pool {
	public static void main(String[] args) throws Exception {
		ExecutorService pool = Executors.newFixedThreadPool(2);
		List<Future<Long>> parts = new ArrayList<>();
		for (int i = 0; i < 8; i++) {
			final int k = i;
			parts.add(pool.submit(() -> { long s = 0; for (int j = 0; j < 2000000; j++) s += j ^ k; return s; }));
		}
		long total = 0;
		for (Future<Long> f : parts)
			total += f.get();
		pool.shutdown();
		System.out.println(total);
	}
}
JAVA
	command -v javac >/dev/null && javac -d "$tmp/java" "$tmp/java/Pool.java" 2>"$tmp/javac.err" ||
		why_not[java]="no JVM to run (Debian's default-jdk-headless): $(command -v javac >/dev/null && head -1 "$tmp/javac.err" || echo "javac is not installed")"
fi
have_asked zstd && ! command -v zstd >/dev/null && why_not[zstd]="zstd is not installed (Debian's zstd)"
# git grep: this repository's files, where the script runs from a clone
repo=$(git -C "$(dirname "$0")" rev-parse --show-toplevel 2>/dev/null || true)
have_asked gitgrep && [ -z "$repo" ] && why_not[gitgrep]="tests/bench is not in a git clone (git grep searches it)"

# ROUND ITEM...: the items, one a line, in an order of their own for each
# round (a shuffle seeded by ROUND). Where a run comes in a round, and which
# run comes just before it (one that wrote a profile and read it back, or
# not), must not be what tells two tools apart: with a fixed order, one
# build run as both "other" and "convoy" counted 5 to 20 % more contention
# on global_queue in the second place (the port at two workers 1.21, its
# interval up to 1.97); a rotation moves each tool's place but keeps who
# comes before whom.
shuffled() {
	local round=$1; shift
	printf '%s\n' "$@" | awk -v seed="$round" 'BEGIN {srand(seed)} {print rand() "\t" $0}' | sort -g | cut -f2-
}

for round in $(seq "$rounds"); do
	for i in "${!names[@]}"; do
		w=${names[$i]}
		have "$w" || continue
		for tool in $(shuffled "$round" "${tools[@]}"); do
			case $tool in   # outside the timing
			lttng-off) lttng stop "$session" >/dev/null 2>&1 ;;
			lttng-on)  lttng start "$session" >/dev/null 2>&1 ;;
			esac
			start=$(date +%s%N)
			eval "run $tool $(workload "$w")"
			rc=$?
			end=$(date +%s%N)
			if [ $rc -eq 124 ]; then echo timeout >>"$tmp/$w.$tool"; continue; fi
			if [ $rc -ne 0 ]; then echo fail >>"$tmp/$w.$tool"; continue; fi
			if [ "${units[$i]}" = s ]; then
				awk -v a="$start" -v b="$end" 'BEGIN{printf "%.3f\n", (b-a)/1e9}' >>"$tmp/$w.$tool"
			elif [ "${units[$i]}" = ms/proc ]; then
				awk -v a="$start" -v b="$end" -v n="$starts" 'BEGIN{printf "%.3f\n", (b-a)/1e6/n}' >>"$tmp/$w.$tool"
			else
				head -1 "$tmp/out" >>"$tmp/$w.$tool"
			fi
		done
	done
done

echo "median of $rounds interleaved rounds; ratio to native in brackets"
printf '%-10s %-7s' workload unit; for tool in "${tools[@]}"; do printf ' %18s' "$tool"; done; echo
for i in "${!names[@]}"; do
	w=${names[$i]}
	have "$w" || continue
	base=$(grep -v fail "$tmp/$w.native" | median)
	printf '%-10s %-7s' "$w" "${units[$i]}"
	for tool in "${tools[@]}"; do
		if grep -q timeout "$tmp/$w.$tool"; then printf ' %18s' ">${PEER_TIMEOUT:-300}s"; continue; fi
		if grep -q fail "$tmp/$w.$tool"; then printf ' %18s' failed; continue; fi
		v=$(median <"$tmp/$w.$tool")
		printf ' %18s' "$(awk -v v="$v" -v b="$base" 'BEGIN{printf "%s (%.2fx)", v, v/b}')"
	done
	echo
done
for k in "${!why_not[@]}"; do echo "not run: ${why_not[$k]}"; done

# The ratio of each round's other run to the same round's native run
# (interleaved, so a slow minute hits both), their median and a bootstrap
# 95% interval of that median: "1.019 (1.006 to 1.019), 21 rounds". Rounds
# where either failed, or native is 0, are left out; nothing under 5 rounds.
paired_ratio() {   # NATIVE_FILE OTHER_FILE: one value a line, round by round
	python3 - "$1" "$2" <<'PY'
import random, statistics as st, sys
def vals(path):
    out = []
    for l in open(path):
        try:
            out.append(float(l))
        except ValueError:   # fail, timeout
            out.append(None)
    return out
ratios = [o / n for n, o in zip(vals(sys.argv[1]), vals(sys.argv[2])) if n and o is not None]
if len(ratios) < 5:
    sys.exit(0)
rng = random.Random(1)
boot = sorted(st.median(rng.choices(ratios, k=len(ratios))) for _ in range(2000))
print(f"{st.median(ratios):.3f} ({boot[50]:.3f} to {boot[1949]:.3f}), {len(ratios)} rounds")
PY
}

# convoy's cost with its uncertainty, from 5 rounds up.
if [ "$rounds" -ge 5 ]; then
	echo
	echo "convoy / native, paired by round: median ratio (95% bootstrap interval)"
	for w in "${names[@]}"; do
		have "$w" || continue
		printf '%-10s %s\n' "$w" "$(paired_ratio "$tmp/$w.native" "$tmp/$w.convoy")"
	done
	if [[ " ${tools[*]} " == *" other "* ]]; then   # the A/B itself (PEER_OTHER, and PEER_TOOLS not without it)
		echo
		echo "other / native, and convoy / other, paired by round"
		for w in "${names[@]}"; do
			have "$w" || continue
			printf '%-10s %s; %s\n' "$w" "$(paired_ratio "$tmp/$w.native" "$tmp/$w.other")" \
				"$(paired_ratio "$tmp/$w.other" "$tmp/$w.convoy")"
		done
	fi
fi

# ---- global_queue: what convoy counts against what the demo counts ---------
# The count is the two workers' collisions, which the host's scheduling
# moves by 10x and more from run to run: PEER_GQ_ROUNDS interleaved rounds
# (default 25), and the paired ratio with its interval (paired_ratio).
have gq2 || exit 0
gq_rounds=${PEER_GQ_ROUNDS:-25}
echo
echo "global_queue --weight 0, $gq_rounds interleaved rounds: the failed trylocks the demo counts natively;"
echo "under convoy the demo's own count, and convoy's trylock failures and contended acquisitions"
echo "of the queue lock (medians); the ratio is convoy's contended acquisitions to the native count,"
echo "round by round (paired_ratio); with PEER_OTHER, the other build's in the same rounds too"
# One run of the demo under the shim so (LD_PRELOAD): "demo's count, trylock
# failures, contended" of the queue lock.
gq_counted() {
	local so=$1 impl=$2 workers=$3 demo
	rm -rf "$tmp/gqp"; mkdir -p "$tmp/gqp"
	demo=$(LD_PRELOAD=$so CONVOY_QUIET=1 CONVOY_DIR=$tmp/gqp "$gq" --impl "$impl" --workers "$workers" \
		--tasks 2000000 --weight 0 | sed 's/.*lock-waits=\([0-9]*\).*/\1/')
	echo "$demo $("$convoy" report --json "$tmp"/gqp/*.convoy 2>/dev/null | python3 -c '
import json, sys
locks = json.load(sys.stdin).get("locks", [])
top = max(locks, key=lambda l: l.get("trylock_failures", 0), default={})
print(top.get("trylock_failures", 0), top.get("contended", 0))')"
}
for impl in workpool port; do
	for workers in 2 4; do
		f=$tmp/gq.$impl.$workers
		runs=(native convoy); [ -z "${PEER_OTHER:-}" ] || runs+=(other)
		for round in $(seq "$gq_rounds"); do
			other="- - -"
			for run in $(shuffled "$round" "${runs[@]}"); do
				case $run in
				native) native=$("$gq" --impl "$impl" --workers "$workers" --tasks 2000000 --weight 0 |
						sed 's/.*lock-waits=\([0-9]*\).*/\1/') ;;
				convoy) mine=$(gq_counted "$shim" "$impl" "$workers") ;;
				other)  other=$(gq_counted "$PEER_OTHER" "$impl" "$workers") ;;
				esac
			done
			echo "$native $mine $other" >>"$f"
		done
		col() { cut -d' ' -f"$1" "$f"; }
		printf '%-8s %s workers: native %s (from %s to %s); under convoy: demo %s, trylock failures %s, contended %s; ratio %s\n' \
			"$impl" "$workers" "$(col 1 | median)" "$(col 1 | sort -g | head -1)" "$(col 1 | sort -g | tail -1)" \
			"$(col 2 | median)" "$(col 3 | median)" "$(col 4 | median)" \
			"$(paired_ratio <(col 1) <(col 4))"
		[ -z "${PEER_OTHER:-}" ] ||
			printf '%-8s %s workers: other build: contended %s; ratio %s; convoy / other %s\n' \
				"$impl" "$workers" "$(col 7 | median)" "$(paired_ratio <(col 1) <(col 7))" \
				"$(paired_ratio <(col 7) <(col 4))"
	done
done

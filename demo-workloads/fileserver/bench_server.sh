#!/bin/sh
# bench_server.sh BIN OUTDIR — seed 004's benchmark on this machine.
#
# wrk (Debian's package) against build/demos/fileserver on 127.0.0.1, every
# scheduler at 1, 2, 4 and 8 workers, RUNS runs each (rounds interleaved, so
# drift on the shared machine spreads over all schedulers), DURATION seconds
# per run. Writes OUTDIR/bench.csv, OUTDIR/table.md and three SVG plots
# (throughput, speedup, p99) made by plot_bench.py without any network.
#
#   BENCH_SERVER_SECONDS   seconds per wrk run (default 3)
#   BENCH_SERVER_RUNS      runs per cell (default 3)
#   BENCH_SERVER_CONNS     wrk connections (default 64)
#   BENCH_SERVER_THREADS   worker counts (default "1 2 4 8")
set -eu
BIN=$1
OUT=$2
SECS=${BENCH_SERVER_SECONDS:-3}
RUNS=${BENCH_SERVER_RUNS:-3}
CONNS=${BENCH_SERVER_CONNS:-64}
THREADS=${BENCH_SERVER_THREADS:-"1 2 4 8"}
SCHEDS="rr rs lqs as reuseport"
HERE=$(dirname "$0")

command -v wrk >/dev/null || { echo "bench-server: wrk is missing (make deps)"; exit 1; }
mkdir -p "$OUT"
ROOT=$(mktemp -d /tmp/fs-bench-XXXXXX)
trap 'rm -rf "$ROOT"' EXIT
# A 4 KiB page: a small static asset, served by sendfile.
head -c 4096 /dev/zero | tr '\0' 'x' > "$ROOT/page.html"

CPUS=$(nproc)
echo "bench-server: wrk -t2 -c$CONNS -d${SECS}s on 127.0.0.1, $RUNS runs per cell, $CPUS CPUs."
echo "bench-server: NOTE the load generator (wrk, 2 threads) shares these $CPUS CPUs with the"
echo "bench-server: server, as in the seed: read the numbers as a comparison of schedulers,"
echo "bench-server: not as the server's capacity."
CSV=$OUT/bench.csv
echo "scheduler,workers,run,requests_per_s,wrk_p99_us,server_p99_us,errors" > "$CSV"

# wrk's "99%  1.23ms" -> microseconds.
to_us() {
	awk '{ v=$1; u=v; sub(/[0-9.]+/, "", u); sub(/[a-z]+$/, "", v);
	       m = (u=="us") ? 1 : (u=="ms") ? 1000 : (u=="s") ? 1000000 : 0.001;
	       printf "%.1f", v*m }'
}

for run in $(seq 1 "$RUNS"); do
	for n in $THREADS; do
		for s in $SCHEDS; do
			json=$ROOT/stats.json
			"$BIN" --root "$ROOT" --port 0 --workers "$n" --scheduler "$s" \
			       --quiet --stats-json "$json" > "$ROOT/port" &
			pid=$!
			for _ in $(seq 1 100); do [ -s "$ROOT/port" ] && break; sleep 0.05; done
			port=$(head -n1 "$ROOT/port" 2>/dev/null || true)
			[ -n "$port" ] || { echo "bench-server: the server did not start ($s, $n workers)"; kill "$pid"; exit 1; }
			res=$(timeout $((SECS + 30)) wrk -t2 -c"$CONNS" -d"${SECS}s" --latency \
			      "http://127.0.0.1:$port/page.html" 2>&1 || true)
			kill -TERM "$pid"; wait "$pid" || true
			rps=$(echo "$res" | awk '/^Requests\/sec:/ { print $2 }')
			p99=$(echo "$res" | awk '$1 == "99%" { print $2 }' | to_us)
			errs=$(echo "$res" | awk '/Non-2xx|Socket errors/ { e = e $0 " " } END { gsub(/,/, ";", e); print e }')
			sp99=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['latency_ns']['p99']/1000)" "$json" 2>/dev/null || echo 0)
			echo "$s,$n,$run,${rps:-0},${p99:-0},$sp99,$errs" >> "$CSV"
			printf 'bench-server: run %s  %-9s %s workers  %10s req/s  wrk p99 %8s us\n' \
			       "$run" "$s" "$n" "${rps:-0}" "${p99:-0}"
			rm -f "$ROOT/port" "$json"
		done
	done
done
python3 "$HERE/plot_bench.py" "$CSV" "$OUT" "$CPUS" "$CONNS" "$SECS" "$RUNS"
cat "$OUT/table.md"

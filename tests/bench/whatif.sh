#!/usr/bin/env bash
# What-if checked against the fix: convoy's prediction for global_queue
# without its queue lock's waits, against work_stealing measured at the same
# worker count (the same tasks without the global lock). Prints a markdown row
# per worker count for docs/findings.md.
# Usage: tests/bench/whatif.sh BUILD_DIR [COUNTS] [REPEAT]
set -euo pipefail
build=${1:-build} counts=${2:-1,2} repeat=${3:-5}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
"$build/convoy" scale --json --repeat "$repeat" --threads "$counts" -o "$tmp/gq" -- \
	"$build/demos/global_queue" --workers '{threads}' >"$tmp/gq.json"
"$build/convoy" scale --json --repeat "$repeat" --threads "$counts" -o "$tmp/ws" -- \
	"$build/demos/work_stealing" --workers '{threads}' >"$tmp/ws.json"
python3 - "$tmp/gq.json" "$tmp/ws.json" <<'PY'
import json, sys
gq, ws = (json.load(open(p)) for p in sys.argv[1:3])
walls = {r["threads"]: r["wall_ns"] for r in ws["runs"]}
print("| threads | global_queue measured | finding | predicted without it | work_stealing measured |")
print("|---|---|---|---|---|")
for f in gq["findings"]:
    if f["kind"] not in ("acquisition-frequency", "lock-contention", "long-hold"):
        continue
    n = f["threads"]
    print(f"| {n} | {f['wall_ns']/1e6:.0f} ms | {f['kind']} on {f['objects'][0]} ({f['share']*100:.0f}% of lost time) "
          f"| {f['predicted_wall_ns']/1e6:.0f} ms | {walls.get(n, 0)/1e6:.0f} ms |")
PY

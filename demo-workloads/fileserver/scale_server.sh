#!/bin/sh
# scale_server.sh BUILD OUTDIR — the file server under `convoy scale`.
#
# convoy times each run, so each run must do a fixed amount of work and end
# by itself: the server's --load C:N starts its closed-loop load generator
# (a child process, without the profiler's environment), serves its N
# requests and exits. Sweeps round robin and random stealing over 1, 2, 4
# and 8 workers, then puts them side by side with `convoy diff`.
#
#   SCALE_SERVER_LOAD      C:N (default 32:60000)
#   SCALE_SERVER_THREADS   (default 1,2,4,8)
#   SCALE_SERVER_REPEAT    runs per count (default 3)
set -eu
BUILD=$1
OUT=$2
LOAD=${SCALE_SERVER_LOAD:-32:60000}
THREADS=${SCALE_SERVER_THREADS:-1,2,4,8}
REPEAT=${SCALE_SERVER_REPEAT:-3}
ROOT=$(mktemp -d /tmp/fs-scale-XXXXXX)
trap 'rm -rf "$ROOT"' EXIT
head -c 4096 /dev/zero | tr '\0' 'x' > "$ROOT/page.html"
rm -rf "$OUT"
mkdir -p "$OUT"
for s in rr rs; do
	echo "== convoy scale, --scheduler $s, load $LOAD (GET /page.html, 4 KiB)"
	"$BUILD/convoy" scale --threads "$THREADS" --repeat "$REPEAT" --timeout 120 -o "$OUT/$s" -- \
		"$BUILD/demos/fileserver" --root "$ROOT" --port 0 --quiet \
		--scheduler "$s" --workers '{threads}' --load "$LOAD:/page.html"
	echo
done
echo "== convoy diff: round robin (A) vs random stealing (B)"
"$BUILD/convoy" diff "$OUT/rr" "$OUT/rs"

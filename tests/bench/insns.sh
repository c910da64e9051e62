#!/usr/bin/env bash
# Instructions and conditional branches on a function's fall-through path
# (docs/performance.md, "The fast paths"): from its entry, following the
# not-taken side of every conditional branch and direct jumps within the
# function, to the first ret or indirect jmp (a tail call). For the fast
# paths that is the uncontended path; the count includes the prologue and
# epilogue, and a call is counted as one instruction.
# Usage: tests/bench/insns.sh LIBRARY FUNCTION...
set -eu
lib=${1:?library}; shift
dis=$(objdump -d --no-show-raw-insn "$lib")
for fn in "$@"; do
	printf '%s\n' "$dis" | awk -v f="<$fn>:" '$0 ~ f {on = 1; next} on && /^$/ {exit} on' |
	awk -v fn="$fn" '
	{ sub(/^ +/, ""); addr = $1; sub(/:$/, "", addr); $1 = ""; sub(/^ /, ""); ins[NR] = $0; at[addr] = NR }
	END {
		i = 1; n = 0; b = 0; steps = 0
		while ((i in ins) && steps++ < 1000) {
			s = ins[i]
			if (s ~ /^(nop|cs nop|xchg +%ax,%ax)/) { i++; continue }
			n++; split(s, p, /[ \t]+/); op = p[1]
			if (op ~ /^j/ && op != "jmp") b++
			if (op == "ret" || (op == "jmp" && s ~ /\*/)) break
			if (op == "jmp") { if (p[2] in at) { i = at[p[2]]; continue } else break }
			i++
		}
		printf "%-24s %3d instructions, %d conditional branches\n", fn, n, b
	}'
done

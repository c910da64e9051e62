#!/usr/bin/env python3
"""plot_bench.py CSV OUTDIR CPUS CONNS SECS RUNS -- bench-server's table and plots.

Medians over the runs of each (scheduler, workers) cell. Writes OUTDIR/table.md
(the seed's table at the largest worker count, then every cell) and
throughput.svg, speedup.svg, p99.svg: plain SVG written here, no plotting
library and no network.
"""
import csv
import statistics
import sys

NAMES = {"rr": "Round robin", "rs": "Random steal", "lqs": "Longest-queue steal",
         "as": "Adaptive steal", "reuseport": "SO_REUSEPORT per worker"}
COLORS = {"rr": "#d62728", "rs": "#1f77b4", "lqs": "#2ca02c", "as": "#ff7f0e",
          "reuseport": "#9467bd"}


def load(path):
    cells = {}
    with open(path) as f:
        for row in csv.DictReader(f):
            key = (row["scheduler"], int(row["workers"]))
            cells.setdefault(key, []).append(row)
    med = {}
    for key, rows in cells.items():
        med[key] = {
            "rps": statistics.median(float(r["requests_per_s"]) for r in rows),
            "p99": statistics.median(float(r["wrk_p99_us"]) for r in rows),
            "sp99": statistics.median(float(r["server_p99_us"]) for r in rows),
            "runs": len(rows),
            "errors": sum(1 for r in rows if r["errors"].strip()),
        }
    return med


def svg_plot(path, title, ylabel, series, xs, fmt="{:.0f}"):
    w, h, left, right, top, bottom = 640, 400, 70, 190, 40, 50
    ymax = max([v for s in series.values() for v in s if v is not None] + [1e-9]) * 1.1
    def X(i):
        return left + (w - left - right) * (i / max(1, len(xs) - 1))
    def Y(v):
        return top + (h - top - bottom) * (1 - v / ymax)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" '
           f'font-family="sans-serif" font-size="12">',
           f'<rect width="{w}" height="{h}" fill="white"/>',
           f'<text x="{w/2}" y="20" text-anchor="middle" font-size="14">{title}</text>']
    for k in range(6):
        v = ymax * k / 5
        out.append(f'<line x1="{left}" x2="{w-right}" y1="{Y(v):.1f}" y2="{Y(v):.1f}" stroke="#ddd"/>')
        out.append(f'<text x="{left-6}" y="{Y(v)+4:.1f}" text-anchor="end">{fmt.format(v)}</text>')
    for i, x in enumerate(xs):
        out.append(f'<text x="{X(i):.1f}" y="{h-bottom+18}" text-anchor="middle">{x}</text>')
    out.append(f'<text x="{(left + w - right)/2}" y="{h-10}" text-anchor="middle">worker threads</text>')
    out.append(f'<text x="16" y="{h/2}" transform="rotate(-90 16 {h/2})" text-anchor="middle">{ylabel}</text>')
    for n, (name, ys) in enumerate(series.items()):
        pts = [(X(i), Y(v)) for i, v in enumerate(ys) if v is not None]
        color = COLORS[name]
        out.append('<polyline fill="none" stroke-width="2" stroke="%s" points="%s"/>'
                   % (color, " ".join(f"{x:.1f},{y:.1f}" for x, y in pts)))
        for x, y in pts:
            out.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3" fill="{color}"/>')
        ly = top + 10 + 18 * n
        out.append(f'<line x1="{w-right+12}" x2="{w-right+32}" y1="{ly}" y2="{ly}" stroke="{color}" stroke-width="2"/>')
        out.append(f'<text x="{w-right+38}" y="{ly+4}">{NAMES[name]}</text>')
    out.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


def main():
    csv_path, outdir, cpus, conns, secs, runs = sys.argv[1:7]
    med = load(csv_path)
    scheds = [s for s in NAMES if any(k[0] == s for k in med)]
    xs = sorted({k[1] for k in med})
    top = xs[-1]
    rr = med.get(("rr", top), {}).get("rps") or 0
    lines = [
        f"wrk -t2 -c{conns} -d{secs}s against 127.0.0.1, a 4 KiB file; medians of {runs} runs "
        f"per cell. The load generator shares the machine's {cpus} CPUs with the server "
        f"(as in the seed): compare schedulers, do not read these as capacity.",
        "",
        f"Results at {top} threads:",
        "",
        "| Scheduler | Requests/s | vs RR | p99 latency (wrk) | p99 in server |",
        "|---|---|---|---|---|",
    ]
    for s in scheds:
        m = med.get((s, top))
        if not m:
            continue
        vs = f"{m['rps'] / rr:.2f}x" if rr else "-"
        lines.append(f"| {NAMES[s]} | {m['rps']:,.0f} | {vs} | {m['p99']:,.0f} µs | "
                     f"<= {m['sp99']:,.0f} µs |")
    lines += ["", "Every cell (requests/s, wrk p99):", "",
              "| Scheduler | " + " | ".join(f"{x} threads" for x in xs) + " |",
              "|---|" + "---|" * len(xs)]
    for s in scheds:
        cells = []
        for x in xs:
            m = med.get((s, x))
            cells.append(f"{m['rps']:,.0f} / {m['p99']:,.0f} µs" +
                         (" (errors)" if m["errors"] else "") if m else "-")
        lines.append(f"| {NAMES[s]} | " + " | ".join(cells) + " |")
    with open(f"{outdir}/table.md", "w") as f:
        f.write("\n".join(lines) + "\n")

    def series(field, norm=False):
        out = {}
        for s in scheds:
            base = med.get((s, xs[0]), {}).get(field)
            out[s] = [(med[(s, x)][field] / base if norm and base else med[(s, x)][field])
                      if (s, x) in med else None for x in xs]
        return out
    svg_plot(f"{outdir}/throughput.svg", "Throughput (wrk, shared 2-vCPU machine)",
             "requests/s", series("rps"), xs)
    svg_plot(f"{outdir}/speedup.svg", "Speedup over the same scheduler at 1 thread",
             "speedup", series("rps", norm=True), xs, fmt="{:.2f}")
    svg_plot(f"{outdir}/p99.svg", "p99 latency (wrk)", "µs", series("p99"), xs)


if __name__ == "__main__":
    main()

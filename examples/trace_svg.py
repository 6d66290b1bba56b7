#!/usr/bin/env python3
"""Draws one step of a lazytensor profile (the Chrome trace that lt::profiler or LT_PROFILE
writes) as an SVG: the step's tracing, its barrier and its execute span with every kernel, track
by track, and under it the kernel table of the whole recording.

    python3 examples/trace_svg.py trace.json step.svg [--step N]

N counts the recording's execute spans from 0 (default: the last, a step at steady state).
"""
import argparse
import collections
import html
import json
import sys

COLOURS = {"tracing": "#c6dbef", "barrier": "#fdae6b", "compile": "#e6550d", "execute": "#74c476",
           "kernel": "#31a354", "collective": "#756bb1", "transfer": "#9ecae1", "data": "#fdd0a2",
           "user": "#bcbddc"}
ROW, LEFT, WIDTH = 18, 170, 1000


def load(path):
    with open(path) as f:
        events = json.load(f)["traceEvents"]
    names = {}
    for e in events:
        if e["ph"] == "M" and e["name"] == "process_name":
            names[(e["pid"], None)] = e["args"]["name"]
        elif e["ph"] == "M" and e["name"] == "thread_name":
            names[(e["pid"], e["tid"])] = e["args"]["name"]
    spans = [e for e in events if e["ph"] == "X"]
    flows = [e for e in events if e["ph"] in ("s", "f")]
    return spans, flows, names


def step_window(spans, flows, step):
    """The times from the tracing before the step's barrier to the end of its execute span."""
    executes = sorted((s for s in spans if s["cat"] == "execute"), key=lambda s: s["ts"])
    if not executes:
        sys.exit("the trace has no execute span")
    step = step % len(executes)
    ex = executes[step]
    start, end = ex["ts"], ex["ts"] + ex["dur"]
    ends = [f for f in flows if f["ph"] == "f" and abs(f["ts"] - ex["ts"]) < 1e-3]
    for f in ends:
        for s in flows:
            if s["ph"] == "s" and s["id"] == f["id"]:
                barrier = [b for b in spans if b["name"] == "barrier" and b["ts"] <= s["ts"] <= b["ts"] + b["dur"]]
                for b in barrier:
                    start = min(start, b["ts"])
                    tracing = [t for t in spans if t["cat"] == "tracing" and abs(t["ts"] + t["dur"] - b["ts"]) < 50]
                    start = min([start] + [t["ts"] for t in tracing])
    return step, start, end


def rows_of(spans, start, end, names):
    """Per track, its spans in the window, each at the depth of its nesting."""
    tracks = collections.OrderedDict()
    for s in sorted(spans, key=lambda s: (s["pid"], s["tid"], s["ts"], -s["dur"])):
        if s["ts"] + s["dur"] < start or s["ts"] > end:
            continue
        key = (s["pid"], s["tid"])
        tracks.setdefault(key, [])
        tracks[key].append(s)
    out = []
    for (pid, tid), items in tracks.items():
        label = "%s / %s" % (names.get((pid, None), pid), names.get((pid, tid), tid))
        open_ends, placed = [], []
        for s in items:
            while open_ends and open_ends[-1] <= s["ts"]:
                open_ends.pop()
            placed.append((len(open_ends), s))
            open_ends.append(s["ts"] + s["dur"])
        out.append((label, placed, 1 + max(d for d, _ in placed)))
    return out


def kernel_table(spans, top=12):
    rows = collections.defaultdict(lambda: [0, 0.0, 0.0])
    for s in spans:
        if s["cat"] in ("kernel", "collective"):
            r = rows[s["name"]]
            r[0] += 1
            r[1] += s["dur"]
            r[2] += s["args"].get("bytes", 0)
    return sorted(rows.items(), key=lambda kv: -kv[1][1])[:top]


def svg(spans, flows, names, step):
    step, start, end = step_window(spans, flows, step)
    scale = WIDTH / max(end - start, 1e-3)
    parts, y = [], 30
    parts.append('<text x="4" y="16" font-weight="bold">step %d: %.1f us</text>' % (step, end - start))
    for label, placed, depth in rows_of(spans, start, end, names):
        parts.append('<text x="4" y="%d">%s</text>' % (y + 13, html.escape(str(label))))
        for d, s in placed:
            x0 = LEFT + max(s["ts"] - start, 0) * scale
            x1 = LEFT + min(s["ts"] + s["dur"] - start, end - start) * scale
            w = max(x1 - x0, 0.5)
            colour = COLOURS.get(s["cat"], "#bdbdbd")
            title = "%s (%.2f us) %s" % (s["name"], s["dur"], json.dumps(s.get("args", {})))
            parts.append('<rect x="%.2f" y="%d" width="%.2f" height="%d" fill="%s" stroke="#555" stroke-width="0.3">'
                         '<title>%s</title></rect>' % (x0, y + d * ROW, w, ROW - 2, colour, html.escape(title)))
            if w > 7 * len(s["name"]) * 0.6:
                parts.append('<text x="%.2f" y="%d">%s</text>' % (x0 + 2, y + d * ROW + 12, html.escape(s["name"])))
        y += depth * ROW + 8
    y += 10
    parts.append('<text x="4" y="%d" font-weight="bold">kernels by total time (whole recording)</text>' % y)
    y += 18
    parts.append('<text x="4" y="%d">%10s %8s %10s %8s  %s</text>' % (y, "total us", "calls", "mean us", "GB/s", "kernel"))
    for name, (calls, total, moved) in kernel_table(spans):
        y += 16
        rate = moved / (total * 1e3) if total > 0 else 0.0
        parts.append('<text x="4" y="%d">%10.1f %8d %10.2f %8.2f  %s</text>'
                     % (y, total, calls, total / calls, rate, html.escape(name)))
    height = y + 12
    return ('<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="monospace" font-size="11" '
            'xml:space="preserve">\n<rect width="100%%" height="100%%" fill="white"/>\n%s\n</svg>\n'
            % (LEFT + WIDTH + 20, height, "\n".join(parts)))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trace")
    parser.add_argument("out")
    parser.add_argument("--step", type=int, default=-1)
    args = parser.parse_args()
    spans, flows, names = load(args.trace)
    with open(args.out, "w") as f:
        f.write(svg(spans, flows, names, args.step))


if __name__ == "__main__":
    main()

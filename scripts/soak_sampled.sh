#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A long run under the shim, watched (issue 28's "long runs"; BENCHMARKS.md "Recording modes
# side by side"): runs CMD with the shim preloaded (GPUSHIM_MODE=sampled unless set), reads its
# resident memory and the trace's size every INTERVAL seconds into DIR/samples.tsv, and at the
# end prints what the trace says of the run as one JSON object (DIR/summary.json): windows
# opened and how many attached CUPTI again, warnings, GPU operations joined and unjoined, zero
# timestamps, records dropped and lost, launches between windows; the process's memory (first,
# a tenth of the way in, last, most, and the slope over the second half in MB a minute) and
# the trace's growth (MB an hour from its first bytes, and over the second half). Its exit
# status is CMD's, or 1 when CMD exited 0 but wrote no trace or the summary failed. One process:
# a second one CMD starts writes its own trace (soak-1.trace...), not summed here.
# Usage: scripts/soak_sampled.sh [DIR] -- CMD [ARG...]
#        env: BUILD (build), INTERVAL (1), GPUSHIM_* passed through to the shim
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
INTERVAL=${INTERVAL:-1}
DIR=
if [ "${1:-}" != "--" ]; then
	DIR=${1:-}
	shift
fi
[ "${1:-}" = "--" ] || {
	echo "usage: soak_sampled.sh [DIR] -- CMD [ARG...]" >&2
	exit 2
}
shift
[ $# -gt 0 ] || {
	echo "soak_sampled.sh: no command" >&2
	exit 2
}
CMD0=$1
DIR=${DIR:-$(mktemp -d)}
mkdir -p "$DIR" && DIR=$(cd "$DIR" && pwd)
SHIM=$BUILD/shim/libgpushim.so
GPUSHIM=$BUILD/analyzer/gpushim
[ -f "$SHIM" ] && [ -x "$GPUSHIM" ] || {
	echo "soak_sampled.sh: $BUILD is not built" >&2
	exit 2
}
TRACE=$DIR/soak.trace
rm -f "$TRACE"

printf 't_s\trss_kb\ttrace_bytes\n' >"$DIR/samples.tsv"
t0=$(date +%s%N)
LD_PRELOAD=$SHIM GPUSHIM_OUTPUT=$TRACE GPUSHIM_MODE=${GPUSHIM_MODE:-sampled} "$@" \
	>"$DIR/stdout" 2>"$DIR/stderr" &
pid=$!
trap 'kill "$pid" 2>/dev/null' TERM INT HUP
while kill -0 "$pid" 2>/dev/null; do
	rss=$(awk '/^VmRSS:/ {print $2}' "/proc/$pid/status" 2>/dev/null)
	size=$(stat -c %s "$TRACE" 2>/dev/null || echo 0)
	[ -n "$rss" ] && printf '%s\t%s\t%s\n' "$((($(date +%s%N) - t0) / 1000000))e-3" "$rss" \
		"$size" >>"$DIR/samples.tsv"
	sleep "$INTERVAL"
done
wait "$pid"
rc=$?
trap - TERM INT HUP
wall=$((($(date +%s%N) - t0) / 1000000))

"$GPUSHIM" info --format json "$TRACE" >"$DIR/info.json" 2>"$DIR/info.err"
"$GPUSHIM" report --format json "$TRACE" >"$DIR/report.json" 2>"$DIR/report.err"
python3 - "$DIR" "$rc" "$wall" <<'EOF' | tee "$DIR/summary.json"
import json, os, re, sys

d, rc, wall_ms = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])


def load(name):
    try:
        with open(os.path.join(d, name)) as f:
            return json.load(f)
    except (OSError, ValueError):
        return {}


info, rep = load("info.json"), load("report.json")
rows = []
with open(os.path.join(d, "samples.tsv")) as f:
    next(f)
    for line in f:
        t, rss, size = line.split()
        rows.append((float(t), int(rss), int(size)))


def slope(pts):
    """Least squares: units of y per unit of x; None with fewer than 3 points."""
    if len(pts) < 3:
        return None
    n = len(pts)
    mx = sum(p[0] for p in pts) / n
    my = sum(p[1] for p in pts) / n
    sxx = sum((p[0] - mx) ** 2 for p in pts)
    return sum((p[0] - mx) * (p[1] - my) for p in pts) / sxx if sxx else None


half = [r for r in rows if rows and r[0] >= rows[-1][0] / 2]
rss_slope = slope([(r[0], r[1] / 1024) for r in half])
trace_slope = slope([(r[0], r[2] / 1e6) for r in half])
notes = info.get("notes", [])
opens = [n["text"] for n in notes if n.get("kind") == "cupti_on" and
         n["text"].startswith("sampled window")]
g = rep.get("gpu") or {}
tr = rep.get("trace") or {}
span = (rows[-1][0] - rows[0][0]) if len(rows) > 1 else 0
# The trace's rate from its first bytes (the start-up before them is not the trace's).
grown = [r for r in rows if r[2] > 0]
tpath = os.path.join(d, "soak.trace")
trace_bytes = os.path.getsize(tpath) if os.path.exists(tpath) else 0
trace_span_s = wall_ms / 1000 - grown[0][0] if grown else 0
out = {
    "exit": rc,
    "wall_s": wall_ms / 1000,
    "mode": (rep.get("sampling") or {}).get("mode"),
    "windows": (rep.get("sampling") or {}).get("windows"),
    "window_opens": len(opens),
    "attached_again": sum(1 for x in opens if "attached again in" in x),
    "warnings": sorted({re.sub(r"[0-9.]+", "N", n["text"]) for n in notes
                        if n.get("kind") == "warning"}),
    "complete": tr.get("complete"),
    "lost_records": tr.get("lost_records"),
    "kernels": g.get("kernels"),
    "joined": g.get("joined"),
    "unjoined": g.get("unjoined"),
    "zero_timestamps": g.get("zero_timestamps"),
    "dropped": g.get("dropped"),
    "launches_between_windows": g.get("host_only_launches"),
    "rss_mb": {
        "first": rows[0][1] / 1024 if rows else None,
        "at_tenth": next((r[1] / 1024 for r in rows if r[0] >= span / 10 + rows[0][0]), None)
        if rows else None,
        "last": rows[-1][1] / 1024 if rows else None,
        "max": max(r[1] for r in rows) / 1024 if rows else None,
        "second_half_mb_per_min": rss_slope * 60 if rss_slope is not None else None,
    },
    "trace_mb": trace_bytes / 1e6,
    "trace_mb_per_hour": trace_bytes / 1e6 / (trace_span_s / 3600) if trace_span_s > 0
    else None,
    "trace_mb_per_hour_second_half": trace_slope * 3600 if trace_slope is not None else None,
    "samples": len(rows),
    "errors": [open(os.path.join(d, e)).read().strip()[:300]
               for e in ("info.err", "report.err") if os.path.getsize(os.path.join(d, e))],
}
print(json.dumps(out, indent=1))
EOF
py=${PIPESTATUS[0]}
if [ "$py" -ne 0 ]; then
	echo "soak_sampled.sh: the summary failed ($py)" >&2
	exit $((rc ? rc : 1))
fi
if [ "$rc" -eq 0 ] && [ ! -s "$TRACE" ]; then
	echo "soak_sampled.sh: $CMD0 wrote no trace at $TRACE" >&2
	exit 1
fi
exit "$rc"

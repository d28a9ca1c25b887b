#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""What a launch run's time column costs written as deltas and as gaps.

A LAUNCH_RUN (trace_format.h, up to format 1.3) stores each launch's time delta (its start
minus the previous launch's start) and its duration as two columns of LEB128 varints. The
delta is the previous launch's duration plus the gap between the two calls, and the duration
is already written: a column of gaps carries the same information in fewer bits, which is
what LAUNCH_GAP_RUN (format 1.4) writes. This script rebuilds a thread's launches from a trace
(`gpushim dump --format jsonl`) into runs of up to 4,096 launches, as the writer holds them,
and compresses both columns both ways with the zstd command line at the shim's default level
(3): bytes a launch, raw and compressed. A negative gap (a launch starting
before its predecessor returned: nested calls, clock trouble) is counted; the writer would end
the run there. The first launch of each run keeps its delta.

Usage: python3 scripts/launch_columns.py TRACE [GPUSHIM]
"""
import json
import os
import subprocess
import sys
import tempfile

RUN_MAX = 4096


def varint(v, out):
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)


def launches(gpushim, trace):
    """Per thread, in file order: (start ns, duration ns) of every launch."""
    p = subprocess.Popen([gpushim, "dump", "--format", "jsonl", trace],
                         stdout=subprocess.PIPE, text=True)
    by_thread = {}
    for line in p.stdout:
        if '"type":"launch"' not in line:
            continue
        r = json.loads(line)
        by_thread.setdefault(r["thread"], []).append((r["ts_ns"], r["dur"]))
    if p.wait() != 0:
        sys.exit(f"launch_columns: gpushim dump {trace} failed")
    return by_thread


def columns(by_thread, gaps):
    """The runs' two columns as the writer lays them out; returns (bytes, negative gaps)."""
    out, negative = bytearray(), 0
    for rows in by_thread.values():
        for i in range(0, len(rows), RUN_MAX):
            run = rows[i:i + RUN_MAX]
            out += bytes(16)			# the record's header and count/seq
            prev_t, prev_d = rows[i - 1] if i else run[0]
            for k, (t, d) in enumerate(run):
                v = t - prev_t
                if gaps and k:			# the first keeps its delta
                    if v < prev_d:
                        negative += 1
                    v = max(v - prev_d, 0)
                varint(v, out)
                prev_t, prev_d = t, d
            for _, d in run:
                varint(d, out)
            out += bytes(-len(out) % 8)
    return out, negative


def zstd_size(data):
    with tempfile.TemporaryDirectory() as tmp:
        raw = os.path.join(tmp, "cols")
        with open(raw, "wb") as f:
            f.write(data)
        subprocess.run(["zstd", "-q", "-3", "-f", raw, "-o", raw + ".zst"], check=True)
        return os.path.getsize(raw + ".zst")


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__.strip().splitlines()[-1])
    gpushim = sys.argv[2] if len(sys.argv) > 2 else "build/analyzer/gpushim"
    by_thread = launches(gpushim, sys.argv[1])
    n = sum(len(v) for v in by_thread.values())
    if not n:
        sys.exit("launch_columns: no launches")
    print(f"{n} launches in {len(by_thread)} threads")
    for name, gaps in (("deltas (LAUNCH_RUN)", False), ("gaps (LAUNCH_GAP_RUN)", True)):
        data, negative = columns(by_thread, gaps)
        z = zstd_size(data)
        print(f"{name}: raw {len(data)} bytes ({len(data) / n:.2f} a launch), zstd -3 {z} bytes "
              f"({z / n:.2f} a launch)" + (f", {negative} negative gaps" if gaps else ""))


if __name__ == "__main__":
    main()

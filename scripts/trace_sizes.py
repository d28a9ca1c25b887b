#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Where a trace's bytes go, for work on the format (BENCHMARKS.md): per record type, the raw
bytes and what zstd (level 3, the shim's default) makes of that type's records alone, chunk
by chunk; and, as an estimate for a format change not made yet, what GPU_KERNEL and GPU_API
records would cost as columns of varints (start delta, duration, CUPTI correlation delta, each
zigzag LEB128) with everything else unchanged.

Reads the file layout directly (trace_format.h): header, then chunks of a 16-byte header and a
zstd frame; records are type/size/dt headers. Needs the zstd command.

usage: scripts/trace_sizes.py TRACE
"""
import collections
import struct
import subprocess
import sys

GPU_KERNEL, GPU_API = 32, 37
NAMES = {1: "string", 2: "api_def", 3: "block", 4: "time", 5: "lost", 6: "end", 7: "device",
         8: "func", 9: "occupancy", 10: "note", 16: "launch", 17: "graph_launch",
         18: "host_func", 19: "mem", 20: "copy", 21: "set", 22: "sync", 23: "capture",
         24: "graph", 25: "module", 26: "call", 27: "launch_repeat", 28: "launch_run",
         29: "launch_refs",
         32: "gpu_kernel", 33: "gpu_memcpy", 34: "gpu_memset", 35: "gpu_info", 36: "gpu_corr",
         37: "gpu_api", 38: "gpu_kernel_run", 39: "gpu_api_run", 40: "pm_config",
         41: "pm_sample"}


def zstd(data, decompress=False):
    args = ["zstd", "-dc"] if decompress else ["zstd", "-3", "-c"]
    return subprocess.run(args, input=bytes(data), capture_output=True, check=True).stdout


def varint(x):
    out = bytearray()
    while x >= 0x80:
        out.append((x | 0x80) & 0xff)
        x >>= 7
    out.append(x)
    return out


def zigzag(x):
    return x << 1 if x >= 0 else ((-x) << 1) - 1


def chunks(data):
    off = struct.unpack_from("<I", data, 12)[0]
    while off + 16 <= len(data):
        _, _, _, zbytes = struct.unpack_from("<IIII", data, off)
        yield zstd(data[off + 16:off + 16 + zbytes], decompress=True)
        off += 16 + zbytes


def columns(recs):
    """(start, end, corr) triples as three zigzag-delta varint columns."""
    cols = [bytearray(), bytearray(), bytearray()]
    prev_start = prev_corr = 0
    for start, end, corr in recs:
        cols[0] += varint(zigzag(start - prev_start))
        cols[1] += varint(max(end - start, 0))
        cols[2] += varint(zigzag(corr - prev_corr))
        prev_start, prev_corr = start, corr
    return cols[0] + cols[1] + cols[2]


def main():
    data = open(sys.argv[1], "rb").read()
    raw, alone = collections.Counter(), collections.Counter()
    whole = estimate = n = 0
    for chunk in chunks(data):
        n += 1
        by_type = collections.defaultdict(bytearray)
        gpu = {GPU_KERNEL: [], GPU_API: []}
        off = 0
        while off + 8 <= len(chunk):
            rtype, size = struct.unpack_from("<HH", chunk, off)
            if size < 8:
                break
            by_type[rtype] += chunk[off:off + size]
            if rtype in gpu:
                gpu[rtype].append(struct.unpack_from("<QQI", chunk, off + 8))
            off += size
        whole += len(zstd(chunk))
        rest = bytearray()
        for rtype, recs in by_type.items():
            raw[rtype] += len(recs)
            alone[rtype] += len(zstd(recs))
            if rtype not in gpu:
                rest += recs
        estimate += len(zstd(rest)) + len(zstd(columns(gpu[GPU_KERNEL]) + columns(gpu[GPU_API])))
    print(f"{sys.argv[1]}: {len(data)} bytes, {n} chunks, zstd of the chunks {whole} bytes")
    print(f"{'type':<14} {'raw bytes':>12} {'zstd alone':>12}")
    for rtype in sorted(raw):
        print(f"{NAMES.get(rtype, rtype):<14} {raw[rtype]:>12} {alone[rtype]:>12}")
    print(f"estimate, gpu_kernel and gpu_api as columns: {estimate} bytes "
          f"({estimate / max(whole, 1):.2f} of the chunks now)")


if __name__ == "__main__":
    main()

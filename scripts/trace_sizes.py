#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Where a trace's bytes go, for work on the format (BENCHMARKS.md): per record type, the raw
bytes and what zstd (level 1, the shim's default) makes of that type's records alone, chunk
by chunk.

Reads the file layout directly (trace_format.h): header, then chunks of a 16-byte header and a
zstd frame; records are type/size/dt headers. Needs the zstd command.

usage: scripts/trace_sizes.py TRACE
"""
import collections
import struct
import subprocess
import sys

NAMES = {1: "string", 2: "api_def", 3: "block", 4: "time", 5: "lost", 6: "end", 7: "device",
         8: "func", 9: "occupancy", 10: "note", 16: "launch", 17: "graph_launch",
         18: "host_func", 19: "mem", 20: "copy", 21: "set", 22: "sync", 23: "capture",
         24: "graph", 25: "module", 26: "call", 27: "launch_repeat", 28: "launch_run",
         29: "launch_refs", 30: "launch_gap_run",
         32: "gpu_kernel", 33: "gpu_memcpy", 34: "gpu_memset", 35: "gpu_info", 36: "gpu_corr",
         37: "gpu_api", 38: "gpu_kernel_run", 39: "gpu_api_run", 40: "pm_config",
         41: "pm_sample"}


def zstd(data, decompress=False):
    args = ["zstd", "-dc"] if decompress else ["zstd", "-1", "-c"]
    return subprocess.run(args, input=bytes(data), capture_output=True, check=True).stdout


def chunks(data):
    off = struct.unpack_from("<I", data, 12)[0]
    while off + 16 <= len(data):
        _, _, _, zbytes = struct.unpack_from("<IIII", data, off)
        yield zstd(data[off + 16:off + 16 + zbytes], decompress=True)
        off += 16 + zbytes


def main():
    data = open(sys.argv[1], "rb").read()
    raw, alone = collections.Counter(), collections.Counter()
    whole = n = 0
    for chunk in chunks(data):
        n += 1
        by_type = collections.defaultdict(bytearray)
        off = 0
        while off + 8 <= len(chunk):
            rtype, size = struct.unpack_from("<HH", chunk, off)
            if size < 8:
                break
            by_type[rtype] += chunk[off:off + size]
            off += size
        whole += len(zstd(chunk))
        for rtype, recs in by_type.items():
            raw[rtype] += len(recs)
            alone[rtype] += len(zstd(recs))
    print(f"{sys.argv[1]}: {len(data)} bytes, {n} chunks, zstd of the chunks {whole} bytes")
    print(f"{'type':<14} {'raw bytes':>12} {'zstd alone':>12}")
    for rtype in sorted(raw):
        print(f"{NAMES.get(rtype, rtype):<14} {raw[rtype]:>12} {alone[rtype]:>12}")


if __name__ == "__main__":
    main()

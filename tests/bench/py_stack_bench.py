#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""py_stack_bench.py - what a captured synchronization costs in a Python process.

Calls the fake driver's cuStreamSynchronize N times through ctypes.PyDLL (the GIL held, so the
shim reads the Python frames; ctypes.CDLL with "nogil": released, read from the interpreter's
structures on CPython 3.11 - 3.13, native only before) from DEPTH nested Python
frames, and prints the calling thread's CPU ns and the wall ns a call, "bench: CPU_NS WALL_NS".
Run it under the shim with GPUSHIM_STACKS=1 and 0: the difference is the capture
(scripts/bench_stacks.sh).

Usage: py_stack_bench.py LIBCUDA_PATH N DEPTH [gil|nogil]
"""
import ctypes
import sys
import time


def nested(depth, fn):
    if depth > 1:
        return nested(depth - 1, fn)
    return fn()


def main():
    path, n, depth = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    hold = len(sys.argv) < 5 or sys.argv[4] == "gil"
    lib = ctypes.PyDLL(path) if hold else ctypes.CDLL(path)
    sync = lib.cuStreamSynchronize
    sync.argtypes = [ctypes.c_void_p]
    sync.restype = ctypes.c_int
    dev, ctx = ctypes.c_int(), ctypes.c_void_p()
    if (lib.cuInit(0) or lib.cuDeviceGet(ctypes.byref(dev), 0)
            or lib.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev)
            or lib.cuCtxSetCurrent(ctx)):
        sys.exit("py_stack_bench: the driver did not start")

    def loop(count):
        for _ in range(count):
            sync(None)

    nested(depth, lambda: loop(1000))           # warm: stacks interned, names known
    c0, w0 = time.thread_time_ns(), time.perf_counter_ns()
    nested(depth, lambda: loop(n))
    cpu, wall = time.thread_time_ns() - c0, time.perf_counter_ns() - w0
    print(f"bench: {cpu / n:.1f} {wall / n:.1f}")


if __name__ == "__main__":
    main()

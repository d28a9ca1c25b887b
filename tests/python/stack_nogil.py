#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""stack_nogil.py - Python frames read without the GIL, under stress (tests/e2e/shim_stacks_python.sh).

THREADS threads call the fake driver's cuStreamSynchronize through ctypes.CDLL, which releases
the GIL during the call (as PyTorch's operators do), CALLS times each, from a recursion DEPTH
deep inside a generator; meanwhile the main thread keeps asking for every thread's frames
(sys._current_frames(), which makes frame objects for the threads' frames while they are in the
call), collects garbage and makes and drops code objects (compile/exec), so the frames the shim
reads are being looked at and code objects come and go. Prints "deep FILE LINE FUNC" for the
call's line and "done N" with the calls made.

Usage: stack_nogil.py LIBCUDA_PATH [THREADS] [CALLS] [DEPTH]
"""
import ctypes
import gc
import sys
import threading


def main():
    path = sys.argv[1]
    nthreads = int(sys.argv[2]) if len(sys.argv) > 2 else 4
    calls = int(sys.argv[3]) if len(sys.argv) > 3 else 2000
    depth = int(sys.argv[4]) if len(sys.argv) > 4 else 30
    lib = ctypes.CDLL(path)
    lib.cuStreamSynchronize.argtypes = [ctypes.c_void_p]
    lib.cuStreamSynchronize.restype = ctypes.c_int
    dev = ctypes.c_int()
    ctx = ctypes.c_void_p()
    if (lib.cuInit(0) or lib.cuDeviceGet(ctypes.byref(dev), 0)
            or lib.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev)):
        sys.exit("stack_nogil: the driver did not start")
    line = sys._getframe().f_lineno + 5

    def syncs(n):
        for _ in range(n):
            lib.cuCtxSetCurrent(ctx)
            yield lib.cuStreamSynchronize(None)

    def deep(d, n):
        if d > 1:
            return deep(d - 1, n)
        return sum(syncs(n))

    print(f"deep {__file__} {line} syncs", flush=True)
    stop = threading.Event()
    threads = [threading.Thread(target=deep, args=(depth, calls)) for _ in range(nthreads)]
    for t in threads:
        t.start()
    rounds = 0
    while any(t.is_alive() for t in threads):
        frames = sys._current_frames()
        del frames
        exec(compile(f"x{rounds} = {rounds}", "<made>", "exec"), {})
        if rounds % 50 == 0:
            gc.collect()
        rounds += 1
    for t in threads:
        t.join()
    stop.set()
    print(f"done {nthreads * calls}", flush=True)


if __name__ == "__main__":
    main()

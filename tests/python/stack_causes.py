#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""stack_causes.py - causes at known lines, for the report's code locations
(tests/e2e/analyzer_where.sh).

Drives the fake driver with its fake CUPTI through ctypes.PyDLL (the GIL held during each call,
so the shim reads the Python frames) in a loop of steps, each:
    a blocking copy from pageable memory of a large buffer   -> memcpy
    CPU work in a function of its own (a busy loop)           -> cpu_bound
    a stream query (recorded, its stack never captured)
    a kernel launch                                           -> ends the CPU work
    a stream synchronization                                  -> (the fake GPU is done at once)
Prints "NAME FILE LINE FUNC" for each call site the report must name ("copy", "launch") and
for the line that calls the CPU-bound function ("cpu"), then "done".

With "nogil" after them, through ctypes.CDLL instead, which releases the GIL during each call,
as PyTorch's operators do: the shim reads the frames from the interpreter's own structures.

Usage: stack_causes.py LIBCUDA_PATH [STEPS] [CPU_MS] [nogil]
"""
import ctypes
import sys
import time


def here(name, delta=1):
    """Print where the caller's line @delta lines on is: NAME FILE LINE FUNC."""
    f = sys._getframe(1)
    print(f"{name} {f.f_code.co_filename} {f.f_lineno + delta} {f.f_code.co_name}", flush=True)


def preprocess(ms):
    """CPU-bound work: a busy loop of @ms milliseconds."""
    end = time.perf_counter() + ms / 1000.0
    x = 0
    while time.perf_counter() < end:
        x += 1
    return x


def step(lib, ctx, func, dptr, host, nbytes, cpu_ms, first):
    if first:
        here("copy")
    lib.cuMemcpyHtoD_v2(dptr, host, nbytes)
    if first:
        here("cpu")
    preprocess(cpu_ms)
    lib.cuStreamQuery(None)     # recorded, its stack never captured: the place is the launch's
    if first:
        here("launch")
    lib.cuLaunchKernel(func, 1, 1, 1, 32, 1, 1, 0, None, None, None)
    lib.cuStreamSynchronize(None)


def main():
    path = sys.argv[1]
    steps = int(sys.argv[2]) if len(sys.argv) > 2 else 40
    cpu_ms = float(sys.argv[3]) if len(sys.argv) > 3 else 2.0
    nogil = len(sys.argv) > 4 and sys.argv[4] == "nogil"
    lib = ctypes.CDLL(path) if nogil else ctypes.PyDLL(path)
    lib.cuMemcpyHtoD_v2.argtypes = [ctypes.c_uint64, ctypes.c_void_p, ctypes.c_size_t]
    lib.cuLaunchKernel.argtypes = [ctypes.c_void_p] + [ctypes.c_uint] * 7 + \
        [ctypes.c_void_p] * 3
    lib.cuStreamSynchronize.argtypes = [ctypes.c_void_p]
    for fn in (lib.cuMemcpyHtoD_v2, lib.cuLaunchKernel, lib.cuStreamSynchronize):
        fn.restype = ctypes.c_int
    dev = ctypes.c_int()
    ctx = ctypes.c_void_p()
    mod = ctypes.c_void_p()
    func = ctypes.c_void_p()
    dptr = ctypes.c_uint64()
    nbytes = 8 << 20
    if (lib.cuInit(0) or lib.cuDeviceGet(ctypes.byref(dev), 0)
            or lib.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev)
            or lib.cuCtxSetCurrent(ctx)
            or lib.cuModuleLoadData(ctypes.byref(mod), b"fake")
            or lib.cuModuleGetFunction(ctypes.byref(func), mod, b"_Z4spinv")
            or lib.cuMemAlloc_v2(ctypes.byref(dptr), ctypes.c_size_t(nbytes))):
        sys.exit("stack_causes: the driver did not start")
    host = ctypes.create_string_buffer(nbytes)
    for i in range(steps):
        step(lib, ctx, func, dptr, host, nbytes, cpu_ms, i == 0)
    print("done", flush=True)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""stack_steps.py - Python frames in the shim's call stacks (tests/e2e/shim_stacks_python.sh).

Calls the fake driver's cuStreamSynchronize through ctypes from known lines: through
ctypes.PyDLL, which keeps the GIL during the call (the shim reads the Python frames), and
through ctypes.CDLL, which releases it (the shim must not: it counts the skip). Prints one line
per call, "KIND FILE LINE FUNC / FILE LINE FUNC": the innermost two Python frames the trace must
show for it. Then checks in-process that the captures leave no reference behind (the code
object's reference count over many captures), the collector as it was, and an exception being
handled untouched.

Usage: stack_steps.py LIBCUDA_PATH [CALLS]
"""
import ctypes
import gc
import sys


def here(depth=1):
    """The caller's file, next line and function: where its next line's call is made."""
    f = sys._getframe(depth)
    return f"{f.f_code.co_filename} {f.f_lineno + 1} {f.f_code.co_name}"


def sync_with_gil(lib):
    where = here()
    lib.cuStreamSynchronize(None)
    return where


def sync_without_gil(lib):
    where = here()
    lib.cuStreamSynchronize(None)
    return where


def step(pylib, clib):
    """One training step's worth: a sync holding the GIL, then one that releases it."""
    outer = here()
    inner = sync_with_gil(pylib)
    print(f"gil {inner} / {outer}", flush=True)
    outer = here()
    inner = sync_without_gil(clib)
    print(f"nogil {inner} / {outer}", flush=True)


def main():
    path = sys.argv[1]
    calls = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
    pylib = ctypes.PyDLL(path)
    clib = ctypes.CDLL(path)
    for lib in (pylib, clib):
        lib.cuStreamSynchronize.argtypes = [ctypes.c_void_p]
        lib.cuStreamSynchronize.restype = ctypes.c_int
    dev = ctypes.c_int()
    ctx = ctypes.c_void_p()
    if (pylib.cuInit(0) or pylib.cuDeviceGet(ctypes.byref(dev), 0)
            or pylib.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev)
            or pylib.cuCtxSetCurrent(ctx)):
        sys.exit("stack_steps: the driver did not start")
    step(pylib, clib)

    # Many captures: the references the shim takes (frames, code, names) all given back. Its
    # cache of code objects holds one reference an entry: a loop that repeated itself leaves
    # the cache as it found it, so one round warms it, and the next must change nothing.
    code = sync_with_gil.__code__
    gc_was = gc.isenabled()

    def rounds(count):
        for _ in range(count):
            sync_with_gil(pylib)

    # Both rounds from one call site: the cache is keyed by code and instruction, and a second
    # call of rounds() from another line of main() is a frame it has not seen, which may
    # evict (give back) this code's entry - one run in a few dozen did, at random addresses.
    refs = []
    for count in (calls // 10, calls - calls // 10):
        rounds(count)
        refs.append(sys.getrefcount(code))
    before, after = refs
    if after != before:
        sys.exit(f"stack_steps: code object references {before} -> {after}")
    if gc.isenabled() != gc_was:
        sys.exit("stack_steps: the collector was left switched")
    try:
        raise KeyError("being handled")
    except KeyError as e:
        sync_with_gil(pylib)
        if sys.exc_info()[1] is not e:
            sys.exit("stack_steps: the exception being handled changed")
    print(f"refs ok: {calls} captures", flush=True)


if __name__ == "__main__":
    main()

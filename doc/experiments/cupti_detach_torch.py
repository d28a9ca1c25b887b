# SPDX-License-Identifier: MIT
"""CUPTI 13 in a PyTorch process: does detaching CUPTI (cuptiFinalize) between windows corrupt
it without the shim? BENCHMARKS.md run L: a shim build that detached from its writer thread
ended 7 of 9 PyTorch processes (heap corruption, "unspecified launch failure"), while run N's
C program survived the same detaches from a thread that makes no CUDA call. This script takes
the shim out: a Python thread that makes no CUDA call opens a window (kernel records) through
ctypes every 100 ms, closes it, flushes and, with --detach, finalizes CUPTI, while the main
thread runs a launch-bound eager loop (and with --graph a CUDA-graph loop). Results: BENCHMARKS
run P. On a GPU machine with PyTorch:
    for a in "" --detach "--detach --graph"; do python3 cupti_detach_torch.py $a; echo "exit $?"; done
It prints the windows done, the kernel records seen, and "done" when the loops ended; a crash
shows as the exit status (134: SIGABRT)."""
import argparse
import ctypes
import threading
import time

import torch

KIND_CONCURRENT_KERNEL = 10
FLUSH_FORCED = 1
BUF_BYTES = 4 << 20

REQ = ctypes.CFUNCTYPE(None, ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_size_t),
                       ctypes.POINTER(ctypes.c_size_t))
DONE = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_uint32, ctypes.c_void_p, ctypes.c_size_t,
                        ctypes.c_size_t)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--detach", action="store_true")
    ap.add_argument("--graph", action="store_true")
    ap.add_argument("--seconds", type=float, default=6.0)
    ap.add_argument("--attach-at-graph", action="store_true",
                    help="before the capture, the main thread attaches CUPTI again if it is "
                         "detached, and no window detaches it after")
    args = ap.parse_args()

    x = torch.randn(256, device="cuda")
    torch.cuda.synchronize()
    cupti = ctypes.CDLL("libcupti.so.13")   # the copy torch loaded, if it did
    buffers = {}
    records = [0]

    def req(buf, size, max_records):
        b = (ctypes.c_uint64 * (BUF_BYTES // 8))()   # 8-byte aligned
        buffers[ctypes.addressof(b)] = b
        buf[0] = ctypes.addressof(b)
        size[0] = BUF_BYTES
        max_records[0] = 0

    def done(ctx, stream, buf, size, valid):
        rec = ctypes.c_void_p(None)
        while cupti.cuptiActivityGetNextRecord(ctypes.c_void_p(buf), ctypes.c_size_t(valid),
                                               ctypes.byref(rec)) == 0:
            records[0] += 1
        buffers.pop(buf, None)

    req_cb, done_cb = REQ(req), DONE(done)
    stop = threading.Event()
    windows = [0]
    lock = threading.Lock()
    detached = [False]
    no_detach = [False]

    def windows_thread():
        while not stop.is_set():
            with lock:
                cupti.cuptiActivityRegisterCallbacks(req_cb, done_cb)
                detached[0] = False
                cupti.cuptiActivityEnable(KIND_CONCURRENT_KERNEL)
            time.sleep(0.05)
            with lock:
                cupti.cuptiActivityDisable(KIND_CONCURRENT_KERNEL)
                cupti.cuptiActivityFlushAll(FLUSH_FORCED)
                if args.detach and not no_detach[0]:
                    cupti.cuptiFinalize()
                    detached[0] = True
            windows[0] += 1
            time.sleep(0.05)

    t = threading.Thread(target=windows_thread)
    t.start()
    end = time.time() + args.seconds
    while time.time() < end:
        for _ in range(600):
            x = torch.tanh(x)
        torch.cuda.synchronize()
    if args.graph:
        if args.attach_at_graph:
            with lock:
                no_detach[0] = True
                if detached[0]:
                    cupti.cuptiActivityRegisterCallbacks(req_cb, done_cb)
                    detached[0] = False
        g = torch.cuda.CUDAGraph()
        s = torch.cuda.Stream()
        with torch.cuda.stream(s):
            y = x.clone()
            with torch.cuda.graph(g, stream=s):
                for _ in range(600):
                    y = torch.tanh(y)
        torch.cuda.synchronize()
        end = time.time() + args.seconds
        while time.time() < end:
            g.replay()
            torch.cuda.synchronize()
    stop.set()
    t.join()
    cupti.cuptiActivityFlushAll(FLUSH_FORCED)
    print(f"windows {windows[0]}, kernel records {records[0]}, done", flush=True)


if __name__ == "__main__":
    main()

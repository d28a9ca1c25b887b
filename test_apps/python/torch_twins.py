# SPDX-License-Identifier: MIT
"""PyTorch twins of test_apps/twins.cu: one known cause of GPU idle time per CASE, each in two
variants, `cause` (the loop that has it) and `fixed` (its twin with the usual fix), doing the
same GPU math (the checksum is the same). Ground truth for the what-if replay (issue 26):
gpu_check.py's part `twins` measures the fixed twin's real speedup.

  sync    a 2-layer MLP (2048 wide, batch 4096, plain SGD: ~3 ms of GPU a step), the loss
          added to a device accumulator, then 1 ms of the loop's own host work (Python
          bookkeeping). cause: loss.item() every step, which drains the queue and exposes that
          work. fixed: the accumulator read back every 50 steps and at the end.
          Expected: primary host_sync.
  launch  101 tiny in-place elementwise ops a step on a 64x64 tensor. cause: eager.
          fixed: the step captured once into a torch.cuda.CUDAGraph (after 3 eager warm-up
          steps on a side stream, as PyTorch asks), replayed every step.
          Expected: primary launch_overhead.
  memcpy  a 64 MiB CPU tensor to the device every step, then two kernels over it.
          cause: pageable, .cuda(). fixed: pinned, .to(non_blocking=True) on a copy stream,
          prefetched one step ahead. Expected: primary memcpy.
  alloc   a 256 MiB buffer written and folded into an accumulator every step.
          cause: torch.cuda.empty_cache() and a new buffer every step (cudaFree + cudaMalloc).
          fixed: the buffer allocated once, reused. Expected: primary allocation.
  cpu     every step's 1 MiB input made on the CPU (~2 ms: a per-step ramp and rounds of
          exact elementwise ops on one intra-op thread, into one of two pinned buffers),
          copied non_blocking, then ~2 ms of GPU work (a 3584^2 matrix product), then 1.5 ms
          of the loop's own host time (a sleep, which leaves the GIL to the other thread).
          cause: the input made inline. fixed: a background thread (as a DataLoader's) makes
          step i+1's input while step i runs. The loop's own host time is needed: without it
          the inline loop already overlaps its input with the GPU. Expected: primary cpu_bound.

The program measures its own steady rate over the steps after the first 10 % (a
torch.cuda.synchronize() at either end).

usage: torch_twins.py CASE VARIANT [--steps N]
Prints: "torch_twins CASE VARIANT: steps N steady_steps_per_s X checksum Y".
"""
import argparse
import queue
import threading
import time

import torch

WARM_SHARE = 10
DEV = "cuda"


class Clock:
    """The steady window: from step `warm` to the end, each end after a synchronization."""

    def __init__(self, steps):
        self.steps = steps
        self.warm = steps // WARM_SHARE
        self.t0 = self.t1 = None

    def step(self, i):
        if i == self.warm:
            torch.cuda.synchronize()
            self.t0 = time.perf_counter()

    def end(self):
        torch.cuda.synchronize()
        self.t1 = time.perf_counter()

    def rate(self):
        return (self.steps - self.warm) / (self.t1 - self.t0)


SYNC_HOST_S = 1e-3			# the sync loop's own host work a step


def busy(seconds):
    """Python work on the host for about `seconds` (holds the GIL, as bookkeeping does)."""
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


def case_sync(fixed, clock):
    # ~3 ms of matrix products a step against ~1 ms of Python launching them: the GPU work
    # hides the launches, and only what the host does after a read-back is exposed. Plain
    # SGD by hand: torch.optim's first step imports torch._dynamo (seconds of start-up).
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(2048, 2048), torch.nn.ReLU(),
                                torch.nn.Linear(2048, 2048)).to(DEV)
    params = list(model.parameters())
    x = torch.randn(4096, 2048, device=DEV)
    y = torch.randn(4096, 2048, device=DEV)
    acc = torch.zeros((), device=DEV, dtype=torch.float64)
    for i in range(clock.steps):
        clock.step(i)
        for p in params:
            p.grad = None
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        with torch.no_grad():
            for p in params:
                p.sub_(p.grad, alpha=1e-3)
        acc += loss.detach()
        if not fixed:
            loss.item()			# the per-step read-back (logging the loss)
        elif (i + 1) % 50 == 0 or i == clock.steps - 1:
            acc.item()
        busy(SYNC_HOST_S)		# the loop's own bookkeeping, on the host
    clock.end()
    return acc.item() + sum(p.double().sum().item() for p in params)


def case_launch(fixed, clock):
    x = torch.ones(64, 64, device=DEV)
    count = torch.zeros((), device=DEV)

    def step():
        for k in range(50):
            x.mul_(1.0 - (k + 1) * 1e-6).add_(k * 1e-7)
        count.add_(1.0)

    first = 0
    if fixed:
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for first in range(3):	# warm up outside the capture, as PyTorch requires
                clock.step(first)
                step()
            first += 1
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            step()			# recorded, not run
    for i in range(first, clock.steps):
        clock.step(i)
        if fixed:
            graph.replay()
        else:
            step()
    clock.end()
    return x.double().sum().item() + count.item()


def case_memcpy(fixed, clock):
    n = 16 << 20			# 64 MiB of floats
    host = (torch.arange(n) % 1000).float() * 1e-3
    out = torch.zeros(n, device=DEV)

    def weight(i):
        return 1.0 / (1 + i % 16)

    if not fixed:
        for i in range(clock.steps):
            clock.step(i)
            d = host.cuda()		# pageable: staged by the driver, and the host waits
            out.mul_(0.5).add_(d, alpha=weight(i))
        clock.end()
        return out.double().sum().item()

    pinned = host.pin_memory()
    copies = torch.cuda.Stream()
    cur = torch.cuda.current_stream()

    def load():
        with torch.cuda.stream(copies):
            return pinned.to(DEV, non_blocking=True)

    nxt = load()
    for i in range(clock.steps):
        clock.step(i)
        cur.wait_stream(copies)		# this step's batch is on the device
        d = nxt
        d.record_stream(cur)		# its memory is reused only after this step's kernels
        if i + 1 < clock.steps:
            nxt = load()		# the next batch's copy runs beside this step's kernels
        out.mul_(0.5).add_(d, alpha=weight(i))
    clock.end()
    return out.double().sum().item()


def case_alloc(fixed, clock):
    n, m = 64 << 20, 1 << 20		# a 256 MiB buffer folded 64 times onto 1 M floats
    torch.manual_seed(0)
    src = torch.rand(n, device=DEV)
    acc = torch.zeros(m, device=DEV)
    buf = None if not fixed else torch.empty(n, device=DEV)
    part = None
    for i in range(clock.steps):
        clock.step(i)
        if not fixed:
            buf = part = None
            torch.cuda.empty_cache()	# cudaFree of the cached blocks (waits for the GPU)
            buf = torch.empty(n, device=DEV)	# cudaMalloc
        torch.mul(src, 1.0 + (i % 7) * 0.01, out=buf)
        part = buf.view(64, m).sum(0)
        acc.mul_(0.5).add_(part, alpha=1.0 / 64)
    clock.end()
    return acc.double().sum().item()


CPU_N = 256 << 10			# 1 MiB of floats a step
CPU_ROUNDS = 6				# elementwise rounds: 2.3-3 ms a step on the H200 host
CPU_LOOP_S = 1.5e-3			# the loop's own host time a step


def cpu_prepare(i, dst):
    """Step i's input into the pinned tensor dst: a ramp that depends on the step, then rounds of
    x -> frac(3.7 x + 0.1). Only exactly rounded ops (mul, add, floor, sub), so vectorized and
    scalar code give the same bits whichever thread runs them."""
    x = torch.arange(CPU_N, dtype=torch.float32).mul_(1.0 / CPU_N).add_((i % 97) * 0.01)
    for _ in range(CPU_ROUNDS):
        x.mul_(3.7).add_(0.1)
        x.sub_(torch.floor(x))
    dst.copy_(x)


def case_cpu(fixed, clock):
    torch.set_num_threads(1)
    torch.manual_seed(0)
    side = 3584				# ~2 ms of fp32 matrix product on an H200
    w = torch.randn(side, side, device=DEV) / side ** 0.5
    state = torch.zeros(side, side, device=DEV)
    acc = torch.zeros(CPU_N, device=DEV)
    d = torch.empty(CPU_N, device=DEV)
    pinned = [torch.empty(CPU_N, pin_memory=True) for _ in range(2)]
    copied = [torch.cuda.Event() for _ in range(2)]
    prep = [0.0]
    ready = queue.Queue()
    free = [threading.Semaphore(1), threading.Semaphore(1)]

    def prepare(i):
        b = i % 2
        copied[b].synchronize()		# the copy that last read this buffer is done
        t = time.perf_counter()
        cpu_prepare(i, pinned[b])
        prep[0] += time.perf_counter() - t

    def producer():
        torch.set_num_threads(1)
        for i in range(clock.steps):
            free[i % 2].acquire()
            prepare(i)
            ready.put(i)

    if fixed:
        thread = threading.Thread(target=producer, daemon=True)
        thread.start()
    for i in range(clock.steps):
        clock.step(i)
        b = i % 2
        if fixed:
            got = ready.get()
            assert got == i
        else:
            prepare(i)
        d.copy_(pinned[b], non_blocking=True)
        copied[b].record()
        if fixed:
            free[b].release()		# recorded first: the producer waits for the copy
        acc.mul_(0.75).add_(d)
        state.view(-1)[:CPU_N].add_(d)
        state = torch.tanh(torch.mm(state, w))
        time.sleep(CPU_LOOP_S)		# the loop's own host time
    if fixed:
        thread.join()
    clock.end()
    print(f"torch_twins cpu {'fixed' if fixed else 'cause'}: prep_ms "
          f"{prep[0] * 1e3 / clock.steps:.3f} a step", flush=True)
    return acc.double().sum().item() + state.double().sum().item()


CASES = {
    # name: (function, default steps: ~1-3 s of the cause variant on an H200)
    "sync": (case_sync, 400),
    "launch": (case_launch, 2000),
    "memcpy": (case_memcpy, 200),
    "alloc": (case_alloc, 1000),
    "cpu": (case_cpu, 400),
}


def main():
    ap = argparse.ArgumentParser(description="PyTorch cause/fixed twins (see the docstring)")
    ap.add_argument("case", choices=sorted(CASES))
    ap.add_argument("variant", choices=("cause", "fixed"))
    ap.add_argument("--steps", type=int)
    args = ap.parse_args()
    fn, steps = CASES[args.case]
    steps = args.steps or steps
    if steps < 4 * WARM_SHARE:
        ap.error(f"--steps must be at least {4 * WARM_SHARE}")
    clock = Clock(steps)
    checksum = fn(args.variant == "fixed", clock)
    print(f"torch_twins {args.case} {args.variant}: steps {steps} steady_steps_per_s "
          f"{clock.rate():.3f} checksum {checksum:.10e}", flush=True)


if __name__ == "__main__":
    main()

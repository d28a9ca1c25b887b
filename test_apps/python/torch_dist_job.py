# SPDX-License-Identifier: MIT
"""A distributed job of WORLD ranks, one process each, one rank slowed on purpose: for the job
view of `gpushim report RANK-TRACES...` (scripts/gpu_check.py "job").

  allreduce  each step: a matmul, then an all-reduce of a 16 MiB tensor (an all-reduce
             benchmark)
  ddp        each step: forward, backward and an SGD step of an MLP under
             DistributedDataParallel (its gradient all-reduces overlap the backward pass)

Rank SLOW spends DELAY ms of CPU (a busy loop, as a slow data loader would) before each step's
work; the others wait for it in the step's first collective. Each step ends by reading its loss
on the host (.item(), as a loop that logs it does), so every rank starts a step when the last
one ended. The job report must name rank SLOW as the straggler, what waiting for it cost near
STEPS x DELAY, and cpu_bound as what made it late. With --run-ahead the loss is not read: the
other ranks queue their steps ahead, and rank SLOW's CPU work overlaps the previous
collective's own transfer, so the job loses DELAY less that transfer a step (which the report
measures; seen on the H200: 13.5 of 20 ms).

Several ranks on one GPU: NCCL refuses two ranks of one host on one device ("Duplicate GPU
detected"), so unless --same-host is given each rank gets its own NCCL_HOSTID and NCCL takes
them for separate hosts, connected through its socket transport on the loopback
(NCCL_SOCKET_IFNAME=lo, NCCL_IB_DISABLE=1). Their kernels are real NCCL kernels, and the
ranks' contexts share the GPU by time slices. On a machine with WORLD GPUs, rank r uses GPU r.

Without RANK in the environment the script starts WORLD copies of itself (RANK, WORLD_SIZE,
LOCAL_RANK, MASTER_ADDR, MASTER_PORT set; the rest of the environment, the shim's preload
included, passed on) and waits for them; it uses no CUDA itself. Each rank prints
"rank R: STEPS steps in S s"; the launcher prints "expect: straggler=SLOW delay_ms=DELAY
steps=STEPS" and exits non-zero if a rank did.

usage: torch_dist_job.py MODE [--world N] [--steps N] [--slow R] [--delay-ms D]
                         [--backend nccl|gloo] [--run-ahead] [--port P]
"""
import argparse
import os
import socket
import subprocess
import sys
import time


def args_():
    p = argparse.ArgumentParser()
    p.add_argument("mode", choices=("allreduce", "ddp"))
    p.add_argument("--world", type=int, default=2)
    p.add_argument("--steps", type=int, default=50)
    p.add_argument("--slow", type=int, default=1)
    p.add_argument("--delay-ms", type=float, default=20.0)
    p.add_argument("--backend", choices=("nccl", "gloo"), default="nccl")
    p.add_argument("--run-ahead", action="store_true")
    p.add_argument("--port", type=int, default=0)
    return p.parse_args()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def launch(a):
    port = a.port or free_port()
    procs = []
    for r in range(a.world):
        env = dict(os.environ, RANK=str(r), LOCAL_RANK=str(r), WORLD_SIZE=str(a.world),
                   MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
        procs.append(subprocess.Popen([sys.executable] + sys.argv, env=env))
    rc = 0
    for p in procs:
        rc = p.wait() or rc
    print(f"expect: straggler={a.slow} delay_ms={a.delay_ms:g} steps={a.steps}", flush=True)
    return rc


def busy(ms):
    end = time.perf_counter() + ms / 1000.0
    while time.perf_counter() < end:
        pass


def rank_main(a):
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    import torch
    import torch.distributed as dist

    ngpu = torch.cuda.device_count()
    dev = rank if ngpu >= world else 0
    if a.backend == "nccl" and ngpu < world and "NCCL_HOSTID" not in os.environ:
        os.environ["NCCL_HOSTID"] = f"gpushim-job-rank{rank}"
        os.environ.setdefault("NCCL_SOCKET_IFNAME", "lo")
        os.environ.setdefault("NCCL_IB_DISABLE", "1")
    torch.cuda.set_device(dev)
    dist.init_process_group(a.backend, rank=rank, world_size=world,
                            device_id=torch.device("cuda", dev) if a.backend == "nccl" else None)
    torch.manual_seed(1234 + rank)
    if a.mode == "allreduce":
        x = torch.randn(1024, 1024, device="cuda")
        w = torch.randn(1024, 1024, device="cuda")
        buf = torch.empty(4 << 20, device="cuda")

        def step():
            buf[: 1 << 20].copy_((x @ w).flatten())
            dist.all_reduce(buf)
            return buf[0]
    else:
        from torch.nn.parallel import DistributedDataParallel as DDP
        model = torch.nn.Sequential(torch.nn.Linear(1024, 2048), torch.nn.ReLU(),
                                    torch.nn.Linear(2048, 1024)).cuda()
        ddp = DDP(model, device_ids=[dev] if a.backend == "nccl" else None)
        opt = torch.optim.SGD(ddp.parameters(), lr=1e-3)
        xb = torch.randn(256, 1024, device="cuda")

        def step():
            opt.zero_grad(set_to_none=True)
            loss = ddp(xb).square().mean()
            loss.backward()
            opt.step()
            return loss

    for _ in range(3):                       # warm-up: NCCL's connections, cuBLAS
        step()
    torch.cuda.synchronize()
    dist.barrier()
    t0 = time.perf_counter()
    total = 0.0
    for _ in range(a.steps):
        if rank == a.slow:
            busy(a.delay_ms)
        loss = step()
        if not a.run_ahead:
            total += loss.item()
    torch.cuda.synchronize()
    dt = time.perf_counter() - t0
    print(f"rank {rank}: {a.steps} steps in {dt:.3f} s", flush=True)
    dist.barrier()
    dist.destroy_process_group()
    return 0


def main():
    a = args_()
    if "RANK" not in os.environ:
        return launch(a)
    return rank_main(a)


if __name__ == "__main__":
    sys.exit(main())

# SPDX-License-Identifier: MIT
"""The GPU end-to-end check, run by scripts/gpu-check.sh on a machine with an NVIDIA GPU: every
test app and PyTorch/JAX script under the shim, each result compared with what the program was
built to produce. Prints one PASS/FAIL line per check and a summary; writes traces, reports and
logs as archives into the output directory (few files: the GPU machine returns at most 8).

Checks, by issue:
  recording   exact counts for the driver-API and runtime-API apps; K .item() -> K stream
              syncs (two runs, the difference); cuBLAS and aten kernel names; JAX's launches
              through the dlsym door; program output unchanged by the shim
  cupti       one kernel record per launch and vice versa; a 200 us spin kernel measured within
              5 %; graph kernels joined to their cuGraphLaunch; torch.profiler keeps its CUDA
              events and the shim's trace has GPU records before and after the window
  profiler    torch.profiler holding CUPTI (torch_profiler_held.py): held from CUDA's start to
              the end, started mid-loop, on a wait/warmup/active schedule. Each: torch.profiler
              still gets its kernels; the shim's yield is noted inside the call that started
              the profiler, with no launch between; the stretches the shim held CUPTI have a
              GPU record for (nearly) every launch; the report's counter coverage and busy
              share are at most 100 % and it says which launches it left out
  findings    every test app's primary cause as in test_apps/expected/<app>.findings; memory
              pressure (oom_retry.cu, torch_oom_retry.py: refusals and one reclaim)
  diff        two runs of one program within noise (exit 0 at --fail-on 50); a per-step
              read-back added, and kernels added, reported with the right sign and size and
              tripping --fail-on 5; every trace's Chrome export valid, counts as reported
  counters    hardware counters: a streaming app reads DRAM above half of peak with the SM
              throughput low and is memory_bandwidth, an FMA app reads SM throughput high and
              is compute_bound, per kernel too; GPUSHIM_PM=0 says unknown; the cost of
              sampling (apps' own timings, launch cost, a PyTorch loop) with and without it
  robustness  DataLoader workers, alternative allocator backends, graph results bit-identical,
              fatal signals, exec and os._exit finishing the trace, torchrun with %r (a
              trace per rank, none taken by the launcher); then ends: pthread_exit of the
              main thread, 16 threads calling cuInit at once
  bench       host cost per launch: plain / shim without CUPTI / shim with CUPTI, side by side;
              then in 20 adjacent pairs (A B B A) each: the shim without CUPTI against
              plain, the shim with CUPTI against CUPTI alone, the shim with CUPTI and
              counters off against CUPTI alone and against counters on, the shim
              without CUPTI on the TSC against clock_gettime (GPUSHIM_TSC=0); with each
              configuration's CPU time a launch by kind of thread (loop, shim, others)
  perf        a PyTorch training loop: plain / shim / shim+CUPTI / torch.profiler step times,
              and the shim's trace size against torch.profiler's Chrome export
  nvtx        the program's NVTX ranges through the shim's injection (nvtx_steps.cu, NVTX v3
              headers; torch_nvtx_steps.py, torch.cuda.nvtx), each after a slow start-up:
              exactly the program's step count as "step" ranges, the CUDA app's domain and
              registered strings, ranges balanced, nothing lost, the start-up range first
  steps       the report's steps and phases on loops behind a slow start-up: torch_steps.py
              (launch stream; --nvtx: NVTX ranges; --compile: torch.compile) and jax_steps.py
              (XLA's own NVTX range a step): the program's step count (NVTX exactly, the launch
              stream within one), steps/s within 2 % of the program's own steady rate, the
              start-up apart (the verdict's window starts after it); torch.compile with
              NVTX step ranges
  ranges      the NVTX range table (report --by-range) of torch_ranges.py, whose ranges each
              hold one known cause, plain and under emit_nvtx(): "step" ranges are the steps,
              "data" (host work, nothing queued) idle with cpu_bound first, forward, backward
              and optimizer launching kernels, every step range the same launches
  twins       each cause beside its fixed twin (test_apps/twins.cu, torch_twins.py: sync,
              launch, memcpy, alloc, cpu): both variants plain, alternating, 3 rounds; the
              fixed twin's measured speedup (medians, with the rounds' spread) must be above
              3 % and the checksums equal; each variant once under the shim: the cause
              variant's verdict and time per cause and, where gpushim has `whatif`, the saving
              it predicts. One "TWINS name measured +X% (spread a..b) cause-verdict V" line a
              pair. Not in the default set (about 6 minutes): ground truth for issue 26
  modes       GPUSHIM_MODE: torch_twins.py sync, launch and cpu under full and sampled with
              CUPTI kept attached (GPUSHIM_CUPTI_DETACH=0, the default; the part detach tests
              the detaching variant) (same
              checksum; the sampled trace's windows, joins through CUPTI's API records, the
              full run's verdict, share and saving within 3 points plus the interval; the
              shares only where both runs ran the program within 10 % of one speed), host
              (no CUPTI), and five sampled torch_overhead.py runs that must end by exit. Not in
              the default set (about 3 minutes): issue 28
  soak        a long launch-bound PyTorch loop in the default sampled mode
              (SOAK_SECONDS, 480), watched by scripts/soak_sampled.sh: ends by exit, complete,
              nothing lost or dropped, a window every 4 s (CUPTI attached all along: none
              attaches it again), every window
              joined, memory growing < 0.5 MB a minute over the second half, the trace at a
              steady rate. Not in the default set: issue 28
  detach      sampled mode with CUPTI detached between windows (GPUSHIM_CUPTI_DETACH=1):
              torch_twins.py sync, launch and cpu against a full run (same checksum, the
              full run's verdict, share and saving within 3 points plus the interval, the
              shares as in modes; every
              window after the first attached again; kernels joined by launch order, at most
              1 % unjoined; no zero timestamps); ten detaching torch_overhead.py eager and
              graph runs that must end by exit (CUPTI attached for good at the graph); other
              programs (training, torch.compile, JAX, GPT-2, threads, torch.profiler) that
              must end by exit with the output of a plain run. Not in the default set: issue 28
  job         a distributed job on this machine's GPUs (test_apps/python/torch_dist_job.py:
              an all-reduce benchmark and a DDP loop with NCCL, each step's loss read back;
              figures only: the all-reduce run ahead, and with gloo; two ranks, rank 1 slowed
              30 ms a step; on one GPU NCCL's ranks take separate host ids):
              `gpushim report` of the ranks' traces names rank 1 the straggler, what waiting
              for it cost within 10 % of the delay injected and of what it cost the job (the
              loop against its twin with no rank slowed), and cpu_bound what made it late;
              each rank's communication and its overlap. Ranks sharing one GPU: the DDP
              loop's cost and first cause are only shown (time slices lengthen the late
              rank's kernels). Not in the default set: issue 30
  stackcost   what the call stacks cost a launch (issue 31): bench_launch in adjacent pairs,
              the shim with GPUSHIM_STACKS=0 against the default (one launch in 1000
              captured), without CUPTI and with it. Not in the default set
  analyzer    the analyzer on real traces of about 1 M and 10 M records (a launch-bound
              PyTorch loop under the shim with CUPTI): records per second and peak memory of
              `gpushim report`, and the reader alone (its ceiling); every kernel joined; not
              in the default set (minutes). GPUSHIM_COMPARE=<another gpushim binary>: that one
              too, on the same traces, its runs alternating with this build's (before/after)
"""
import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tarfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class Checker:
    def __init__(self, build, work, out, only):
        self.build = os.path.abspath(build)
        self.work = work
        self.out = out
        self.only = only
        self.gpushim = os.path.join(self.build, "analyzer", "gpushim")
        self.shim = os.path.join(self.build, "shim", "libgpushim.so")
        self.apps = os.path.join(self.build, "test_apps")
        self.py = os.path.join(ROOT, "test_apps", "python")
        self.passed = []
        self.failed = []
        self.lines = []
        for d in ("traces", "reports", "logs", "scratch"):
            os.makedirs(os.path.join(work, d), exist_ok=True)

    # ---- plumbing ----

    def say(self, line):
        print(line, flush=True)
        self.lines.append(line)

    def check(self, name, ok, detail=""):
        (self.passed if ok else self.failed).append(name)
        self.say(f"{'PASS' if ok else 'FAIL'} {name}{': ' + detail if detail else ''}")
        return ok

    def run(self, name, cmd, shim=True, env=None, timeout=300, keep=True):
        """Run cmd (under the shim unless shim=False); stdout/stderr to logs/. Returns
        (returncode, stdout, trace path or None, seconds). Traces not kept go to scratch/."""
        e = dict(os.environ)
        e.update(env or {})
        trace = None
        if shim:
            trace = os.path.join(self.work, "traces" if keep else "scratch", name + ".trace")
            if os.path.exists(trace):
                os.unlink(trace)
            e["LD_PRELOAD"] = self.shim
            e["GPUSHIM_OUTPUT"] = trace
        t0 = time.time()
        # Its own session, so that a timeout kills what it started too (DataLoader workers,
        # ranks, a shell's children), which would otherwise run on, holding the GPU and the
        # pipes.
        p = subprocess.Popen(cmd, env=e, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True, start_new_session=True)
        try:
            out, err = p.communicate(timeout=timeout)
            rc = p.returncode
        except subprocess.TimeoutExpired:
            try:
                os.killpg(p.pid, 9)
            except OSError:
                pass
            try:
                out, err = p.communicate(timeout=10)
            except subprocess.TimeoutExpired:	# a process that left the group holds a pipe
                p.kill()
                out, err = "", ""
            rc, err = 124, (err or "") + "\nTIMEOUT"
        dt = time.time() - t0
        with open(os.path.join(self.work, "logs", name + ".log"), "w") as f:
            f.write(f"$ {' '.join(cmd)}\nexit {rc} after {dt:.1f}s\n--- stdout\n{out}\n"
                    f"--- stderr\n{err}\n")
        if trace and not os.path.exists(trace):
            trace = None
        return rc, out, trace, dt

    def report(self, name, trace):
        p = subprocess.run([self.gpushim, "report", "--format", "json", trace],
                           capture_output=True, text=True)
        with open(os.path.join(self.work, "reports", name + ".json"), "w") as f:
            f.write(p.stdout)
        t = subprocess.run([self.gpushim, "report", trace], capture_output=True, text=True)
        with open(os.path.join(self.work, "reports", name + ".txt"), "w") as f:
            f.write(t.stdout + t.stderr)
        if p.returncode != 0:
            self.check(f"{name}: report", False, p.stderr.strip())
            return None
        return json.loads(p.stdout)

    def info(self, trace):
        p = subprocess.run([self.gpushim, "info", "--format", "json", trace],
                           capture_output=True, text=True)
        return json.loads(p.stdout) if p.returncode == 0 else {}

    def record(self, name, cmd, env=None, compare_plain=False, timeout=300):
        """Run under the shim, report, optionally compare stdout with a plain run."""
        rc, out, trace, dt = self.run(name, cmd, env=env, timeout=timeout)
        if not self.check(f"{name}: runs under the shim", rc == 0 and trace is not None,
                          f"exit {rc}, {dt:.1f}s" + ("" if trace else ", no trace")):
            return None, out
        if compare_plain:
            prc, pout, _, _ = self.run(name + "-plain", cmd, shim=False, env=env,
                                       timeout=timeout)
            self.check(f"{name}: output unchanged by the shim", prc == rc and pout == out,
                       "" if pout == out else f"plain {pout!r} vs shim {out!r}"[:300])
        return self.report(name, trace), out

    # ---- recording (the three doors, counts) ----

    def expect_line(self, out):
        m = re.search(r"^expect: (.*)$", out, re.M)
        return m.group(1).split() if m else []

    def check_expect(self, name, rep, out):
        for item in self.expect_line(out):
            key, _, want = item.partition("=")
            if key == "kernel":
                kname, _, n = want.partition(":")
                got = sum(k["launches"] for k in rep["kernels"] if k["name"].endswith(kname)
                          or kname in k["name"])
                self.check(f"{name}: launches of {kname}", got == int(n), f"{got} (want {n})")
            elif key == "mean_ns":
                ks = [k for k in rep["kernels"] if k["gpu_count"]]
                if self.check(f"{name}: kernel timed by CUPTI", bool(ks)):
                    got = ks[0]["mean_ns"]
                    err = abs(got - int(want)) / int(want)
                    self.check(f"{name}: GPU duration within 5 %", err <= 0.05,
                               f"mean {got} ns, want {want} ns ({100 * err:.2f} % off)")
            elif key in ("items", "replays"):
                continue
            else:
                got = rep["counts"].get(key)
                self.check(f"{name}: {key}", got == int(want), f"{got} (want {want})")

    def check_one_to_one(self, name, rep):
        """Every launch has exactly one kernel record and every kernel record one launch."""
        g = rep["gpu"]
        launches = sum(k["launches"] - k["launch_errors"] - k["captured"]
                       for k in rep["kernels"])
        gpu = sum(k["gpu_count"] - k["from_graphs"] for k in rep["kernels"])
        self.check(f"{name}: one kernel record per launch", launches == gpu,
                   f"{launches} launches, {gpu} kernel records, {g['unjoined']} unjoined "
                   f"(by correlation {g['join']['by_correlation']}, "
                   f"by API interval {g['join']['by_api_interval']})")
        self.check(f"{name}: every GPU record joined to its call", g["unjoined"] == 0,
                   f"{g['joined']} joined, {g['unjoined']} unjoined")

    def recording(self):
        cubin = os.path.join(self.apps, "kernels.cubin")
        for name, cmd in (("driver_api", [os.path.join(self.apps, "driver_api"), cubin]),
                          ("runtime_api", [os.path.join(self.apps, "runtime_api")]),
                          ("spin", [os.path.join(self.apps, "spin")])):
            rep, out = self.record(name, cmd, compare_plain=(name != "spin"))
            if rep:
                self.check_expect(name, rep, out)
                self.check(f"{name}: GPU timestamps from CUPTI", rep["gpu"]["source"] == "cupti",
                           rep["gpu"]["source"])
                self.check_one_to_one(name, rep)

        reps = {}
        for k in (10, 30):
            rep, _ = self.record(f"torch_items_{k}",
                                 [sys.executable, os.path.join(self.py, "torch_items.py"), str(k)],
                                 compare_plain=(k == 10))
            reps[k] = rep
        if reps[10] and reps[30]:
            d_sync = reps[30]["counts"]["stream_syncs"] - reps[10]["counts"]["stream_syncs"]
            self.check("torch_items: 20 more .item() -> 20 more stream syncs", d_sync == 20,
                       f"difference {d_sync} ({reps[10]['counts']['stream_syncs']} -> "
                       f"{reps[30]['counts']['stream_syncs']})")
            api = {a["name"]: a["calls"] for a in reps[30]["api"]}
            api10 = {a["name"]: a["calls"] for a in reps[10]["api"]}
            d_copy = api.get("cuMemcpyDtoHAsync_v2", 0) - api10.get("cuMemcpyDtoHAsync_v2", 0)
            self.check("torch_items: 20 more .item() -> 20 more cuMemcpyDtoHAsync_v2",
                       d_copy == 20, f"difference {d_copy}")
            names = [k["name"] for k in reps[30]["kernels"]]
            blas = [n for n in names if re.search(r"gemm|xmma|cutlass|sm90", n)]
            aten = [n for n in names if "at::native" in n or "at6native" in n]
            self.check("torch_items: cuBLAS kernel names", bool(blas), (blas or ["none"])[0][:80])
            self.check("torch_items: aten kernel names", bool(aten), (aten or ["none"])[0][:80])
            c = reps[30]["counts"]
            self.check("torch_items: graph replays are graph launches",
                       c["graph_launches"] >= 5, f"{c['graph_launches']} cuGraphLaunch")
            j = reps[30]["gpu"]["join"]
            self.check("torch_items: replayed kernels attributed to their graph launch",
                       j["graph_ops"] > 0 and j["graph_ops_to_graph_launch"] == j["graph_ops"],
                       f"{j['graph_ops_to_graph_launch']} of {j['graph_ops']} graph operations")
            self.check_one_to_one("torch_items_30", reps[30])
            doors = self.doors(os.path.join(self.work, "traces", "torch_items_30.trace"))
            self.check("torch_items: runtime through cuGetProcAddress", doors[1] > 100,
                       f"dlsym {doors[0]}, cuGetProcAddress {doors[1]}")

        rep, _ = self.record("jax_basic", [sys.executable, os.path.join(self.py, "jax_basic.py")],
                             compare_plain=True, env={"XLA_PYTHON_CLIENT_PREALLOCATE": "false"})
        if rep:
            launches = rep["counts"]["kernel_launches"]
            self.check("jax_basic: launches seen", launches >= 50, f"{launches} kernel launches")
            doors = self.doors(os.path.join(self.work, "traces", "jax_basic.trace"))
            self.check("jax_basic: driver reached through dlsym", doors[0] > 0,
                       f"dlsym {doors[0]}, cuGetProcAddress {doors[1]}")

    def doors(self, trace):
        for n in self.info(trace).get("notes", []):
            m = re.search(r"dlsym (\d+), cuGetProcAddress (\d+)", n["text"])
            if m:
                return int(m.group(1)), int(m.group(2))
        return 0, 0

    # ---- CUPTI coexistence ----

    def cupti(self):
        export = os.path.join(self.work, "logs", "torch_profiler_export.json")
        rep, out = self.record("torch_profiler_window",
                               [sys.executable, os.path.join(self.py, "torch_profiler_window.py"),
                                export])
        if not rep:
            return
        m = re.search(r"profiler_kernels=(\d+)", out)
        n = int(m.group(1)) if m else 0
        self.check("torch_profiler_window: torch.profiler still records CUDA kernels", n > 0,
                   f"{n} kernel events in its export")
        _, pout, _, _ = self.run("torch_profiler_window-plain",
                                 [sys.executable, os.path.join(self.py, "torch_profiler_window.py"),
                                  export + ".plain"], shim=False)
        m = re.search(r"profiler_kernels=(\d+)", pout)
        self.say(f"INFO torch_profiler_window without the shim: "
                 f"{m.group(1) if m else '?'} kernel events")
        notes = self.info(os.path.join(self.work, "traces", "torch_profiler_window.trace"))
        notes = notes.get("notes", [])
        off = [x["ts_ns"] for x in notes if x["kind"] == "cupti_off" and "yield" in x["text"]]
        on = [x["ts_ns"] for x in notes if x["kind"] == "cupti_on" and "resum" in x["text"]]
        if self.check("torch_profiler_window: window marked in the trace", bool(off and on),
                      f"yielded at {off[:1]}, resumed at {on[:1]}"):
            dump = subprocess.run([self.gpushim, "dump", "--format", "jsonl",
                                   os.path.join(self.work, "traces",
                                                "torch_profiler_window.trace")],
                                  capture_output=True, text=True).stdout
            before = after = 0
            for line in dump.splitlines():
                r = json.loads(line)
                if r["type"] == "gpu_kernel":
                    before += r["end_ns"] < off[0]
                    after += r["start_ns"] > on[-1]
            self.check("torch_profiler_window: GPU records before and after the window",
                       before > 0 and after > 0, f"{before} kernels before, {after} after")

    # ---- torch.profiler holding CUPTI ----

    @staticmethod
    def host_only_stretches(notes, end):
        """The stretches without the shim's GPU timestamps as the analyzer reads the notes
        (model_host_only): a CUPTI_OFF note to the next CUPTI_ON, in order of time; none when
        CUPTI was never on."""
        ev = sorted((n["ts_ns"], i, n["kind"]) for i, n in enumerate(notes)
                    if n["kind"] in ("cupti_on", "cupti_off"))
        if not any(k == "cupti_on" for _, _, k in ev):
            return []
        out, start = [], None
        for ts, _, k in ev:
            if k == "cupti_off" and start is None:
                start = ts
            elif k == "cupti_on" and start is not None:
                if ts > start:
                    out.append((start, ts))
                start = None
        if start is not None:
            out.append((start, max(end, start) + 1))
        return out

    def profiler(self):
        plain = None
        for mode in ("whole", "midloop", "schedule"):
            n = self.profiler_held(mode)
            if mode == "whole":
                plain = n
        if plain is not None:
            export = os.path.join(self.work, "scratch", "torch_profiler_held_whole-plain")
            _, out, _, _ = self.run("torch_profiler_held_whole-plain",
                                    [sys.executable, os.path.join(self.py, "torch_profiler_held.py"),
                                     "whole", "--export", export], shim=False, timeout=600)
            m = re.search(r"profiler_kernels=(\d+)", out)
            alone = int(m.group(1)) if m else 0
            self.check("torch_profiler_held_whole: torch.profiler gets as many kernels as "
                       "without the shim", alone > 0 and plain >= 0.95 * alone,
                       f"{plain} kernel events under the shim, {alone} without it")

    def profiler_held(self, mode):
        """One run of torch_profiler_held.py MODE; returns torch.profiler's kernel count."""
        name = f"torch_profiler_held_{mode}"
        export = os.path.join(self.work, "scratch", name)
        rep, out = self.record(name, [sys.executable,
                                      os.path.join(self.py, "torch_profiler_held.py"), mode,
                                      "--export", export], timeout=600)
        if not rep:
            return None
        trace = os.path.join(self.work, "traces", name + ".trace")
        val = {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", out)}
        kernels_seen = val.get("profiler_kernels", 0)
        self.check(f"{name}: torch.profiler still records CUDA kernels", kernels_seen > 0,
                   f"{kernels_seen} kernel events in {val.get('traces', 0)} export(s)")

        # The trace: notes, launches and kernel records (absolute CLOCK_MONOTONIC ns).
        notes = self.info(trace).get("notes", [])
        launches, kernels, end = [], [], 0
        dump = subprocess.run([self.gpushim, "dump", "--format", "jsonl", trace],
                              capture_output=True, text=True).stdout
        for line in dump.splitlines():
            r = json.loads(line)
            if r["type"] == "launch":
                launches.append(r["ts_ns"])
                end = max(end, r["ts_ns"])
            elif r["type"] == "gpu_kernel":
                kernels.append(r["start_ns"])
                end = max(end, r["end_ns"])
        launches.sort()
        kernels.sort()
        yields = sorted(n["ts_ns"] for n in notes if n["kind"] == "cupti_off"
                        and n["text"].startswith("yielded to the application's CUPTI client"))
        resumes = [n["ts_ns"] for n in notes if n["kind"] == "cupti_on"
                   and n["text"].startswith("resumed")]
        slow = [int(m.group(1)) for n in notes if n["kind"] == "warning"
                for m in [re.search(r"handing CUPTI to the application's client took (\d+) ms",
                                    n["text"])] if m]
        stretches = self.host_only_stretches(notes, end)
        self.say(f"INFO {name}: {len(launches)} launches, {len(kernels)} kernel records, "
                 f"{len(yields)} yields, {len(resumes)} resumptions, host-only stretches "
                 + ", ".join(f"{(b - a) / 1e6:.1f} ms" for a, b in stretches)
                 + (f"; hand-overs that took {slow} ms" if slow else ""))

        def between(v, a, b):
            return sum(1 for t in v if a <= t < b)

        # The yield: inside the call that made torch.profiler take CUPTI, nothing launched
        # between that call and it. 1 ms of slack for the two clocks' reads.
        ms = 1000000
        if mode == "schedule":
            calls = [(t0, t1) for _, _, b, t0, t1 in
                     re.findall(r"^transition (\d+) (\w+)->(\w+) (\d+) (\d+)$", out, re.M)
                     if b == "WARMUP"]
            calls = [(int(t0), int(t1)) for t0, t1 in calls]
            what = "prof.step() entering warm-up"
        else:
            calls = [(val["start_call"], val["start_return"])] if "start_call" in val else []
            what = "profile.start()"
        got = []
        for t0, t1 in calls:
            y = [t for t in yields if t0 - ms <= t <= t1 + ms]
            got.append(y[0] if y else None)
            if y:
                self.say(f"INFO {name}: yield {(y[0] - t0) / 1e6:.1f} ms after {what} was called; "
                         f"the call took {(t1 - t0) / 1e6:.1f} ms")
        self.check(f"{name}: the yield is noted inside {what}, each time",
                   bool(calls) and None not in got and len(yields) == len(calls),
                   f"{len(calls)} call(s), yields at "
                   + ", ".join("none" if y is None else f"+{(y - c[0]) / 1e6:.1f} ms"
                               for y, c in zip(got, calls))
                   + f"; {len(yields)} yield note(s) in all")
        early = sum(between(launches, c[0], y) for c, y in zip(calls, got) if y is not None)
        self.check(f"{name}: no launch between the profiler's start and the yield", early == 0,
                   f"{early} launches")
        self.check(f"{name}: handing CUPTI over took under 1 s", all(t < 1000 for t in slow),
                   f"{slow} ms" if slow else "under 50 ms each")
        self.check(f"{name}: the shim takes CUPTI back after the profiler",
                   len(resumes) >= len(calls) and bool(resumes),
                   f"{len(resumes)} resumptions for {len(calls)} profiler session(s)")

        # GPU records for the stretches the shim held CUPTI: from the first launch on, the
        # complement of the host-only stretches.
        held, edge = [], launches[0] if launches else 0
        for a, b in stretches:
            if a > edge:
                held.append((edge, a))
            edge = max(edge, b)
        if end > edge:
            held.append((edge, end + 1))
        n_l = n_k = 0
        empty = []
        for a, b in held:
            nl, nk = between(launches, a, b), between(kernels, a, b)
            n_l, n_k = n_l + nl, n_k + nk
            if nl >= 10 and nk == 0:
                empty.append(f"{(b - a) / 1e6:.1f} ms with {nl} launches")
        self.check(f"{name}: GPU records where the shim held CUPTI",
                   n_l > 0 and n_k >= 0.9 * n_l and not empty,
                   f"{n_k} kernel records for {n_l} launches in {len(held)} stretch(es)"
                   + (f"; none in {empty}" if empty else ""))
        inside = sum(between(launches, a, b) for a, b in stretches)
        g = rep["gpu"]
        self.check(f"{name}: the report counts the launches made while torch.profiler held "
                   "CUPTI", inside > 0 and g.get("host_only_launches") == inside,
                   f"report {g.get('host_only_launches')}, trace {inside}")

        # The report: never above 100 %, and it says what it left out.
        cov = (rep.get("counters") or {}).get("coverage_pct")
        busy = g.get("busy_pct")
        self.check(f"{name}: counter coverage and GPU busy at most 100 %",
                   (cov is None or cov <= 100.0) and (busy is None or busy <= 100.0),
                   f"coverage {cov} %, busy {busy} %, "
                   f"{(rep.get('counters') or {}).get('samples_left_out')} samples left out")
        excluded = (rep.get("verdict") or {}).get("excluded") or ""
        with open(os.path.join(self.work, "reports", name + ".txt")) as f:
            text = f.read()
        self.check(f"{name}: the report says what it left out",
                   "held CUPTI are left out" in excluded and "  covered  " in text
                   and "left out:" in rep["verdict"]["summary"],
                   excluded or "no verdict.excluded")
        return kernels_seen

    # ---- findings ----

    def expected(self, name):
        path = os.path.join(ROOT, "test_apps", "expected", name + ".findings")
        rules = []
        with open(path) as f:
            for line in f:
                line = line.split("#")[0].split()
                if line:
                    rules.append(line)
        return rules

    def check_findings(self, name, rep):
        causes = {a["cause"]: a for a in rep.get("attribution", [])}
        primary = rep.get("verdict", {}).get("primary")
        host = ("host_sync", "launch_overhead", "cpu_bound", "memcpy", "allocation")
        for rule in self.expected(name):
            if rule[0] == "primary":
                self.check(f"{name}: primary cause is {rule[1]}", primary == rule[1],
                           f"verdict {primary}; " + ", ".join(
                               f"{c} {a['share_pct']:.1f}%" for c, a in causes.items()
                               if a.get("share_pct") is not None))
            elif rule[0] == "flagged":
                self.check(f"{name}: {rule[1]} reported", rule[1] in causes,
                           ", ".join(causes) or "no causes")
            elif rule[0] == "counter":
                mean = (rep.get("counters") or {}).get("mean") or {}
                got = mean.get(rule[1])
                want = float(rule[3])
                ok = got is not None and (got > want if rule[2] == ">" else got < want)
                self.check(f"{name}: counter {rule[1]} {rule[2]} {rule[3]} %", ok,
                           f"{got} ({(rep.get('counters') or {}).get('samples')} samples; "
                           f"{(rep.get('counters') or {}).get('absent_reason') or ''})")
            elif rule[0] == "saves":
                got = (causes.get(rule[1]) or {}).get("saving_pct")
                self.check(f"{name}: fixing {rule[1]} alone saves {rule[2]} % or more (replay)",
                           got is not None and got >= float(rule[2]),
                           f"saving {got}; replay {json.dumps(rep.get('replay'))[:200]}")
            elif rule[0] == "class":
                # class CAUSE UNIT: the busy-time cause is measured, its share above 20 %, and
                # named by that pipe or memory level ("-" for none: latency_bound)
                a = causes.get(rule[1]) or {}
                ev = a.get("evidence") or {}
                unit = ev.get("pipe") or ev.get("level") or "-"
                self.check(f"{name}: {rule[1]} measured on {rule[2]} for 20 % or more",
                           a.get("status") == "measured" and (a.get("share_pct") or 0) >= 20
                           and (unit == rule[2] or (rule[2] == "copies"
                                                    and ev.get("device_copy_ns"))),
                           f"{a.get('status')} {a.get('share_pct')} % on {unit}; busy "
                           f"{json.dumps(ev.get('busy'))}")
            elif rule[0] == "used_well":
                ev = (causes.get("compute_bound") or {}).get("evidence") or {}
                self.check(f"{name}: compute_bound used_well is {rule[1]}",
                           str(ev.get("used_well")).lower() == rule[1], f"{ev.get('used_well')}")
            elif rule[0] == "kernel":
                # kernel NAME CLASS BY: the kernel's own counters class it so
                k = next((k for k in rep.get("kernels", []) if rule[1] in k["name"]), {})
                self.check(f"{name}: kernel {rule[1]} is {rule[2]}-bound by {rule[3]}",
                           k.get("bound") == rule[2] and (k.get("bound_by") or "-") == rule[3],
                           f"{k.get('bound')} by {k.get('bound_by')}; {json.dumps(k.get('counters'))}")
            elif rule[0] == "host_below":
                worst = max([causes[c]["share_pct"] or 0 for c in host if c in causes] or [0])
                self.check(f"{name}: no host-side cause above {rule[1]} %",
                           worst < float(rule[1]), f"largest host-side share {worst:.1f} %")

    # ---- where in the program: code locations of the causes' sites (issue 31) ----

    def where_site(self, rep, cause):
        """The cause's top site in a report, or None."""
        for c in rep.get("attribution", []):
            if c["cause"] == cause and c["evidence"].get("sites"):
                return c["evidence"]["sites"][0]
        return None

    def where(self):
        """Each mode of torch_where.py puts one cause at known lines: the cause's top site
        must name that file and line (cpu_bound: the lines of the calls around the CPU work);
        a C test app's top site names its own function."""
        for mode in ("item", "pageable", "alloc", "cpu"):
            name = f"where_{mode}"
            env = {"PYTORCH_NO_CUDA_MEMORY_CACHING": "1"} if mode == "alloc" else None
            steps = "100" if mode == "pageable" else "200"
            rep, out = self.record(name, [sys.executable, os.path.join(self.py, "torch_where.py"),
                                          mode, steps], env=env, compare_plain=(mode == "item"))
            m = re.search(r"^where: (\S+) (\S+)$", out, re.M)
            want = self.expect_line(out)
            if not rep or not m or not want:
                self.check(f"{name}: printed its lines", False, out[-300:])
                continue
            path, lines = m.group(1), [int(n) for n in m.group(2).split(",")]
            cause = want[0].partition("=")[2]
            rank = [c["cause"] for c in rep["attribution"] if c["status"] == "measured"]
            self.check(f"{name}: {cause} ranked first", rank[:1] == [cause], f"ranked {rank[:4]}")
            site = self.where_site(rep, cause)
            w = site and site.get("where")
            got = f"{w['file']}:{w.get('line')}" if w and w.get("file") else repr(w)
            if mode == "cpu":
                f = site and site.get("from")
                got_from = f"{f['file']}:{f.get('line')}" if f and f.get("file") else repr(f)
                self.check(f"{name}: top site between the calls around the CPU work",
                           got == f"{path}:{lines[0]}" and got_from == f"{path}:{lines[1]}",
                           f"from {got_from} to {got} (want from line {lines[1]} to "
                           f"{lines[0]}); {w and w.get('source')!r}")
            else:
                self.check(f"{name}: top site at the line", w is not None and
                           w.get("file") == path and w.get("line") in lines,
                           f"{got} (want {path}:{lines}); {w and w.get('source')!r}")
        # native frames: the C test apps' own functions
        for app, cause in (("host_sync", "host_sync"), ("pageable_copy", "memcpy")):
            rep, _ = self.record(f"where_{app}", [os.path.join(self.apps, app)])
            site = rep and self.where_site(rep, cause)
            w = site and site.get("where")
            self.check(f"where_{app}: top {cause} site in the app's own function",
                       bool(w) and w.get("language") == "native" and w.get("user") and
                       w.get("symbol") == "main" and (w.get("module") or "").endswith(app),
                       repr(w)[:300])

    # ---- a distributed job: communication and stragglers (issue 30) ----

    def job(self):
        """Two ranks, rank 1 slowed by DELAY ms of CPU before each of STEPS steps: the job
        view must name it, with the cost of waiting for it within 10 % of STEPS x DELAY."""
        steps, delay = 60, 30.0
        p = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True)
        shared = len([l for l in p.stdout.splitlines() if l.startswith("GPU ")]) < 2
        for mode, backend, ahead in (("allreduce", "nccl", False), ("ddp", "nccl", False),
                                     ("allreduce", "nccl", True), ("allreduce", "gloo", False)):
            name = f"job_{mode}_{backend}" + ("_ahead" if ahead else "")
            pattern = os.path.join(self.work, "traces", name + "-%r.trace")
            traces = [pattern.replace("%r", str(r)) for r in range(2)]
            for t in traces:
                if os.path.exists(t):
                    os.unlink(t)
            cmd = [sys.executable, os.path.join(self.py, "torch_dist_job.py"), mode,
                   "--backend", backend, "--steps", str(steps), "--delay-ms", str(delay)] + (
                       ["--run-ahead"] if ahead else [])
            # the preload by hand (run() names one trace): the launcher passes the
            # environment on to each rank, and GPUSHIM_OUTPUT's %r names each rank's trace
            rc, out, _, dt = self.run(name, cmd, shim=False, timeout=240,
                                      env={"LD_PRELOAD": self.shim, "GPUSHIM_OUTPUT": pattern})
            ok = rc == 0 and all(os.path.exists(t) for t in traces)
            if not self.check(f"{name}: both ranks ran under the shim", ok,
                              f"exit {rc}, {dt:.1f}s; " + "; ".join(
                                  l for l in out.splitlines() if l.startswith("rank"))):
                continue
            p = subprocess.run([self.gpushim, "report", "--format", "json"] + traces,
                               capture_output=True, text=True)
            t = subprocess.run([self.gpushim, "report"] + traces, capture_output=True, text=True)
            with open(os.path.join(self.work, "reports", name + ".json"), "w") as f:
                f.write(p.stdout)
            with open(os.path.join(self.work, "reports", name + ".txt"), "w") as f:
                f.write(t.stdout + t.stderr)
            if not self.check(f"{name}: report", p.returncode == 0, p.stderr.strip()[:300]):
                continue
            job = json.loads(p.stdout).get("job") or {}
            for r in job.get("per_rank", []):
                self.say(f"JOB {name} rank {r['rank']}: comm {r['comm_ns'] / 1e6:.2f} ms in "
                         f"{r['comm_kernels']} kernels, overlapped {r['comm_overlap_ns'] / 1e6:.2f}"
                         f" ms, waited {r['wait_ns'] / 1e6:.2f} ms, last at {r['arrived_last']}, "
                         f"cost {r['cost_ns'] / 1e6:.2f} ms")
            self.say(f"JOB {name}: matched {job.get('collectives_matched')}, unmatched "
                     f"{job.get('kernels_unmatched')}, kernels {job.get('collective_kernels')}, "
                     f"not matched: {job.get('not_matched')}")
            if backend == "gloo" or ahead:
                # gloo reduces on the host: no communication kernel to match. Run ahead: the
                # slow rank's CPU work overlaps the collectives' own transfers (figures only)
                continue
            s = job.get("straggler") or {}
            want = steps * delay * 1e6
            self.check(f"{name}: straggler rank 1", s.get("rank") == 1, json.dumps(s)[:300])
            cost = s.get("cost_ns") or 0
            # Two ranks on one GPU share it by time slices: while the waiting rank's NCCL
            # kernel spins, the late rank's own kernels run in fewer slices, so its lateness
            # grows past the delay (seen with DDP's forward and backward: +13 %; the
            # all-reduce benchmark's one matmul a step stays within 10 %). The DDP loop's
            # cost and cause are checked where each rank has its own GPU, only shown here.
            strict = not (shared and mode == "ddp")
            check = self.check if strict else (
                lambda n, ok, d="": self.say(f"ONE GPU {n}: {'holds' if ok else 'not'}: {d}"))
            check(f"{name}: waiting for it cost within 10 % of {steps} x {delay:g} ms",
                  abs(cost - want) <= 0.1 * want,
                  f"{cost / 1e6:.2f} ms (want {want / 1e6:.0f}), last at "
                  f"{s.get('arrived_last')} of {job.get('collectives_matched')}")
            # the fixed twin: the same job with no rank slowed; what the delay cost the job
            # is the difference of the ranks' loop times (on one GPU the ranks' contexts
            # share it by time slices, which a delay lengthens too)
            rc2, out2, _, _ = self.run(name + "_even", cmd[:-2] + ["--delay-ms", "0"],
                                       shim=False, timeout=240,
                                       env={"LD_PRELOAD": self.shim, "GPUSHIM_OUTPUT":
                                            os.path.join(self.work, "scratch",
                                                         name + "_even-%r.trace")})
            def loop_s(text):
                v = [float(x) for x in re.findall(r"^rank \d+: \d+ steps in ([\d.]+) s$",
                                                  text, re.M)]
                return max(v) if len(v) == 2 else None
            slow_s, even_s = loop_s(out), loop_s(out2)
            if self.check(f"{name}: the twin with no rank slowed ran", rc2 == 0 and
                          slow_s is not None and even_s is not None, f"exit {rc2}"):
                lost = (slow_s - even_s) * 1e9
                check(f"{name}: waiting for it cost within 10 % of what the delay cost "
                           f"the job (loop {slow_s:.3f} s against {even_s:.3f} s)",
                           abs(cost - lost) <= 0.1 * lost,
                           f"{cost / 1e6:.2f} ms against {lost / 1e6:.2f} ms")
            check(f"{name}: what made it late is cpu_bound", s.get("cause") == "cpu_bound",
                  f"{s.get('cause')}; above the other rank: {json.dumps(s.get('causes'))}; "
                  f"the latest: {json.dumps(s.get('latest'))}")
            cpu = next((c["excess_ns"] for c in s.get("causes") or [] if c["cause"] ==
                        "cpu_bound"), 0)
            self.check(f"{name}: cpu_bound on it above the other rank by 40 % of the delay "
                       f"or more", cpu >= 0.4 * want, f"{cpu / 1e6:.2f} ms")

    def stackcost(self):
        """Call stacks' cost on a launch-bound loop: GPUSHIM_STACKS=0 against the default."""
        self.bench_pairs(("shim, no CUPTI, stacks off", True,
                          {"GPUSHIM_CUPTI": "0", "GPUSHIM_STACKS": "0"}),
                         ("shim, no CUPTI", True, {"GPUSHIM_CUPTI": "0"}))
        self.bench_pairs(("shim, CUPTI, stacks off", True, {"GPUSHIM_STACKS": "0"}),
                         ("shim, CUPTI", True, {}))

    def findings(self):
        for app in ("launch_bound", "host_sync", "cpu_bound", "pageable_copy", "low_parallelism",
                    "memory_full", "healthy"):
            rep, _ = self.record(app, [os.path.join(self.apps, app)])
            if rep:
                self.check_findings(app, rep)
        for mode in ("launch_bound", "host_sync", "cpu_bound", "memcpy", "low_parallelism",
                     "memory_full", "healthy"):
            rep, _ = self.record(f"torch_{mode}",
                                 [sys.executable, os.path.join(self.py, "torch_patterns.py"), mode])
            if rep:
                self.check_findings(f"torch_{mode}", rep)
        rep, _ = self.record("torch_train", [sys.executable, os.path.join(self.py, "torch_train.py")])
        if rep:
            self.check_findings("torch_train", rep)
        # Memory pressure: refusals for want of memory, a reclaim (frees, then the retry).
        for name, cmd, failed, frees in (
                ("oom_retry", [os.path.join(self.apps, "oom_retry")], 1, 2),
                ("torch_oom_retry",
                 [sys.executable, os.path.join(self.py, "torch_oom_retry.py")], 3, None)):
            rep, _ = self.record(name, cmd)
            if not rep:
                continue
            p = (rep.get("memory") or {}).get("pressure") or {}
            self.check(f"{name}: {failed} allocation(s) refused for want of memory",
                       p.get("failed_allocations") == failed, json.dumps(p)[:300])
            self.check(f"{name}: one reclaim (frees, then a successful retry)",
                       p.get("reclaims") == 1 and (frees is None or
                                                   p.get("reclaim_frees") == frees),
                       json.dumps(p)[:300])

    # ---- diff and export ----

    def gpushim_json(self, args):
        p = subprocess.run([self.gpushim] + args, capture_output=True, text=True)
        try:
            return p.returncode, json.loads(p.stdout)
        except ValueError:
            return p.returncode, {"error": p.stderr.strip()[:300]}

    def diff(self):
        app = os.path.join(self.apps, "host_sync")
        lb = os.path.join(self.apps, "launch_bound")
        traces = {}
        for name, cmd in (("diff_host_sync_a", [app]), ("diff_host_sync_b", [app]),
                          ("diff_host_sync_end", [app, "0"]),
                          ("diff_launch_bound_10k", [lb, "10000"]),
                          ("diff_launch_bound_20k", [lb, "20000"])):
            rc, _, trace, dt = self.run(name, cmd)
            if self.check(f"{name}: runs under the shim", rc == 0 and trace is not None,
                          f"exit {rc}, {dt:.1f}s"):
                traces[name] = trace
        if len(traces) < 5:
            return
        rc, d = self.gpushim_json(["diff", "--format", "json", "--fail-on", "50",
                                   traces["diff_host_sync_a"], traces["diff_host_sync_b"]])
        self.check("diff: the same program twice exits 0 with --fail-on 50", rc == 0,
                   f"exit {rc}, span worse by {d.get('gate', {}).get('worse_by')} %")
        rc, d = self.gpushim_json(["diff", "--format", "json", "--fail-on", "5",
                                   traces["diff_host_sync_end"], traces["diff_host_sync_a"]])
        ch = {(c["kind"], c["key"]): c for c in d.get("changes", [])}
        memcpys = ch.get(("count", "memcpys"), {}).get("delta")
        hs = ch.get(("cause", "host_sync"), {})
        self.check("diff: a per-step read-back added trips --fail-on 5", rc == 1,
                   f"exit {rc}, span worse by {d.get('gate', {}).get('worse_by')} %")
        self.check("diff: +199 blocking copies reported", memcpys == 199, f"memcpys {memcpys}")
        self.check("diff: host_sync time lost grows", hs.get("delta", 0) > 0,
                   f"host_sync {hs.get('base')} -> {hs.get('new')} ns ({hs.get('status')})")
        rc, d = self.gpushim_json(["diff", "--format", "json", "--fail-on", "5",
                                   traces["diff_launch_bound_10k"],
                                   traces["diff_launch_bound_20k"]])
        ch = {(c["kind"], c["key"]): c for c in d.get("changes", [])}
        k = [c for c in d.get("changes", []) if c["kind"] == "kernel"]
        self.check("diff: 10000 kernels added trip --fail-on 5", rc == 1,
                   f"exit {rc}, span worse by {d.get('gate', {}).get('worse_by')} %")
        self.check("diff: +10000 launches, the kernel's count +10000",
                   ch.get(("count", "launches"), {}).get("delta") == 10000 and k and
                   k[0].get("new_count", 0) - k[0].get("base_count", 0) == 10000,
                   f"launches {ch.get(('count', 'launches'), {}).get('delta')}, "
                   f"kernel {k[0].get('base_count') if k else None} -> "
                   f"{k[0].get('new_count') if k else None}")
        # The timeline export of every trace recorded so far.
        tdir = os.path.join(self.work, "traces")
        bad = []
        n = 0
        for f in sorted(os.listdir(tdir)):
            path = os.path.join(tdir, f)
            out = os.path.join(self.work, "scratch", f + ".json")
            p = subprocess.run([self.gpushim, "export", "--format", "chrome", "-o", out, path],
                               capture_output=True, text=True)
            rc, rep = self.gpushim_json(["report", "--format", "json", path])
            try:
                with open(out) as fh:
                    ev = json.load(fh)["traceEvents"]
            except (OSError, ValueError) as exc:
                bad.append(f"{f}: {exc}")
                continue
            launches = sum(1 for e in ev if e.get("ph") == "X" and e.get("cat") == "launch")
            kernels = sum(1 for e in ev if e.get("ph") == "X" and e.get("cat") == "kernel")
            if p.returncode or launches != rep["counts"]["launches"] or \
                    kernels != rep["gpu"]["kernels"]:
                bad.append(f"{f}: exit {p.returncode}, {launches}/{rep['counts']['launches']} "
                           f"launches, {kernels}/{rep['gpu']['kernels']} kernels")
            n += 1
        self.check("export: every trace's timeline is valid JSON with the report's counts",
                   not bad and n > 0, f"{n} traces" + ("; " + "; ".join(bad[:3]) if bad else ""))

    # ---- NVTX ranges through the shim's injection ----

    def nvtx_records(self, trace):
        """Every record of @trace as `gpushim dump --format jsonl` gives it."""
        p = subprocess.run([self.gpushim, "dump", "--format", "jsonl", trace],
                           capture_output=True, text=True)
        if p.returncode != 0:
            return None
        return [json.loads(line) for line in p.stdout.splitlines() if line.strip()]

    def nvtx(self):
        """nvtx_steps.cu (NVTX v3 from the toolkit's headers, a 2 s start-up) and
        torch_nvtx_steps.py (torch.cuda.nvtx, a 3 s start-up) under the shim: exactly the
        program's steps as "step" ranges of the default domain, the CUDA app's forward/backward
        ranges in its "trainer" domain, every range balanced per thread and domain, nothing lost,
        the start-up range before the first CUDA call; the CUDA app's output unchanged."""
        for name, cmd, steps, plain in (
                ("nvtx_steps", [os.path.join(self.apps, "nvtx_steps"), "100"], 100, True),
                ("torch_nvtx_steps",
                 [sys.executable, os.path.join(self.py, "torch_nvtx_steps.py"), "50"], 50, False)):
            rep, _ = self.record(name, cmd, compare_plain=plain)
            trace = os.path.join(self.work, "traces", name + ".trace")
            if rep is None or not os.path.exists(trace):
                continue
            recs = self.nvtx_records(trace)
            if not self.check(f"{name}: dump", recs is not None):
                continue
            domains = {r["id"]: r.get("name_str") for r in recs if r["type"] == "nvtx_domain"}
            pushes = [r for r in recs if r["type"] == "nvtx_push"]
            pops = [r for r in recs if r["type"] == "nvtx_pop"]
            step = [r for r in pushes if r["domain"] == 0 and r.get("name_str") == "step"]
            self.check(f"{name}: step ranges = steps", len(step) == steps,
                       f"{len(step)} (want {steps}); {len(pushes)} pushes, {len(pops)} pops, "
                       f"domains {sorted(domains.values(), key=str)}")
            if name == "nvtx_steps":
                trainer = [i for i, n in domains.items() if n == "trainer"]
                for what in ("forward", "backward"):
                    n = sum(1 for r in pushes if r["domain"] in trainer and r.get("name_str") == what)
                    self.check(f"{name}: {what} ranges in domain trainer", n == steps,
                               f"{n} (want {steps}); domains {domains}")
            depth, low = {}, 0
            for r in sorted(pushes + pops, key=lambda r: r["ts_ns"]):
                key = (r["tid"], r["domain"] if r["type"] == "nvtx_push" else r["id"])
                depth[key] = depth.get(key, 0) + (1 if r["type"] == "nvtx_push" else -1)
                low = min(low, depth[key])
            self.check(f"{name}: ranges balanced", low == 0 and all(v == 0 for v in depth.values()),
                       f"lowest depth {low}, open at the end {sum(depth.values())}")
            self.check(f"{name}: nothing lost", rep["trace"]["lost_records"] == 0,
                       f"{rep['trace']['lost_records']} lost")
            calls = [r["ts_ns"] for r in recs if r.get("api") is not None and "ts_ns" in r]
            start = [r["ts_ns"] for r in pushes if r.get("name_str") == "startup"]
            self.check(f"{name}: start-up range before the first CUDA call",
                       bool(start) and bool(calls) and start[0] < min(calls),
                       f"startup at {start[:1]}, first call at {min(calls) if calls else None}")

    # ---- steps and phases ----

    def steps(self):
        """The report's steps of loops whose steps and rate the programs know themselves."""
        py = lambda f, *a: [sys.executable, os.path.join(self.py, f), *a]
        for name, cmd, source, exact in (
                ("steps_auto", py("torch_steps.py", "--steps", "200"), "launches", False),
                ("steps_nvtx", py("torch_steps.py", "--nvtx", "--steps", "200"), "nvtx", True),
                ("steps_compile", py("torch_steps.py", "--compile", "--steps", "200"),
                 "launches", False),
                ("steps_compile_nvtx", py("torch_steps.py", "--compile", "--nvtx", "--steps",
                                          "200"), "nvtx", True),
                # XLA names each module run with an NVTX range: under the shim, the steps.
                ("steps_jax", py("jax_steps.py", "--steps", "200"), "nvtx", True)):
            rep, out = self.record(name, cmd)
            m = re.search(r"steps (\d+) steady_steps_per_s ([0-9.]+)", out or "")
            if rep is None or not self.check(f"{name}: program's own figures", m is not None):
                continue
            want, rate = int(m.group(1)), float(m.group(2))
            st = rep.get("steps") or {}
            self.say(f"STEPS {name}: {json.dumps({k: v for k, v in st.items() if k != 'series'})}"
                     f"; program: {want} steps, {rate} steps/s; phases "
                     f"{[(p['name'], p['ns']) for p in rep.get('phases', [])]}; "
                     f"verdict: {rep['verdict']['summary']}")
            self.check(f"{name}: steps from {source}", st.get("source") == source,
                       f"{st.get('source')} ({st.get('why_none')})")
            got = st.get("count") or 0
            self.check(f"{name}: {want} steps" + ("" if exact else " within one"),
                       got == want if exact else abs(got - want) <= 1, f"{got}")
            per_s = st.get("per_s") or 0
            self.check(f"{name}: steps/s within 2 % of the program's", rate > 0 and
                       abs(per_s / rate - 1) < 0.02, f"{per_s:.3f} against {rate:.3f}")
            self.check(f"{name}: start-up before the window", rep["startup_ns"] >= 1e9 and
                       rep["span_ns"] < rep["trace_span_ns"],
                       f"startup {rep['startup_ns'] / 1e9:.2f} s, window "
                       f"{rep['span_ns'] / 1e9:.3f} of {rep['trace_span_ns'] / 1e9:.3f} s")

    # ---- the NVTX range table ----

    def ranges(self):
        """torch_ranges.py, plain and under emit_nvtx(): its ranges each hold a known cause."""
        py = lambda f, *a: [sys.executable, os.path.join(self.py, f), *a]
        for name, cmd in (("ranges", py("torch_ranges.py", "--steps", "60")),
                          ("ranges_emit", py("torch_ranges.py", "--emit", "--steps", "60"))):
            rep, out = self.record(name, cmd)
            m = re.search(r"steps (\d+) steady_steps_per_s ([0-9.]+)", out or "")
            if rep is None or not self.check(f"{name}: program's own figures", m is not None):
                continue
            want, rate = int(m.group(1)), float(m.group(2))
            st = rep.get("steps") or {}
            rows = {(r["domain"], r["name"]): r for r in rep.get("ranges", [])}
            mine = {n: rows.get((None, n)) for n in
                    ("step", "data", "forward", "backward", "optimizer", "log")}
            self.say(f"RANGES {name}: steps {st.get('source')} {st.get('name')} "
                     f"{st.get('count')}, {st.get('per_s')} steps/s (program {rate}); "
                     f"{len(rows)} names; " + "; ".join(
                         f"{n}: {json.dumps({k: r[k] for k in ('count', 'host_ns', 'launches', 'gpu_ns', 'idle_ns', 'top_cause', 'idle_by_cause_ns')})}"
                         for n, r in mine.items() if r) + f"; info {json.dumps(rep.get('ranges_info'))}")
            self.check(f"{name}: steps are the step ranges",
                       st.get("source") == "nvtx" and st.get("name") == "step" and
                       st.get("count") == want, f"{st.get('source')} {st.get('name')} "
                       f"{st.get('count')} (want nvtx step {want})")
            per_s = st.get("per_s") or 0
            self.check(f"{name}: steps/s within 2 % of the program's", rate > 0 and
                       abs(per_s / rate - 1) < 0.02, f"{per_s:.3f} against {rate:.3f}")
            if not self.check(f"{name}: every range in the table",
                              all(r is not None for r in mine.values()),
                              f"{sorted(str(k) for k in rows)[:20]}"):
                continue
            steady = st.get("count", 0) - st.get("warmup_steps", 0)
            self.check(f"{name}: each range once a steady step",
                       all(r["count"] == steady for r in mine.values()),
                       f"{[(n, r['count']) for n, r in mine.items()]} (want {steady})")
            d = mine["data"]
            self.check(f"{name}: data: idle, cpu_bound first",
                       d["top_cause"] == "cpu_bound" and d["idle_ns"] >= d["host_ns"] / 2,
                       f"top {d['top_cause']}, idle {d['idle_ns']} of {d['host_ns']} ns")
            self.check(f"{name}: forward, backward, optimizer launch",
                       all(mine[n]["launches"] >= mine[n]["count"] and mine[n]["gpu_ns"] > 0
                           for n in ("forward", "backward", "optimizer")),
                       f"{[(n, mine[n]['launches'], mine[n]['gpu_ns']) for n in ('forward', 'backward', 'optimizer')]}")
            per_step = mine["step"]["launches"] / max(1, mine["step"]["count"])
            self.check(f"{name}: step launches = the parts' launches",
                       mine["step"]["launches"] == sum(mine[n]["launches"] for n in
                                                       ("forward", "backward", "optimizer", "log", "data")),
                       f"step {mine['step']['launches']} ({per_step:.1f} a step)")
            if name == "ranges_emit":
                aten = [r for r in rep.get("ranges", []) if r["name"].startswith("aten::")]
                self.check(f"{name}: emit_nvtx's operator ranges in the table", len(aten) > 0,
                           f"{len(rows)} names")

    # ---- cause and fixed twins: the real speedup of each fix (issue 26, what-if replay) ----

    # case: (the cause it holds, whatif's change that takes it away, steps of twins.cu,
    # steps of torch_twins.py). Steps: ~1-2 s of the cause variant on an H200; the part (10
    # pairs, 3 plain rounds of both variants and one shim run of each, PyTorch's start-up
    # ~4 s a run) took 5.5 minutes there.
    TWINS = {
        "sync": ("host_sync", ["--no-sync"], 4000, 400),
        "launch": ("launch_overhead", ["--graph"], 3000, 2000),
        "memcpy": ("memcpy", ["--pinned"], 200, 200),
        "alloc": ("allocation", ["--no-alloc"], 2000, 1000),
        "cpu": ("cpu_bound", None, 500, 400),
    }
    TWINS_LINE = r"steps (\d+) steady_steps_per_s ([0-9.]+) checksum (\S+)"

    # ---- recording modes (issue 28) ----

    def against_full(self, name, verdict_check, label, full, rep, cause, rates=None):
        """A windowed report @rep (@label: its mode) against the full run's of the same
        program: both verdicts the program's @cause, and the cause's share and saving within
        3 points plus @rep's 95 % interval of the full run's. @rates, the program's own steady
        steps/s in (full, @rep): where they differ by more than 10 %, the two runs did not run
        the same program - full's cost on a launch-bound or CPU-bound step (+15-40 %) changes
        how much of the time its cause takes - and the shares are not compared (said why);
        the savings still are. Returns both runs' entries for the cause (None where absent)."""
        self.check(verdict_check,
                   rep["verdict"]["primary"] == full["verdict"]["primary"] == cause,
                   f"{label} {rep['verdict']['primary']}, full {full['verdict']['primary']}")
        cf = next((c for c in full["attribution"] if c["cause"] == cause), None)
        cs = next((c for c in rep["attribution"] if c["cause"] == cause), None)
        for what in ("share", "saving"):
            key, ci_key = f"{what}_pct", f"{what}_ci_pct"
            if not (cf and cs and cf.get(key) is not None and cs.get(key) is not None):
                continue
            ci = cs.get(ci_key) or 0
            if what == "share" and rates and None not in rates and rates[0] > 0 and \
                    abs(rates[1] / rates[0] - 1) > 0.10:
                self.say(f"NOT COMPARED {name}: share: the program ran at {rates[1]} steps/s "
                         f"under {label} against {rates[0]} under full ({label} "
                         f"{cs[key]:.2f} +-{ci:.2f}, full {cf[key]:.2f})")
                continue
            self.check(f"{name}: {what} within 3 points + its interval of full's",
                       abs(cs[key] - cf[key]) <= 3 + ci,
                       f"{label} {cs[key]:.2f} +-{ci:.2f}, full {cf[key]:.2f}")
        return cf, cs

    MODES_WINDOWS = {"GPUSHIM_WINDOW_MS": "100", "GPUSHIM_WINDOW_EVERY_MS": "1000",
                     "GPUSHIM_CUPTI_DETACH": "0"}

    def modes(self):
        """GPUSHIM_MODE on programs with a known cause (torch_twins.py sync, launch and cpu,
        about 10 s each, windows of 100 ms every 1000 ms): each run under `full` and under
        `sampled`, outputs' checksums equal; the sampled trace has its windows (mode note,
        a window a second), every kernel joined, its kernels joined through CUPTI's API
        records (not only by launch order), no zero timestamps; its verdict is the full run's
        and the cause's share and saving within 3 points plus their 95 % interval of the full
        run's. `host`: no CUPTI, the launches all there. Five sampled runs of
        torch_overhead.py's eager and graph loops end by exit (a crash seen once with a change
        since withdrawn); the first's kernels all joined through API records, and the GPU busy
        no longer than its windows cover. Not in the default set (about 3 minutes)."""
        cases = (("sync", "host_sync", 2400), ("launch", "launch_overhead", 8000),
                 ("cpu", "cpu_bound", 2000))
        script = os.path.join(self.py, "torch_twins.py")
        for case, cause, steps in cases:
            cmd = [sys.executable, script, case, "cause", "--steps", str(steps)]
            reps, sums = {}, {}
            for mode in ("full", "sampled"):
                env = dict(self.MODES_WINDOWS, GPUSHIM_MODE=mode)
                rep, out = self.record(f"modes_{case}_{mode}", cmd, env=env, timeout=300)
                m = re.search(self.TWINS_LINE, out or "")
                sums[mode] = (m.group(3), float(m.group(2))) if m else (None, None)
                reps[mode] = rep
            name = f"modes {case}"
            self.check(f"{name}: checksum the same in both modes",
                       sums["full"][0] is not None and sums["full"][0] == sums["sampled"][0],
                       f"{sums}")
            full, smp = reps["full"], reps["sampled"]
            if not full or not smp:
                continue
            sp = smp.get("sampling") or {}
            self.check(f"{name}: sampled trace has its windows",
                       sp.get("mode") == "sampled" and (sp.get("windows") or 0) >= 5,
                       f"{sp}")
            g = smp["gpu"]
            self.check(f"{name}: sampled: every kernel joined", g["unjoined"] == 0,
                       f"{g['unjoined']} unjoined of {g['kernels']}")
            self.check(f"{name}: sampled: joined through CUPTI's API records",
                       g["join"]["by_api_interval"] + g["join"]["by_correlation"] > 0,
                       f"{g['join']}")
            self.check(f"{name}: sampled: no zero timestamps", g["zero_timestamps"] == 0,
                       f"{g['zero_timestamps']}")
            cf, cs = self.against_full(name, f"{name}: sampled verdict = full verdict",
                                       "sampled", full, smp, cause,
                                       (sums["full"][1], sums["sampled"][1]))
            self.say(f"MODES {case}: full {cf and cf.get('share_pct')} / "
                     f"{cf and cf.get('saving_pct')}, sampled {cs and cs.get('share_pct')} "
                     f"+-{cs and cs.get('share_ci_pct')} / {cs and cs.get('saving_pct')} "
                     f"+-{cs and cs.get('saving_ci_pct')}, windows {sp.get('windows')}, "
                     f"covered {sp.get('covered_pct')} %")
        rep, _ = self.record("modes_host", [sys.executable, script, "sync", "cause", "--steps",
                                            "200"], env={"GPUSHIM_MODE": "host"})
        if rep:
            self.check("modes host: no GPU timestamps, every launch",
                       rep["gpu"]["source"] == "host" and rep["counts"]["launches"] > 3000,
                       f"{rep['gpu']['source']}, {rep['counts']['launches']} launches")
        ov = os.path.join(self.py, "torch_overhead.py")
        for i in range(5):
            rc, _, trace, dt = self.run(f"modes_overhead_{i}",
                                        [sys.executable, ov, "--loops", "eager,graph",
                                         "--warm", "0.2", "--seconds", "2"],
                                        env={"GPUSHIM_MODE": "sampled",
                                             "GPUSHIM_CUPTI_DETACH": "0",
                                             "GPUSHIM_WINDOW_MS": "50",
                                             "GPUSHIM_WINDOW_EVERY_MS": "500"}, keep=i == 0)
            self.check(f"modes: sampled torch_overhead run {i} ends by exit", rc == 0,
                       f"exit {rc} after {dt:.1f}s")
            rep = self.report(f"modes_overhead_{i}", trace) if i == 0 and trace else None
            if rep:
                # Graph replays launched just before a window opens run in it: the API
                # records' lead gives them their call (without it, 600 kernels a window).
                g = rep["gpu"]
                self.check("modes: sampled eager+graph loops: every kernel joined through "
                           "API records", g["unjoined"] == 0 and g["kernels"] > 0 and
                           g["join"]["by_launch_order"] == 0,
                           f"{g['unjoined']} unjoined of {g['kernels']}, {g['join']}")
                # A graph in flight at a window's close got ends 75-176 ms late from CUPTI
                # (the shim drops them): the GPU cannot be busy longer than the windows.
                sp = rep.get("sampling") or {}
                self.check("modes: sampled eager+graph loops: GPU busy within the windows",
                           g["busy_ns"] <= 1.05 * (sp.get("covered_ns") or 0),
                           f"busy {g['busy_ns']} ns, windows cover {sp.get('covered_ns')} ns")

    DETACH_ENV = {"GPUSHIM_MODE": "sampled", "GPUSHIM_CUPTI_DETACH": "1",
                  "GPUSHIM_WINDOW_MS": "100", "GPUSHIM_WINDOW_EVERY_MS": "1000"}

    def detach(self):
        """GPUSHIM_CUPTI_DETACH=1 on programs with a known cause (see modes()): each case
        under full and under sampled with CUPTI detached between windows of 100 ms every
        1000 ms. A detaching sampled run asks for no API records (after a detach they had
        corrupted the heap), so every kernel joins its launch by order: at most 1 % may stay
        unjoined. Also what detaching and attaching took (the windows' notes); then programs
        that must end by exit with a plain run's output, CUDA graphs keeping CUPTI attached."""
        cases = (("sync", "host_sync", 2400), ("launch", "launch_overhead", 8000),
                 ("cpu", "cpu_bound", 2000))
        script = os.path.join(self.py, "torch_twins.py")
        for case, cause, steps in cases:
            cmd = [sys.executable, script, case, "cause", "--steps", str(steps)]
            reps, sums = {}, {}
            for mode, env in (("full", {"GPUSHIM_MODE": "full"}), ("detach", self.DETACH_ENV)):
                rep, out = self.record(f"detach_{case}_{mode}", cmd, env=env, timeout=300)
                m = re.search(self.TWINS_LINE, out or "")
                sums[mode] = (m.group(3), float(m.group(2))) if m else (None, None)
                reps[mode] = rep
            name = f"detach {case}"
            self.check(f"{name}: checksum the same in both modes",
                       sums["full"][0] is not None and sums["full"][0] == sums["detach"][0],
                       f"{sums}")
            full, smp = reps["full"], reps["detach"]
            if not full or not smp:
                continue
            sp = smp.get("sampling") or {}
            self.check(f"{name}: windows", sp.get("mode") == "sampled" and
                       (sp.get("windows") or 0) >= 5, f"{sp}")
            notes = self.info(os.path.join(self.work, "traces",
                                           f"detach_{case}_detach.trace")).get("notes", [])
            ons = [n["text"] for n in notes if n["kind"] == "cupti_on" and
                   n["text"].startswith("sampled window")]
            times = [(float(a), float(b)) for x in ons for a, b in
                     re.findall(r"detached in ([0-9.]+) ms, attached again in ([0-9.]+) ms", x)]
            first = [x for x in ons if re.fullmatch(
                r"sampled window 1 \(CUPTI attached in [0-9.]+ ms\)", x)]
            self.check(f"{name}: CUPTI first attached by window 1, one period in, and "
                       "again by every window after it",
                       len(ons) >= 2 and len(first) == 1 and len(times) == len(ons) - 1,
                       f"{len(ons)} windows, first {first}, {len(times)} attached again")
            if times:
                det = sorted(t[0] for t in times)
                att = sorted(t[1] for t in times)
                self.say(f"DETACH {case}: detach ms median {det[len(det) // 2]} "
                         f"(max {det[-1]}), attach ms median {att[len(att) // 2]} "
                         f"(max {att[-1]}), {len(times)} times")
            g = smp["gpu"]
            self.check(f"{name}: at most 1 % of kernels unjoined",
                       g["kernels"] > 0 and g["unjoined"] <= 0.01 * g["kernels"],
                       f"{g['unjoined']} unjoined of {g['kernels']}, {g['join']}")
            self.check(f"{name}: no zero timestamps", g["zero_timestamps"] == 0,
                       f"{g['zero_timestamps']}")
            cf, cs = self.against_full(name, f"{name}: verdict = full verdict", "detach",
                                       full, smp, cause, (sums["full"][1], sums["detach"][1]))
            self.say(f"DETACH {case}: full {cf and cf.get('share_pct')} / "
                     f"{cf and cf.get('saving_pct')} at {sums['full'][1]} steps/s, detach "
                     f"{cs and cs.get('share_pct')} +-{cs and cs.get('share_ci_pct')} / "
                     f"{cs and cs.get('saving_pct')} +-{cs and cs.get('saving_ci_pct')} at "
                     f"{sums['detach'][1]} steps/s, windows {sp.get('windows')}, covered "
                     f"{sp.get('covered_pct')} %, join {g['join']}, unjoined {g['unjoined']}")
        # The CI fixture of a detaching run (tests/traces/h200/torch_twins_sync_detach): the
        # attached one's program and windows (torch_twins_sync_sampled), CUPTI detached between.
        rep, out = self.record("torch_twins_sync_detach",
                               [sys.executable, script, "sync", "cause", "--steps", "800"],
                               env=dict(self.DETACH_ENV, GPUSHIM_WINDOW_MS="50",
                                        GPUSHIM_WINDOW_EVERY_MS="250"))
        if rep:
            g, sp = rep["gpu"], rep.get("sampling") or {}
            self.say(f"DETACH fixture: {(out or '').strip().splitlines()[-1:]!r}, windows "
                     f"{sp.get('windows')}, covered {sp.get('covered_pct')} %, kernels "
                     f"{g['kernels']}, unjoined {g['unjoined']}, join {g['join']}, verdict "
                     f"{rep['verdict'].get('primary')}")
        ov = os.path.join(self.py, "torch_overhead.py")
        for i in range(10):
            env = dict(self.DETACH_ENV, GPUSHIM_WINDOW_MS="50", GPUSHIM_WINDOW_EVERY_MS="500")
            rc, _, trace, dt = self.run(f"detach_overhead_{i}",
                                        [sys.executable, ov, "--loops", "eager,graph",
                                         "--warm", "0.2", "--seconds", "2"], env=env,
                                        keep=i == 0)
            self.check(f"detach: torch_overhead run {i} ends by exit", rc == 0,
                       f"exit {rc} after {dt:.1f}s")
            rep = self.report(f"detach_overhead_{i}", trace) if i == 0 and trace else None
            if rep:
                g, sp = rep["gpu"], rep.get("sampling") or {}
                self.check("detach: eager+graph loops: GPU busy within the windows",
                           g["busy_ns"] <= 1.05 * (sp.get("covered_ns") or 0),
                           f"busy {g['busy_ns']} ns, windows cover {sp.get('covered_ns')} ns")
                self.say(f"DETACH overhead: kernels {g['kernels']}, unjoined {g['unjoined']} "
                         f"(graph kernels: {g['join'].get('graph_ops')}), join {g['join']}, "
                         f"zero timestamps {g['zero_timestamps']}")
                notes = [n["text"] for n in self.info(trace).get("notes", [])]
                graphs = [x for x in notes if x.startswith("CUDA graphs in use")]
                self.check("detach: the graph loop keeps CUPTI attached (one note)",
                           len(graphs) == 1 and "could not" not in graphs[0], f"{graphs}")
                self.say(f"DETACH overhead: {graphs}")
        py = lambda *a: [sys.executable, os.path.join(self.py, a[0])] + list(a[1:])
        for name, cmd in (("train", py("torch_train.py")),
                          ("steps_compile", py("torch_steps.py", "--compile", "--steps", "200")),
                          ("jax_steps", py("jax_steps.py", "--steps", "200")),
                          ("gpt2", py("hf_gpt2_steps.py", "--steps", "40")),
                          ("dataloader", py("torch_workers.py", "dataloader")),
                          ("workers_graph", py("torch_workers.py", "graph")),
                          ("profiler_window", py("torch_profiler_window.py", os.path.join(
                              self.work, "logs", "detach_profiler_export.json")))):
            env = dict(self.DETACH_ENV, GPUSHIM_WINDOW_MS="50", GPUSHIM_WINDOW_EVERY_MS="250")
            rc, out, trace, dt = self.run(f"detach_{name}", cmd, env=env)
            prc, pout, _, _ = self.run(f"detach_{name}-plain", cmd, shim=False)
            self.check(f"detach {name}: ends by exit", rc == 0 == prc, f"exit {rc} (plain {prc})")
            notes = [n["text"] for n in self.info(trace).get("notes", [])] if trace else []
            nd = sum(1 for x in notes if "attached again in" in x)
            gr = [x for x in notes if x.startswith("CUDA graphs in use")]
            self.say(f"DETACH {name}: exit {rc} in {dt:.1f}s, {nd} windows attached again, "
                     f"{gr}; output same as plain: {out == pout}; last line "
                     f"{(out or '').strip().splitlines()[-1:]!r} plain "
                     f"{(pout or '').strip().splitlines()[-1:]!r}")

    def soak(self):
        """A long launch-bound loop in the default sampled mode, watched by
        scripts/soak_sampled.sh (SOAK_SECONDS, 480 by default: a device call is at most 10
        minutes): torch_overhead.py's eager loop at ~80,000 launches a second. The program
        ends by exit; the trace is complete with nothing lost and no record CUPTI dropped; a
        window every 4 s, CUPTI attached all along (the default: none attaches it again); no zero
        timestamps and at most 1 % of the kernels unjoined; the process's memory over the
        second half grows less than 0.5 MB a minute; the trace grows at a steady rate (its
        second half's MB an hour within 25 % of the whole run's). Not in the default set:
        issue 28's long run, as long as this machine allows."""
        secs = float(os.environ.get("SOAK_SECONDS", "480"))
        d = os.path.join(self.work, "soak")
        cmd = ["bash", os.path.join(ROOT, "scripts", "soak_sampled.sh"), d, "--",
               sys.executable, os.path.join(self.py, "torch_overhead.py"), "--loops", "eager",
               "--warm", "1", "--seconds", str(secs)]
        env = dict(os.environ, BUILD=os.path.abspath(self.build), INTERVAL="5")
        for k in [k for k in env if k.startswith("GPUSHIM_")]:
            del env[k]
        t0 = time.time()
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             env=env, start_new_session=True)
        try:
            out, err = p.communicate(timeout=secs + 90)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, 9)	# the script, and the program it watches
            out, err = p.communicate()
        self.say(f"SOAK exit {p.returncode} after {time.time() - t0:.0f} s: "
                 f"{out.strip()[-1500:]}")
        try:
            sm = json.loads(out)
        except ValueError:
            self.check("soak: summary", False, f"{err[-300:]}")
            return
        self.check("soak: ends by exit", sm["exit"] == 0, f"exit {sm['exit']}")
        self.check("soak: complete, nothing lost, nothing dropped",
                   sm["complete"] is True and sm["lost_records"] == 0 and sm["dropped"] == 0,
                   f"complete {sm['complete']}, lost {sm['lost_records']}, "
                   f"dropped {sm['dropped']}")
        want = int(secs / 4) - 2
        self.check("soak: a window every 4 s, CUPTI attached all along",
                   (sm["windows"] or 0) >= want and sm["attached_again"] == 0 and
                   sm["window_opens"] >= want,
                   f"{sm['windows']} windows (want >= {want}), {sm['window_opens']} opened, "
                   f"{sm['attached_again']} attached again")
        k = sm["kernels"] or 0
        self.check("soak: every window joined",
                   k > 0 and sm["zero_timestamps"] == 0 and sm["unjoined"] <= 0.01 * k,
                   f"{sm['unjoined']} unjoined of {k}, zero timestamps "
                   f"{sm['zero_timestamps']}")
        rss = sm["rss_mb"]
        self.check("soak: memory bounded (second half < 0.5 MB a minute)",
                   rss["second_half_mb_per_min"] is not None and
                   rss["second_half_mb_per_min"] < 0.5,
                   f"{rss}")
        a, b = sm["trace_mb_per_hour"], sm["trace_mb_per_hour_second_half"]
        self.check("soak: trace grows at a steady rate",
                   bool(a) and b is not None and abs(b / a - 1) <= 0.25,
                   f"{a} MB/h overall, {b} MB/h over the second half")

    def twins(self):
        """twins.cu and torch_twins.py: each case's cause variant against its fixed twin. Plain
        runs alternate 3 rounds (the order turned each round, so drift hits both alike); the
        speedup is the medians' ratio - 1, with the rounds' own ratios as its spread. Then each
        variant once under the shim: the cause variant's verdict and causes, and, where this
        gpushim has `whatif`, the saving it predicts for each cause."""
        has_whatif = subprocess.run([self.gpushim, "whatif", "--help"], capture_output=True,
                                    text=True).returncode == 0
        self.say(f"TWINS gpushim whatif: {'present' if has_whatif else 'absent'}")
        table = []
        for case, (cause, change, c_steps, py_steps) in self.TWINS.items():
            for name, cmd in ((f"twins_{case}",
                               [os.path.join(self.apps, "twins"), case, "%s", str(c_steps)]),
                              (f"torch_twins_{case}",
                               [sys.executable, os.path.join(self.py, "torch_twins.py"), case,
                                "%s", "--steps", str(py_steps)])):
                table.append(self.twins_pair(name, cmd, cause, change, has_whatif))
        for line in table:
            self.say(line)

    def twins_pair(self, name, cmd, cause, change, has_whatif):
        """One pair (cmd has "%s" where the variant goes). Returns its TWINS summary line."""
        variants = ("cause", "fixed")
        argv = {v: [v if a == "%s" else a for a in cmd] for v in variants}
        rates = {v: [] for v in variants}
        sums = {v: [] for v in variants}
        for rnd in range(3):
            for v in (variants if rnd % 2 == 0 else variants[::-1]):
                rc, out, _, dt = self.run(f"{name}_{v}_{rnd}", argv[v], shim=False, timeout=120)
                m = re.search(self.TWINS_LINE, out)
                if rc == 0 and m:
                    rates[v].append(float(m.group(2)))
                    sums[v].append(m.group(3))
                else:
                    self.say(f"   {name} {v} round {rnd}: exit {rc} after {dt:.1f}s, no rate")
        measured = None
        if self.check(f"{name}: 3 plain rounds of both", all(len(rates[v]) == 3 for v in variants),
                      f"cause {rates['cause']}, fixed {rates['fixed']}"):
            med = {v: statistics.median(rates[v]) for v in variants}
            measured = 100 * (med["fixed"] / med["cause"] - 1)
            spread = sorted(100 * (f / c - 1) for c, f in zip(rates["cause"], rates["fixed"]))
            self.say(f"TWINS {name}: cause {med['cause']:.2f} steps/s "
                     f"({', '.join(f'{x:.2f}' for x in rates['cause'])}), fixed "
                     f"{med['fixed']:.2f} ({', '.join(f'{x:.2f}' for x in rates['fixed'])}): "
                     f"measured {measured:+.1f} % (rounds {spread[0]:+.1f} .. {spread[-1]:+.1f}), "
                     f"time a step saved {100 * (1 - med['cause'] / med['fixed']):.1f} %")
            self.check(f"{name}: the fixed twin faster by more than 3 %", measured > 3,
                       f"{measured:+.1f} %")
        seen = set(sums["cause"] + sums["fixed"])
        self.check(f"{name}: checksum the same in both variants",
                   len(seen) == 1 and bool(sums["cause"]) and bool(sums["fixed"]),
                   f"cause {sorted(set(sums['cause']))}, fixed {sorted(set(sums['fixed']))}")

        verdict = "none"
        predicted = ""
        shim_rate = {}
        for v in variants:
            rep, out = self.record(f"{name}_{v}", argv[v], timeout=180)
            m = re.search(self.TWINS_LINE, out or "")
            if m:
                shim_rate[v] = float(m.group(2))
            if not rep:
                continue
            if name.startswith("twins_"):
                self.check_expect(f"{name}_{v}", rep, out)
            if v != "cause":
                continue
            verdict = rep.get("verdict", {}).get("primary") or "none"
            self.say(f"TWINS {name} cause under the shim: verdict {verdict}, expected {cause}; " +
                     ", ".join(f"{a['cause']} {a['time_ns']} ns {a['share_pct']:.1f} %"
                               for a in rep.get("attribution", [])
                               if a.get("time_ns") is not None) +
                     f"; window {rep.get('span_ns')} ns")
            trace = os.path.join(self.work, "traces", f"{name}_{v}.trace")
            if has_whatif and os.path.exists(trace):
                predicted = self.twins_whatif(name, trace, rep, cause, change)
        # The replay predicts the traced run, whose calls the shim made slower: its own ratio.
        traced = ""
        if len(shim_rate) == 2:
            traced = f"{100 * (shim_rate['fixed'] / shim_rate['cause'] - 1):+.1f}%"
            self.say(f"TWINS {name} under the shim: cause {shim_rate['cause']:.2f} steps/s, "
                     f"fixed {shim_rate['fixed']:.2f}: {traced}")
        line = (f"TWINS {name} measured " +
                (f"{measured:+.1f}% (spread {spread[0]:+.1f}..{spread[-1]:+.1f})"
                 if measured is not None else "n/a") + f" cause-verdict {verdict}")
        return (line + (f" traced {traced}" if traced else "") +
                (f" {predicted}" if predicted else ""))

    def twins_whatif(self, name, trace, rep, cause, change):
        """What `gpushim whatif` predicts for the cause variant's trace: the saving of each
        cause taken away alone (and of the pair's own change, where it has one), as a share
        of the step time and as the speedup it means (1 / (1 - saving) - 1). Returns the
        summary's words for the pair's cause."""
        rc, w = self.gpushim_json(["whatif", "--format", "json", trace])
        w = w if isinstance(w, dict) else {}
        causes = w.get("causes")
        if rc != 0 or not causes:
            # an earlier shape: the saving beside each cause in the report
            causes = [a for a in rep.get("causes", rep.get("attribution", []))
                      if a.get("saving_pct") is not None]
        if not causes:
            self.say(f"TWINS {name} whatif: exit {rc}, no saving per cause "
                     f"({str(w.get('error', ''))[:200]})")
            return ""
        speed = lambda pct: 100 * (1 / (1 - pct / 100) - 1) if pct < 100 else float("inf")
        self.say(f"TWINS {name} whatif (replay error {w.get('replay_error_pct')} %): " +
                 ", ".join(f"{c['cause']} saves {c['saving_pct']:.1f} % "
                           f"({speed(c['saving_pct']):+.1f} %)" for c in causes
                           if c.get("saving_pct") is not None))
        mine = [c for c in causes if c.get("cause") == cause and c.get("saving_pct") is not None]
        words = (f"predicted {cause} {speed(mine[0]['saving_pct']):+.1f}%" if mine else
                 f"predicted {cause} n/a")
        if change:
            rc, w = self.gpushim_json(["whatif", "--format", "json"] + change + [trace])
            ch = w.get("changes") if isinstance(w, dict) else None
            ch = ch if isinstance(ch, dict) else None
            if rc == 0 and ch and ch.get("saving_pct") is not None:
                self.say(f"TWINS {name} whatif {' '.join(change)}: saves "
                         f"{ch['saving_pct']:.1f} % ({speed(ch['saving_pct']):+.1f} %)")
                words += f", {' '.join(change)} {speed(ch['saving_pct']):+.1f}%"
        return words

    # ---- hardware counters ----

    def counters(self):
        kernel_of = {"bandwidth_bound": ("triad", "dram", ">", 50.0),
                     "compute_bound": ("fma_chains", "sm_throughput", ">", 60.0)}
        for app, (kname, metric, op, want) in kernel_of.items():
            rep, out = self.record(app, [os.path.join(self.apps, app)])
            if not rep:
                continue
            self.check_expect(app, rep, out)
            self.check_findings(app, rep)
            c = rep.get("counters") or {}
            self.say(f"COUNTERS {app}: {json.dumps(c.get('mean'))}, {c.get('samples')} samples "
                     f"of {c.get('interval_ns')} ns covering {c.get('covered_ns')} ns, "
                     f"bandwidth-bound {json.dumps(c.get('bandwidth_bound'))}, compute-bound "
                     f"{json.dumps(c.get('compute_bound'))}; verdict: {rep['verdict']['summary']}")
            trace = os.path.join(self.work, "traces", app + ".trace")
            ns = [n for n in self.info(trace).get("notes", [])
                  if n["kind"] in ("pm_on", "pm_off", "cupti_on")]
            t0 = ns[0]["ts_ns"] if ns else 0
            notes = [f"{n['kind']} +{(n['ts_ns'] - t0) / 1e6:.1f} ms: {n['text']}" for n in ns]
            self.say(f"COUNTERS {app} notes: {notes}")
            k = next((k for k in rep["kernels"] if kname in k["name"]), None)
            got = ((k or {}).get("counters") or {}).get(metric)
            self.check(f"{app}: kernel {kname} {metric} {op} {want} % over its run time",
                       got is not None and got > want, f"{json.dumps((k or {}).get('counters'))}")
        rep, _ = self.record("compute_bound_pm_off", [os.path.join(self.apps, "compute_bound"),
                                                      "50"], env={"GPUSHIM_PM": "0"})
        if rep:
            causes = {a["cause"]: a for a in rep["attribution"]}
            c = rep.get("counters") or {}
            self.check("GPUSHIM_PM=0: counters absent, both causes unknown, the reason said",
                       c.get("source") is None and "GPUSHIM_PM=0" in (c.get("absent_reason") or "")
                       and causes.get("memory_bandwidth", {}).get("status") == "unknown"
                       and causes.get("compute_bound", {}).get("status") == "unknown",
                       f"{c.get('absent_reason')}")
        # Two processes on one GPU: the second finds the counters taken by the first.
        tdir = os.path.join(self.work, "traces")
        env = dict(os.environ, LD_PRELOAD=self.shim)
        a = subprocess.Popen([os.path.join(self.apps, "bandwidth_bound"), "8000"],
                             env=dict(env, GPUSHIM_OUTPUT=os.path.join(tdir, "pm_first.trace")),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        time.sleep(2.5)
        b = subprocess.run([os.path.join(self.apps, "compute_bound"), "400"],
                           env=dict(env, GPUSHIM_OUTPUT=os.path.join(tdir, "pm_second.trace")),
                           capture_output=True, text=True)
        a_out, a_err = a.communicate(timeout=120)
        with open(os.path.join(self.work, "logs", "pm_two_processes.log"), "w") as f:
            f.write(f"first exit {a.returncode}\n{a_out}\n{a_err}\nsecond exit {b.returncode}\n"
                    f"{b.stdout}\n{b.stderr}\n")
        ra = self.report("pm_first", os.path.join(tdir, "pm_first.trace"))
        rb = self.report("pm_second", os.path.join(tdir, "pm_second.trace"))
        ca = (ra or {}).get("counters") or {}
        cb = (rb or {}).get("counters") or {}
        self.check("two processes: both run to the end, the first samples, the second either "
                   "samples too or says why not",
                   a.returncode == 0 and b.returncode == 0 and ca.get("source") == "pm_sampling"
                   and (cb.get("source") == "pm_sampling" or bool(cb.get("absent_reason"))),
                   f"first {ca.get('source')} ({ca.get('samples')} samples); second "
                   f"{cb.get('source')} ({cb.get('samples')} samples), "
                   f"{cb.get('absent_reason')!r}; second's stderr {b.stderr.strip()[:200]!r}")
        self.pipes()
        self.counters_cost()

    def pipes(self):
        """One kind of GPU work per run (test_apps/pipes.cu, python/torch_pipes.py): each lands
        in its class and pipe or memory level (test_apps/expected/pipes_MODE.findings)."""
        for mode in ("latency", "fma", "exp", "alu", "tensor", "fp64", "stream", "d2d"):
            rep, out = self.record(f"pipes_{mode}", [os.path.join(self.apps, "pipes"), mode])
            if rep:
                self.check_findings(f"pipes_{mode}", rep)
                self.say(f"PIPES {mode}: {rep['verdict']['summary']}")
        for mode in ("softmax", "broadcast", "matmul"):
            rep, out = self.record(f"torch_pipes_{mode}",
                                   [sys.executable, os.path.join(self.py, "torch_pipes.py"), mode])
            if rep:
                self.check_findings(f"torch_pipes_{mode}", rep)
                self.say(f"PIPES torch {mode}: {rep['verdict']['summary']}")

    def counters_cost(self):
        """The cost of sampling: the apps' own timings, alternating, best of three; the launch
        loop and the PyTorch loop with counters off and on."""
        for app in ("bandwidth_bound", "compute_bound"):
            res, _ = self.alternate(f"pmcost_{app}", [os.path.join(self.apps, app)],
                                    (("plain", False, {}), ("PM off", True, {"GPUSHIM_PM": "0"}),
                                     ("PM on", True, {})), 3, r"elapsed_ms=([\d.]+)")
            if all(res.values()):
                base = min(res["plain"])
                self.say(f"BENCH {app} elapsed (best of 3): " + ", ".join(
                    f"{k} {min(v):.1f} ms ({min(v) / base:.3f}x)" for k, v in res.items()))
        pm_configs = (("PM off", True, {"GPUSHIM_PM": "0"}), ("PM on", True, {}))
        res, _ = self.alternate("pmcost_launch", [os.path.join(self.apps, "bench_launch"),
                                                  "200000"], pm_configs, 3, r"launch_ns=([\d.]+)")
        if all(res.values()):
            self.say("BENCH launch host cost, shim with CUPTI: " + ", ".join(
                f"{k} median {statistics.median(v):.1f} ns" for k, v in res.items()))
        res, _ = self.alternate("pmcost_torch", [sys.executable,
                                                 os.path.join(self.py, "torch_bench.py")],
                                pm_configs, 2, r"step_ms=([\d.]+)")
        if all(res.values()):
            self.say("BENCH torch_bench step time, shim with CUPTI: " + ", ".join(
                f"{k} median {statistics.median(v):.3f} ms" for k, v in res.items()))

    # ---- robustness ----

    def robustness(self):
        script = os.path.join(self.py, "torch_workers.py")
        rep, _ = self.record("torch_dataloader", [sys.executable, script, "dataloader"],
                             compare_plain=True)
        extra = [f for f in os.listdir(os.path.join(self.work, "traces"))
                 if f.startswith("torch_dataloader") and f != "torch_dataloader.trace"]
        self.check("torch_dataloader: forked workers without CUDA write no trace", not extra,
                   ", ".join(extra))
        for conf, api in (("expandable_segments:True", "cuMemCreate"),
                          ("backend:cudaMallocAsync", "cuMemAllocAsync")):
            tag = "expandable" if "expandable" in conf else "mallocasync"
            rep, _ = self.record(f"torch_alloc_{tag}", [sys.executable, script, "alloc"],
                                 env={"PYTORCH_CUDA_ALLOC_CONF": conf}, compare_plain=True)
            if rep:
                calls = {a["name"]: a["calls"] for a in rep["api"]}
                self.check(f"torch_alloc_{tag}: {api} recorded", calls.get(api, 0) > 0,
                           f"{calls.get(api, 0)} calls, peak {rep['memory']['peak_bytes']} B")
        self.record("torch_graph_identical", [sys.executable, script, "graph"],
                    compare_plain=True)
        # Fatal signals at their defaults: same death, complete trace with the GPU records.
        for how, sig in (("term", 15), ("segv", 11)):
            name = f"torch_die_{how}"
            rc, out, trace, _ = self.run(name, [sys.executable, script, how])
            prc, _, _, _ = self.run(name + "-plain", [sys.executable, script, how], shim=False)
            self.check(f"{name}: dies of signal {sig} as without the shim",
                       rc == -sig and prc == -sig, f"shim {rc}, plain {prc}")
            rep = self.report(name, trace) if trace else None
            if rep:
                t = rep["trace"]
                self.check(f"{name}: trace complete, ended by the signal, 100 matmuls' kernels",
                           t["complete"] and t.get("end_reason") == "signal"
                           and rep["gpu"]["kernels"] >= 200,
                           f"{t['complete']} {t.get('end_reason')} {t.get('end_detail')}, "
                           f"{rep['gpu']['kernels']} kernels, {rep['counts']['launches']} launches")
        # exec of another CUDA program: both traces complete (a %p pattern: the second program,
        # same pid, takes NAME-1.trace).
        tdir = os.path.join(self.work, "traces")
        rc, out, _, _ = self.run("torch_exec", [sys.executable, script, "exec"], shim=False,
                                 env={"LD_PRELOAD": self.shim,
                                      "GPUSHIM_OUTPUT": os.path.join(tdir, "torch_exec-%p.trace")})
        names = sorted(f for f in os.listdir(tdir) if f.startswith("torch_exec-"))
        first = [f for f in names if not f.endswith("-1.trace")]
        then = [f for f in names if f.endswith("-1.trace")]
        a = self.report("torch_exec", os.path.join(tdir, first[0])) if len(first) == 1 else None
        b = self.report("torch_exec-1", os.path.join(tdir, then[0])) if len(then) == 1 else None
        self.check("torch_exec: the first program's trace ends by exec, the second's by exit",
                   bool(rc == 0 and a and b and a["trace"].get("end_reason") == "exec"
                        and a["gpu"]["kernels"] >= 200
                        and b["trace"].get("end_reason") == "exit"),
                   f"exit {rc}; traces {names}; first {a and a['trace'].get('end_reason')} "
                   f"{a and a['gpu']['kernels']} kernels; second "
                   f"{b and b['trace'].get('end_reason')}")

        # os._exit (every fork-based multiprocessing worker ends so): the trace is finished.
        rc, _, trace, _ = self.run("torch_osexit", [sys.executable, script, "osexit"])
        rep = self.report("torch_osexit", trace) if trace else None
        self.check("torch_osexit: os._exit(3) keeps its code, trace complete with the kernels",
                   bool(rc == 3 and rep and rep["trace"]["complete"]
                        and rep["gpu"]["kernels"] >= 200),
                   f"exit {rc}; " + (f"complete {rep['trace']['complete']}, "
                                     f"{rep['gpu']['kernels']} kernels" if rep else "no trace"))
        # torchrun with %r (README's advice): each rank writes its own NAME-RANK.trace; the
        # launcher, which has no rank, never takes a rank's name (norank-PID).
        tr = os.path.join(self.work, "scratch", "torchrun")
        os.makedirs(tr, exist_ok=True)
        rc, out, _, _ = self.run("torchrun", [sys.executable, "-m", "torch.distributed.run",
                                              "--standalone", "--nproc_per_node=2", script,
                                              "ranked"], shim=False, timeout=300,
                                 env={"LD_PRELOAD": self.shim,
                                      "GPUSHIM_OUTPUT": os.path.join(tr, "run-%r.trace")})
        names = sorted(os.listdir(tr))
        kernels = {}
        for r in ("0", "1"):
            p = os.path.join(tr, f"run-{r}.trace")
            rep = self.report(f"torchrun_rank{r}", p) if os.path.exists(p) else None
            kernels[r] = rep["gpu"]["kernels"] if rep else None
        self.check("torchrun %r: run-0 and run-1 each with its rank's kernels, nothing else "
                   "takes a rank's name",
                   rc == 0 and all(k and k >= 200 for k in kernels.values())
                   and all(n in ("run-0.trace", "run-1.trace") or n.startswith("run-norank-")
                           for n in names),
                   f"exit {rc}; files {names}; kernels {kernels}")
        self.ends()

    def ends(self):
        """Thread endings and starts: pthread_exit of the main thread, 16 threads in cuInit."""
        # The main thread leaves by pthread_exit while another still launches: the process ends
        # when the plain one does. With the real driver its own threads keep both alive (glibc
        # ends a process only with its last thread), so both reach the limit; the shim's trace
        # then holds every launch all the same.
        app = os.path.join(self.apps, "main_exit")
        prc, _, _, pdt = self.run("main_exit-plain", [app], shim=False, timeout=15)
        rc, out, trace, dt = self.run("main_exit", [app], timeout=15)
        rep = self.report("main_exit", trace) if trace else None
        self.check("main_exit: pthread_exit of the main thread: the process ends as the plain "
                   "one does, the trace has all 200 launches",
                   bool(prc == rc and rep and rep["counts"]["launches"] == 200),
                   f"plain exit {prc} ({pdt:.1f}s), shim exit {rc} ({dt:.1f}s; 124: still "
                   f"running at the limit); " +
                   (f"complete {rep['trace']['complete']}, {rep['counts']['launches']} launches"
                    if rep else "no trace"))
        # 16 threads in cuInit at once: CUPTI and the counters set up once, before any of them
        # launches; every kernel joined; a clean exit.
        rep, out = self.record("init_race", [os.path.join(self.apps, "init_race")],
                               compare_plain=False)
        if rep:
            self.check_expect("init_race", rep, out)
            self.check_one_to_one("init_race", rep)
            notes = self.info(os.path.join(self.work, "traces", "init_race.trace")).get(
                "notes", [])
            pm = [n["kind"] for n in notes if n["kind"] in ("pm_on", "pm_off")]
            self.check("init_race: the counters set up once", len(pm) == 1, f"{pm}")
            self.say(f"INFO init_race: {out.strip().splitlines()[-1] if out.strip() else ''}")

    # ---- benchmark ----

    def alternate(self, tag, cmd, configs, rounds, pattern, want=0):
        """Run cmd in every configuration in turn, for `rounds` rounds, so that the machine's
        drift hits them alike. configs: (label, shim, env[, extra args]). A run counts when it
        exits 0 and prints `pattern` (its group 1, a number) - and, for "CUPTI alone", when
        CUPTI delivered at least `want` records. Returns ({label: [numbers]},
        {label: (trace, stdout) of the first round})."""
        results = {c[0]: [] for c in configs}
        first = {}
        for rnd in range(rounds):
            for label, shim, env, *extra in configs:
                name = f"{tag}_{rnd}_{re.sub(r'[^A-Za-z0-9]', '', label)}"
                rc, out, trace, _ = self.run(name, cmd + (extra[0] if extra else []),
                                             shim=shim, env=env, keep=False)
                m = re.search(pattern, out)
                if rc == 0 and m and self.cupti_alone_ok(name, label, want):
                    results[label].append(float(m.group(1)))
                if rnd == 0:
                    first[label] = (trace, out)
        return results, first

    @property
    def cupti_alone(self):
        """CUPTI collecting what the shim has it collect, with nothing else around it."""
        return {"LD_PRELOAD": os.path.join(self.apps, "libcupti_baseline.so")}

    def cupti_alone_ok(self, name, label, want):
        """A "CUPTI alone" run counts only if CUPTI delivered at least `want` records."""
        if label != "CUPTI alone":
            return True
        with open(os.path.join(self.work, "logs", name + ".log")) as f:
            m = re.search(r"cupti_baseline: (\d+) records, (\d+) dropped", f.read())
        self.check(f"{name}: CUPTI alone delivered >= {want} records", bool(m) and
                   int(m.group(1)) >= want, m.group(0) if m else "no cupti_baseline line")
        return bool(m) and int(m.group(1)) >= want

    def against_cupti(self, what, results, plain, unit):
        """The shim with CUPTI against CUPTI alone: the ratio, and the cost each adds."""
        shim, alone = results.get("shim, CUPTI"), results.get("CUPTI alone")
        if not (shim and alone and plain):
            return
        s, a = statistics.median(shim), statistics.median(alone)
        self.say(f"BENCH {what}, shim with CUPTI / CUPTI alone: {s / a:.3f}x "
                 f"(added to plain: shim with CUPTI {s - plain:+.3f} {unit}, "
                 f"CUPTI alone {a - plain:+.3f} {unit})")

    def bench(self):
        rc, out, _, _ = self.run("bench_clock", [os.path.join(self.apps, "bench_clock")],
                                 shim=False)
        self.say(f"BENCH clock read cost: {out.strip()}")
        configs = (("plain", False, {}), ("shim, no CUPTI", True, {"GPUSHIM_CUPTI": "0"}),
                   ("shim, CUPTI", True, {}), ("CUPTI alone", False, self.cupti_alone))
        results, first = self.alternate("bench", [os.path.join(self.apps, "bench_launch"),
                                                  "200000"], configs, 3, r"launch_ns=([\d.]+)",
                                        want=200000)
        for label, (trace, _) in first.items():
            if trace:
                size = os.path.getsize(trace)
                self.say(f"BENCH trace size, {label}: {size} bytes for 200000 launches "
                         f"({size / 200000:.2f} bytes/launch)")
                clock = [n["text"] for n in self.info(trace).get("notes", [])
                         if n.get("kind") == "clock"]
                self.say(f"BENCH the hooks' clock, {label}: {'; '.join(clock) or 'no note'}")
        plain = statistics.median(results["plain"]) if results["plain"] else 0
        for label, _, _ in configs:
            v = results[label]
            if not v:
                self.check(f"bench: {label}", False, "no result")
                continue
            med = statistics.median(v)
            self.say(f"BENCH launch host cost, {label}: median {med:.1f} ns/launch "
                     f"(runs {', '.join(f'{x:.1f}' for x in v)}), "
                     f"{med / plain:.3f}x plain" if plain else "")
        self.against_cupti("launch host cost", results, plain, "ns/launch")
        pm_off = ("shim, CUPTI, PM off", True, {"GPUSHIM_PM": "0"})
        self.bench_pairs(configs[0], configs[1])
        self.bench_pairs(configs[3], configs[2])
        self.bench_pairs(configs[3], pm_off)	# the shim's CUPTI records without counters
        self.bench_pairs(pm_off, configs[2])	# what the counters add to a launch
        # What the TSC clock saves (shim/clock.c): the hooks on clock_gettime against it.
        self.bench_pairs(("shim, no CUPTI, GPUSHIM_TSC=0", True,
                          {"GPUSHIM_CUPTI": "0", "GPUSHIM_TSC": "0"}), configs[1])

    def bench_pairs(self, a, b, quads=10, n=100000, batch=1000):
        """Configuration b against a (each (label, shim, env) as in alternate), in pairs of
        adjacent runs ordered A B B A (a drift that is linear over a quad hits both alike),
        every run on the same two CPUs (taskset: the process's own affinity, nothing of the
        machine's): the median of the pairs' ratios with their quartiles - for the whole loop,
        and for its median and fastest batch of `batch` launches (what interrupts and
        neighbours add to some batches stays out). A "CUPTI alone" run counts only when CUPTI
        delivered every launch's records."""
        cmd = [os.path.join(self.apps, "bench_launch"), str(n), str(batch)]
        if shutil.which("taskset"):
            cmd = ["taskset", "-c", "2,3"] + cmd	# two: the writer runs beside the loop
        keys = ("launch_ns", "batch_med_ns", "batch_min_ns")
        ratios = {k: [] for k in keys}
        diffs = {k: [] for k in keys}
        what = f"{b[0]} / {a[0]}"
        tag = re.sub(r"[^A-Za-z0-9]", "", what)

        cpu_keys = ("cpu_main_ns", "cpu_shim_ns", "cpu_other_ns")
        cpu = {a[0]: {k: [] for k in cpu_keys}, b[0]: {k: [] for k in cpu_keys}}

        def one(config, name):
            label, shim, env = config
            rc, out, _, _ = self.run(name, cmd, shim=shim, env=env, keep=False)
            v = {k: re.search(k + r"=([\d.]+)", out) for k in keys}
            if rc != 0 or not all(v.values()) or not self.cupti_alone_ok(name, label, n):
                return None
            for k in cpu_keys:
                m = re.search(k + r"=([\d.]+)", out)
                if m:
                    cpu[label][k].append(float(m.group(1)))
            return {k: float(m.group(1)) for k, m in v.items()}

        for q in range(quads):
            a1 = one(a, f"pairs_{tag}_{q}_a1")
            b1 = one(b, f"pairs_{tag}_{q}_b1")
            b2 = one(b, f"pairs_{tag}_{q}_b2")
            a2 = one(a, f"pairs_{tag}_{q}_a2")
            for x, y in ((a1, b1), (a2, b2)):
                if x and y:
                    for k in keys:
                        ratios[k].append(y[k] / x[k])
                        diffs[k].append(y[k] - x[k])
        nr = len(ratios[keys[0]])
        if not self.check(f"bench pairs: {what}", nr >= quads, f"{nr} pairs"):
            return
        for k in keys:
            q1, med, q3 = statistics.quantiles(ratios[k], n=4)
            d1, dmed, d3 = statistics.quantiles(diffs[k], n=4)
            self.say(f"BENCH launch host cost ({k}), {what} in {nr} "
                     f"adjacent pairs ({n} launches each, A B B A, {' '.join(cmd[:3])}): "
                     f"median {med:.4f}x (quartiles {q1:.4f} - {q3:.4f}), {dmed:+.1f} ns/launch "
                     f"(quartiles {d1:+.1f} - {d3:+.1f})")
        for label in (a[0], b[0]):
            if all(cpu[label].values()):
                self.say(f"BENCH CPU time a launch during the loop, {label} (median of "
                         f"{len(cpu[label][cpu_keys[0]])} runs, {' '.join(cmd[:3])}): " +
                         ", ".join(f"{k[4:-3]} threads {statistics.median(v):.1f} ns"
                                   for k, v in cpu[label].items()))

    # ---- overhead of a PyTorch training loop, and trace size against torch.profiler ----

    def perf(self):
        for variant, args in (("torch_bench", []), ("torch_bench --small", ["--small"])):
            self.perf_variant(variant, args)

    def perf_variant(self, variant, args):
        script = os.path.join(self.py, "torch_bench.py")
        export = os.path.join(self.work, "scratch", "torch_bench_profile.json")
        configs = (("plain", False, {}, []), ("shim, no CUPTI", True, {"GPUSHIM_CUPTI": "0"}, []),
                   ("shim, CUPTI", True, {}, []), ("CUPTI alone", False, self.cupti_alone, []),
                   ("torch.profiler", False, {}, ["--profile", export]))
        tag = "perf_small" if args else "perf"
        results, first = self.alternate(tag, [sys.executable, script] + args, configs, 2,
                                        r"step_ms=([\d.]+)", want=10000)
        sizes = {}
        for label, (trace, out) in first.items():
            if trace:
                sizes[label] = (os.path.getsize(trace), self.info(trace).get("records", 0))
            m = re.search(r"export_bytes=(\d+) export_events=(\d+)", out)
            if m:
                sizes[label] = (int(m.group(1)), int(m.group(2)))
        plain = statistics.median(results["plain"]) if results["plain"] else 0
        for label, _, _, _ in configs:
            v = results[label]
            if v and plain:
                med = statistics.median(v)
                self.say(f"BENCH {variant} step time, {label}: median {med:.3f} ms "
                         f"(runs {', '.join(f'{x:.3f}' for x in v)}), {med / plain:.3f}x plain")
        self.against_cupti(f"{variant} step time", results, plain, "ms")
        for label, (size, n) in sizes.items():
            self.say(f"BENCH {variant} output, {label}: {size} bytes, {n} "
                     f"{'records' if 'shim' in label else 'events'}, "
                     f"{size / max(n, 1):.2f} bytes each")
        if "shim, CUPTI" in sizes and "torch.profiler" in sizes:
            ratio = sizes["torch.profiler"][0] / max(sizes["shim, CUPTI"][0], 1)
            self.say(f"BENCH {variant}: torch.profiler JSON / shim trace size: {ratio:.1f}x")

    # ---- the analyzer on real traces of millions of records ----

    @staticmethod
    def vm_hwm(pid):
        """A running process's peak RSS in KiB (VmHWM), 0 once it is gone."""
        try:
            with open(f"/proc/{pid}/status") as f:
                for line in f:
                    if line.startswith("VmHWM:"):
                        return int(line.split()[1])
        except OSError:
            pass
        return 0

    def timed_report(self, trace, gpushim=None, env=None):
        """(seconds, peak RSS in KiB, exit status, parsed JSON or None) of `gpushim report`.
        The peak is the child's own VmHWM, read while it runs: wait4's ru_maxrss would count
        this Python process's resident memory, which the child had between fork and exec."""
        path = os.path.join(self.work, "scratch", "timed_report.json")
        with open(path, "w") as f:
            t0 = time.perf_counter()
            p = subprocess.Popen([gpushim or self.gpushim, "report", "--format", "json", trace],
                                 stdout=f, stderr=subprocess.DEVNULL,
                                 env=dict(os.environ, **(env or {})))
            hwm = 0
            while p.poll() is None:
                hwm = max(hwm, self.vm_hwm(p.pid))
                time.sleep(0.001)
            dt = time.perf_counter() - t0
            status = p.returncode
        rc = status
        try:
            with open(path) as f:
                js = json.load(f)
        except ValueError:
            js = None
        return dt, hwm, rc, js

    def analyzer(self):
        script = os.path.join(self.py, "torch_bench.py")
        for tag, steps, keep in (("analyzer_1m", 2700, True), ("analyzer_10m", 27000, False)):
            rc, _, trace, dt = self.run(tag, [sys.executable, script, "--small", "--steps",
                                              str(steps)], keep=keep, timeout=540)
            if not self.check(f"{tag}: runs under the shim", rc == 0 and trace is not None,
                              f"exit {rc}, {dt:.1f}s"):
                continue
            info = self.info(trace)
            recs = info.get("records", 0)
            other = os.environ.get("GPUSHIM_COMPARE")
            runs, others = [], []
            for _ in range(3):
                runs.append(self.timed_report(trace))
                if other:
                    others.append(self.timed_report(trace, other))
            js = runs[0][3]
            if not self.check(f"{tag}: report", all(r[2] == 0 and r[3] for r in runs),
                              f"exits {[r[2] for r in runs]}"):
                continue
            gpu = js.get("gpu", {})
            self.check(f"{tag}: every kernel execution joined to its launch",
                       gpu.get("kernels", 0) > 0 and gpu.get("unjoined", 1) == 0,
                       f"{gpu.get('kernels')} kernels, {gpu.get('joined')} joined, "
                       f"{gpu.get('unjoined')} not, {gpu.get('dropped')} dropped by CUPTI")
            best = min(r[0] for r in runs)
            self.say(f"BENCH analyzer on {tag[9:]} ({os.path.getsize(trace)} bytes, {recs} "
                     f"records, {js['counts']['launches']} launches): best of 3 "
                     f"{best * 1000:.0f} ms ({', '.join(f'{r[0] * 1000:.0f}' for r in runs)}), "
                     f"{recs / best / 1e6:.2f} M records/s, peak RSS "
                     f"{max(r[1] for r in runs) / 1024:.0f} MiB")
            # The same build loading the trace whole (GPUSHIM_STREAM=0): the same report.
            whole = self.timed_report(trace, env={"GPUSHIM_STREAM": "0"})
            self.check(f"{tag}: the streamed report is the whole model's", whole[3] == js,
                       f"whole model: {whole[0] * 1000:.0f} ms, peak RSS "
                       f"{whole[1] / 1024:.0f} MiB")
            if others:
                same = all(r[3] == js for r in others)
                self.say(f"BENCH analyzer on {tag[9:]}, GPUSHIM_COMPARE={other}: best of 3 "
                         f"{min(r[0] for r in others) * 1000:.0f} ms "
                         f"({', '.join(f'{r[0] * 1000:.0f}' for r in others)}), "
                         f"{recs / min(r[0] for r in others) / 1e6:.2f} M records/s, peak RSS "
                         f"{max(r[1] for r in others) / 1024:.0f} MiB; its report "
                         f"{'the same' if same else 'DIFFERENT'}")
            # Its ceiling: the reader alone on the same trace.
            p = subprocess.run([os.path.join(self.build, "tests", "read_trace"), "-n", "3",
                                trace], capture_output=True, text=True)
            self.say(f"BENCH reader alone on {tag[9:]}: " +
                     (p.stdout.strip().split(": ", 1)[-1] if p.returncode == 0 else
                      f"failed: {p.stderr.strip()}"))

    def integrity(self):
        """Every trace kept: the GPU records read back (GPU_KERNEL_RUN and GPU_API_RUN expanded)
        are as many as the shim converted from CUPTI (its last GPU_INFO), kind by kind summed."""
        tdir = os.path.join(self.work, "traces")
        n = bad = 0
        for f in sorted(os.listdir(tdir)):
            i = self.info(os.path.join(tdir, f))
            conv = i.get("gpu_records_converted", 0)
            if not conv:
                continue
            t = i.get("record_types", {})
            read = sum(t.get(k, 0) for k in ("gpu_kernel", "gpu_memcpy", "gpu_memset",
                                             "gpu_corr", "gpu_api"))
            n += 1
            if read != conv and i.get("lost_records", 0) == 0:
                bad += 1
                self.say(f"   {f}: {read} GPU records read, the shim converted {conv}")
        self.check(f"integrity: GPU records read back = converted, in {n} traces", n > 0 and not bad,
                   f"{bad} differ" if bad else "")

    # ---- output ----

    def pack(self):
        os.makedirs(self.out, exist_ok=True)
        with open(os.path.join(self.out, "summary.txt"), "w") as f:
            f.write("\n".join(self.lines) + "\n")
        tdir = os.path.join(self.work, "traces")
        for f in sorted(os.listdir(tdir)):
            self.lines.append(f"trace {f}: {os.path.getsize(os.path.join(tdir, f))} bytes")
        with open(os.path.join(self.out, "summary.txt"), "w") as f:
            f.write("\n".join(self.lines) + "\n")
        for d in ("traces", "reports", "logs"):
            with tarfile.open(os.path.join(self.out, d + ".tar.gz"), "w:gz") as tar:
                tar.add(os.path.join(self.work, d), arcname=d)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--work", default="/tmp/gpushim-gpu-check")
    ap.add_argument("--out", default=os.environ.get("OUT") or "/tmp/gpushim-gpu-check/out")
    ap.add_argument("--only",
                    default="recording,cupti,profiler,findings,where,counters,diff,robustness,"
                            "nvtx,steps,ranges,bench,perf")
    args = ap.parse_args()
    shutil.rmtree(args.work, ignore_errors=True)
    c = Checker(args.build, args.work, args.out, args.only)
    try:
        for part in args.only.split(","):
            c.say(f"== {part}")
            try:
                getattr(c, part)()
            except Exception as exc:  # a checker bug must not lose the rest of the run
                c.check(f"{part}: checker ran", False, f"{type(exc).__name__}: {exc}")
        if os.listdir(os.path.join(args.work, "traces")):
            c.say("== integrity")
            c.integrity()
        c.say(f"== {len(c.passed)} passed, {len(c.failed)} failed")
        for name in c.failed:
            c.say(f"   failed: {name}")
    finally:
        c.pack()
    return 1 if c.failed else 0


if __name__ == "__main__":
    sys.exit(main())

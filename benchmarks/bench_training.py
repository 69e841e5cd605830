"""CPU time per step of the real training loop (data included), as ``simulate`` and sweep workers pay it.

At the science setting (d = 16, P = 128, batch 1024, top-2 task; ``--d --P --batch`` change it)
and for each depth of the grid L in {1, 2, 4, 8, 16, 32, 64}, one process measures, in process CPU
time (all threads of the process), interleaved round by round:

- ``train`` of one model: ``depthscale.sims.training.train`` with one numba thread and no prefetch
  (a sweep worker), and with two numba threads and the next batch prefetched in a thread (what
  ``depthscale simulate`` does on this 2-core machine). The loop's CPU per step is the time of a
  (1 + n)-step call minus that of a 1-step call, over n (initialisation cancels);
- the pieces of that loop on their own, one thread: the model step (``loss_and_grad`` then the
  Adam update, on one fixed batch), the Adam update alone, and ``make_batch``; "loop overhead" is
  the loop's CPU per step minus the three;
- ``train_lockstep`` of the whole depth grid (one batch per step for all depths), with one thread
  and with two threads plus prefetch, against the sum of the grid's model steps alone;
- the PyTorch step of the same maths (``torch_models.py``, one thread), alone and with the same
  ``make_batch`` added (what a PyTorch loop over this generator would pay).

The single-core GEMM rate (NumPy 512 x 512) is measured at the start and the end of the run, and
model FLOPs are counted as in ``bench_step.py`` (``timing.step_flops``).

Run: ``python benchmarks/bench_training.py`` (``--help`` for options, ``--json`` for a JSON dump).
``--one-thread`` skips the two-thread loops (their columns print ``nan``): for a machine with one free
core, where a second thread would only wait for it.
"""

from __future__ import annotations

import os

# As in bench_step: unset OpenBLAS's kernel overrides and pin BLAS/OpenMP to one thread before NumPy
# loads; numba keeps its default pool (all cores) so the two-thread mode of `simulate` can be timed.
UNSET = [v for v in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE") if os.environ.pop(v, None) is not None]
for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_v] = "1"
os.environ.pop("NUMBA_NUM_THREADS", None)

import argparse  # noqa: E402
import json  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402

import numba  # noqa: E402
import numpy as np  # noqa: E402
import scipy.linalg.cython_blas  # noqa: E402,F401 - the BLAS numba's np.dot calls
from threadpoolctl import threadpool_limits  # noqa: E402
from timing import gemm_rate, step_flops  # noqa: E402

from depthscale.sims.config import ModelConfig, TaskConfig, TrainConfig  # noqa: E402
from depthscale.sims.models import make_model  # noqa: E402
from depthscale.sims.optimizer_registry import Adam  # noqa: E402
from depthscale.sims.tasks import make_batch  # noqa: E402
from depthscale.sims.training import train_lockstep  # noqa: E402

DEPTHS = "1,2,4,8,16,32,64"


def cpu_wall(fn) -> tuple[float, float]:
    """(process CPU seconds, wall seconds) of one call of ``fn``."""
    c0, w0 = time.process_time(), time.perf_counter()
    fn()
    return time.process_time() - c0, time.perf_counter() - w0


def loop_per_step(models, task, tcfg, threads: int, prefetch: bool, n: int) -> tuple[float, float]:
    """CPU and wall seconds per step of ``train_lockstep`` (a (1 + n)-step call minus a 1-step call, over n)."""
    numba.set_num_threads(threads)
    try:
        short = cpu_wall(
            lambda: train_lockstep(models, task, TrainConfig(**{**tcfg, "steps": 1}), 0, prefetch=prefetch)
        )
        long = cpu_wall(
            lambda: train_lockstep(models, task, TrainConfig(**{**tcfg, "steps": 1 + n}), 0, prefetch=prefetch)
        )
    finally:
        numba.set_num_threads(1)
    return (long[0] - short[0]) / n, (long[1] - short[1]) / n


def per_call(fn, calls: int) -> float:
    """CPU seconds per call, averaged over ``calls`` calls."""
    t0 = time.process_time()
    for _ in range(calls):
        fn()
    return (time.process_time() - t0) / calls


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="softmax", help="linear or softmax")
    ap.add_argument("--dtype", default="float64", help="float64 or float32")
    ap.add_argument("--depths", default=DEPTHS, help="the depth grid (comma-separated)")
    ap.add_argument("--d", type=int, default=16)
    ap.add_argument("--P", type=int, default=128)
    ap.add_argument("--batch", type=int, default=1024)
    ap.add_argument("--steps", type=int, default=6, help="timed steps per loop measurement")
    ap.add_argument("--rounds", type=int, default=5, help="interleaved rounds (medians over them)")
    ap.add_argument("--no-torch", action="store_true", help="skip the PyTorch step")
    ap.add_argument("--one-thread", action="store_true", help="skip the two-thread + prefetch loops (one free core)")
    ap.add_argument("--json", action="store_true", help="print one JSON object at the end")
    args = ap.parse_args(argv)
    for name in ("d", "P", "batch", "steps", "rounds"):
        if getattr(args, name) < 1:
            ap.error(f"--{name}={getattr(args, name)}: must be >= 1")
    if numba.config.NUMBA_NUM_THREADS < 2 and not args.one_thread:
        ap.error("numba's pool has one thread: the two-thread loop needs at least 2 cores (or --one-thread)")
    depths = [int(x) for x in args.depths.split(",")]
    n = args.steps
    threadpool_limits(limits=1)
    numba.set_num_threads(1)
    torch = None
    if not args.no_torch:
        import torch
        from torch_models import TorchModel, TorchTrainer

        torch.set_num_threads(1)
        torch.set_num_interop_threads(1)

    task = TaskConfig(task="topk", k=2, d=args.d, P=args.P)
    dt = np.dtype(args.dtype)
    tcfg = {"batch": args.batch, "eval_contexts": 64}
    cfgs = {L: ModelConfig(model=args.model, depth=L, dtype=args.dtype) for L in depths}
    models = {L: make_model(cfgs[L], args.d) for L in depths}
    batch = make_batch(task, args.batch, np.random.default_rng(1), dtype=dt)
    data_rng = np.random.default_rng(2)

    steps, adams, torch_steps = {}, {}, {}
    for L in depths:
        m = models[L]
        th = m.init(np.random.default_rng(0)).astype(dt)
        opt, opt2 = Adam(th.size, TrainConfig(), dt), Adam(th.size, TrainConfig(), dt)
        g = np.full(th.size, 1e-3, dt)

        def step(m=m, th=th, opt=opt):
            _, grad = m.loss_and_grad(th, batch)
            opt.step(th, grad, 1e-4)

        steps[L] = step
        th_adam = th.copy()  # Adam alone, on its own copy of the parameters
        adams[L] = lambda th=th_adam, g=g, opt2=opt2: opt2.step(th, g, 1e-4)
        if torch is not None:
            ref = TorchModel(cfgs[L], args.d)
            tensors = ref.tensors(batch)
            trainer = TorchTrainer(ref, th.copy(), lr=1e-4)
            torch_steps[L] = lambda trainer=trainer, tensors=tensors: trainer.step(*tensors)

    keys = ["train1", "train2_cpu", "train2_wall", "step", "adam", "torch"]
    samples = {k: {L: [] for L in depths} for k in keys}
    samples["data"], samples["grid1"], samples["grid2_cpu"], samples["grid2_wall"] = [], [], [], []
    load0 = os.getloadavg()
    gemm0 = gemm_rate(dt)
    grid = [(models[L], cfgs[L]) for L in depths]
    for rnd in range(args.rounds + 1):  # round 0 warms up (kernel caches, thread pools, torch) and is dropped
        keep = rnd > 0
        for L in depths:
            one = [(models[L], cfgs[L])]
            t1 = loop_per_step(one, task, tcfg, 1, False, n)
            t2 = (np.nan, np.nan) if args.one_thread else loop_per_step(one, task, tcfg, 2, True, n)
            ts = per_call(steps[L], n)
            ta = per_call(adams[L], 20)
            tt = per_call(torch_steps[L], max(1, n // 2)) if torch is not None else float("nan")
            if keep:
                for k, v in zip(keys, (t1[0], t2[0], t2[1], ts, ta, tt)):
                    samples[k][L].append(v)
        td = per_call(lambda: make_batch(task, args.batch, data_rng, dtype=dt), n)
        g1 = loop_per_step(grid, task, tcfg, 1, False, n)
        g2 = (np.nan, np.nan) if args.one_thread else loop_per_step(grid, task, tcfg, 2, True, n)
        if keep:
            samples["data"].append(td)
            samples["grid1"].append(g1[0])
            samples["grid2_cpu"].append(g2[0])
            samples["grid2_wall"].append(g2[1])
            print(
                f"round {rnd}: grid lockstep {1e3 * g1[0]:.1f} ms/step, data {1e3 * td:.1f} ms, "
                f"L={depths[-1]} loop {1e3 * samples['train1'][depths[-1]][-1]:.1f} ms",
                flush=True,
            )
    gemm1 = gemm_rate(dt)
    load1 = os.getloadavg()
    gemm = max(gemm0, gemm1)  # contention only lowers it: the larger is the machine's rate

    med = {k: {L: statistics.median(v) for L, v in samples[k].items()} for k in keys}
    data = statistics.median(samples["data"])
    rows = []
    for L in depths:
        flops = step_flops(args.model, args.batch, args.P, args.d, models[L].N, L)
        t1, ts = med["train1"][L], med["step"][L]
        row = {
            "L": L,
            "flops": flops,
            "train1_s": t1,
            "train2_cpu_s": med["train2_cpu"][L],
            "train2_wall_s": med["train2_wall"][L],
            "step_s": ts,
            "adam_s": med["adam"][L],
            "loss_and_grad_s": ts - med["adam"][L],
            "data_s": data,
            "overhead_s": t1 - ts - data,
            "gemm_fraction_loop": flops / t1 / gemm,
            "gemm_fraction_step": flops / ts / gemm,
            "torch_s": med["torch"][L],
        }
        row["torch_ratio_loop"] = (row["torch_s"] + data) / t1
        row["torch_ratio_step"] = row["torch_s"] / ts
        rows.append(row)
    grid1, grid2 = statistics.median(samples["grid1"]), statistics.median(samples["grid2_cpu"])
    sum_steps = sum(r["step_s"] for r in rows)
    sum_loops = sum(r["train1_s"] for r in rows)
    gridres = {
        "lockstep1_s": grid1,
        "lockstep2_cpu_s": grid2,
        "lockstep2_wall_s": statistics.median(samples["grid2_wall"]),
        "sum_model_steps_s": sum_steps,
        "sum_separate_loops_s": sum_loops,
        "ratio_to_sum_steps": grid1 / sum_steps,
        "ratio2_to_sum_steps": grid2 / sum_steps,
    }
    ref16 = [r for r in rows if r["L"] == 16]

    print(f"load average before/after: {load0[0]:.2f}/{load1[0]:.2f} on {os.cpu_count()} cores")
    print(
        f"{args.model} {args.dtype}, d = N = {args.d}, P = {args.P}, batch {args.batch}, top-2; {n} timed steps per loop "
        f"measurement, medians of {args.rounds} interleaved rounds; process CPU time (all threads)"
    )
    print(f"single-core GEMM 512x512: {gemm / 1e9:.1f} GFLOP/s (start {gemm0 / 1e9:.1f}, end {gemm1 / 1e9:.1f})")
    if UNSET:
        print("unset for this run: " + ", ".join(UNSET))
    print()
    print(
        f"{'L':>3} {'loop 1thr':>9} {'step':>7} {'l&g':>7} {'Adam':>6} {'data':>6} {'other':>6} {'GEMM loop':>9} "
        f"{'GEMM step':>9} {'torch':>8} {'torch+data/loop':>15} {'torch/step':>10} {'loop 2thr CPU':>13} {'2thr wall':>9}"
    )
    for r in rows:
        print(
            f"{r['L']:>3} {1e3 * r['train1_s']:>9.1f} {1e3 * r['step_s']:>7.1f} {1e3 * r['loss_and_grad_s']:>7.1f} "
            f"{1e3 * r['adam_s']:>6.2f} {1e3 * r['data_s']:>6.1f} {1e3 * r['overhead_s']:>6.1f} "
            f"{100 * r['gemm_fraction_loop']:>8.1f}% {100 * r['gemm_fraction_step']:>8.1f}% {1e3 * r['torch_s']:>8.1f} "
            f"{r['torch_ratio_loop']:>15.2f} {r['torch_ratio_step']:>10.2f} {1e3 * r['train2_cpu_s']:>13.1f} "
            f"{1e3 * r['train2_wall_s']:>9.1f}"
        )
    print("(ms per step; 'other' = loop - step - data: the loop's own bookkeeping and noise)")
    print()
    if ref16:
        print(
            f"make_batch: {1e3 * data:.1f} ms = {100 * data / ref16[0]['step_s']:.0f} % of the L = 16 model step, "
            f"{100 * data / ref16[0]['train1_s']:.0f} % of the L = 16 loop step"
        )
    print(
        f"lockstep grid L in {{{args.depths}}}: {1e3 * grid1:.1f} ms CPU per step (one thread) = "
        f"{gridres['ratio_to_sum_steps']:.3f} x the sum of its model steps alone ({1e3 * sum_steps:.1f} ms); "
        f"separate loops would cost {1e3 * sum_loops:.1f} ms"
    )
    print(
        f"  two threads + prefetch: {1e3 * grid2:.1f} ms CPU ({gridres['ratio2_to_sum_steps']:.3f} x), "
        f"{1e3 * gridres['lockstep2_wall_s']:.1f} ms wall per step"
    )
    if args.json:
        print(
            json.dumps(
                {
                    "args": vars(args),
                    "loadavg_before": load0,
                    "loadavg_after": load1,
                    "gemm_gflops": gemm / 1e9,
                    "gemm_gflops_start_end": [gemm0 / 1e9, gemm1 / 1e9],
                    "numba": numba.__version__,
                    "rows": rows,
                    "grid": gridres,
                    "samples": {
                        k: (v if isinstance(v, list) else {str(L): x for L, x in v.items()}) for k, v in samples.items()
                    },
                }
            )
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

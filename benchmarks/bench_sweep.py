"""Throughput of the sweep executor with 1 and with 2 process workers (target: 2 workers >= 1.8x).

A batch of small identical runs (one configuration, different seeds; each run trains, evaluates
and fits the reference floors, as ``depthscale.sims.runner.run`` does) goes through
``depthscale.sims.sweeps.sweep`` into a temporary store, once with ``workers=1`` and once with
``workers=2`` (a process pool, one numba and one BLAS thread per worker). Throughput is runs per
wall-clock second, worker start-up included.

On a shared machine the wall clock also counts time the workers wait for a core, so the script
also reports the CPU seconds the workers used (``getrusage`` of the joined children) and the
average number of cores they obtained (CPU / wall): the speed-up divided by the ratio of cores
obtained tells how well the executor itself scales.

Run: ``python benchmarks/bench_sweep.py`` (``--help`` for options, ``--json`` for a JSON dump).
"""

from __future__ import annotations

import os

UNSET = [v for v in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE") if os.environ.pop(v, None) is not None]

import argparse  # noqa: E402
import json  # noqa: E402
import resource  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402

from depthscale.sims.config import ModelConfig, RunConfig, TaskConfig, TrainConfig  # noqa: E402
from depthscale.sims.store import Store  # noqa: E402
from depthscale.sims.sweeps import sweep  # noqa: E402


def small_run(steps: int) -> RunConfig:
    """The run repeated in the batch: softmax, depth 4, d = 16, P = 64, top-2 task."""
    return RunConfig(
        TaskConfig(task="topk", k=2, d=16, P=64),
        ModelConfig(model="softmax", depth=4),
        TrainConfig(steps=steps, batch=128, eval_contexts=1024, window=100),
    )


def _children_cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def time_sweep(runs, workers: int) -> dict:
    """One sweep of ``runs`` with ``workers`` process workers into a fresh temporary store."""
    with tempfile.TemporaryDirectory() as tmp, Store(os.path.join(tmp, "runs.sqlite"), mode="write") as store:
        cpu0 = _children_cpu()
        load0 = os.getloadavg()[0]
        t0 = time.perf_counter()
        res = sweep(runs, store, executor="process", workers=workers, quiet=True)
        wall = time.perf_counter() - t0
        cpu = _children_cpu() - cpu0  # the pool is shut down (joined) when sweep returns
        statuses = [store.get(k)["status"] for k in store.keys()]
    if res.done != len(runs) or any(s != "ok" for s in statuses):
        raise RuntimeError(f"sweep with {workers} workers did not finish every run: {res}")
    return {
        "workers": workers,
        "runs": len(runs),
        "wall_s": wall,
        "runs_per_s": len(runs) / wall,
        "worker_cpu_s": cpu,
        "cores_obtained": cpu / wall,
        "loadavg_before": load0,
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=8, help="runs in the batch (even, so 2 workers share it evenly)")
    ap.add_argument("--steps", type=int, default=200, help="training steps of each run")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    cfg = small_run(args.steps)
    runs = [(cfg, seed) for seed in range(args.runs)]
    # warm the kernel cache (and the OS file cache) so neither pass pays for compilation
    time_sweep(runs[:1], 1)
    one = time_sweep(runs, 1)
    two = time_sweep(runs, 2)
    speedup = two["runs_per_s"] / one["runs_per_s"]
    core_ratio = two["cores_obtained"] / one["cores_obtained"]
    print(f"unset for this run: {', '.join(UNSET) if UNSET else 'none'}; cores: {os.cpu_count()}")
    print(
        f"{'workers':>7} {'runs':>5} {'wall s':>8} {'runs/s':>8} {'worker CPU s':>12} {'cores obtained':>14} {'load before':>11}"
    )
    for r in (one, two):
        print(
            f"{r['workers']:>7} {r['runs']:>5} {r['wall_s']:>8.2f} {r['runs_per_s']:>8.3f} {r['worker_cpu_s']:>12.2f} "
            f"{r['cores_obtained']:>14.2f} {r['loadavg_before']:>11.2f}"
        )
    print(
        f"throughput ratio 2 workers / 1 worker: {speedup:.2f} (target >= 1.8); cores obtained ratio {core_ratio:.2f}; "
        f"speed-up per core obtained {speedup / core_ratio:.2f}"
    )
    if args.json:
        print(
            json.dumps(
                {
                    "unset_env": UNSET,
                    "one": one,
                    "two": two,
                    "speedup": speedup,
                    "core_ratio": core_ratio,
                    "config": cfg.to_dict(),
                }
            )
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""numba against JAX and PyTorch: one forward and backward pass (loss and gradient) of the same model, parameters and batch.

For each size (d, P), depth L, model and dtype: the milliseconds per context of ``loss_and_grad`` on
each engine (numba, the JAX engine ``ModelConfig(engine="jax")``, and the PyTorch reference model of
``torch_models.py``, which reads the same flat ``theta``), each engine's time over numba's (above 1:
numba is faster), and each engine's achieved fraction of the machine's GEMM rate, measured in the
same run (NumPy n x n matmul on one BLAS thread, float64 and float32, at the start and the end, the
larger kept): the matrix-product FLOPs of the numba algorithm (``timing.step_flops``) over the time,
over the GEMM rate. The same FLOP count is used for every engine, so the fraction is the GEMM-bound
time over the engine's time. Before timing, the loss and gradient of JAX and PyTorch are compared
with numba's (relative differences printed). ``--step`` also times a training step (loss, gradient
and Adam: numba's ``optimizer_registry.Adam``, ``TorchTrainer.step``, and the JAX engine's jitted Adam block
per step).

All engines on one thread by default (numba's ``set_num_threads``, XLA's CPU flags set before JAX
loads, ``torch.set_num_threads``, one BLAS thread), timed by the process CPU clock (the one-core cost,
not the wait for cores that other work occupies); ``--threads 0`` leaves them at their defaults (all
cores, the accelerator for JAX) and times by the wall clock. Each time is the best of ``--repeats``
samples, each sample the mean of enough calls to last ``--seconds / --repeats``. The first call of
each shape is compilation and is not timed. Without torch installed the PyTorch column is skipped.

    python benchmarks/engines.py                       # softmax, d=16,P=128 and d=128,P=1024 at L = 1, 16, 64
    python benchmarks/engines.py --model softmax,linear --dtypes float64,float32 --step
    python benchmarks/engines.py --sizes 16x128 --depths 1,4 --model linear
    python benchmarks/engines.py --json                # one JSON object (device_check.sh)
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

import numba
import numpy as np
from threadpoolctl import threadpool_limits

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # timing.py, torch_models.py beside this file
from timing import gemm_rate, step_flops  # noqa: E402

TORCH_MAPS = ("softmax", "sparsemax", "entmax15", "sigmoid", "relu")  # the maps torch_models.py has


def _parse_sizes(text: str) -> list[tuple[int, int]]:
    out = []
    for part in text.split(","):
        d, _, P = part.partition("x")
        out.append((int(d), int(P)))
    return out


def best_seconds(fn, repeats: int, sample_s: float, clock) -> float:
    """Best over ``repeats`` samples of the per-call time of ``fn``; a sample averages enough calls
    to last ``sample_s`` (one call already made by the caller, so nothing here compiles)."""
    t0 = clock()
    fn()
    inner = max(1, int(sample_s / max(clock() - t0, 1e-6)))
    best = float("inf")
    for _ in range(repeats):
        t0 = clock()
        for _ in range(inner):
            fn()
        best = min(best, (clock() - t0) / inner)
    return best


def _rel(a, b) -> float:
    """Largest absolute difference of a and b over the largest magnitude of b."""
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return float(np.max(np.abs(a - b)) / max(float(np.max(np.abs(b))), 1e-300))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="16x128,128x1024", help="d x P pairs, comma-separated (default 16x128,128x1024)")
    ap.add_argument("--depths", default="1,16,64", help="depths L, comma-separated (default 1,16,64)")
    ap.add_argument("--model", default="softmax", help="softmax, linear or both comma-separated (default softmax)")
    ap.add_argument("--attention", default="softmax", help="the softmax model's map (default softmax)")
    ap.add_argument("--dtypes", default="float64", help="float64, float32 or both comma-separated (default float64)")
    ap.add_argument("--contexts", type=int, default=0, help="batch size (0: 64 at P <= 128, else 8)")
    ap.add_argument("--seconds", type=float, default=1.0, help="timed seconds per engine and case (default 1)")
    ap.add_argument("--repeats", type=int, default=5, help="samples per engine and case, the best kept (default 5)")
    ap.add_argument("--step", action="store_true", help="also time a training step (loss, gradient, Adam)")
    ap.add_argument("--gemm-n", type=int, default=512, help="size n of the n x n GEMM rate (default 512)")
    ap.add_argument("--threads", type=int, default=1, help="threads of each engine; 0: the engines' defaults")
    ap.add_argument("--no-torch", action="store_true", help="skip the PyTorch column")
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    args = ap.parse_args(argv)
    models = [m.strip() for m in args.model.split(",")]
    dtypes = [t.strip() for t in args.dtypes.split(",")]
    for name, vals, allowed in (
        ("--model", models, ("softmax", "linear")),
        ("--dtypes", dtypes, ("float64", "float32")),
    ):
        bad = [v for v in vals if v not in allowed]
        if bad:
            ap.error(f"{name}={bad[0]!r}: must be one of {', '.join(allowed)}")
    if args.repeats < 1 or args.seconds <= 0 or args.gemm_n < 1 or args.threads < 0:
        ap.error("--repeats and --gemm-n must be >= 1, --seconds > 0, --threads >= 0")
    if args.threads:
        # before JAX loads: XLA's CPU backend on one thread (Eigen's pool off)
        os.environ["XLA_FLAGS"] = (
            os.environ.get("XLA_FLAGS", "") + " --xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"
        ).strip()
    from depthscale.sims.config import ModelConfig, TaskConfig
    from depthscale.sims.jax_engine import engine_info
    from depthscale.sims.models import make_model
    from depthscale.sims.tasks import make_batch

    torch = None
    note = ""
    if args.no_torch:
        note = "PyTorch column skipped (--no-torch)"
    else:
        try:
            import torch  # type: ignore[no-redef]
        except ImportError:
            note = "PyTorch column skipped: torch is not installed (pip install torch, a CPU build, for it)"
    if torch is not None:
        from torch_models import TorchModel

        if args.threads:
            torch.set_num_threads(args.threads)
            try:
                torch.set_num_interop_threads(1)
            except RuntimeError:  # only allowed once per process
                pass
    if note and not args.json:
        print(f"# {note}", flush=True)

    if args.threads:
        numba.set_num_threads(args.threads)
    clock = time.process_time if args.threads == 1 else time.perf_counter
    blas = args.threads or None

    def gemm() -> dict:
        with threadpool_limits(1):  # the GEMM rate is always one BLAS thread's
            return {dt: gemm_rate(np.dtype(dt).type, n=args.gemm_n) for dt in ("float64", "float32")}

    gemm_start = gemm()
    if not args.json:
        print(
            "# GEMM at the start, GFLOP/s: " + ", ".join(f"{k} {v / 1e9:.1f}" for k, v in gemm_start.items()),
            flush=True,
        )
    rows = []
    for d, P in _parse_sizes(args.sizes):
        n = args.contexts or (64 if P <= 128 else 8)
        task = TaskConfig(task="topk", k=2, d=d, P=P)
        for dtype in dtypes:
            batch = make_batch(task, n, np.random.default_rng(0), dtype=np.dtype(dtype).type)
            for model_name in models:
                for L in [int(x) for x in args.depths.split(",")]:
                    cfg = ModelConfig(
                        model=model_name,
                        depth=L,
                        dtype=dtype,
                        attention=args.attention if model_name == "softmax" else "softmax",
                    )
                    engines = {
                        "numba": make_model(cfg, d),
                        "jax": make_model(ModelConfig(**{**cfg.__dict__, "engine": "jax"}), d),
                    }
                    if torch is not None and (model_name == "linear" or cfg.attention in TORCH_MAPS):
                        engines["torch"] = TorchModel(cfg, d)
                    theta = engines["numba"].init(np.random.default_rng(1))
                    row: dict = {
                        "model": model_name,
                        "dtype": dtype,
                        "d": d,
                        "P": P,
                        "L": L,
                        "contexts": n,
                        "flops_per_context": step_flops(model_name, 1, P, d, engines["numba"].N, L),
                    }
                    res = {}
                    for name, eng in engines.items():
                        with threadpool_limits(blas):
                            t0 = time.perf_counter()
                            res[name] = eng.loss_and_grad(theta, batch)  # compiles (JAX)
                            row[f"{name}_first_s"] = round(time.perf_counter() - t0, 3)
                            sec = best_seconds(
                                lambda eng=eng: eng.loss_and_grad(theta, batch),
                                args.repeats,
                                args.seconds / args.repeats,
                                clock,
                            )
                        row[f"{name}_ms_per_context"] = sec / n * 1e3
                    loss0, g0 = res["numba"]
                    for name in engines:
                        if name == "numba":
                            continue
                        row[f"{name}_loss_rel_diff"] = abs(res[name][0] - loss0) / max(abs(loss0), 1e-300)
                        row[f"{name}_grad_rel_diff"] = _rel(res[name][1], g0)
                        row[f"{name}_over_numba"] = row[f"{name}_ms_per_context"] / row["numba_ms_per_context"]
                    row["grad_rel_diff"] = row["jax_grad_rel_diff"]  # the older key, as device_check.sh reads it
                    if args.step:
                        _time_steps(row, engines, theta, batch, n, args, clock, blas)
                    rows.append(row)
                    if not args.json:
                        _print_row(row, list(engines))
    gemm_end = gemm()
    rate = {dt: max(gemm_start[dt], gemm_end[dt]) for dt in gemm_start}
    for row in rows:
        est = row["flops_per_context"] / rate[row["dtype"]] * 1e3  # ms per context at the GEMM rate
        row["gemm_bound_ms_per_context"] = est
        for key in [k for k in row if k.endswith("_ms_per_context") and not k.startswith("gemm")]:
            row[key.replace("_ms_per_context", "_of_gemm")] = est / row[key]
    info = {
        **engine_info(),
        "torch": torch.__version__ if torch is not None else None,
        "torch_note": note or None,
        "numba": numba.__version__,
        "threads": args.threads,
        "clock": "process CPU time" if args.threads == 1 else "wall",
        "gemm_n": args.gemm_n,
        "gemm_gflops_start": {k: v / 1e9 for k, v in gemm_start.items()},
        "gemm_gflops_end": {k: v / 1e9 for k, v in gemm_end.items()},
        "load_average": os.getloadavg(),
    }
    if args.json:
        print(json.dumps({"engine": info, "rows": rows}))
        return 0
    print(
        f"# GEMM {args.gemm_n}x{args.gemm_n}, one thread, GFLOP/s (start / end): "
        + ", ".join(f"{k} {gemm_start[k] / 1e9:.1f} / {gemm_end[k] / 1e9:.1f}" for k in gemm_start)
    )
    print("# fraction of the GEMM rate (the larger of start and end): FLOPs of the numba algorithm / time / rate")
    for row in rows:
        names = [k[: -len("_ms_per_context")] for k in row if k.endswith("_ms_per_context") and "gemm" not in k]
        print(
            f"{row['model']:7s} {row['dtype']} d={row['d']:4d} P={row['P']:5d} L={row['L']:3d}: "
            + ", ".join(f"{k} {row[k + '_of_gemm'] * 100:5.1f} %" for k in names)
        )
    print(f"# {info}")
    return 0


def _time_steps(row: dict, engines: dict, theta, batch, n: int, args, clock, blas) -> None:
    """One training step (loss, gradient, Adam) per engine, as each engine's training loop runs it."""
    import jax
    import jax.numpy as jnp

    from depthscale.sims import jax_engine
    from depthscale.sims.config import TrainConfig
    from depthscale.sims.optimizer_registry import Adam, Hyper

    tcfg = TrainConfig()
    steps = {}
    th_nb, eng_nb = theta.copy(), engines["numba"]
    opt = Adam(th_nb.size, tcfg, th_nb.dtype)

    def nb_step():
        _, grad = eng_nb.loss_and_grad(th_nb, batch)
        opt.step(th_nb, grad, 1e-4)

    steps["numba"] = (nb_step, 1)
    # JAX: the engine's own jitted block (lax.scan of loss, gradient and optax Adam), K steps a call
    # on K copies of the batch already on the device, as its training loop runs with host batches.
    # The block is private to the engine (named _block_host, earlier _block): skipped if neither is there.
    block = getattr(jax_engine, "_block_host", None) or getattr(jax_engine, "_block", None)
    if block is not None:
        jm, K = engines["jax"], 4
        X, y, xq, target = (jnp.stack([a] * K) for a in jm.arrays(batch))
        hyper = (tcfg.optimizer, Hyper.of(tcfg), tcfg.loss)  # (optimiser, its hyper-parameters, loss): optax Adam
        th_j = jnp.asarray(np.asarray(theta, jm.dtype))
        state = jax_engine._transform(hyper).init(th_j)
        lrs, mask = jnp.full(K, 1e-4, jm.dtype), jnp.ones(K, bool)
        steps["jax"] = (
            lambda: jax.block_until_ready(block(jm.spec, hyper, th_j, state, X, y, xq, target, lrs, mask)),
            K,
        )
    if "torch" in engines:
        from torch_models import TorchTrainer

        tm = engines["torch"]
        trainer = TorchTrainer(tm, theta, lr=1e-4)
        tensors = tm.tensors(batch)
        steps["torch"] = (lambda: trainer.step(*tensors), 1)
    for name, (fn, per_call) in steps.items():
        with threadpool_limits(blas):
            fn()  # compiles (JAX)
            sec = best_seconds(fn, args.repeats, args.seconds / args.repeats, clock) / per_call
        row[f"{name}_step_ms_per_context"] = sec / n * 1e3
    for name in steps:
        if name != "numba":
            row[f"{name}_step_over_numba"] = row[f"{name}_step_ms_per_context"] / row["numba_step_ms_per_context"]


def _print_row(row: dict, names: list[str]) -> None:
    parts = [f"{nm} {row[nm + '_ms_per_context']:8.3f}" for nm in names]
    ratios = [f"{nm}/numba {row[nm + '_over_numba']:5.2f}" for nm in names if nm != "numba"]
    checks = [
        f"{nm} loss {row[nm + '_loss_rel_diff']:.1e} grad {row[nm + '_grad_rel_diff']:.1e}"
        for nm in names
        if nm != "numba"
    ]
    line = (
        f"{row['model']:7s} {row['dtype']} d={row['d']:4d} P={row['P']:5d} L={row['L']:3d} B={row['contexts']}: "
        f"ms/context {', '.join(parts)}; {', '.join(ratios)} (rel. diff. vs numba: {'; '.join(checks)}; "
        f"first call {', '.join(str(row[nm + '_first_s']) + ' s' for nm in names)})"
    )
    if "numba_step_ms_per_context" in row:
        steps = [f"{nm} {row[nm + '_step_ms_per_context']:8.3f}" for nm in names if nm + "_step_ms_per_context" in row]
        sr = [f"{nm}/numba {row[nm + '_step_over_numba']:5.2f}" for nm in names if nm + "_step_over_numba" in row]
        line += f"\n        training step ms/context {', '.join(steps)}; {', '.join(sr)}"
    print(line, flush=True)


if __name__ == "__main__":
    sys.exit(main())

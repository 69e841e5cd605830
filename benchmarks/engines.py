"""numba against JAX: one forward and backward pass (loss and gradient) of the same model, parameters and batch.

For each size (d, P) and depth L: the milliseconds per context of ``loss_and_grad`` on each engine and
their ratio JAX / numba (above 1: numba is faster). Both engines on one thread by default (numba's
``set_num_threads``, XLA's CPU flags set before JAX loads), so the ratio compares the engines, not
thread pools; ``--threads 0`` leaves both at their defaults (all cores, or the accelerator for JAX).
The first call of each shape is compilation and is not timed.

    python benchmarks/engines.py                       # d=16,P=128 and d=128,P=1024 at L = 1, 16, 64
    python benchmarks/engines.py --sizes 16x128 --depths 1,4 --model linear
    python benchmarks/engines.py --json                # one JSON object (device_check.sh)
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time


def _parse_sizes(text: str) -> list[tuple[int, int]]:
    out = []
    for part in text.split(","):
        d, _, P = part.partition("x")
        out.append((int(d), int(P)))
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="16x128,128x1024", help="d x P pairs, comma-separated (default 16x128,128x1024)")
    ap.add_argument("--depths", default="1,16,64", help="depths L, comma-separated (default 1,16,64)")
    ap.add_argument("--model", default="softmax", help="softmax or linear (default softmax)")
    ap.add_argument("--attention", default="softmax", help="the softmax model's map (default softmax)")
    ap.add_argument("--contexts", type=int, default=0, help="batch size (0: 64 at P <= 128, else 8)")
    ap.add_argument("--seconds", type=float, default=1.0, help="time each case for at least this long (default 1)")
    ap.add_argument("--threads", type=int, default=1, help="threads of each engine; 0: the engines' defaults")
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    args = ap.parse_args(argv)
    if args.threads:
        # before JAX loads: XLA's CPU backend on one thread (Eigen's pool off)
        os.environ["XLA_FLAGS"] = (
            os.environ.get("XLA_FLAGS", "") + " --xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"
        ).strip()
    import numba
    import numpy as np
    from threadpoolctl import threadpool_limits

    from depthscale.sims.config import ModelConfig, TaskConfig
    from depthscale.sims.jax_engine import engine_info
    from depthscale.sims.models import make_model
    from depthscale.sims.tasks import make_batch

    if args.threads:
        numba.set_num_threads(args.threads)
    rows = []
    for d, P in _parse_sizes(args.sizes):
        n = args.contexts or (64 if P <= 128 else 8)
        task = TaskConfig(task="topk", k=2, d=d, P=P)
        batch = make_batch(task, n, np.random.default_rng(0))
        for L in [int(x) for x in args.depths.split(",")]:
            cfg = ModelConfig(
                model=args.model, depth=L, attention=args.attention if args.model == "softmax" else "softmax"
            )
            models = {
                "numba": make_model(cfg, d),
                "jax": make_model(ModelConfig(**{**cfg.__dict__, "engine": "jax"}), d),
            }
            theta = models["numba"].init(np.random.default_rng(1))
            row: dict = {"model": args.model, "d": d, "P": P, "L": L, "contexts": n}
            grads = {}
            for name, model in models.items():
                with threadpool_limits(args.threads or None):
                    t0 = time.perf_counter()
                    loss, grads[name] = model.loss_and_grad(theta, batch)  # compiles
                    row[f"{name}_first_s"] = round(time.perf_counter() - t0, 3)
                    reps, t0 = 0, time.perf_counter()
                    while reps < 2 or time.perf_counter() - t0 < args.seconds:
                        model.loss_and_grad(theta, batch)
                        reps += 1
                    row[f"{name}_ms_per_context"] = (time.perf_counter() - t0) / reps / n * 1e3
            g = grads["numba"]
            row["grad_rel_diff"] = float(np.max(np.abs(grads["jax"] - g)) / max(np.max(np.abs(g)), 1e-300))
            row["jax_over_numba"] = row["jax_ms_per_context"] / row["numba_ms_per_context"]
            rows.append(row)
            if not args.json:
                print(
                    f"{args.model} d={d:4d} P={P:5d} L={L:3d}: numba {row['numba_ms_per_context']:8.3f} ms/context, "
                    f"jax {row['jax_ms_per_context']:8.3f} ms/context, jax/numba {row['jax_over_numba']:6.2f} "
                    f"(grad rel. diff {row['grad_rel_diff']:.1e}; first call numba {row['numba_first_s']} s, "
                    f"jax {row['jax_first_s']} s)",
                    flush=True,
                )
    info = {**engine_info(), "threads": args.threads, "load_average": os.getloadavg()[0]}
    if args.json:
        print(json.dumps({"engine": info, "rows": rows}))
    else:
        print(f"# {info}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

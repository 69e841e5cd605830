"""Time one training step (forward, backward, Adam) of the numba engine and of PyTorch on one core.

Both engines run the same maths (``torch_models.py``; ``tests/sims/test_autograd.py`` checks the
gradients agree): the linear model in its sufficient-statistic form and the softmax model in its
test-token-only parallel form, by default at d = 32 (N = d), P = 256, batch 256 (``--d --P
--batch``; the science setting is d = 16, P = 128, batch 1024; ``--widths`` for N other than d) and several depths, float64 and
float32, with one thread for numba, BLAS and torch. Data generation (``make_batch``) is not
part of the step; it is timed on its own and compared with the L = 16 step. The machine's
single-core GEMM rate (NumPy matmul of 512 x 512) is measured in the same run, and each numba step
is reported as a fraction of it in FLOP terms (FLOPs counted analytically, see ``step_flops``).
``--context-update`` times the softmax model with context updates (``ModelConfig(context_update=True)``)
in both engines instead.

Run: ``python benchmarks/bench_step.py`` (``--help`` for options, ``--json`` for a JSON dump).
"""

from __future__ import annotations

import os

# OpenBLAS reads these when it loads: unset them (only in this process) before NumPy is imported,
# they select a slower kernel on this kind of machine. Pin every thread pool to one thread.
UNSET = [v for v in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE") if os.environ.pop(v, None) is not None]
for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ[_v] = "1"

import argparse  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402

import numba  # noqa: E402
import numpy as np  # noqa: E402
import scipy.linalg.cython_blas  # noqa: E402,F401 - the BLAS numba's np.dot calls
import torch  # noqa: E402
from threadpoolctl import threadpool_info, threadpool_limits  # noqa: E402
from timing import gemm_rate, median_seconds, paired_seconds, step_flops  # noqa: E402
from torch_models import TorchModel, TorchTrainer  # noqa: E402

from depthscale.sims.config import ModelConfig, TaskConfig, TrainConfig  # noqa: E402
from depthscale.sims.models import make_model  # noqa: E402
from depthscale.sims.tasks import make_batch  # noqa: E402
from depthscale.sims.training import Adam  # noqa: E402

D, P, BATCH = 32, 256, 256  # defaults of --d, --P, --batch


def limit_threads() -> None:
    """One thread for numba, every BLAS/OpenMP pool threadpoolctl sees, and torch."""
    numba.set_num_threads(1)
    threadpool_limits(limits=1)
    torch.set_num_threads(1)
    try:
        torch.set_num_interop_threads(1)
    except RuntimeError:  # already set (only allowed once per process)
        pass


def blas_info() -> list[dict]:
    keep = ("internal_api", "architecture", "version", "num_threads", "threading_layer")
    return [
        {**{k: i.get(k) for k in keep}, "library": os.path.basename(i.get("filepath", ""))} for i in threadpool_info()
    ]


def bench_config(
    model: str, dtype: str, L: int, batch, repeats: int, width: int = 0, context_update: bool = False
) -> dict:
    B, P_, d = batch.X.shape
    cfg = ModelConfig(model=model, depth=L, dtype=dtype, width=width, context_update=context_update)
    eng = make_model(cfg, d)
    theta = eng.init(np.random.default_rng(0))
    tcfg = TrainConfig()

    # numba engine: the step of depthscale.sims.training (loss_and_grad, then Adam in place)
    th_nb = theta.copy()
    opt = Adam(th_nb.size, tcfg, th_nb.dtype)

    def nb_step():
        _, grad = eng.loss_and_grad(th_nb, batch)
        opt.step(th_nb, grad, 1e-4)

    ref = TorchModel(cfg, d)
    tensors = ref.tensors(batch)
    trainer = TorchTrainer(ref, theta, lr=1e-4)
    # same maths, checked on the starting point before timing
    loss_nb = eng.loss_and_grad(theta, batch)[0]
    loss_t = ref.loss_and_grad(theta, batch)[0]
    t_nb, t_t = paired_seconds(nb_step, lambda: trainer.step(*tensors), repeats)
    # wall clock as well, for reference (inflated by whatever else runs on the shared cores)
    w_nb, w_t = paired_seconds(nb_step, lambda: trainer.step(*tensors), repeats, warmup=0, wall=True)
    return {
        "model": model,
        "context_update": context_update,
        "dtype": dtype,
        "L": L,
        "N": eng.N,
        "numba_s": t_nb,
        "torch_s": t_t,
        "ratio": t_t / t_nb,
        "numba_wall_s": w_nb,
        "torch_wall_s": w_t,
        "wall_ratio": w_t / w_nb,
        "flops": step_flops(model, B, P_, d, eng.N, L, context_update),
        "loss_rel_diff": abs(loss_nb - loss_t) / abs(loss_t),
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--depths", default="1,4,16,64")
    ap.add_argument("--models", default=None, help="default linear,softmax (softmax with --context-update)")
    ap.add_argument("--dtypes", default="float64,float32")
    ap.add_argument("--repeats", type=int, default=7, help="timed samples per configuration (median)")
    ap.add_argument("--d", type=int, default=D, help="input dimension (N = d)")
    ap.add_argument("--P", type=int, default=P, help="context length")
    ap.add_argument("--batch", type=int, default=BATCH, help="contexts per step")
    ap.add_argument("--widths", default="0", help="model widths N (ModelConfig.width; 0 means N = d)")
    ap.add_argument("--context-update", action="store_true", help="the softmax model with context updates")
    ap.add_argument("--json", action="store_true", help="print one JSON object at the end")
    args = ap.parse_args(argv)
    for name in ("d", "P", "batch", "repeats"):
        if getattr(args, name) < 1:
            ap.error(f"--{name}={getattr(args, name)}: must be >= 1")
    depths = [int(x) for x in args.depths.split(",")]
    models = (args.models or ("softmax" if args.context_update else "linear,softmax")).split(",")
    if args.context_update and models != ["softmax"]:
        ap.error(f"--models={args.models}: must be softmax with --context-update (the context update is softmax-only)")
    dtypes = args.dtypes.split(",")
    widths = [int(x) for x in args.widths.split(",")]
    limit_threads()

    load0 = os.getloadavg()
    gemm_start = {dt: gemm_rate(np.dtype(dt)) for dt in dtypes}
    task = TaskConfig(task="topk", k=2, d=args.d, P=args.P)
    rows, data = [], {}
    for dt in dtypes:
        batch = make_batch(task, args.batch, np.random.default_rng(1), dtype=np.dtype(dt))
        rng = np.random.default_rng(2)
        data[dt] = median_seconds(lambda: make_batch(task, args.batch, rng, dtype=np.dtype(dt)), args.repeats)
        for model in models:
            for L in depths:
                for width in widths:
                    r = bench_config(model, dt, L, batch, args.repeats, width, args.context_update)
                    r["gflops"] = r["flops"] / r["numba_s"] / 1e9
                    rows.append(r)
    load1 = os.getloadavg()
    # measured again at the end: contention only ever lowers it, so the larger value is the
    # machine's rate and the fractions above are, if anything, conservative
    gemm_end = {dt: gemm_rate(np.dtype(dt)) for dt in dtypes}
    gemm = {dt: max(gemm_start[dt], gemm_end[dt]) for dt in dtypes}
    for r in rows:
        r["gemm_fraction"] = r["flops"] / r["numba_s"] / gemm[r["dtype"]]
        # a training step also draws its batch: the same make_batch for either engine
        r["numba_with_data_s"] = r["numba_s"] + data[r["dtype"]]
        r["torch_with_data_s"] = r["torch_s"] + data[r["dtype"]]

    info = {
        "machine": {
            "cpu": _cpu_name(),
            "cores": os.cpu_count(),
            "python": platform.python_version(),
            "numpy": np.__version__,
            "numba": numba.__version__,
            "torch": torch.__version__,
            "loadavg_before": load0,
            "loadavg_after": load1,
        },
        "unset_env": UNSET,
        "threads": {"numba": numba.get_num_threads(), "torch": torch.get_num_threads()},
        "blas": blas_info(),
        "gemm_gflops": {dt: g / 1e9 for dt, g in gemm.items()},
        "gemm_gflops_start_end": {dt: [gemm_start[dt] / 1e9, gemm_end[dt] / 1e9] for dt in dtypes},
        "sizes": {
            "d": args.d,
            "N": [w or args.d for w in widths],
            "P": args.P,
            "batch": args.batch,
            "task": "topk k=2",
            "context_update": args.context_update,
        },
    }
    print(
        f"machine: {info['machine']['cpu']}, {info['machine']['cores']} cores; load average before/after "
        f"{load0[0]:.2f}/{load1[0]:.2f}; threads: numba {info['threads']['numba']}, torch {info['threads']['torch']}, BLAS 1"
    )
    print(
        "unset for this run: "
        + (", ".join(UNSET) if UNSET else "none (OPENBLAS_CORETYPE, OPENBLAS_L2_SIZE were not set)")
    )
    for b in info["blas"]:
        print(
            f"BLAS: {b['library']} {b['internal_api']} {b['version']} kernel={b['architecture']} threads={b['num_threads']}"
        )
    print(
        "single-core GEMM 512x512 (larger of start/end): "
        + ", ".join(
            f"{dt} {g:.1f} GFLOP/s ({info['gemm_gflops_start_end'][dt][0]:.1f}/{info['gemm_gflops_start_end'][dt][1]:.1f})"
            for dt, g in info["gemm_gflops"].items()
        )
    )
    print(
        f"sizes: d = {args.d}, N = {widths} (0: N = d), P = {args.P}, batch {args.batch}, top-2 task"
        + (", softmax with context updates" if args.context_update else "")
    )
    print(
        "times: median CPU seconds of one step (process_time, one thread, numba and torch samples interleaved); "
        "'+data ratio' is torch/numba with make_batch added to both; 'wall ratio' is torch/numba in wall time"
    )
    print()
    print(
        f"{'model':8} {'dtype':8} {'L':>3} {'N':>3} {'numba ms':>10} {'torch ms':>10} {'torch/numba':>11} "
        f"{'numba GFLOP/s':>13} {'of GEMM':>8} {'+data ratio':>11} {'wall ratio':>10} {'loss diff':>9}"
    )
    for r in rows:
        print(
            f"{r['model']:8} {r['dtype']:8} {r['L']:>3} {r['N']:>3} {1e3 * r['numba_s']:>10.2f} {1e3 * r['torch_s']:>10.2f} "
            f"{r['ratio']:>11.2f} {r['gflops']:>13.2f} {100 * r['gemm_fraction']:>7.1f}% "
            f"{r['torch_with_data_s'] / r['numba_with_data_s']:>11.2f} {r['wall_ratio']:>10.2f} {r['loss_rel_diff']:>9.1e}"
        )
    print()
    data_rows = []
    for dt in dtypes:
        for model in models:
            ref = [r for r in rows if r["dtype"] == dt and r["model"] == model and r["L"] == 16]
            frac = data[dt] / ref[0]["numba_s"] if ref else float("nan")
            data_rows.append({"dtype": dt, "model": model, "make_batch_s": data[dt], "ratio_to_L16_step": frac})
            print(
                f"make_batch (topk, batch {args.batch}) {dt}: {1e3 * data[dt]:.2f} ms = {frac:.2f} x the {model} L=16 numba step"
            )
    if args.json:
        print(json.dumps({**info, "steps": rows, "data": data_rows}))
    return 0


def _cpu_name() -> str:
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


if __name__ == "__main__":
    raise SystemExit(main())

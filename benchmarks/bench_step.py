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
in both engines instead. ``--attentions`` times the softmax-family model (two streams, no context
update) with other attention nonlinearities (``ModelConfig(attention=...)``: sparsemax, entmax15,
sigmoid, relu; ``all`` for the five) against PyTorch (``torch_models.attention_map``) and reports
each map's fraction of the GEMM rate next to softmax's from the same round. ``--rounds R`` repeats
the whole measurement R times, cycling through every configuration in each round, and reports
medians over rounds (of times, and of the per-round ratios to softmax).

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
import statistics  # noqa: E402

import numba  # noqa: E402
import numpy as np  # noqa: E402
import scipy.linalg.cython_blas  # noqa: E402,F401 - the BLAS numba's np.dot calls
import torch  # noqa: E402
from threadpoolctl import threadpool_info, threadpool_limits  # noqa: E402
from timing import gemm_rate, median_seconds, paired_seconds, step_flops  # noqa: E402
from torch_models import TorchModel, TorchTrainer  # noqa: E402

from depthscale.sims.attention_maps import ATTENTIONS  # noqa: E402
from depthscale.sims.config import ModelConfig, TaskConfig, TrainConfig  # noqa: E402
from depthscale.sims.models import make_model  # noqa: E402
from depthscale.sims.optimizer_registry import Adam  # noqa: E402
from depthscale.sims.tasks import make_batch  # noqa: E402

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


def setup_config(
    model: str, dtype: str, L: int, batch, width: int = 0, context_update: bool = False, attention: str = "softmax"
) -> dict:
    """Both engines' step functions for one configuration, their losses checked on the batch first."""
    B, P_, d = batch.X.shape
    cfg = ModelConfig(
        model=model, depth=L, dtype=dtype, width=width, context_update=context_update, attention=attention
    )
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
    return {
        "row": {
            "model": model,
            "attention": attention,
            "context_update": context_update,
            "dtype": dtype,
            "L": L,
            "N": eng.N,
            "flops": step_flops(model, B, P_, d, eng.N, L, context_update),
            "loss_rel_diff": abs(loss_nb - loss_t) / abs(loss_t),
        },
        "nb": nb_step,
        "torch": lambda: trainer.step(*tensors),
    }


def measure(setup: dict, repeats: int, wall: bool = True) -> dict:
    """CPU seconds of one step of each engine (interleaved samples), and wall seconds if ``wall``."""
    t_nb, t_t = paired_seconds(setup["nb"], setup["torch"], repeats)
    out = {"numba_s": t_nb, "torch_s": t_t}
    if wall:  # wall clock as well, for reference (inflated by whatever else runs on the shared cores)
        out["numba_wall_s"], out["torch_wall_s"] = paired_seconds(
            setup["nb"], setup["torch"], repeats, warmup=0, wall=True
        )
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--depths", default="1,4,16,64")
    ap.add_argument(
        "--models", default=None, help="default linear,softmax (softmax with --context-update or --attentions)"
    )
    ap.add_argument("--dtypes", default="float64,float32")
    ap.add_argument("--repeats", type=int, default=7, help="timed samples per configuration (median)")
    ap.add_argument("--d", type=int, default=D, help="input dimension (N = d)")
    ap.add_argument("--P", type=int, default=P, help="context length")
    ap.add_argument("--batch", type=int, default=BATCH, help="contexts per step")
    ap.add_argument("--widths", default="0", help="model widths N (ModelConfig.width; 0 means N = d)")
    ap.add_argument("--context-update", action="store_true", help="the softmax model with context updates")
    ap.add_argument(
        "--attentions",
        default="softmax",
        help=f"attention nonlinearities of the softmax model, comma-separated from {','.join(ATTENTIONS)}, or all",
    )
    ap.add_argument("--rounds", type=int, default=1, help="repeat every configuration this many times (medians)")
    ap.add_argument("--no-wall", action="store_true", help="skip the wall-clock samples (halves the run time)")
    ap.add_argument("--json", action="store_true", help="print one JSON object at the end")
    args = ap.parse_args(argv)
    for name in ("d", "P", "batch", "repeats", "rounds"):
        if getattr(args, name) < 1:
            ap.error(f"--{name}={getattr(args, name)}: must be >= 1")
    depths = [int(x) for x in args.depths.split(",")]
    only_softmax = args.context_update or args.attentions != "softmax"
    models = (args.models or ("softmax" if only_softmax else "linear,softmax")).split(",")
    if args.context_update and models != ["softmax"]:
        ap.error(f"--models={args.models}: must be softmax with --context-update (the context update is softmax-only)")
    attentions = list(ATTENTIONS) if args.attentions == "all" else args.attentions.split(",")
    if "softmax" not in attentions:  # every map is compared with softmax measured in the same rounds
        attentions.insert(0, "softmax")
    for a in attentions:
        if a not in ATTENTIONS:
            ap.error(f"--attentions={args.attentions}: {a!r} is not one of {', '.join(ATTENTIONS)} (or all)")
    if attentions != ["softmax"] and (models != ["softmax"] or args.context_update):
        ap.error(
            f"--attentions={args.attentions}: needs --models softmax without --context-update "
            "(the other nonlinearities exist for the two-stream model without context updates)"
        )
    dtypes = args.dtypes.split(",")
    widths = [int(x) for x in args.widths.split(",")]
    limit_threads()

    load0 = os.getloadavg()
    gemm_start = {dt: gemm_rate(np.dtype(dt)) for dt in dtypes}
    task = TaskConfig(task="topk", k=2, d=args.d, P=args.P)
    setups, batches = [], {}
    for dt in dtypes:
        batches[dt] = make_batch(task, args.batch, np.random.default_rng(1), dtype=np.dtype(dt))
        for model in models:
            for L in depths:
                for width in widths:
                    for att in attentions:
                        setups.append(setup_config(model, dt, L, batches[dt], width, args.context_update, att))
    # every round measures every configuration once (and the data once per dtype), so that all of
    # them see the same conditions on a shared machine; medians over rounds are reported
    samples: list[list[dict]] = [[] for _ in setups]
    data_samples: dict[str, list[float]] = {dt: [] for dt in dtypes}
    for _ in range(args.rounds):
        for dt in dtypes:
            rng = np.random.default_rng(2)
            data_samples[dt].append(
                median_seconds(lambda: make_batch(task, args.batch, rng, dtype=np.dtype(dt)), args.repeats)
            )
        for j, st in enumerate(setups):
            samples[j].append(measure(st, args.repeats, wall=not args.no_wall))
    data = {dt: statistics.median(v) for dt, v in data_samples.items()}
    rows = []
    for st, ss in zip(setups, samples):
        r = dict(st["row"])
        for key in ss[0]:
            r[key] = statistics.median(x[key] for x in ss)
        r["ratio"] = r["torch_s"] / r["numba_s"]
        r["wall_ratio"] = r["torch_wall_s"] / r["numba_wall_s"] if "numba_wall_s" in r else float("nan")
        r["gflops"] = r["flops"] / r["numba_s"] / 1e9
        r["samples"] = ss
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
            "attentions": attentions,
            "rounds": args.rounds,
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
        f"{'model':8} {'map':9} {'dtype':8} {'L':>3} {'N':>3} {'numba ms':>10} {'torch ms':>10} {'torch/numba':>11} "
        f"{'numba GFLOP/s':>13} {'of GEMM':>8} {'+data ratio':>11} {'wall ratio':>10} {'loss diff':>9}"
    )
    for r in rows:
        print(
            f"{r['model']:8} {r['attention']:9} {r['dtype']:8} {r['L']:>3} {r['N']:>3} "
            f"{1e3 * r['numba_s']:>10.2f} {1e3 * r['torch_s']:>10.2f} "
            f"{r['ratio']:>11.2f} {r['gflops']:>13.2f} {100 * r['gemm_fraction']:>7.1f}% "
            f"{r['torch_with_data_s'] / r['numba_with_data_s']:>11.2f} {r['wall_ratio']:>10.2f} {r['loss_rel_diff']:>9.1e}"
        )
    print()
    data_rows = []
    for dt in dtypes:
        for model in models:
            ref = [
                r
                for r in rows
                if r["dtype"] == dt and r["model"] == model and r["L"] == 16 and r["attention"] == "softmax"
            ]
            frac = data[dt] / ref[0]["numba_s"] if ref else float("nan")
            data_rows.append({"dtype": dt, "model": model, "make_batch_s": data[dt], "ratio_to_L16_step": frac})
            print(
                f"make_batch (topk, batch {args.batch}) {dt}: {1e3 * data[dt]:.2f} ms = {frac:.2f} x the {model} L=16 numba step"
            )
    maps = attention_table(rows, data_samples, gemm) if attentions != ["softmax"] else []
    if maps:
        print()
        print(
            "attention maps against softmax (same dtype, L, N; medians over rounds of each round's ratio): "
            "'of GEMM' with the step alone and '+data' with make_batch added (a training step's cost); "
            "'vs softmax' is the map's GEMM fraction over softmax's (>= 1: at least softmax's fraction)"
        )
        print(
            f"{'map':9} {'dtype':8} {'L':>3} {'N':>3} {'numba ms':>9} {'torch/numba':>11} {'+data':>6} "
            f"{'of GEMM':>8} {'softmax':>8} {'vs softmax':>10} {'+data of GEMM':>13} {'softmax':>8} {'vs softmax':>10}"
        )
        for m in maps:
            print(
                f"{m['attention']:9} {m['dtype']:8} {m['L']:>3} {m['N']:>3} {1e3 * m['numba_s']:>9.2f} "
                f"{m['torch_ratio']:>11.2f} {m['torch_ratio_with_data']:>6.2f} {100 * m['gemm_fraction']:>7.1f}% "
                f"{100 * m['softmax_gemm_fraction']:>7.1f}% {m['vs_softmax']:>10.2f} "
                f"{100 * m['gemm_fraction_with_data']:>12.1f}% {100 * m['softmax_gemm_fraction_with_data']:>7.1f}% "
                f"{m['vs_softmax_with_data']:>10.2f}"
            )
    if args.json:
        print(json.dumps({**info, "steps": rows, "data": data_rows, "attention_maps": maps}))
    return 0


def attention_table(rows: list[dict], data_samples: dict, gemm: dict) -> list[dict]:
    """Each map's step against softmax's at the same dtype, L and N, round by round.

    A map and softmax do the same matrix products (``step_flops`` does not depend on the map), so
    the ratio of their GEMM fractions is softmax's time over the map's. It is taken within each
    round (the two were measured minutes apart at most, under the same load) and its median over
    rounds reported, with and without the round's ``make_batch`` time added to both steps.
    """
    soft = {(r["dtype"], r["L"], r["N"]): r for r in rows if r["attention"] == "softmax"}
    out = []
    for r in rows:
        s = soft.get((r["dtype"], r["L"], r["N"]))
        if s is None:
            continue
        data = data_samples[r["dtype"]]
        per_round = list(zip(r["samples"], s["samples"], data))
        with_data = statistics.median(r_["numba_s"] + dt for r_, _, dt in per_round)
        soft_with_data = statistics.median(s_["numba_s"] + dt for _, s_, dt in per_round)
        torch_with_data = statistics.median(r_["torch_s"] + dt for r_, _, dt in per_round)
        g = gemm[r["dtype"]]
        out.append(
            {
                "attention": r["attention"],
                "dtype": r["dtype"],
                "L": r["L"],
                "N": r["N"],
                "numba_s": r["numba_s"],
                "torch_s": r["torch_s"],
                "torch_ratio": statistics.median(r_["torch_s"] / r_["numba_s"] for r_, _, _ in per_round),
                "torch_ratio_with_data": statistics.median(
                    (r_["torch_s"] + dt) / (r_["numba_s"] + dt) for r_, _, dt in per_round
                ),
                "numba_with_data_s": with_data,
                "torch_with_data_s": torch_with_data,
                "gemm_fraction": r["flops"] / r["numba_s"] / g,
                "softmax_gemm_fraction": s["flops"] / s["numba_s"] / g,
                "gemm_fraction_with_data": r["flops"] / with_data / g,
                "softmax_gemm_fraction_with_data": s["flops"] / soft_with_data / g,
                "vs_softmax": statistics.median(s_["numba_s"] / r_["numba_s"] for r_, s_, _ in per_round),
                "vs_softmax_with_data": statistics.median(
                    (s_["numba_s"] + dt) / (r_["numba_s"] + dt) for r_, s_, dt in per_round
                ),
                "vs_softmax_rounds": [s_["numba_s"] / r_["numba_s"] for r_, s_, _ in per_round],
            }
        )
    return out


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

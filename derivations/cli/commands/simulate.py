"""``depthscale simulate``: train and measure one model, print the record."""

from __future__ import annotations

import os
import sys

from ....sims.threads import check_threads
from ..app import emit

VARIANTS = {
    # switch name -> ModelConfig field and value
    "per-layer-value": ("value", "per-layer"),
    "single-stream": ("stream", "single"),
    "context-update": ("context_update", True),
    "tied": ("qk", "tied"),
    "temperature": ("qk", "temperature"),
    "merged": ("qk", "merged"),
}

# options passed unchanged to the config field of the same name
CONFIG_OPTIONS = {
    "task": ("task", "k", "a", "b", "d", "P", "c_lambda", "c_omega"),
    "model": ("model", "depth", "width", "init_scale", "dtype", "attention", "engine"),
    "train": ("lr", "batch", "steps", "warmup", "schedule", "optimizer", "loss", "window", "tol", "eval_contexts"),
}


def register(sub) -> None:
    from ....theory._validate import D_MAX, DEPTH_MAX, P_MAX

    p = sub.add_parser("simulate", help="train one attention model and measure it")
    p.add_argument(
        "--model",
        default="softmax",
        help="linear, softmax, or a model registered by a package (entry points depthscale.models; with "
        "--engine jax) (default softmax)",
    )
    p.add_argument(
        "--task", default="topk", help="easy-exact, easy-fresh, topk (default) or a registered task (numba engine)"
    )
    p.add_argument("--k", type=int, default=2, help="top-k size, 1 <= k <= P (task topk; default 2)")
    p.add_argument(
        "--a", type=float, default=0.0, help="input spectrum exponent a >= 0, lambda_k = c_lambda k^-a (default 0)"
    )
    p.add_argument(
        "--b", type=float, default=0.0, help="teacher spectrum exponent b >= 0, omega_k = c_omega k^-b (default 0)"
    )
    p.add_argument("--c-lambda", type=float, default=1.0, help="input spectrum scale c_lambda > 0 (default 1)")
    p.add_argument("--c-omega", type=float, default=1.0, help="teacher spectrum scale c_omega > 0 (default 1)")
    p.add_argument(
        "--d",
        type=int,
        default=16,
        help=f"input dimension, 1 <= d <= {D_MAX} (default 16); refused if the run would not fit in memory",
    )
    p.add_argument("--P", type=int, default=128, help=f"context length, 1 <= P <= {P_MAX} (default 128)")
    p.add_argument("--depth", type=int, default=1, help=f"number of layers L, 1 <= L <= {DEPTH_MAX} (default 1)")
    p.add_argument("--width", type=int, default=0, help="width N >= d (0: N = d; default 0)")
    p.add_argument("--variant", action="append", default=[], help="model switch, repeatable: " + ", ".join(VARIANTS))
    p.add_argument(
        "--init-scale",
        type=float,
        default=0.3,
        help="query/key entries ~ N(0, (init_scale / sqrt(d))^2), init_scale > 0 (default 0.3)",
    )
    p.add_argument(
        "--attention",
        default="softmax",
        help="the map from a layer's scores to its weights (softmax model, base variant): softmax, sparsemax, "
        "entmax15, sigmoid, relu, or a map registered by a package (entry points depthscale.attention; "
        "with --engine jax) (default softmax)",
    )
    p.add_argument(
        "--engine",
        default="numba",
        help="numba (hand-derived kernels, the CPU engine) or jax (autograd; CPU or an accelerator; "
        "pip install 'depthscale[jax]') (default numba)",
    )
    p.add_argument("--dtype", default="float64", help="float64 or float32 (default float64)")
    p.add_argument("--steps", type=int, default=8000, help="step cap (default 8000)")
    p.add_argument("--lr", type=float, default=3e-3, help="peak learning rate, 0 < lr <= 10 (default 0.003)")
    p.add_argument("--batch", type=int, default=1024, help="fresh training contexts per step (default 1024)")
    p.add_argument("--warmup", type=int, default=0, help="linear learning-rate warm-up steps, <= steps (default 0)")
    p.add_argument("--schedule", default="cosine", help="constant, cosine or plateau (default cosine)")
    p.add_argument("--optimizer", default="adam", help="adam, sgd or a registered optimiser (default adam)")
    p.add_argument("--loss", default="mse", help="mse or a registered training loss, JAX engine (default mse)")
    p.add_argument("--window", type=int, default=1000, help="convergence window in steps (default 1000)")
    p.add_argument("--tol", type=float, default=2e-3, help="convergence tolerance, relative (default 0.002)")
    p.add_argument("--eval-contexts", type=int, default=10240, help="fresh evaluation contexts (default 10240)")
    p.add_argument("--seed", type=int, default=0, help="random seed, integer >= 0 (default 0)")
    p.add_argument("--threads", type=int, default=0, help="numba threads, 0 <= threads <= cores (0: all cores)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument("--json", action="store_true", help="print one JSON object (strict: missing values are null)")
    p.set_defaults(func=handle)


def build_config(args):
    """The RunConfig of the parsed arguments (raises ValueError naming a bad parameter)."""
    from ....sims.config import ModelConfig, RunConfig, TaskConfig, TrainConfig
    from ....theory._validate import check_choice

    model_fields: dict = {}
    for v in args.variant:
        check_choice("variant", v, tuple(VARIANTS))
        name, value = VARIANTS[v]
        if name in model_fields and model_fields[name] != value:
            raise ValueError(f"variant={v!r}: conflicts with another --variant setting {name}")
        model_fields[name] = value
    opts = {part: {name: getattr(args, name) for name in names} for part, names in CONFIG_OPTIONS.items()}
    task = TaskConfig(**opts["task"])
    model = ModelConfig(**opts["model"], **model_fields)
    return RunConfig(task, model, TrainConfig(**opts["train"]))


def handle(args) -> int:
    from ....theory._validate import SEED_MAX, check_int

    config = build_config(args)
    seed = check_int("seed", args.seed, lo=0, hi=SEED_MAX)
    from ....sims.engines import get_engine
    from ....sims.memory import check_memory_of

    check_memory_of(config, prefetch=True)  # before anything is allocated, and before numba loads
    threads = check_threads(args.threads, lo=0)
    get_engine(config.model.engine).check_available()
    import numba

    if threads:
        numba.set_num_threads(threads)
    from ....sims.measure import LOSS_KEYS
    from ....sims.runner import run
    from ....sims.sweeps import compile_ahead
    from ....sims.warm import units_for

    # with an empty kernel cache, its parts compiled side by side on the cores (each in its own
    # process) rather than one after another here
    compile_ahead(units_for([config]), min(numba.get_num_threads(), os.cpu_count() or 1))

    # with a spare core, the next training batch is generated while the model computes
    record = run(config, seed, progress=not args.quiet and sys.stderr.isatty(), prefetch=numba.get_num_threads() > 1)
    record.pop("arrays", None)
    from ....sims.provenance import code_version

    record.setdefault("code_version", code_version())  # which code made it, as a sweep stamps its records
    keys = (*LOSS_KEYS, "converged", "steps", "wall_seconds", "status", "reason")
    text = "\n".join(f"{k:>18}: {record.get(k)}" for k in keys)
    emit(record, args.json, text)
    return 0 if record["status"] == "ok" else 1

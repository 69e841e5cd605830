"""The JAX engine on the device at hand: its float64 loss and gradient against the numba engine, and the
time of the scale study's paper-scale rung (d = 128, P = 1,024, batch 1024) per training step.

1. Check (``--check``): at d = 16, P = 128 (batch 32) and L = 1, 4, 16, float64, the same parameters
   and batch give the same loss and gradient on both engines (relative differences printed, at most
   1e-10 to pass, the engine contract's tolerance); then 40 Adam steps of L = 4 on the numba engine's
   own batches (``data="host"``) end at the same parameters on both (at most 1e-6 relative, as
   tests/sims/test_jax_engine.py asks).
2. Time (``--time``): at d = 128, P = 1,024, batch 1024, float64, under the scale study's protocol
   (cosine, lr 3e-3), for each depth in ``--depths`` (default 1, 8, 32): one seed alone
   (``train_lockstep``, what a sweep job trains) and ``--seeds`` seeds in one program (``train_seeds``,
   vmapped), each after one block of steps that compiles it, then ``--steps`` steps timed (data
   generated on the device, the host's stopping rules replayed: a real training loop). The time per
   step is fitted as ``a + b L`` over the depths timed and the scale-gpu preset's steps (4,000 at
   L = 1..32, three seeds) projected from it, both ways.

    python benchmarks/scale_rung.py                       # both, the defaults (an accelerator: a few minutes)
    python benchmarks/scale_rung.py --check               # the check alone (any machine)
    python benchmarks/scale_rung.py --time --d 8 --P 64 --batch 16 --steps 40 --depths 1,2   # a CPU smoke

Without an accelerator the timing at the default size is skipped with a note (a CPU step there takes
seconds); ``--force`` times it anyway. ``--json`` ends with one JSON object of every number.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time

import numpy as np

PRESET_STEPS = 4000  # the scale study's protocol (studies/scale/presets/scale-gpu.toml)
PRESET_DEPTHS = (1, 2, 4, 8, 16, 32)
PRESET_SEEDS = 3


def _rel(a, b) -> float:
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return float(np.max(np.abs(a - b)) / max(float(np.max(np.abs(b))), 1e-300))


def check(say) -> dict:
    """Loss and gradient of both engines on one batch, and 40 steps on the same batches (float64)."""
    from depthscale.sims import jax_engine, training
    from depthscale.sims.config import ModelConfig, TaskConfig, TrainConfig
    from depthscale.sims.models import make_model
    from depthscale.sims.tasks import make_batch

    task = TaskConfig(task="topk", k=2, d=16, P=128)
    batch = make_batch(task, 32, np.random.default_rng(1))
    out: dict = {"loss_and_grad": [], "rtol": 1e-10}
    for L in (1, 4, 16):
        cfg = ModelConfig(depth=L)
        nb, jx = make_model(cfg, task.d), make_model(ModelConfig(depth=L, engine="jax"), task.d)
        rng = np.random.default_rng(L)
        theta = nb.init(rng) + 0.3 * rng.standard_normal(nb.n_params)  # off the gentle start
        (ln, gn), (lj, gj) = nb.loss_and_grad(theta, batch), jx.loss_and_grad(theta, batch)
        row = {"L": L, "loss": ln, "loss_rel_diff": abs(lj - ln) / abs(ln), "grad_rel_diff": _rel(gj, gn)}
        row["ok"] = row["loss_rel_diff"] <= out["rtol"] and row["grad_rel_diff"] <= out["rtol"]
        out["loss_and_grad"].append(row)
        say(
            f"loss and gradient, d=16 P=128 L={L:2d} float64: loss {ln:.6g}, relative differences "
            f"{row['loss_rel_diff']:.1e} (loss), {row['grad_rel_diff']:.1e} (gradient): {'ok' if row['ok'] else 'FAIL'}"
        )
    tr = TrainConfig(steps=40, batch=64, lr=1e-2, eval_contexts=64, window=40, schedule="cosine")
    cfg, jcfg = ModelConfig(depth=4), ModelConfig(depth=4, engine="jax")
    (rn,) = training.train_lockstep([(make_model(cfg, task.d), cfg)], task, tr, 0)
    (rj,) = jax_engine.train_lockstep([(make_model(jcfg, task.d), jcfg)], task, tr, 0, data="host")
    diff = _rel(rj.theta, rn.theta)
    out["training"] = {"steps": [int(rn.steps), int(rj.steps)], "theta_rel_diff": diff, "ok": diff <= 1e-6}
    say(
        f"40 steps of L=4 on the same batches: steps {rn.steps} (numba) and {rj.steps} (JAX), parameters "
        f"{diff:.1e} apart (relative): {'ok' if out['training']['ok'] else 'FAIL'}"
    )
    out["ok"] = all(r["ok"] for r in out["loss_and_grad"]) and out["training"]["ok"]
    return out


def _timed(fn, steps: int) -> float:
    t0 = time.perf_counter()
    fn(steps)
    return time.perf_counter() - t0


def time_rung(args, say) -> dict:
    """Seconds per training step at each depth, one seed alone and ``--seeds`` vmapped, and the projection."""
    from depthscale.sims import jax_engine
    from depthscale.sims.config import ModelConfig, TaskConfig, TrainConfig
    from depthscale.sims.memory import JAX_BLOCK_STEPS

    task = TaskConfig(task="topk", k=2, a=0.0, b=0.0, d=args.d, P=args.P)
    depths = [int(x) for x in args.depths.split(",")]
    seeds = list(range(args.seeds))
    rows = []
    for L in depths:
        mcfg = ModelConfig(depth=L, engine="jax", dtype=args.dtype)
        model = jax_engine.JaxModel(mcfg, task.d)

        def cfg(steps: int) -> TrainConfig:  # the window as long as the run: cosine to the cap, no early stop
            return TrainConfig(
                schedule="cosine", lr=3e-3, batch=args.batch, steps=steps, window=steps, eval_contexts=64
            )

        def one(steps: int) -> None:
            jax_engine.train_lockstep([(model, mcfg)], task, cfg(steps), 0)

        def many(steps: int) -> None:
            jax_engine.train_seeds(model, mcfg, task, cfg(steps), seeds)

        row: dict = {"L": L, "n_params": int(model.n_params)}
        for name, fn, n in (("one_seed", one, 1), (f"{len(seeds)}_seeds_vmapped", many, len(seeds))):
            compile_s = _timed(fn, JAX_BLOCK_STEPS)  # one block: compiles the program the timed run reuses
            secs = _timed(fn, args.steps)
            row[name] = {"compile_and_first_block_s": compile_s, "ms_per_step": 1e3 * secs / args.steps, "seeds": n}
        rows.append(row)
        v = row[f"{len(seeds)}_seeds_vmapped"]["ms_per_step"]
        say(
            f"d={args.d} P={args.P} batch={args.batch} L={L:3d} {args.dtype}: one seed {row['one_seed']['ms_per_step']:.1f} "
            f"ms/step, {len(seeds)} seeds vmapped {v:.1f} ms/step ({v / len(seeds):.1f} per seed); compile + first "
            f"block {row['one_seed']['compile_and_first_block_s']:.1f} s"
        )
    out: dict = {"d": args.d, "P": args.P, "batch": args.batch, "dtype": args.dtype, "steps": args.steps, "rows": rows}
    if len(depths) >= 2:
        L = np.array(depths, float)
        proj = {}
        for name, per in (("one_seed", PRESET_SEEDS), (f"{len(seeds)}_seeds_vmapped", PRESET_SEEDS / len(seeds))):
            t = np.array([r[name]["ms_per_step"] for r in rows]) / 1e3
            b, a = np.polyfit(L, t, 1)  # seconds per step = a + b L
            total = sum(PRESET_STEPS * (a + b * x) for x in PRESET_DEPTHS) * per
            proj[name] = {"a_s": float(a), "b_s_per_layer": float(b), "preset_hours": total / 3600}
        out["projection"] = proj
        if (args.d, args.P, args.batch) == (128, 1024, 1024):
            say(
                f"the scale-gpu preset ({PRESET_STEPS} steps at L = 1..32, {PRESET_SEEDS} seeds), projected from a + b L: "
                f"{proj['one_seed']['preset_hours']:.2f} h one seed at a time (as a sweep runs it), "
                f"{proj[f'{len(seeds)}_seeds_vmapped']['preset_hours']:.2f} h with the seeds vmapped; training only "
                "(evaluation and the reference floors run on the host)"
            )
    return out


def _finite_copy(obj):
    """``obj`` with non-finite floats as None."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: _finite_copy(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_finite_copy(v) for v in obj]
    return obj


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="the cross-engine check (with --time: both; neither: both)")
    ap.add_argument("--time", action="store_true", help="the timing of the paper-scale rung")
    ap.add_argument("--d", type=int, default=128, help="dimension d of the timing (default 128)")
    ap.add_argument("--P", type=int, default=1024, help="context length P of the timing (default 1024)")
    ap.add_argument("--batch", type=int, default=1024, help="batch of the timing (default 1024)")
    ap.add_argument("--depths", default="1,8,32", help="depths timed, comma-separated (default 1,8,32)")
    ap.add_argument("--seeds", type=int, default=3, help="seeds vmapped in one program (default 3)")
    ap.add_argument(
        "--steps", type=int, default=200, help="steps timed per depth, after a compiling block (default 200)"
    )
    ap.add_argument("--dtype", default="float64", choices=("float64", "float32"), help="dtype of the timing")
    ap.add_argument("--force", action="store_true", help="time the default size without an accelerator too")
    ap.add_argument("--json", action="store_true", help="end with one JSON object of every number")
    ap.add_argument("--json-file", default=None, metavar="PATH", help="also write that JSON object to PATH")
    args = ap.parse_args(argv)
    if min(args.d, args.P, args.batch, args.seeds, args.steps) < 1:
        ap.error("--d, --P, --batch, --seeds and --steps must be >= 1")
    both = not (args.check or args.time)

    def say(text: str) -> None:
        print(text, flush=True)

    from depthscale.sims.jax_engine import engine_info

    info = engine_info()
    say(f"device: {info['device']} ({info['platform']}), jax {info['jax']}, optax {info['optax']}")
    result: dict = {"engine": info}
    ok = True
    if both or args.check:
        result["check"] = check(say)
        ok = result["check"]["ok"]
    if both or args.time:
        big = (args.d, args.P) == (128, 1024)
        if info["platform"] == "cpu" and big and not args.force:
            say(
                "no accelerator: the timing at d = 128, P = 1,024 is skipped (a CPU step takes seconds; --force times it)"
            )
        else:
            result["time"] = time_rung(args, say)
    text = json.dumps(_finite_copy(result), default=str)
    if args.json:
        print(text)
    if args.json_file:
        with open(args.json_file, "w", encoding="utf-8") as fh:
            fh.write(text + "\n")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

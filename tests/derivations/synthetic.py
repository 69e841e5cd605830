"""Synthetic run records drawn from known laws, for testing the analysis layers without training."""

import numpy as np

from depthscale.sims.config import ModelConfig, RunConfig, TaskConfig, TrainConfig, run_key

DEPTHS = (1, 2, 4, 8, 16, 32, 64)


def record(
    model="softmax",
    task="topk",
    k=2,
    a=0.0,
    b=0.0,
    d=8,
    P=32,
    depth=1,
    seed=0,
    loss=1.0,
    converged=True,
    eval_contexts=10240,
    qk="factorised",
    **extra,
):
    cfg = RunConfig(
        TaskConfig(task=task, k=k, a=a, b=b, d=d, P=P),
        ModelConfig(model=model, depth=depth, qk=qk),
        TrainConfig(eval_contexts=eval_contexts),
    )
    rec = {
        "key": run_key(cfg, seed),
        "config": cfg.to_dict(),
        "seed": seed,
        "status": "ok",
        "reason": None,
        "converged": converged,
        "steps": 100,
        "final_loss": float(loss),
        "final_loss_se": 0.001 * loss,
        "identity_residual": 1e-15,
        "target_power": 1.0,
        "top1_mass": [0.5] * depth,
    }
    rec.update(extra)
    return rec


def curve(law, seeds=(0, 1, 2), depths=DEPTHS, noise=0.002, rng=None, **kw):
    """Records whose loss follows ``law(L)`` with multiplicative noise, one per (depth, seed)."""
    rng = rng or np.random.default_rng(0)
    return [
        record(depth=L, seed=s, loss=law(L) * (1 + noise * rng.standard_normal()), **kw) for s in seeds for L in depths
    ]

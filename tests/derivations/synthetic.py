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


def protocol_records(protocol, model, fields, depths, k=2, seeds=(0, 1)):
    """Records of one study protocol on the top-k task (d = 16, P = 128), one per (seed, depth).

    ``model``: the model section without the depth; ``fields(L, wiggle)``: the measured values
    (``final_loss`` and the rest), with ``wiggle`` a scatter around 1 that survives the seed mean, so
    the curves' errors are finite.
    """
    out = []
    for seed in seeds:
        for j, L in enumerate(depths):
            wiggle = 1 + 0.002 * (-1) ** j * (1 + 0.5 * seed)
            train = {
                "schedule": protocol.schedule,
                "lr": protocol.lr,
                "batch": protocol.batch,
                "steps": protocol.steps,
                "eval_contexts": 10240,
            }
            out.append(
                {
                    "key": f"{protocol.name}-{k}-{L}-{seed}",
                    "status": "ok",
                    "seed": seed,
                    "converged": True,
                    **fields(L, wiggle),
                    "config": {
                        "task": {"task": "topk", "k": k, "a": 0.0, "b": 0.0, "d": 16, "P": 128},
                        "model": {**model, "depth": L},
                        "train": train,
                    },
                }
            )
    return out


def cheap_calibration(mp) -> None:
    """A report calibrates each inverse-depth row (a user's curve's, a protocol curve's) on 10 curves
    of alpha = 2 instead of 3 x 50 (``mp`` a ``pytest.MonkeyPatch``): the tests of what a report holds
    would otherwise spend most of their time calibrating (the calibration's own tests,
    tests/studies/test_generic.py and tests/derivations/test_paper_curves.py, use the report's sizes)."""
    from depthscale.studies.generic import sections
    from depthscale.studies.paper_curves import sections as paper_sections

    for module in (sections, paper_sections):
        mp.setattr(module, "ALPHAS", (2.0,))
        mp.setattr(module, "REPLICATES", 10)

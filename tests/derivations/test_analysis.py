"""Curves: which runs form one, the fits they own, the reference floors they average."""

import math

import numpy as np
import pytest
from synthetic import curve, record

from depthscale.derivations.analysis.curve import curve_key, curves
from depthscale.derivations.analysis.fits import fit_offset_power


def test_a_curve_is_everything_but_depth_and_seed():
    recs = curve(lambda L: 0.5 + 0.4 / L, seeds=(0, 1), depths=(1, 2, 4))
    other = [dict(r, config={**r["config"], "train": {**r["config"]["train"], "lr": 1e-2}}) for r in recs]
    cs = curves(recs + other)
    assert len(cs) == 2  # another training protocol is another curve
    for c in cs:
        assert c.depths.tolist() == [1, 2, 4] and c.seeds == [0, 1]
        assert {curve_key(r) for r in c.runs.values()} == {c.key}
    # seed means by hand
    c = next(c for c in cs if dict(c.key.train)["lr"] != 1e-2)
    for j, L in enumerate((1, 2, 4)):
        vals = [r["final_loss"] for r in recs if r["config"]["model"]["depth"] == L]
        assert c.mean[j] == pytest.approx(np.mean(vals), rel=1e-14)
        assert c.se[j] == pytest.approx(np.std(vals, ddof=1) / math.sqrt(2), rel=1e-12)


def test_fits_are_cached_per_kind_bootstrap_and_seed():
    (c,) = curves(curve(lambda L: 0.5 + 0.4 / L, seeds=(0, 1, 2, 3, 4), noise=0.02))  # a bootstrap needs 5
    plain = c.fit("offset", n_boot=0)
    assert plain.bootstrap is None
    assert plain.params == pytest.approx(fit_offset_power(c.depths.astype(float), c.mean).params, rel=1e-12)
    b1, b2 = c.fit("offset", n_boot=30, seed=1), c.fit("offset", n_boot=30, seed=2)
    assert b1.bootstrap.n_boot == 30 and b2.bootstrap.n_boot == 30
    assert b1.bootstrap.intervals["alpha"] != b2.bootstrap.intervals["alpha"]  # another resampling seed
    assert c.fit("offset", n_boot=30, seed=1) is b1
    assert c.fit("power", n_boot=0).kind == "power_law"
    assert c.default_kind == "offset"
    with pytest.raises(ValueError, match="kind"):
        c.fit("spline")


def test_too_few_depths_is_a_fit_with_a_reason():
    """On the seed means three depths are too few for four parameters (the default fit then uses the
    nine seed-level points instead: test_seed_fits.py)."""
    (c,) = curves(curve(lambda L: 0.5 + 0.4 / L, depths=(1, 2, 4)))
    f = c.fit("offset", n_boot=0, points="mean")
    assert not f.identified and "< 4" in f.reason


def test_floor_averages_the_deepest_runs():
    recs = curve(lambda L: 0.5 + 0.4 / L, seeds=(0, 1, 2), depths=(1, 4))
    rng = np.random.default_rng(3)
    for r in recs:
        r["floors"] = {
            n: {
                "loss": 0.6 + 0.01 * rng.standard_normal(),
                "se": 0.01 + 0.001 * rng.random(),
                "diff": -0.1 + 0.01 * rng.standard_normal(),
                "diff_se": 0.002 + 0.001 * rng.random(),
            }
            for n in ("single", "mixture", "convex")
        }
    (c,) = curves(recs)
    b = c.floor("mixture")
    deep = [r["floors"]["mixture"] for r in recs if r["config"]["model"]["depth"] == 4]
    assert b.depth == 4 and b.n_runs == 3
    assert b.loss == pytest.approx(np.mean([x["loss"] for x in deep]), rel=1e-14)
    assert b.diff.value == pytest.approx(np.mean([x["diff"] for x in deep]), rel=1e-14)
    # the seeds' scatter (here 0.01 / sqrt(3)) when it exceeds the evaluation errors (about 0.0015),
    # on the seeds' n - 1 = 2 degrees of freedom
    scatter = math.sqrt(sum((x["diff"] - b.diff.value) ** 2 for x in deep) / 2) / math.sqrt(3)
    assert scatter > math.sqrt(sum(x["diff_se"] ** 2 for x in deep)) / 3
    assert b.diff.se == pytest.approx(scatter, rel=1e-12) and b.diff.dof == 2
    assert b.loss_se == pytest.approx(math.sqrt(sum(x["se"] ** 2 for x in deep)) / 3, rel=1e-12)
    with pytest.raises(ValueError, match="name"):
        c.floor("triple")
    assert c.floor("convex").n_runs == 3  # every reference floor of theory/_choices.py FLOOR_NAMES


def test_curve_key_names_its_fields_from_the_configuration():
    from depthscale.derivations.analysis.curve import CurveKey

    rec = record(model="linear", task="easy-fresh", k=3, a=1.5, b=2.0, d=16, P=64, depth=4, seed=1)
    key = curve_key(rec)
    cfg = rec["config"]
    assert isinstance(key, CurveKey)
    assert (key.model, key.task, key.a, key.b, key.d, key.P) == (
        cfg["model"]["model"],
        cfg["task"]["task"],
        cfg["task"]["a"],
        cfg["task"]["b"],
        cfg["task"]["d"],
        cfg["task"]["P"],
    )
    assert key.k == 0  # k means nothing on the easy tasks
    # every training setting, except those added later while at their defaults (as the run's hash)
    later = {"checkpoints_from": 0, "optimizer": "adam", "loss": "mse"}
    assert key.train == tuple(sorted((k, v) for k, v in cfg["train"].items() if later.get(k, None) != v))
    (c,) = curves([rec])
    assert (c.model, c.task, c.a, c.b, c.d, c.P) == (key.model, key.task, key.a, key.b, key.d, key.P)


def test_a_field_added_later_at_its_default_does_not_split_a_curve():
    # runs of one condition, written before and after TrainConfig gained checkpoints_from (default 0)
    from depthscale.sims.config import RunConfig, config_hash

    def rec(depth, train):
        cfg = {
            "task": {"task": "topk", "k": 2, "a": 0.0, "b": 0.0, "d": 4, "P": 8},
            "model": {"model": "softmax", "depth": depth},
            "train": {"steps": 10, **train},
        }
        return {
            "key": f"k{depth}-0",
            "seed": 0,
            "status": "ok",
            "converged": True,
            "final_loss": 1.0 / depth,
            "config": cfg,
        }

    (c,) = curves([rec(1, {}), rec(2, {"checkpoints_from": 0})])
    assert list(c.depths) == [1, 2]
    assert len(curves([rec(1, {}), rec(2, {"checkpoints_from": 5})])) == 2  # not at the default: its own
    # the same rule as the run's hash, which never saw the field at its default
    base = RunConfig.from_dict(rec(1, {})["config"])
    assert config_hash(base) == config_hash(RunConfig.from_dict(rec(1, {"checkpoints_from": 0})["config"]))
    # nor tells two curves apart in their labels: only the learning rate differs
    older, newer = rec(1, {"lr": 0.003}), rec(1, {"lr": 0.01, "checkpoints_from": 0})
    newer["key"] = "k1b-0"
    assert sorted(c.label.split("[")[1] for c in curves([older, newer])) == ["lr=0.003]", "lr=0.01]"]

"""The objections claim (studies/paper_curves/objections.py) on synthetic curves whose law is known:
the best-rate envelope picks the lowest rate per depth, an inverse-depth family passes, a slow
L^-0.3 family fails, and a rate run on one seed leaves the envelope indicative."""

from dataclasses import replace
from types import SimpleNamespace

import numpy as np

from depthscale.derivations.analysis.curve import CurveKey
from depthscale.derivations.study import Curve
from depthscale.studies.paper_curves import objections as ob

DEPTHS = [1, 2, 4, 16, 64]


def _curve(lr: float, alpha: float, shift: float, seeds: int = 3, width=None, steps: int = 4000, noise=1e-4):
    rng = np.random.default_rng(int(lr * 1e4) + seeds)
    L = np.array(DEPTHS, dtype=float)
    loss = 0.35 + shift + 0.02 * L**-alpha + noise * rng.standard_normal((seeds, L.size))
    train = (("batch", 1024), ("lr", lr), ("schedule", "cosine"), ("steps", steps))
    key = CurveKey("softmax", "base", "topk", 2, 0.5, 0.5, 16, 128, None, None, width, 0.3, "float64", train)
    return replace(Curve.from_arrays(DEPTHS, loss, contexts=10240), key=key, label=f"lr={lr:g}")


def _evaluate(cs):
    ev = SimpleNamespace(curves=cs)
    claim = ob.inverse_depth_under_objections
    return ob.objections(ev), {r.condition.label.split(", ")[-1]: r for r in claim.evaluate(claim, ev)}


def test_envelope_takes_the_lowest_rate_at_each_depth():
    # 1e-2 is best only at L = 1 (its curve sits lower there and falls least)
    cs = [_curve(1e-3, 1.0, 0.01), _curve(3e-3, 1.0, 0.0), _curve(1e-2, 0.0, 0.0, noise=0.0)]
    cs[2] = replace(cs[2], loss=cs[2].loss * 0 + 0.36)
    o, _ = _evaluate(cs)
    assert o.chosen == {1: 1e-2, 2: 3e-3, 4: 3e-3, 16: 3e-3, 64: 3e-3}
    by_rate = {1e-3: cs[0], 3e-3: cs[1], 1e-2: cs[2]}
    expected = np.column_stack([by_rate[o.chosen[L]].loss[:, j] for j, L in enumerate(DEPTHS)])
    np.testing.assert_array_equal(o.envelope.loss, expected)


def test_inverse_depth_passes_and_a_slow_law_fails():
    # positive control: every rate falls as 1/L; negative: every rate as L^-0.3 (both on 3 seeds, t(2))
    _, good = _evaluate([_curve(lr, 1.0, s) for lr, s in zip(ob.RATES, (0.01, 0.0, 0.005))])
    _, slow = _evaluate([_curve(lr, 0.3, s) for lr, s in zip(ob.RATES, (0.01, 0.0, 0.005))])
    assert good["best rate"].verdict == "pass"
    assert slow["best rate"].verdict == "fail"


def test_width_and_steps_curves_are_their_own_rows():
    cs = [_curve(lr, 1.0, s) for lr, s in zip(ob.RATES, (0.01, 0.0, 0.005))]
    cs += [_curve(3e-3, 0.3, 0.0, width=32), _curve(3e-3, 1.0, -0.01, steps=20000)]
    _, rows = _evaluate(cs)
    assert rows["N=2d"].verdict == "fail" and rows["20,000 steps"].verdict == "pass"


def test_one_seed_of_a_rate_leaves_the_envelope_indicative():
    cs = [_curve(1e-3, 1.0, 0.01), _curve(3e-3, 1.0, 0.0), _curve(1e-2, 1.0, 0.005, seeds=1)]
    _, rows = _evaluate(cs)
    assert rows["best rate"].verdict == "indicative"


def test_other_conditions_are_ignored():
    other = replace(_curve(3e-3, 1.0, 0.0), key=_curve(3e-3, 1.0, 0.0).key._replace(a=0.0))
    o, rows = _evaluate([other])
    assert o.by_setting == {} and rows == {}


def _with_runs(c: Curve, gap, head_gap=None):
    """``c`` with run records: A_L - C_L = ``gap(L, seed)`` and, at L = 1, the single head
    ``head_gap(seed)`` below R_1 (paired difference R_1 - head)."""
    runs = {}
    for i, s in enumerate(c.seeds):
        for j, L in enumerate(c.depths):
            r = {"status": "ok", "seed": s, "converged": True, "final_loss": float(c.loss[i, j]), "gap": gap(L, s)}
            r["config"] = {"train": {"eval_contexts": 10240}, "model": {"depth": int(L)}}
            if L == 1 and head_gap is not None:
                d = head_gap(s)
                r["floors"] = {"single": {"loss": float(c.loss[i, j]) - d, "se": 1e-3, "diff": d, "diff_se": 1e-4}}
            runs[(int(L), s)] = r
    return replace(c, runs=runs, contexts=None)


def _rows(claim, cs):
    ev = SimpleNamespace(curves=cs)
    return {r.condition.label.split(", ")[-1]: r for r in claim.evaluate(claim, ev)}


def test_mechanism_per_seed_passes_a_flat_disagreement_and_fails_a_growing_one():
    g = np.random.default_rng(0)
    flat = _with_runs(_curve(3e-3, 1.0, 0.0, steps=20000), lambda L, s: 0.5 * (1 + 1e-3 * g.standard_normal()))
    grows = _with_runs(_curve(3e-3, 1.0, 0.0, width=32), lambda L, s: 0.5 * L**0.3 * (1 + 1e-3 * g.standard_normal()))
    rows = _rows(ob.mechanism_per_seed, [flat, grows])
    assert rows["20,000 steps"].verdict == "pass" and abs(rows["20,000 steps"].measured - 1) < 0.01
    assert rows["N=2d"].verdict == "fail" and abs(rows["N=2d"].measured - 0.7) < 0.01
    assert rows["N=2d"].test.startswith("seeds n=3")


def test_one_layer_on_head_is_an_equivalence_test_on_the_paired_difference():
    on = _with_runs(_curve(3e-3, 1.0, 0.0, steps=20000), lambda L, s: 0.5, lambda s: 0.0005 * (s - 1))
    above = _with_runs(_curve(3e-3, 1.0, 0.0, width=32), lambda L, s: 0.5, lambda s: 0.02 + 0.0005 * s)
    wide = _with_runs(_curve(1e-3, 1.0, 0.0), lambda L, s: 0.5, lambda s: 0.003 * (s - 1))
    rows = _rows(ob.one_layer_on_head, [on, above, wide])
    assert rows["20,000 steps"].verdict == "pass"  # 0 ± 0.0005 at t(2): inside ± 1 % of the head
    assert rows["N=2d"].verdict == "fail"  # 2 % above the head, well outside
    assert rows["lr=1e-3"].verdict == "indicative"  # 0 ± 4.30 x 0.0017 = 0.0074 crosses 0.0035

"""Claims select curves by what they are, not by the engine that computed them (issue 48, item 3).

A curve of the JAX engine with softmax is a softmax curve for the claims (its own curve and label,
``[jax]``), and a user's map trained in the nonlinearity study's setting gets that study's
inverse-depth row and the CLT identity. Numba curves are selected exactly as before: the old
selection rules are written out here and compared on every committed store and on synthetic ones.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from depthscale.derivations.analysis.curve import curves, split_engine, variant_name
from depthscale.derivations.claims.evidence import Evidence, select_curves
from depthscale.derivations.claims.generic import identity_residuals
from depthscale.derivations.claims.protocol_rows import protocol_curves, row_label
from depthscale.sims.attention_maps import ATTENTIONS
from depthscale.sims.attention_registry import register_attention, unregister_attention
from depthscale.sims.config import ModelConfig, RunConfig, TaskConfig, TrainConfig, run_key
from depthscale.sims.protocols import PROTOCOLS
from depthscale.sims.store import Store
from depthscale.studies.core import controls, softmax
from depthscale.studies.nonlinearities import claims as nonlin_claims
from depthscale.studies.nonlinearities import theory as nonlin

ROOT = Path(__file__).resolve().parents[2]
DEPTHS = (1, 2, 4, 8, 16, 32, 64)
MAP = "hard-top2-test"


# ----------------------------------------------------------------------------- the rules before
def _old_select(cs, model, tasks, variant="base", k=None):
    return [c for c in cs if c.model == model and c.task in tasks and c.variant == variant and (k is None or c.k == k)]


def _old_attention_of(c):
    v = c.key.variant
    return "softmax" if v == "base" else (v if v in ATTENTIONS else None)


def _old_study_curves(cs):
    out = []
    for c in cs:
        k = c.key
        if (k.model, k.task, k.d, k.P) != ("softmax", "topk", 16, 128) or k.width not in (None, 0):
            continue
        att, prot = _old_attention_of(c), nonlin.protocol_of(c)
        if att is not None and prot is not None and k.init_scale in (None, 0.3) and k.dtype in (None, "float64"):
            out.append((att, prot, c))
    out.sort(key=lambda t: (nonlin.task_label(t[2]), t[1], ATTENTIONS.index(t[0])))
    return [(a, p, c.key) for a, p, c in out]


def _old_protocol_of(c):
    rec = next(iter(c.runs.values()))
    tr, m = rec["config"]["train"], rec["config"]["model"]
    for p in PROTOCOLS:
        if (
            tr.get("schedule") == p.schedule
            and np.isclose(tr.get("lr", 0), p.lr, rtol=1e-9, atol=0)
            and tr.get("batch") == p.batch
            and tr.get("steps") == p.steps
            and np.isclose(m.get("init_scale", 0.3), p.init_scale, rtol=1e-9, atol=0)
            and variant_name(m) == p.variant
            and (m.get("width") or 0) == p.width
        ):
            return p
    return None


def _same_selection_as_before(cs) -> None:
    ev = Evidence(cs)
    variants = {c.variant for c in cs} | {"base"}
    for model in ("linear", "softmax"):
        for tasks in (("easy-exact",), ("easy-fresh",), ("topk",), ("easy-exact", "easy-fresh")):
            for variant in variants:
                for k in (None, 2, 16):
                    assert select_curves(ev, model, tasks, variant, k) == _old_select(cs, model, tasks, variant, k)
    assert [(a, p, c.key) for a, p, c in nonlin.study_curves(cs)] == _old_study_curves(cs)
    assert [(p.name, c.key) for p, c in protocol_curves(cs)] == [
        (p.name, c.key) for c in cs if c.model == "softmax" and (p := _old_protocol_of(c)) is not None
    ]


STORES = sorted(p for p in (ROOT / "results").glob("*.sqlite") if p.stat().st_size > 4096)


@pytest.mark.parametrize("path", STORES, ids=[p.name for p in STORES])
def test_every_committed_store_selects_the_curves_it_selected_before(path):
    with Store(path) as st:
        cs = [c for c in curves(st.records(status="ok")) if c.engine == "numba"]  # its numba runs' rows
    assert cs
    _same_selection_as_before(cs)


# ----------------------------------------------------------------------------- synthetic runs
def _records(law, *, attention="softmax", engine="numba", qk="factorised", seeds=(0, 1, 2), d=16, P=128):
    """Runs of the nonlinearity study's cosine protocol (d = 16, P = 128, top-2) whose loss follows
    ``law(L)``, with the CLT decomposition stored exactly (``R_L = C_L + (A_L - C_L) / L``)."""
    rng = np.random.default_rng(7)
    out = []
    for s in seeds:
        for L in DEPTHS:
            cfg = RunConfig(
                TaskConfig(task="topk", k=2, d=d, P=P),
                ModelConfig(depth=L, attention=attention, engine=engine, qk=qk),
                TrainConfig(lr=3e-3, batch=1024, steps=4000, schedule="cosine", window=500, eval_contexts=4096),
            )
            loss = law(L) * (1 + 0.002 * rng.standard_normal())
            gap = 0.4
            out.append(
                {
                    "key": run_key(cfg, s),
                    "config": cfg.to_dict(),
                    "seed": s,
                    "status": "ok",
                    "converged": True,
                    "steps": 4000,
                    "final_loss": loss,
                    "final_loss_se": 0.001 * loss,
                    "C_L": loss - gap / L,
                    "A_L": loss - gap / L + gap,
                    "gap": gap,
                    "identity_residual": 0.0,
                    "target_power": 1.0,
                }
            )
    return out


@pytest.fixture
def user_map():
    register_attention(MAP, lambda z: z)  # its function is never called here: the runs are synthetic
    yield MAP
    unregister_attention(MAP)


def test_split_engine_inverts_variant_name():
    for m in ({}, {"engine": "jax"}, {"qk": "tied", "engine": "jax"}, {"attention": "jax", "engine": "jax"}):
        with_engine = variant_name(m)
        assert split_engine(with_engine) == (variant_name(m, engine=False), m.get("engine", "numba"))


def test_numba_stores_of_every_variant_select_as_before():
    recs = [r for qk in ("factorised", "tied", "temperature") for r in _records(lambda L: 0.5 + 0.4 / L, qk=qk)]
    recs += [r for att in ("sparsemax", "relu") for r in _records(lambda L: 0.5 + 0.4 / L, attention=att)]
    recs += _records(lambda L: 1.0 / L, d=8, P=32)
    cs = curves(recs)
    assert len(cs) == 6 and select_curves(Evidence(cs), "softmax", ("topk",), "base", 2)  # not vacuously equal
    _same_selection_as_before(cs)


def test_a_jax_softmax_run_is_a_softmax_curve_for_the_claims():
    law = lambda L: 0.5 + 0.4 / L  # noqa: E731
    cs = curves(_records(law) + _records(law, engine="jax"))
    ev = Evidence(cs)
    numba, jax = sorted(select_curves(ev, "softmax", ("topk",), k=2), key=lambda c: c.engine != "numba")
    assert (numba.engine, jax.engine) == ("numba", "jax") and jax.claim_variant == "base"
    assert jax.label == numba.label.replace("softmax ", "softmax[jax] ", 1)  # apart, and the report says which
    assert _old_select(cs, "softmax", ("topk",)) == [numba]  # before: the JAX curve was skipped
    # a study claim on softmax top-2 now has a row for it
    rows = {r.condition.label: r for r in softmax.clt_convergence(ev)}
    assert set(rows) == {numba.label, jax.label}
    # the nonlinearity study's rows: the engine in the row, each decided on its own curve
    inv = {r.condition.label: r.verdict for r in nonlin_claims.inverse_depth(ev)}
    assert inv == {"softmax cosine top-2 (0,0)": "pass", "softmax+jax cosine top-2 (0,0)": "pass"}
    # and the protocol rows (cosine is a named protocol) name it
    labels = sorted(row_label(type("R", (), {"protocol": p, "curve": c})()) for p, c in protocol_curves(cs))
    assert labels == ["cosine [jax] top-2 (a,b)=(0,0) d=16 P=128", "cosine top-2 (a,b)=(0,0) d=16 P=128"]


def test_a_users_map_gets_the_generic_inverse_depth_and_identity_claims(user_map):
    law_inverse, law_shallow = (lambda L: 0.5 + 0.4 / L), (lambda L: 0.5 + 0.4 * L**-0.3)
    recs = _records(law_inverse, attention=user_map, engine="jax") + _records(law_shallow, engine="jax")
    ev = Evidence(curves(recs))
    inv = {r.condition.label: r for r in nonlin_claims.inverse_depth(ev)}
    assert inv[f"{user_map}+jax cosine top-2 (0,0)"].verdict == "pass"
    assert inv["softmax+jax cosine top-2 (0,0)"].verdict == "fail"
    assert inv[f"{user_map}+jax cosine top-2 (0,0)"].condition.variant == f"{user_map}+jax"
    (mine,) = [c for c in ev.curves if c.claim_variant == user_map]
    assert mine.engine == "jax" and len(identity_residuals([mine])) == mine.loss.size  # its runs are judged
    (ident,) = controls.identity(ev)  # every run of every curve, the user's map's included
    assert ident.verdict == "pass"
    # its floors need the map's function: a map this process does not know has none, and no error
    unregister_attention(user_map)
    assert nonlin.gather_floors([mine], lambda key: None) == {}

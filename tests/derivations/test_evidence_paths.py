"""evaluate_claims on an Evidence and the report decide the same claims from one store.

The protocol study pairs each run's per-context errors with reference floors computed on the same
contexts; those floors must reach the claims whether a report is built or ``evaluate_claims`` is
called on its own (with the store's ``load_arrays``).
"""

import numpy as np
import pytest
from synthetic import cheap_calibration

from depthscale.derivations.analysis.curve import curves
from depthscale.derivations.analysis.theory_numbers import TheoryNumbers
from depthscale.derivations.claims.registry import Evidence, evaluate_claims, registered_claims
from depthscale.derivations.report.reporting import build_context
from depthscale.derivations.study import TheoryInputs
from depthscale.sims.protocols import PROTOCOLS
from depthscale.sims.store import Store
from depthscale.studies.core import theory as core_theory

N_EVAL = 256
DEPTHS = (1, 2, 4, 8, 16, 32)


def _store(path):
    rng = np.random.default_rng(7)
    protocols = {p.name: p for p in PROTOCOLS}
    with Store(path, mode="write") as st:
        for name, c in (("cosine", 0.3), ("constant-3e-3", 0.5)):
            p = protocols[name]
            for seed in (0, 1):
                for L in DEPTHS:
                    loss = 1.9 + c / L
                    sq = (loss * rng.chisquare(1, N_EVAL)).astype(np.float32)
                    st.put(
                        {
                            "key": f"{name}-{L}-{seed}",
                            "status": "ok",
                            "seed": seed,
                            "converged": True,
                            "final_loss": float(sq.mean()),
                            "final_loss_se": float(sq.std() / np.sqrt(N_EVAL)),
                            "gap": 0.1 if L > 1 else 0.0,
                            "A_L": 2.5,
                            "config": {
                                "task": {"task": "topk", "k": 2, "a": 0.0, "b": 0.0, "d": 8, "P": 32},
                                "model": {"model": "softmax", "depth": L, "init_scale": p.init_scale},
                                "train": {
                                    "schedule": p.schedule,
                                    "lr": p.lr,
                                    "batch": p.batch,
                                    "steps": p.steps,
                                    "eval_contexts": N_EVAL,
                                },
                            },
                            "arrays": {"sq_err": sq},
                        }
                    )


@pytest.fixture
def cheap_derivations(monkeypatch):
    # the derivations' sympy checks are tested in tests/theory; here they would only cost time
    monkeypatch.setattr(core_theory, "derivation_checks", lambda: ([], {"fake": [("a step", True)]}))


def test_evaluate_claims_and_the_report_decide_the_same_claims(tmp_path, cheap_derivations, monkeypatch):
    cheap_calibration(monkeypatch)
    _store(tmp_path / "s.sqlite")
    with Store(tmp_path / "s.sqlite", mode="read") as st:
        records = list(st.records())
        cs = curves(records)
        theory = TheoryNumbers(studies={"core": core_theory.theory_numbers(TheoryInputs(cs, 64, 0))})
        alone = evaluate_claims(Evidence(cs, theory, st.load_arrays))
        report = build_context(records, title="t", floor_contexts=64, reference_contexts=0, load_arrays=st.load_arrays)
    # the same claims with the same verdicts (the report lists the theory checks last), but for the
    # studies none of whose run claims ran here, which a report without a preset leaves out
    shown = {(r.id, r.verdict) for r in report.claims}
    assert shown <= {(r.id, r.verdict) for r in alone}
    theory = {c.id for c in registered_claims() if c.kind == "theory"}
    assert all(r.verdict == "not run" or r.claim_id in theory for r in alone if (r.id, r.verdict) not in shown)
    assert any(r.claim_id.startswith("protocol-") for r in report.claims)
    # the floors reached both: the paired comparisons are decided, not left out
    beats = [r for r in alone if r.id.startswith("protocol-beats-convex")]
    assert len(beats) == 2 and all(r.verdict != "not run" for r in beats)
    assert all(r.verdict != "error" for r in alone)
    # and the report's figures were drawn with the floors its claims gathered
    (fig,) = [f for f in report.figures if f.name == "single_excess"]
    assert fig.png is not None, fig.why_missing


def test_without_load_arrays_the_paired_claims_say_not_run(tmp_path, cheap_derivations):
    _store(tmp_path / "s.sqlite")
    with Store(tmp_path / "s.sqlite", mode="read") as st:
        cs = curves(list(st.records()))
    rows = evaluate_claims(Evidence(cs, {}))
    (beats,) = [r for r in rows if r.id.startswith("protocol-beats-convex")]
    assert beats.verdict == "not run"

"""The nonlinearity study's claims on synthetic curves whose answer is known: each claim passes on data
built to pass it and fails on data built to fail it (the controls), through the study's own rows."""

from __future__ import annotations

import numpy as np
import pytest

from depthscale.derivations.analysis.curve import curves
from depthscale.derivations.analysis.theory_numbers import TheoryNumbers
from depthscale.derivations.claims.evidence import Evidence
from depthscale.derivations.report.entries import draw_entry
from depthscale.derivations.study import studies
from depthscale.sims.config import ModelConfig, RunConfig, TaskConfig, TrainConfig, run_key
from depthscale.studies.nonlinearities import STUDY, claims, sections, theory

DEPTHS = (1, 2, 4, 8, 16, 32, 64)
N_CTX = 4096  # the verdict rule decides from 4,096 evaluation contexts up


def _records(attention, law, seeds=(0, 1, 2), k=2, C=None, gap=None, noise=0.002, schedule="cosine"):
    """Records of the study's setting (cosine protocol unless ``schedule="constant"``) whose loss
    follows ``law(L)``."""
    rng = np.random.default_rng(abs(hash((attention, k))) % 2**32)
    out = []
    for s in seeds:
        for L in DEPTHS:
            cfg = RunConfig(
                TaskConfig(task="topk", k=k, d=16, P=128),
                ModelConfig(depth=L, attention=attention),
                TrainConfig(
                    lr=3e-3,
                    batch=1024,
                    steps=4000 if schedule == "cosine" else 3000,  # the study's two protocols
                    schedule=schedule,
                    window=500,
                    eval_contexts=N_CTX,
                ),
            )
            loss = law(L) * (1 + noise * rng.standard_normal())
            c_l = C(L, s) if C else 0.5 * loss
            g = gap(L) if gap else 0.4
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
                    "C_L": c_l,
                    "A_L": c_l + g,
                    "gap": g,
                    "identity_residual": 0.0,
                    "target_power": 1.0,
                }
            )
    return out


def _verdicts(claim, ev):
    return {r.condition.label: r.verdict for r in claim(ev)}


def test_registered_and_listed():
    assert studies()["nonlinearities"] is STUDY
    assert STUDY.preset_path("nonlinearities").is_file()
    assert {c.id for c in STUDY.claims} == {c.id for c in claims.CLAIMS}


def test_inverse_depth_passes_on_1_over_L_and_fails_on_a_shallow_law():
    recs = _records("sparsemax", lambda L: 0.5 + 0.4 / L) + _records("relu", lambda L: 0.5 + 0.4 * L**-0.2)
    ev = Evidence(curves(recs))
    got = _verdicts(claims.inverse_depth, ev)
    assert got["sparsemax cosine top-2 (0,0)"] == "pass"
    assert got["relu cosine top-2 (0,0)"] == "fail"


def test_disagreement_passes_when_flat_and_fails_when_growing():
    recs = _records("entmax15", lambda L: 0.5 + 0.4 / L, gap=lambda L: 0.4 * (1 + 0.01 * np.sin(L)))
    recs += _records("sigmoid", lambda L: 0.5 + 0.4 / L, gap=lambda L: 0.4 * L**0.6)
    got = _verdicts(claims.disagreement, Evidence(curves(recs)))
    assert got["entmax15 cosine top-2 (0,0)"] == "pass"
    assert got["sigmoid cosine top-2 (0,0)"] == "fail"


@pytest.mark.parametrize("shift, verdict", [(-0.05, "pass"), (+0.05, "fail"), (0.0, "indicative")])
def test_sparse_shared_error_against_softmax(shift, verdict):
    rng = np.random.default_rng(3)
    noise = {s: 0.002 * rng.standard_normal() for s in range(3)}
    recs = _records("softmax", lambda L: 0.5 + 0.1 / L, C=lambda L, s: 0.3 + noise[s])
    recs += _records("sparsemax", lambda L: 0.5 + 0.1 / L, C=lambda L, s: 0.3 + shift + 2 * noise[(s + 1) % 3])
    got = _verdicts(claims.sparse_shared_error, Evidence(curves(recs)))
    assert got == {"sparsemax vs softmax cosine top-2 (0,0)": verdict}


def test_maps_are_paired_with_softmax_of_the_same_protocol():
    # sparsemax under each protocol, softmax only under the constant rate: one pair, the constant one
    recs = _records("softmax", lambda L: 0.5 + 0.1 / L, C=lambda L, s: 0.3 + 0.002 * s, schedule="constant")
    for schedule in ("cosine", "constant"):
        recs += _records("sparsemax", lambda L: 0.5, C=lambda L, s: 0.2 + 0.003 * s, schedule=schedule)
    got = _verdicts(claims.sparse_shared_error, Evidence(curves(recs)))
    assert got == {"sparsemax vs softmax constant top-2 (0,0)": "pass"}


def _with_errors(recs_by_attention, sq_mean):
    """Evidence whose study numbers hold per-context errors with the given means (and no floors)."""
    cs = curves([r for recs in recs_by_attention.values() for r in recs])
    rng = np.random.default_rng(0)
    numbers = {}
    for c in cs:
        att = theory.attention_of(c)
        sq = {}
        for L, s in c.runs:
            base = rng.exponential(1.0, N_CTX)  # shared by every run of a seed: the same contexts
            sq[(L, s)] = sq_mean(att, L) * base / base.mean()
        numbers[c.key] = {"floors": {}, "excess": {}, "sq_err": sq}
    return Evidence(cs, TheoryNumbers(studies={theory.NAME: numbers}))


@pytest.mark.parametrize("gain, verdict", [(0.2, "pass"), (-0.2, "fail")])
def test_depth_gains_more_than_softmax(gain, verdict):
    recs = {a: _records(a, lambda L: 1.0) for a in ("softmax", "sigmoid")}

    def sq_mean(att, L):  # softmax gains 0.1 from L = 1 to 64; sigmoid gains 0.1 + gain
        total = 0.1 + (gain if att == "sigmoid" else 0.0)
        return 1.0 - total * (L == 64)

    got = _verdicts(claims.depth_gains_more, _with_errors(recs, sq_mean))
    assert got == {"sigmoid vs softmax cosine top-2 (0,0)": verdict}


def test_paired_difference_matches_a_direct_average():
    """paired_across against the per-seed means written out directly, and its pooled error."""
    rng = np.random.default_rng(1)
    a = {(L, s): rng.exponential(1.0, 50) for L in (1, 64) for s in (0, 1)}
    b = {(L, s): rng.exponential(1.0, 50) for L in (1, 64) for s in (0, 1)}
    ra = theory.Row("sigmoid", "cosine", None, None, sq_err=a)
    rb = theory.Row("softmax", "cosine", None, None, sq_err=b)
    e = theory.paired_across(ra, rb, 1, 1, minus=(64, 64))
    per_seed = [np.mean((a[1, s] - a[64, s]) - (b[1, s] - b[64, s])) for s in (0, 1)]
    assert e.value == pytest.approx(np.mean(per_seed), rel=1e-12)
    assert e.se >= abs(per_seed[0] - per_seed[1]) / 2 - 1e-12  # at least the seeds' scatter
    assert e.dof == 1  # two seeds


def test_story_leads_with_the_answer_and_figures_draw():
    recs = _records("sparsemax", lambda L: 0.5 + 0.4 / L) + _records("softmax", lambda L: 0.5 + 0.4 * L**-0.2)
    ev = Evidence(curves(recs))
    results = [r for c in claims.CLAIMS for r in c(ev)]
    story = sections.story(results, ev)
    # sparsemax follows 1/L, softmax L^-0.2: one curve passes, one fails, so the answer is "partly",
    # in the settings the records were made with (three seeds, the cosine protocol's 4,000 steps)
    assert story.answer[0].startswith("Partly: in these settings (d = 16, P = 128, N = d, L = 1..64, ")
    assert "three seeds), inverse depth (alpha in [0.8, 1.2]) passes on 1 of 2 curves and fails on 1" in story.answer[0]
    assert "it holds under sparsemax" in story.answer[0]
    assert "4,000 steps" in story.answer[0]
    figs = [draw_entry(f) for f in sections.sections(ev).figures]
    assert figs and all(f.png and f.png[:4] == b"\x89PNG" for f in figs)

"""The scale study (studies/scale/): its presets and what they cost by the cost model, its trend claims
on synthetic ladders whose trends are known, its answer and figures, and the dry run of the
accelerator preset through `reproduce --set` at tiny sizes on the JAX engine (on the CPU here)."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import numpy as np
import pytest

from depthscale.derivations.claims.evidence import Evidence
from depthscale.derivations.cli.app import main
from depthscale.derivations.report.entries import draw_entry
from depthscale.derivations.study import curves, study
from depthscale.sims.config import ModelConfig, RunConfig, TaskConfig, TrainConfig, run_key
from depthscale.studies.scale.claims import ladders
from depthscale.studies.scale.cost import preset_runs, rung_costs

ROOT = Path(__file__).resolve().parents[2]
STUDY = study("scale")
DEPTHS = (1, 2, 4, 8, 16, 32)


# ---------------------------------------------------------------------------------------------- presets
def test_the_cpu_preset_is_three_rungs_of_one_protocol_with_p_8d_and_n_d():
    runs = preset_runs("scale")
    assert sorted({(c.task.d, c.task.P) for c, _ in runs}) == [(8, 64), (16, 128), (32, 256)]
    assert {c.train for c, _ in runs} == {runs[0][0].train}  # one protocol at every rung
    t = runs[0][0].train
    assert (t.schedule, t.batch, t.lr, t.steps, t.eval_contexts) == ("cosine", 1024, 3e-3, 4000, 10240)
    assert {c.model.n(c.task.d) == c.task.d for c, _ in runs} == {True}
    assert {(c.task.k, c.task.a, c.task.b, c.model.model, c.model.engine) for c, _ in runs} == {
        (2, 0.0, 0.0, "softmax", "numba")
    }
    for d in (8, 16, 32):
        depths = sorted({c.model.depth for c, _ in runs if c.task.d == d})
        assert depths == list(DEPTHS), (d, depths)  # decisive: six depths spanning x32
        assert sorted({s for c, s in runs if c.task.d == d}) == [0, 1, 2]
    from depthscale.sims.memory import check_memory_of

    for c in {c for c, _ in runs}:
        check_memory_of(c)


def test_the_accelerator_preset_is_the_papers_size_on_the_jax_engine_under_the_same_protocol():
    runs = preset_runs("scale-gpu")
    assert {(c.task.d, c.task.P, c.model.engine) for c, _ in runs} == {(64, 512, "jax"), (128, 1024, "jax")}
    assert sorted({c.model.depth for c, _ in runs}) == list(DEPTHS)
    assert sorted({s for _, s in runs}) == [0, 1, 2]
    assert {c.train for c, _ in runs} == {preset_runs("scale")[0][0].train}


def _rates():
    from depthscale.sims.budget import rates
    from depthscale.sims.store import Store

    with Store(ROOT / "results" / "cpu.sqlite") as st:
        return rates(list(st.records()))


def test_the_cost_model_estimate_stated_in_the_presets_and_on_the_page_is_the_models():
    r = _rates()
    page = (ROOT / "docs" / "studies" / "scale.md").read_text(encoding="utf-8")
    total = 0.0
    for preset in ("scale", "scale-gpu"):
        header = (ROOT / "studies" / "scale" / "presets" / f"{preset}.toml").read_text(encoding="utf-8")
        for rung in rung_costs(preset, r):
            assert rung.line() in header and rung.line() in page, rung.line()
            total += rung.core_hours if preset == "scale" else 0.0
    assert f"total {total:.2f} core-hours" in (ROOT / "studies" / "scale" / "presets" / "scale.toml").read_text()
    assert total <= 12  # the study's budget
    # the model by hand for one run: steps x batch x P x N x d x (19 + L) units at the d = 16 softmax rate
    d16 = rung_costs("scale", r)[1]
    units = 4000 * 1024 * 128 * 16 * 16 * sum(19 + L for L in DEPTHS) * 3
    assert d16.core_hours == pytest.approx(units * r[("softmax", 16, 128)] / 3600, rel=1e-9)


def test_the_pages_measured_numbers_are_the_stores():
    # recomputed here from the committed store's records: the d = 16 rung's depth gain and R_1 against
    # the single head, each the mean of the seeds with its standard error, in per cent as the page rounds
    import sqlite3

    page = " ".join((ROOT / "docs" / "studies" / "scale.md").read_text(encoding="utf-8").split())
    con = sqlite3.connect(f"file:{ROOT / 'results' / 'scale.sqlite'}?mode=ro", uri=True)
    recs = [json.loads(r) for (r,) in con.execute("select record from runs")]
    con.close()
    # the first protocol's d = 16 rung (900 steps), kept in the store beside the 4,000-step ladder
    rung = [r for r in recs if r["config"]["task"]["d"] == 16 and r["config"]["train"]["steps"] == 900]
    assert {r["status"] for r in rung} == {"ok"}
    seeds = sorted({r["seed"] for r in rung})
    loss = {(r["seed"], r["config"]["model"]["depth"]): r["final_loss"] for r in rung}
    gain = np.array([(loss[s, 1] - loss[s, 32]) / loss[s, 1] for s in seeds]) * 100
    single = {r["seed"]: r["floors"]["single"]["loss"] for r in rung if r["config"]["model"]["depth"] == 1}
    above = np.array([(loss[s, 1] - single[s]) / single[s] for s in seeds]) * 100
    se = lambda x: x.std(ddof=1) / np.sqrt(x.size)  # noqa: E731
    assert f"{len(rung)} runs" in page and seeds == [0, 1, 2]
    assert f"is {gain.mean():.1f} % ± {se(gain):.1f} % (t(2))" in page
    assert f"R_1 sits {above.mean():.1f} % ± {se(above):.1f} % above the best single head" in page
    assert all(r.get("converged") for r in rung) and "each converged by the stopping rule" in page


# ---------------------------------------------------------------------------------------------- claims
def _rec(d, L, seed, loss, gap, rel_single):
    cfg = RunConfig(
        TaskConfig(task="topk", k=2, a=0.0, b=0.0, d=d, P=8 * d),
        ModelConfig(depth=L),
        TrainConfig(schedule="cosine", lr=3e-3, batch=1024, steps=4000, window=500, eval_contexts=10240),
    )
    H = loss / (1 + rel_single)
    return {
        "key": run_key(cfg, seed),
        "config": cfg.to_dict(),
        "seed": seed,
        "status": "ok",
        "converged": True,
        "final_loss": loss,
        "final_loss_se": 1e-3,
        "gap": gap,
        "floors": {"single": {"loss": H, "se": 1e-3, "diff": loss - H, "diff_se": 1e-5, "attention": "softmax"}},
        "wall_seconds": 10.0,
    }


def ladder_ev(gain, single=lambda d: 0.01, alpha=lambda d: 0.7, ds=(16, 32, 64)):
    """Evidence of a ladder with known trends: the depth gain G(d) between L = 1 and 32, (R_1 - H)/H, and
    the disagreement exponent alpha(d) of D = 0.5 L^(1 - alpha), each with a small seed scatter."""
    rng = np.random.default_rng(3)
    recs = []
    for d in ds:
        for s in (0, 1, 2):
            for L in DEPTHS:
                R = 2.0 * (1 - gain(d) * math.log2(L) / 5) * (1 + 2e-4 * rng.standard_normal())
                D = 0.5 * L ** (1 - alpha(d)) * math.exp(0.01 * rng.standard_normal())
                rel = single(d) + 1e-4 * rng.standard_normal() if L == 1 else 0.0
                recs.append(_rec(d, L, s, R, D, rel))
    return Evidence(curves(recs))


def _results(ev):
    return {c.id: c(ev) for c in STUDY.claims}


def log2(d):
    return math.log2(d / 16)


def test_a_flat_ladder_holds_and_a_rising_head_gap_passes():
    res = _results(ladder_ev(lambda d: 0.04, single=lambda d: 0.01 + 0.02 * log2(d)))
    (gain,) = res["scale-depth-gain-holds"]
    assert gain.verdict == "pass", gain.reason
    assert abs(gain.measured) < 0.002 and "an extrapolation" in gain.note and "at d = 128" in gain.note
    assert res["scale-depth-helps-at-largest-d"][0].verdict == "pass"
    (single,) = res["scale-shallow-rises-above-single"]
    assert single.verdict == "pass" and single.measured == pytest.approx(0.02, abs=2e-3)
    (alpha,) = res["scale-disagreement-exponent-holds"]
    assert alpha.verdict == "pass", alpha.reason
    results = [r for rs in res.values() for r in rs]
    story = STUDY.story(results, ladder_ev(lambda d: 0.04))
    assert story.answer[0].startswith("As d grows in these settings (d = 16-64, P = 128-512")
    assert "the d = 16 answer holds" in story.answer[0] and "at d = 128:" in story.answer[0]
    assert "an extrapolation" in story.answer[0]
    # from the claims alone (a report's claims.json, no curves) the answer names the same sizes of d
    assert STUDY.story(results, Evidence([])).answer[0].startswith("As d grows in these settings (d = 16-64)")


@pytest.mark.parametrize(
    "gain, word, helps",
    [(lambda d: 0.04 + 0.03 * log2(d), "strengthens", "pass"), (lambda d: 0.04 - 0.03 * log2(d), "turns", "fail")],
    ids=["strengthens", "turns"],
)
def test_a_moving_gain_fails_and_the_answer_says_which_way(gain, word, helps):
    ev = ladder_ev(gain, single=lambda d: 0.01 - 0.02 * log2(d), alpha=lambda d: 0.7 + 0.2 * log2(d))
    res = _results(ev)
    (g,) = res["scale-depth-gain-holds"]
    assert g.verdict == "fail" and g.measured == pytest.approx(0.03 if word == "strengthens" else -0.03, abs=3e-3)
    assert res["scale-depth-helps-at-largest-d"][0].verdict == helps
    assert res["scale-shallow-rises-above-single"][0].verdict == "fail"  # the gap to the head falls
    assert res["scale-disagreement-exponent-holds"][0].verdict == "fail"  # alpha rises by 0.2 per doubling
    story = STUDY.story([r for rs in res.values() for r in rs], ev)
    assert f"the d = 16 answer {word}:" in story.answer[0]


def test_two_rungs_make_a_line_but_decide_nothing():
    res = _results(ladder_ev(lambda d: 0.04, ds=(16, 32)))
    (g,) = res["scale-depth-gain-holds"]
    assert g.verdict == "indicative" and g.would_be == "pass" and "decided on 3 or more" in g.reason


def test_without_the_studys_runs_every_claim_is_not_run_and_the_answer_says_so():
    ev = Evidence([])
    res = _results(ev)
    assert [r.verdict for rs in res.values() for r in rs] == ["not run"] * 4
    (answer,) = STUDY.story([r for rs in res.values() for r in rs], ev).answer
    assert answer.startswith("Not decided: no scale-study runs are in this store")


def test_sections_draw_a_figure_per_quantity_and_say_why_when_empty():
    ev = ladder_ev(lambda d: 0.04)
    sec = STUDY.sections(ev)
    assert [t.title.split(",")[0] for t in sec.results] == ["Scale study", "Scale study"]
    drawn = [draw_entry(f) for f in sec.figures]
    assert [f.name for f in drawn] == ["scale_depth_gain", "scale_shallow_vs_single", "scale_disagreement_exponent"]
    assert all(f.png and f.png.startswith(b"\x89PNG") for f in drawn)
    empty = [draw_entry(f) for f in STUDY.sections(Evidence([])).figures]
    assert all(f.png is None and "no " in f.why_missing for f in empty)


# ---------------------------------------------------------------------------------------------- the dry run
TINY = ["task.d=4", "task.P=32", "train.steps=5", "model.depth=[1,2]", "seeds=[0]", "train.eval_contexts=64"]


def test_the_accelerator_preset_runs_at_tiny_sizes_on_the_jax_engine(tmp_path, capsys):
    pytest.importorskip("jax", reason="the JAX engine needs JAX (pip install 'depthscale[jax]')")
    pytest.importorskip("optax", reason="the JAX engine needs optax (pip install 'depthscale[jax]')")
    from depthscale.sims.store import Store

    out = tmp_path / "report"
    argv = ["reproduce", "--preset", "scale-gpu", "--out", str(out), "--executor", "serial", "--quiet"]
    argv += [x for s in (*TINY, "train.window=2") for x in ("--set", s)]
    assert main(argv) == 0, capsys.readouterr().err
    with Store(out / "store.sqlite") as st:
        recs = list(st.records())
    assert sorted(r["config"]["model"]["depth"] for r in recs) == [1, 2]
    assert {(r["status"], r["config"]["model"]["engine"], r["config"]["task"]["d"], r["steps"]) for r in recs} == {
        ("ok", "jax", 4, 5)
    }
    assert all(r["floors"]["single"]["loss"] > 0 and math.isfinite(r["final_loss"]) for r in recs)
    rows = json.loads((out / "claims.json").read_text(encoding="utf-8"))
    assert {r["claim_id"] for r in rows} == {c.id for c in STUDY.claims} and {r["verdict"] for r in rows} == {"not run"}
    md = (out / "report.md").read_text(encoding="utf-8")
    assert "--set task.d=4" in md and "at d = 4 only" in md


def test_a_setting_that_names_no_field_is_refused_before_anything_is_written(tmp_path, capsys):
    out = tmp_path / "report"
    code = main(["reproduce", "--preset", "scale-gpu", "--out", str(out), "--set", "task.size=4"])
    err = capsys.readouterr().err
    assert code == 2 and len(err.splitlines()) == 1 and "set='task.size'" in err and not out.exists()
    assert re.search(r"TaskConfig has no size", err)


def test_every_finished_rung_of_the_ladder_is_on_the_page_as_the_store_has_it():
    # recomputed from the committed store's records: each rung of the 4,000-step ladder whose three
    # seeds have every depth, its depth gain (R_1 - R_32)/R_1 and R_1 against the single head, paired
    # per seed, mean ± standard error in per cent as the page rounds
    import sqlite3

    page = " ".join((ROOT / "docs" / "studies" / "scale.md").read_text(encoding="utf-8").split())
    con = sqlite3.connect(f"file:{ROOT / 'results' / 'scale.sqlite'}?mode=ro", uri=True)
    recs = [json.loads(r) for (r,) in con.execute("select record from runs")]
    con.close()
    ladder = [r for r in recs if r["config"]["train"]["steps"] == 4000 and r["status"] == "ok"]
    se = lambda x: x.std(ddof=1) / np.sqrt(x.size)  # noqa: E731
    finished = 0
    for d in (8, 16, 32):
        loss = {(r["seed"], r["config"]["model"]["depth"]): r for r in ladder if r["config"]["task"]["d"] == d}
        if any((s, L) not in loss for s in (0, 1, 2) for L in DEPTHS):
            continue
        finished += 1
        R = {k: r["final_loss"] for k, r in loss.items()}
        gain = np.array([(R[s, 1] - R[s, 32]) / R[s, 1] for s in (0, 1, 2)]) * 100
        # R_1 - H paired on the same contexts, over H; its error the larger of the seeds' scatter and
        # the evaluation errors combined (the paired-difference rule of the glossary's "paired")
        head = [loss[s, 1]["floors"]["single"] for s in (0, 1, 2)]
        above = np.array([f["diff"] / f["loss"] for f in head]) * 100
        evaluation = np.sqrt(sum((f["diff_se"] / f["loss"]) ** 2 for f in head)) / 3 * 100
        converged = sum(bool(r.get("converged")) for r in loss.values())
        assert np.allclose([f["diff"] for f in head], [R[s, 1] - f["loss"] for s, f in zip((0, 1, 2), head)])
        stated = (
            f"d = {d}, P = {8 * d} ({converged} of 18 runs converged): depth gain {gain.mean():.2f} % ± {se(gain):.2f} %, "
            f"R_1 {above.mean():+.2f} % ± {max(se(above), evaluation):.2f} % against the single head"
        )
        assert stated in page, stated
    assert f"{('No', 'One of the', 'Two of the', 'All')[finished]} three CPU rungs" in page
    # the disagreement exponents the page quotes are the study's own fits (its rung table)
    (lad,) = ladders(Evidence(curves(ladder)))  # a rung still training adds a point of fewer seeds
    for p in lad.points:
        if p.n_seeds == 3:
            assert f"disagreement exponent {p.exponent.value:.2f} ± {p.exponent.se:.2f}" in page, p.label


def test_the_ladder_the_cpu_could_not_afford_is_stated_at_the_cost_models_price():
    # d = 16, 32, 64 under the same protocol: the cpu preset's two upper rungs and the accelerator's lower
    r = _rates()
    cpu, gpu = rung_costs("scale", r), rung_costs("scale-gpu", r)
    assert (cpu[1].d, cpu[2].d, gpu[0].d) == (16, 32, 64)
    total = cpu[1].core_hours + cpu[2].core_hours + gpu[0].core_hours
    header = (ROOT / "studies" / "scale" / "presets" / "scale.toml").read_text(encoding="utf-8")
    assert f"would cost about {total:.0f}\n# core-hours, {gpu[0].core_hours:.0f} of them at d = 64" in header
    page = " ".join((ROOT / "docs" / "studies" / "scale.md").read_text(encoding="utf-8").split())
    assert f"would cost {total:.2f} core-hours, {gpu[0].core_hours:.2f} of them at d = 64" in page

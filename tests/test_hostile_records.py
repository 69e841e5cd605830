"""Hostile records (issue 40, "Nothing a user types loses their runs"): a store that a newer version
wrote or someone edited, runs whose losses start exact or overflow, and API calls given nonsense.

Each class of the issue has one test here, plus its concrete reproductions; the stores are built by
``Store.put`` and then edited through sqlite3, as a user or a newer version would leave them."""

from __future__ import annotations

import io
import json
import sqlite3
import sys
import warnings

import numpy as np
import pytest

from depthscale.derivations.cli.app import main
from depthscale.sims.store import Store


def _record(key, seed, depth, model_extra=None, loss=None):
    model = {"model": "softmax", "depth": depth, **(model_extra or {})}
    return {
        "key": key,
        "seed": seed,
        "status": "ok",
        "reason": None,
        "converged": True,
        "final_loss": (0.5 + 0.4 / depth) * (1 + 0.01 * seed) if loss is None else loss,
        "config": {
            "task": {"task": "topk", "k": 2, "a": 0.0, "b": 0.0, "d": 4, "P": 16},
            "model": model,
            "train": {"steps": 10, "eval_contexts": 64},
        },
    }


DEPTHS, SEEDS = (1, 2, 4, 8), (0, 1, 2)


def _store(path, extra_runs=(), edits=()):
    """A store of one condition (4 depths x 3 seeds), plus ``extra_runs``; then each ``(key, sql
    value)`` of ``edits`` replaces that run's stored record text."""
    with Store(path, mode="write") as st:
        for L in DEPTHS:
            for s in SEEDS:
                st.put(_record(f"base{L}-{s}", s, L))
        for rec in extra_runs:
            st.put(rec)
    con = sqlite3.connect(path)
    for key, text in edits:
        con.execute("UPDATE runs SET record=? WHERE key=?", (text, key))
    con.commit()
    con.close()
    return path


def _edited(key, change) -> tuple[str, str]:
    """``(key, record text)`` of the record of ``key`` after ``change(record)``."""
    depth = int(key.split("-")[0].lstrip("bad"))
    rec = _record(key, 0, depth)
    change(rec)
    return key, json.dumps(rec)


def _fit(path, capsys) -> tuple[int, dict, list[str]]:
    code = main(["fit", "--store", str(path), "--json", "--n-boot", "0"])
    out, err = capsys.readouterr()
    return code, (json.loads(out) if out else {}), err.splitlines()


# -- 1. runs this version does not understand are kept apart, and said so once -----------------------
@pytest.mark.parametrize(
    "field, path",
    [({"model": {"gating": "on"}}, "model.gating"), ({"task": {"noise": 0.1}}, "task.noise")],
    ids=["model-field", "task-field"],
)
def test_runs_with_unknown_config_fields_are_kept_apart_with_one_warning(tmp_path, capsys, field, path):
    from depthscale.derivations.analysis.curve import curves
    from depthscale.sims.records import RecordWarning

    newer = []
    for L in DEPTHS:
        for s in SEEDS:
            rec = _record(f"newer{L}-{s}", s, L, loss=2.0 + 1.0 / L + 0.01 * s)
            for section, values in field.items():
                rec["config"][section].update(values)
            newer.append(rec)
    store = _store(tmp_path / "s.sqlite", newer)
    with Store(store) as st, pytest.warns(RecordWarning) as caught:
        recs = list(st.records())
    assert len(recs) == 24
    named = [str(w.message) for w in caught if path in str(w.message)]
    assert len(caught) == 1 and len(named) == 1 and "kept apart" in named[0], [str(w.message) for w in caught]
    cs = curves(recs)
    assert len(cs) == 2  # never one curve of mixed runs
    for c in cs:
        keys = {r["key"][:4] for r in c.runs.values()}
        assert len(keys) == 1 and len(c.runs) == 12, keys
    code, out, err = _fit(store, capsys)
    assert code == 0 and len(out["curves"]) == 2
    assert [ln for ln in err if ln.startswith("depthscale: warning")] == err and len(err) == 1 and path in err[0]


def test_run_config_from_dict_names_what_it_does_not_know():
    from depthscale.sims.config import RunConfig

    with pytest.raises(ValueError, match=r"d\['model'\]\['gating'\]: not a field of ModelConfig"):
        RunConfig.from_dict({"model": {"depth": 2, "gating": "on"}})
    with pytest.raises(ValueError, match=r"d\['optim'\]: not a section"):
        RunConfig.from_dict({"optim": {"lr": 1.0}})
    with pytest.raises(TypeError, match=r"d\['task'\]=5"):
        RunConfig.from_dict({"task": 5})
    assert RunConfig.from_dict(RunConfig().to_dict()) == RunConfig()  # a whole config still round-trips


# -- 2. malformed rows are skipped, named by store, run and field; the rest still reads --------------
MALFORMED = {
    "list": (("bad1-0", "[1,2]"), "record=[1, 2]"),
    "null": (("bad2-0", "null"), "record=None"),
    "seed-text": (_edited("bad4-0", lambda r: r.update(seed="x1")), "seed='x1'"),
    "d-edited": (_edited("bad8-0", lambda r: r["config"]["task"].update(d="abc")), "config.task.d='abc'"),
    "not-json": (("bad1-0", "{not json"), "not valid JSON"),
}


@pytest.mark.parametrize("case", list(MALFORMED))
def test_a_malformed_row_is_skipped_naming_the_store_the_run_and_the_field(tmp_path, capsys, case):
    (key, text), field = MALFORMED[case]
    store = _store(tmp_path / "s.sqlite", [_record(key, 0, 1)], [(key, text)])
    code, out, err = _fit(store, capsys)
    assert code == 0, err
    assert len(err) == 1 and err[0].startswith("depthscale: warning: "), err
    assert str(store) in err[0] and repr(key) in err[0] and field in err[0], err[0]
    (curve,) = out["curves"]  # every good run read: 4 depths x 3 seeds
    assert curve["depths"] == list(DEPTHS) and curve["n_seeds"] == len(SEEDS)
    with Store(store) as st:
        with pytest.raises(ValueError, match=repr(key)):
            st.get(key)
        assert st.get("base1-0")["final_loss"] == pytest.approx(0.9)


def test_more_malformed_rows_than_are_named_are_counted(tmp_path):
    from depthscale.sims.records import RecordWarning

    keys = [f"bad{L}-{s}" for L in (1, 2) for s in range(4)]
    store = _store(tmp_path / "s.sqlite", [_record(k, 0, 1) for k in keys], [(k, "null") for k in keys])
    with Store(store) as st, pytest.warns(RecordWarning) as caught:
        assert len(list(st.records())) == 12
    texts = [str(w.message) for w in caught]
    assert len(texts) == 6 and "3 more malformed run(s)" in texts[-1], texts


# -- 3. a run that starts exact is not diverged ------------------------------------------------------
def test_a_run_that_starts_exact_is_not_called_diverged():
    from depthscale.sims.config import ModelConfig, RunConfig, TaskConfig, TrainConfig
    from depthscale.sims.runner import run

    # d = P = 1, top-1: the target is the one context label, which the model copies from the start
    # (loss 3.6e-34); Adam's steps on rounding-size gradients lift it to ~1e-5 before it falls back
    train = TrainConfig(steps=60, batch=16, window=10, eval_contexts=16)
    rec = run(RunConfig(TaskConfig(task="topk", k=1, d=1, P=1), ModelConfig(depth=3), train), 0)
    assert rec["status"] == "ok", rec["reason"]
    assert rec["train_curve"][0][1] < 1e-30 * rec["target_power"]  # the start was exact
    assert rec["final_loss"] < 1e-3 * rec["target_power"]


# -- 4. a frozen optimiser is a divergence, said once -------------------------------------------------
def test_an_overflowing_optimiser_is_a_divergence_without_warnings():
    from depthscale.sims.config import RunConfig, TaskConfig, TrainConfig
    from depthscale.sims.runner import run

    cfg = RunConfig(
        TaskConfig(d=4, P=8, c_lambda=1e300), train=TrainConfig(steps=20, batch=8, window=5, eval_contexts=16)
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        rec = run(cfg, 0)
    assert rec["status"] == "diverged" and not rec["converged"], rec["reason"]
    assert "non-finite" in rec["reason"]
    assert [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)] == []


# -- 5. scores that overflow in the sparse maps: a diverged run, not a kernel error ------------------
@pytest.mark.parametrize("attention", ["sparsemax", "entmax15"])
def test_overflowing_scores_in_a_sparse_map_are_a_diverged_run(attention):
    from depthscale.sims.config import ModelConfig, RunConfig, TaskConfig, TrainConfig
    from depthscale.sims.runner import run

    model = ModelConfig(init_scale=1e150, attention=attention)
    cfg = RunConfig(TaskConfig(d=4, P=8), model, TrainConfig(steps=3, batch=8, window=2, eval_contexts=16))
    rec = run(cfg, 0)
    assert rec["status"] == "diverged" and "non-finite" in rec["reason"], rec["reason"]


# -- 6. output in ASCII: the work is not lost to a character -----------------------------------------
@pytest.mark.slow  # a whole report in a subprocess
@pytest.mark.timeout(300)
def test_fit_and_report_print_to_an_ascii_terminal(tmp_path, monkeypatch):
    store = _store(tmp_path / "s.sqlite", [_record("bad1-0", 0, 1)], [("bad1-0", "null")])
    for argv in (
        ["fit", "--store", str(store), "--n-boot", "0"],
        ["report", "--store", str(store), "--out", str(tmp_path / "rep")]
        + ["--floor-contexts", "10", "--reference-contexts", "0"],
    ):
        out, err = io.TextIOWrapper(io.BytesIO(), encoding="ascii"), io.TextIOWrapper(io.BytesIO(), encoding="ascii")
        monkeypatch.setattr(sys, "stdout", out)
        monkeypatch.setattr(sys, "stderr", err)
        code = main(argv)
        monkeypatch.undo()
        out.flush()
        err.flush()
        assert code == 0, err.buffer.getvalue().decode()
        text = out.buffer.getvalue().decode("ascii")
        assert ("\\xb1" in text) if argv[0] == "fit" else ("wrote" in text), text  # ± written as \xb1
    assert (tmp_path / "rep" / "report.md").exists()


# -- 7. the Python API: nonsense is refused with the parameter named ----------------------------------
def _curve():
    from depthscale.derivations.analysis.curve import curves

    return curves([_record(f"c{L}-{s}", s, L) for L in DEPTHS for s in SEEDS])[0]


def _duplicate_claims():
    from depthscale.derivations.study import Study, all_claims

    claim = all_claims()[0]
    return Study("x", "Why?", "x", claims=(claim, claim))


def _object_array(p):
    with Store(p / "o.sqlite", mode="write") as st:
        st.put({**_record("o-0", 0, 1), "arrays": {"sq_err": np.array([0.5, "x", None], dtype=object)}})


def _api_cases():
    from depthscale.derivations.claims import ClaimTable
    from depthscale.derivations.claims.stored import load_claims
    from depthscale.sims.config import RunConfig, TaskConfig, TrainConfig
    from depthscale.sims.runner import run

    tiny = RunConfig(TaskConfig(d=2, P=4), train=TrainConfig(steps=1, batch=2, eval_contexts=4))
    return {
        "run(progress='no')": (lambda p: run(tiny, 0, progress="no"), TypeError, "progress='no'"),
        "run(prefetch='yes')": (lambda p: run(tiny, 0, prefetch="yes"), TypeError, "prefetch='yes'"),
        "Store.records(arrays='no')": (
            lambda p: Store(_store(p / "a.sqlite")).records(arrays="no"),
            TypeError,
            "arrays='no'",
        ),
        "Store.get(arrays='no')": (lambda p: Store(_store(p / "g.sqlite")).get("base1-0", "no"), TypeError, "arrays"),
        "Store.records(where attention 'Relu')": (
            lambda p: Store(_store(p / "w.sqlite")).records(where={"model.attention": "Relu"}),
            ValueError,
            "where['model.attention']='Relu'",
        ),
        "Store.records(where NaN)": (
            lambda p: Store(_store(p / "n.sqlite")).records(where={"task.a": float("nan")}),
            ValueError,
            "where['task.a']=nan",
        ),
        "Curve.fit(['offset'])": (lambda p: _curve().fit(["offset"]), TypeError, "kind=['offset']"),
        "Study(duplicate claims)": (lambda p: _duplicate_claims(), ValueError, "claims="),
        "Store.put(object array)": (lambda p: _object_array(p), TypeError, "record['arrays']['sq_err']"),
        "RunConfig.from_dict(None)": (lambda p: RunConfig.from_dict(None), TypeError, "d=None"),
        "load_claims(5)": (lambda p: load_claims(5), TypeError, "source=5"),
        "ClaimTable[None]": (lambda p: ClaimTable()[None], TypeError, "key=None"),
    }


@pytest.mark.parametrize("case", list(_api_cases()))
def test_python_api_refuses_nonsense_naming_the_parameter(tmp_path, case):
    call, exc, text = _api_cases()[case]
    with pytest.raises(exc) as info:
        call(tmp_path)
    assert type(info.value) is exc and text in str(info.value) and "\n" not in str(info.value), str(info.value)
    assert not (tmp_path / "o.sqlite").exists() or Store(tmp_path / "o.sqlite").keys() == []  # nothing written

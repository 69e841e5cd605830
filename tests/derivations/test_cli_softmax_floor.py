"""``predict softmax-floor`` and ``infer-scale``: contracts, bad input, and agreement with a plain-numpy
brute force (dense temperature grid, explicit gains) on independent contexts."""

import json
import math

import numpy as np
import pytest
from cli_calls import option_name, rejection, run

from depthscale.derivations.analysis.scale_match import match_score, rank, read_floors
from depthscale.derivations.cli.commands.infer_scale import example_floors_text
from depthscale.sims.config import TaskConfig
from depthscale.sims.tasks import eval_batches, make_batch


def bf_heads(batch, kappas):
    X, q, y = np.asarray(batch.X), np.asarray(batch.x_test), np.asarray(batch.y)
    cos = np.einsum("bpd,bd->bp", X, q) / (np.linalg.norm(X, axis=2) * np.linalg.norm(q, axis=1)[:, None])
    out = []
    for k in kappas:
        e = np.exp(k * (cos - cos.max(axis=1, keepdims=True)))
        out.append((e / e.sum(axis=1, keepdims=True) * y).sum(axis=1))
    return np.stack(out, axis=1)


def bf_single_floor(task, n, seed):
    """Best single head by a dense grid on one context set, its loss (and s.e.) on another."""
    fit = make_batch(task, n, np.random.default_rng(seed))
    grid = np.geomspace(0.05, 2000, 300)
    S = bf_heads(fit, grid)
    g = (S * fit.target[:, None]).sum(0) / (S * S).sum(0)
    j = int(np.argmin(((S * g - fit.target[:, None]) ** 2).mean(0)))
    ev = make_batch(task, n, np.random.default_rng(seed + 1))
    sq = (g[j] * bf_heads(ev, [grid[j]])[:, 0] - ev.target) ** 2
    return sq.mean(), sq.std(ddof=1) / math.sqrt(n)


ARGS = "predict softmax-floor --task topk --k 2 --a 0 --b 0 --d 4 --P 16 --contexts 1500 --seed 0 --n-kappa 25 --json".split()


def test_softmax_floor_contract_and_values(capsys):
    code, out, err = run(capsys, ARGS)
    assert code == 0 and err == ""
    obj = json.loads(out)
    assert obj["attention"] == "softmax"
    assert {"loss", "se", "kappa"} <= set(obj["single"])
    assert {"loss", "se", "support"} <= set(obj["convex"])
    assert {"loss", "se", "kappas", "gains"} <= set(obj["mixture"])
    # recompute every floor's loss on the evaluation contexts with plain numpy
    task = TaskConfig(task="topk", k=2, a=0.0, b=0.0, d=4, P=16)  # floats: the contexts hash the config
    ev = next(iter(eval_batches(task, 1500, 0, chunk=1500)))
    heads = {
        "single": ([obj["single"]["kappa"]], [obj["single"]["gain"]]),
        "convex": ([e["kappa"] for e in obj["convex"]["support"]], [e["weight"] for e in obj["convex"]["support"]]),
        "mixture": (obj["mixture"]["kappas"], obj["mixture"]["gains"]),
    }
    for name, (k, g) in heads.items():
        sq = (bf_heads(ev, k) @ np.asarray(g) - ev.target) ** 2
        assert obj[name]["loss"] == pytest.approx(sq.mean(), rel=1e-9)
        assert obj[name]["se"] == pytest.approx(sq.std(ddof=1) / math.sqrt(sq.size), rel=1e-7)
    assert all(e["weight"] > 0 for e in obj["convex"]["support"])
    assert obj["convex"]["fit_loss"] <= obj["single"]["fit_loss"] * (1 + 1e-12)
    # the single floor agrees with an independent dense-grid brute force on other contexts
    bf, bf_se = bf_single_floor(task, 6000, 17)
    assert abs(obj["single"]["loss"] - bf) < 4 * math.hypot(obj["single"]["se"], bf_se)
    # readable output
    code, out, _ = run(capsys, [a for a in ARGS if a != "--json"])
    assert code == 0 and out.splitlines()[1].startswith("single")


@pytest.mark.parametrize(
    "change",
    [
        ("--task", "nope"),
        ("--k", "0"),
        ("--k", "17"),
        ("--a", "-1"),
        ("--d", "0"),
        ("--contexts", "1"),
        ("--seed", "-3"),
        ("--kappa-min", "0"),
        ("--kappa-max", "0.001"),
        ("--n-kappa", "2"),
        ("--temperatures", "9"),
        ("--fit-contexts", "1"),
        ("--c-lambda", "0"),
        ("--threads", "0"),
        ("--attention", "tanh"),
        ("--attention", "Softmax"),
    ],
)
def test_softmax_floor_bad_input(capsys, change):
    assert f"{option_name(change[0])}=" in rejection(capsys, ARGS, *change)


def bf_map_heads(batch, kappas, attention):
    """Heads of another attention map by plain numpy: sparsemax by sorting (Martins and Astudillo's
    closed form), sigmoid(z - log P) and relu(z) / P from their definitions."""
    X, q, y = np.asarray(batch.X), np.asarray(batch.x_test), np.asarray(batch.y)
    cos = np.einsum("bpd,bd->bp", X, q) / (np.linalg.norm(X, axis=2) * np.linalg.norm(q, axis=1)[:, None])
    P = cos.shape[1]
    out = []
    for k in kappas:
        z = k * cos
        if attention == "sparsemax":
            zs = -np.sort(-z, axis=1)
            cs = np.cumsum(zs, axis=1)
            r = np.arange(1, P + 1)
            n_on = (1 + r * zs > cs).sum(axis=1)  # the support size
            tau = (cs[np.arange(len(z)), n_on - 1] - 1) / n_on
            w = np.maximum(z - tau[:, None], 0.0)
        elif attention == "sigmoid":
            w = 1 / (1 + np.exp(-(z - math.log(P))))
        else:
            w = np.maximum(z, 0.0) / P
        out.append((w * y).sum(axis=1))
    return np.stack(out, axis=1)


@pytest.mark.parametrize("attention", ["sparsemax", "sigmoid", "relu"])
def test_softmax_floor_of_another_map(capsys, attention):
    code, out, err = run(capsys, [*ARGS, "--attention", attention])
    assert code == 0 and err == ""
    obj = json.loads(out)
    assert obj["attention"] == attention
    task = TaskConfig(task="topk", k=2, a=0.0, b=0.0, d=4, P=16)
    ev = next(iter(eval_batches(task, 1500, 0, chunk=1500)))
    heads = {
        "single": ([obj["single"]["kappa"]], [obj["single"]["gain"]]),
        "convex": ([e["kappa"] for e in obj["convex"]["support"]], [e["weight"] for e in obj["convex"]["support"]]),
        "mixture": (obj["mixture"]["kappas"], obj["mixture"]["gains"]),
    }
    for name, (k, g) in heads.items():
        sq = (bf_map_heads(ev, k, attention) @ np.asarray(g) - ev.target) ** 2
        assert obj[name]["loss"] == pytest.approx(sq.mean(), rel=1e-9), name
        assert obj[name]["se"] == pytest.approx(sq.std(ddof=1) / math.sqrt(sq.size), rel=1e-7), name
    code, out, _ = run(capsys, [a for a in ARGS if a != "--json"] + ["--attention", attention])
    assert code == 0 and out.startswith(f"{attention} floors")


def test_softmax_floor_easy_task_uses_the_run_contexts(capsys):
    """An easy task built as simulate builds it (k = 2 by default): the same evaluation contexts."""
    argv = [a for a in ARGS if a not in ("--k", "2")]
    argv[argv.index("topk")] = "easy-fresh"
    code, out, err = run(capsys, argv)
    assert code == 0 and err == ""
    obj = json.loads(out)
    ev = next(iter(eval_batches(TaskConfig(task="easy-fresh", k=2, a=0.0, b=0.0, d=4, P=16), 1500, 0, chunk=1500)))
    sq = (obj["single"]["gain"] * bf_heads(ev, [obj["single"]["kappa"]])[:, 0] - ev.target) ** 2
    assert obj["single"]["loss"] == pytest.approx(sq.mean(), rel=1e-9)


def test_match_score_by_hand():
    r = match_score([1.0, 3.0, 2.0], [1.0, 1.0, 1.0])
    assert r["median_ratio"] == 2.0 and r["ratios"] == [1.0, 3.0, 2.0]
    assert r["spread"] == pytest.approx(math.log(2))  # ln(2 / 1) > ln(3 / 2)
    assert r["score"] == pytest.approx(2 * math.log(2))
    same = match_score([0.5, 1.0], [1.0, 2.0])
    assert same["median_ratio"] == 0.5 and same["spread"] == 0.0 and same["score"] == pytest.approx(math.log(2))
    assert match_score([1.0], [0.0])["score"] == math.inf
    assert [c["n"] for c in rank([{"n": 0, "score": 1, "spread": 1}, {"n": 1, "score": 1, "spread": 0}])] == [1, 0]


def test_read_floors_and_bad_csv():
    rows = read_floors("# note\ntask,k,a,b,L0,source\ntopk,2,0.25,0.5,0.3,x\neasy-fresh,,1,1,0.1,y\n")
    assert rows == [
        {"task": "topk", "k": 2, "a": 0.25, "b": 0.5, "L0": 0.3},
        {"task": "easy-fresh", "k": None, "a": 1.0, "b": 1.0, "L0": 0.1},
    ]
    for text, name in [
        ("task,k,a,b\ntopk,2,0,0\n", "L0"),
        ("task,k,a,b,L0\ntopk,2,0,0,-1\n", "L0"),
        ("task,k,a,b,L0\ntopk,x,0,0,1\n", "k"),
        ("task,k,a,b,L0\nfoo,2,0,0,1\n", "task"),
        ("task,k,a,b,L0\n", "rows"),
        ("", "floors"),
        ("task,k,a,b,L0\ntopk,,0,0,1\n", "k"),
    ]:
        with pytest.raises(ValueError, match=name):
            read_floors(text)


def test_example_floors_are_shipped():
    text = example_floors_text()
    assert "not the paper's" in text.lower()
    rows = read_floors(text)
    assert len(rows) >= 3 and all(r["task"] == "topk" and r["k"] == 2 for r in rows)


def test_infer_scale_recovers_the_scale_of_bruteforce_floors(capsys, tmp_path):
    """Reported floors = plain-numpy single-head floors at d = 4, P = 16 on independent contexts: the
    best-ranked scale is (4, 16) and its single-head ratios are 1 within their errors."""
    specs = [(0.0, 0.0), (0.5, 0.5), (1.0, 0.25)]
    bf = [
        bf_single_floor(TaskConfig(task="topk", k=2, a=a, b=b, d=4, P=16), 4000, 3 + i)
        for i, (a, b) in enumerate(specs)
    ]
    csv = tmp_path / "floors.csv"
    csv.write_text("task,k,a,b,L0\n" + "".join(f"topk,2,{a},{b},{v}\n" for (a, b), (v, _) in zip(specs, bf)))
    code, out, err = run(
        capsys,
        [
            "infer-scale",
            "--floors",
            str(csv),
            "--d",
            "4,8",
            "--P",
            "16,48",
            "--contexts",
            "3000",
            "--n-kappa",
            "25",
            "--json",
        ],
    )
    assert code == 0 and err == ""
    obj = json.loads(out)
    ranking = obj["ranking"]
    assert len(ranking) == 12 and all({"d", "P", "reference", "median_ratio", "spread"} <= set(c) for c in ranking)
    assert [c["score"] for c in ranking] == sorted(c["score"] for c in ranking)
    assert (ranking[0]["d"], ranking[0]["P"]) == (4, 16)
    single = next(c for c in ranking if (c["d"], c["P"], c["reference"]) == (4, 16, "single"))
    ses = next(f["se"] for f in obj["floors"] if (f["d"], f["P"], f["reference"]) == (4, 16, "single"))
    refs = next(f["losses"] for f in obj["floors"] if (f["d"], f["P"], f["reference"]) == (4, 16, "single"))
    for r, r_se, (v, s), ref, s_ref in zip(single["ratios"], single["ratio_se"], bf, refs, ses):
        assert r == pytest.approx(v / ref, rel=1e-12) and r_se == pytest.approx(r * s_ref / ref, rel=1e-12)
        assert abs(r - 1) < 4 * math.hypot(s / v, s_ref / ref)


@pytest.mark.parametrize(
    "argv,name",
    [
        (["--floors", "/nonexistent/x.csv", "--d", "4", "--P", "16"], "floors"),
        (["--floors", "example", "--d", "4,x", "--P", "16"], "d"),
        (["--floors", "example", "--d", "4", "--P", "1"], "P"),  # k = 2 > P
        (["--floors", "example", "--d", "4", "--P", "16", "--contexts", "0"], "contexts"),
    ],
)
def test_infer_scale_bad_input(capsys, argv, name):
    code, out, err = run(capsys, ["infer-scale", *argv, "--json"])
    assert code == 2 and out == "" and len(err.splitlines()) == 1 and name in err


def test_every_option_has_help():
    import argparse

    from depthscale.derivations.cli.app import build_parser

    def subparser(parser, name):
        act = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        return act.choices[name]

    root = build_parser()
    for p in (subparser(subparser(root, "predict"), "softmax-floor"), subparser(root, "infer-scale")):
        for a in p._actions:
            if not isinstance(a, argparse._HelpAction):
                assert a.help, (p.prog, a.dest)

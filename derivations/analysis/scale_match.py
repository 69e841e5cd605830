"""Which (d, P) did a paper use? Match reported softmax floors to the reference floors of a grid.

A floors file is a CSV with the columns ``task,k,a,b,L0`` (one reported floor per row; other
columns are ignored, lines starting with ``#`` are comments; ``k`` may be empty for the easy tasks). For every ``(d, P)`` of a
grid and every reference (``single``, ``convex``, ``mixture``; see
``depthscale.sims.reference_floors``) the ratios ``r_i = L0_i / reference_i`` over the rows are
summarised by

- ``median_ratio`` ``m = median_i r_i`` (how far the scale is off overall),
- ``spread`` ``s = max_i |ln(r_i / m)|`` (how unevenly: the largest log-deviation of a row's ratio
  from the median; 0 when every row is off by the same factor),
- ``score = |ln m| + s``, an upper bound on ``max_i |ln r_i|``, the worst log-mismatch of a row.

Candidates are ranked by ``score`` (smallest first; ties by ``spread``). A score of 0.05 means every
reported floor is within about 5 % of that reference at that scale.
"""

from __future__ import annotations

import csv
import math
import statistics

from ...theory._choices import FLOOR_NAMES, TASKS
from ...theory._validate import check_choice, check_int, check_real

COLUMNS = ("task", "k", "a", "b", "L0")
TASK_CHOICES = ("topk", "easy-exact", "easy-fresh")
REFERENCES = FLOOR_NAMES  # the reference floors a setting is matched against
# (d, P) scales one ranking computes at most: each is a reference-floor fit and evaluation per CSV row
# (a few tenths of a second to seconds each), so 400 is minutes where 500 x 500 was about 14 hours
MAX_SCALES = 400


def check_scale_count(ds, Ps) -> None:
    """Refuse a grid of more than :data:`MAX_SCALES` ``(d, P)`` scales, before anything is computed.

    >>> check_scale_count(range(1, 501), range(1, 501))
    Traceback (most recent call last):
    ...
    ValueError: d, P=500 x 500: must give at most 400 (d, P) scales together (here 250000); split the grid
    """
    n_d, n_P = len(set(ds)), len(set(Ps))
    if n_d * n_P > MAX_SCALES:
        raise ValueError(
            f"d, P={n_d} x {n_P}: must give at most {MAX_SCALES} (d, P) scales together (here {n_d * n_P}); split the grid"
        )


def read_floors(text: str) -> list[dict]:
    """Parse a floors CSV; returns rows ``{"task", "k", "a", "b", "L0"}`` (``k`` may be empty, None, for
    the easy tasks: the default of the task configuration).

    Examples
    --------
    >>> read_floors("# comment\\ntask,k,a,b,L0\\ntopk,2,0,0,1.9\\n")
    [{'task': 'topk', 'k': 2, 'a': 0.0, 'b': 0.0, 'L0': 1.9}]

    A byte-order mark is skipped; a row with missing or extra fields is refused with its line number
    (counted in the file, comments and blank lines included) and the columns concerned.
    """
    text = text.removeprefix("\ufeff")  # the byte-order mark spreadsheet programs write
    numbered = [
        (i, ln) for i, ln in enumerate(text.splitlines(), start=1) if ln.strip() and not ln.lstrip().startswith("#")
    ]
    if not numbered:
        raise ValueError("floors=<empty>: the CSV needs a header task,k,a,b,L0 and at least one row")
    parsed = [(i, fields) for (i, _), fields in zip(numbered, csv.reader([ln for _, ln in numbered]))]
    header = [h.strip() for h in parsed[0][1]]
    twice = sorted({h for h in header if h in COLUMNS and header.count(h) > 1})
    if twice:  # csv would silently keep the last of them
        raise ValueError(f"floors header={','.join(header)!r}: column(s) {','.join(twice)} appear more than once")
    missing = [c for c in COLUMNS if c not in header]
    if missing:
        raise ValueError(
            f"floors header={','.join(header)!r}: missing column(s) {','.join(missing)}; need {','.join(COLUMNS)}"
        )
    rows = []
    for line, fields in parsed[1:]:
        where = f"floors line {line}"
        if len(fields) != len(header):
            what = (
                "missing field(s): no " + ",".join(header[len(fields) :])
                if len(fields) < len(header)
                else (f"extra field(s) after {header[-1]}: {','.join(fields[len(header) :])!r}")
            )
            raise ValueError(f"{where}: has {len(fields)} fields, the header {len(header)}; {what}")
        rec = {k: v.strip() for k, v in zip(header, fields)}
        task = check_choice(f"{where}: task", rec["task"], TASKS)
        if rec["k"] == "" and task != "topk":
            k = None  # the task configuration's default, as in simulate
        else:
            k = check_int(f"{where}: k", _num(rec["k"], int), lo=1)
        a = check_real(f"{where}: a", _num(rec["a"], float), lo=0)
        b = check_real(f"{where}: b", _num(rec["b"], float), lo=0)
        L0 = check_real(f"{where}: L0", _num(rec["L0"], float), lo=0, lo_open=True)
        rows.append({"task": task, "k": k, "a": a, "b": b, "L0": L0})
    if not rows:
        raise ValueError("floors=<no rows>: the CSV needs at least one row under its header")
    return rows


def _num(text, kind):
    try:
        return kind(text)
    except ValueError:
        return text  # the check_* call names the column and the bad value


def match_score(reported, reference) -> dict:
    """``median_ratio``, ``spread``, ``score`` and the per-row ``ratios`` (see the module docstring).

    Examples
    --------
    >>> r = match_score([2.0, 4.0, 8.0], [2.0, 2.0, 2.0])
    >>> r["median_ratio"], round(r["spread"], 12) == round(math.log(2), 12), round(r["score"], 12) == round(2 * math.log(2), 12)
    (2.0, True, True)
    """
    reported = [float(v) for v in reported]
    reference = [float(v) for v in reference]
    if len(reported) != len(reference) or not reported:
        raise ValueError(f"reported has {len(reported)} values, reference {len(reference)}: must be equal and > 0")
    ratios = [r / f if f > 0 else math.inf for r, f in zip(reported, reference)]
    if not all(math.isfinite(r) and r > 0 for r in ratios):
        return {"median_ratio": math.inf, "spread": math.inf, "score": math.inf, "ratios": ratios}
    m = statistics.median(ratios)
    spread = max(abs(math.log(r / m)) for r in ratios)
    return {"median_ratio": m, "spread": spread, "score": abs(math.log(m)) + spread, "ratios": ratios}


def rank(candidates: list[dict]) -> list[dict]:
    """Sort candidate dicts (with ``score`` and ``spread``) best first.

    Examples
    --------
    >>> [c["id"] for c in rank([{"id": 1, "score": 0.3, "spread": 0}, {"id": 2, "score": 0.1, "spread": 0}])]
    [2, 1]
    """
    return sorted(candidates, key=lambda c: (c["score"], c["spread"]))


def task_from(task, k, a, b, d, P, c_lambda=1.0, c_omega=1.0):
    """Validated ``TaskConfig`` with float spectrum parameters, as ``simulate`` and the presets build it.

    The contexts are seeded by a hash of the whole configuration (``rng_for``), so ``k`` (default 2,
    ``None`` means the default) and the float types matter even where the task ignores them.

    Examples
    --------
    >>> task_from("topk", 2, 0, 0, 16, 128).a
    0.0
    """
    from ...sims.config import TaskConfig

    task = check_choice("task", task, TASK_CHOICES)
    d = check_int("d", d, lo=1, hi=100_000)
    P = check_int("P", P, lo=1, hi=1_000_000)
    k = check_int("k", TaskConfig.k if k is None else k, lo=1)
    if k > P:
        raise ValueError(f"k={k}: must be at most the context length P={P}")
    return TaskConfig(
        task=task,
        k=k,
        a=check_real("a", a, lo=0),
        b=check_real("b", b, lo=0),
        d=d,
        P=P,
        c_lambda=check_real("c_lambda", c_lambda, lo=0, lo_open=True),
        c_omega=check_real("c_omega", c_omega, lo=0, lo_open=True),
    )


def score_gradient(ratios, h: float = 1e-7) -> list[float]:
    """``d score / d ln r_i`` by central differences (the score is piecewise linear in the ``ln r_i``
    for an odd number of rows and smooth between kinks otherwise, so this is exact away from kinks).

    Examples
    --------
    >>> [round(v, 6) for v in score_gradient([2.0, 4.0, 16.0])]  # score = ln m + ln(16 / m), m = 4
    [0.0, 0.0, 1.0]
    """
    x = [math.log(r) for r in ratios]
    ones = [1.0] * len(x)

    def at(i, step):
        return match_score([math.exp(v + step * (j == i)) for j, v in enumerate(x)], ones)["score"]

    return [(at(i, h) - at(i, -h)) / (2 * h) for i in range(len(x))]


def score_se(ratios, ratio_se) -> float:
    """Monte Carlo standard error of the score (delta method): ``sqrt(sum_i (g_i se(ln r_i))^2)`` with
    ``g = score_gradient(ratios)`` and ``se(ln r_i) = ratio_se_i / r_i``, the rows being independent
    (each row is its own task, with its own contexts).

    Examples
    --------
    >>> round(score_se([2.0, 4.0, 16.0], [0.02, 0.04, 0.16]), 9)
    0.01
    """
    if not all(math.isfinite(r) and r > 0 and math.isfinite(e) for r, e in zip(ratios, ratio_se)):
        return math.inf
    g = score_gradient(ratios)
    return math.sqrt(sum((gi * e / r) ** 2 for gi, e, r in zip(g, ratio_se, ratios)))


def scale_candidates(rows: list[dict], tasks: list, kw: dict) -> tuple[list[dict], list[dict], dict]:
    """The three candidates (``single``, ``convex``, ``mixture``) of one ``(d, P)`` from its row tasks.

    Returns ``(candidates, floors table entries, covariances)``; ``covariances[(a, b)]`` holds, row by
    row, the covariance of ``ln floor_a`` and ``ln floor_b`` (references ``a``, ``b`` of this scale are
    evaluated on the same contexts, so their errors are correlated). Each candidate carries
    ``score_se`` (``score_se``), ``contexts`` (evaluation contexts) and, for the comparison of two
    candidates of one scale, ``grad`` (``score_gradient``).
    """
    import numpy as np  # not at module level: the command line imports this module for --help

    from ...sims.reference_floors import reference_floors

    d, P = tasks[0].d, tasks[0].P
    fls = [reference_floors(t, **kw) for t in tasks]
    cands, table = [], []
    for name in REFERENCES:
        refs = [getattr(f, name) for f in fls]
        sc = match_score([r["L0"] for r in rows], [x.loss for x in refs])
        # the reference's Monte Carlo error carried to each ratio (L0 is taken as exact)
        sc["ratio_se"] = [q * x.se / x.loss if x.loss > 0 else math.inf for q, x in zip(sc["ratios"], refs)]
        sc["score_se"] = score_se(sc["ratios"], sc["ratio_se"])
        finite = math.isfinite(sc["score"])
        cands.append(
            {
                "d": d,
                "P": P,
                "reference": name,
                **sc,
                "contexts": kw["n_eval"],
                "grad": score_gradient(sc["ratios"]) if finite else None,
            }
        )
        table.append(
            {
                "d": d,
                "P": P,
                "reference": name,
                "losses": [x.loss for x in refs],
                "se": [x.se for x in refs],
                "contexts": kw["n_eval"],
            }
        )
    cov = {}
    for i, a in enumerate(REFERENCES):
        for b in REFERENCES[i + 1 :]:
            vals = []
            for f in fls:
                fa, fb = getattr(f, a), getattr(f, b)
                c = float(np.cov(fa.sq_err, fb.sq_err)[0, 1]) / fa.sq_err.size  # of the two means
                vals.append(c / (fa.loss * fb.loss) if fa.loss > 0 and fb.loss > 0 else math.inf)
            cov[(a, b)] = cov[(b, a)] = vals
    return cands, table, cov


def infer_scale(rows: list[dict], ds, Ps, kw: dict, c_lambda=1.0, c_omega=1.0) -> dict:
    """Reference floors for every ``(d, P)`` and row, and the ranking (see ``scale_match``).

    ``kw`` are the keyword arguments of ``reference_floors`` (``floor_options``). Returns
    ``{"ranking": [...], "floors": [...], "covariances": {...}}``; each ranking entry has ``d, P,
    reference, median_ratio, spread, score, ratios, ratio_se, score_se, contexts`` (in row order;
    ``ratio_se`` carries the reference's standard error, the reported L0 being taken as exact) and
    the internal ``grad``; ``covariances[(d, P)]`` as in ``scale_candidates``.
    ``scale_resolution`` says whether the ranking is resolved.
    """
    check_scale_count(ds, Ps)
    tasks = {
        (d, P): [task_from(r["task"], r["k"], r["a"], r["b"], d, P, c_lambda, c_omega) for r in rows]
        for d in ds
        for P in Ps
    }  # validate the whole grid before computing anything
    cands, table, covs = [], [], {}
    for key, ts in tasks.items():
        c, t, covs[key] = scale_candidates(rows, ts, kw)
        cands += c
        table += t
    return {"ranking": rank(cands), "floors": table, "covariances": covs}

"""Is the ranking of ``infer-scale`` resolved? Ties within the Monte Carlo error, and the contexts that
would separate them.

The score of a candidate (``scale_match``) is computed from reference floors estimated on ``n``
evaluation contexts, so it carries a Monte Carlo error ``score_se`` (delta method,
``scale_match.score_se``). Two candidates ``a`` (the best) and ``b`` are **tied** when

    score_b - score_a < 2 se(score_b - score_a)

(``SEPARATION = 2``), where the standard error of the difference combines the two candidates'
errors: ``se^2 = se_a^2 + se_b^2 - 2 cov``. The covariance is 0 for candidates of different scales
(their tasks differ, so their contexts are independent) and, for two references of the same scale
(evaluated on the same contexts), ``sum_i g_a,i g_b,i cov(ln floor_a,i, ln floor_b,i)`` over the
rows, ``g`` the score gradients. Two candidates with equal scores are always tied. Scores are
**equal** when they differ by at most ``EQUAL_SCORES = 1e-9`` (ln units, so floors agreeing to a
relative 1e-9): candidates that are the same predictor in exact arithmetic (with one temperature the
signed mixture, and often the non-negative one, is the single head) differ by rounding alone, and
whether that rounding is 0 depends on the CPU and BLAS kernel; 1e-9 is far above rounding and far
below any Monte Carlo error of a score.

Standard errors fall as ``1 / sqrt(contexts)``, so a tie of difference ``D`` is expected to separate
at ``n' = 4 (var_a n_a + var_b n_b - 2 cov n) / D^2`` contexts (``n (2 se / D)^2`` when both used
``n``), assuming the difference stays what it is now. ``resolve`` raises the count of the tied
candidates' scales towards it, up to a cap.
"""

from __future__ import annotations

import math
import time

from ...theory._validate import check_memory
from .scale_match import rank, scale_candidates, task_from

SEPARATION = 2.0
EQUAL_SCORES = 1e-9  # scores closer than this are equal (see the module docstring)
RULE = "tied when score difference < 2 x s.e. of the difference (s.e. of the two candidates combined)"
MAX_CONTEXTS = 10_000_000  # as --contexts


def _pair_var(a: dict, b: dict, covs: dict) -> tuple[float, float, float]:
    """``(var_a, var_b, cov)`` of the two scores (cov only for two references of one scale)."""
    va, vb = a["score_se"] ** 2, b["score_se"] ** 2
    cov = 0.0
    if (a["d"], a["P"], a["contexts"]) == (b["d"], b["P"], b["contexts"]) and a["reference"] != b["reference"]:
        c = covs[(a["d"], a["P"])][(a["reference"], b["reference"])]
        cov = sum(ga * gb * ci for ga, gb, ci in zip(a["grad"], b["grad"], c))
    return va, vb, cov


def difference(a: dict, b: dict, covs: dict) -> tuple[float, float]:
    """``score_b - score_a`` and its standard error (see the module docstring).

    Examples
    --------
    >>> a = {"d": 4, "P": 8, "reference": "single", "score": 0.1, "score_se": 0.03, "contexts": 100}
    >>> b = {**a, "P": 16, "score": 0.2, "score_se": 0.04}
    >>> [round(v, 12) for v in difference(a, b, {})]
    [0.1, 0.05]
    """
    va, vb, cov = _pair_var(a, b, covs)
    return b["score"] - a["score"], math.sqrt(max(va + vb - 2 * cov, 0.0))


def contexts_to_separate(a: dict, b: dict, covs: dict) -> int | None:
    """Evaluation contexts (for both) at which the difference would be ``SEPARATION`` standard errors;
    None when the scores are equal within ``EQUAL_SCORES`` (no count separates them).

    Examples
    --------
    >>> a = {"d": 4, "P": 8, "reference": "single", "score": 0.10, "score_se": 0.03, "contexts": 100}
    >>> contexts_to_separate(a, {**a, "P": 16, "score": 0.15, "score_se": 0.04}, {})  # 100 (2 0.05 / 0.05)^2
    400
    """
    diff = b["score"] - a["score"]
    if not diff > EQUAL_SCORES or not math.isfinite(diff):
        return None
    va, vb, cov = _pair_var(a, b, covs)
    scaled = va * a["contexts"] + vb * b["contexts"] - 2 * cov * a["contexts"]  # var x contexts: fixed in n
    return max(2, math.ceil(SEPARATION**2 * max(scaled, 0.0) / diff**2 * (1 - 1e-12)))


def _key(c: dict) -> dict:
    return {"d": c["d"], "P": c["P"], "reference": c["reference"]}


def resolution(ranking: list[dict], covs: dict) -> dict:
    """Whether the best candidate is ahead of every other by more than ``SEPARATION`` s.e.

    Returns ``{"rule", "resolved", "scale_resolved", "best", "tied", "contexts_to_separate",
    "runner_up"}``: ``tied`` lists the candidates tied with the best (each with ``score``,
    ``score_se``, ``difference``, ``difference_se``, ``contexts`` and its own
    ``contexts_to_separate``); ``scale_resolved`` is true when none of them is of another (d, P), so
    the scale is decided even if the reference is not; the top-level ``contexts_to_separate`` is the
    largest count over the ties (None if none is tied, or a tie has equal scores); ``runner_up`` is
    the best candidate of another scale, with its difference, when the scale is resolved.

    Examples
    --------
    >>> a = {"d": 4, "P": 8, "reference": "single", "score": 0.10, "score_se": 0.03, "contexts": 100}
    >>> r = resolution([a, {**a, "P": 16, "score": 0.15, "score_se": 0.04}], {})
    >>> r["resolved"], r["scale_resolved"], [t["P"] for t in r["tied"]], r["contexts_to_separate"]
    (False, False, [16], 400)
    """
    best = ranking[0]
    tied, runner_up = [], None
    for c in ranking[1:]:
        if not (math.isfinite(c["score"]) and math.isfinite(best["score"])):
            continue
        diff, se = difference(best, c, covs)
        entry = {
            **_key(c),
            "score": c["score"],
            "score_se": c["score_se"],
            "difference": diff,
            "difference_se": se,
            "contexts": c["contexts"],
        }
        if abs(diff) <= EQUAL_SCORES or diff < SEPARATION * se:
            tied.append({**entry, "contexts_to_separate": contexts_to_separate(best, c, covs)})
        elif runner_up is None and (c["d"], c["P"]) != (best["d"], best["P"]):
            runner_up = entry
    need = [t["contexts_to_separate"] for t in tied]
    scale_resolved = all((t["d"], t["P"]) == (best["d"], best["P"]) for t in tied)
    return {
        "rule": RULE,
        "resolved": not tied,
        "scale_resolved": scale_resolved,
        "best": {**_key(best), "score": best["score"], "score_se": best["score_se"], "contexts": best["contexts"]},
        "tied": tied,
        "contexts_to_separate": None if not need or None in need else max(need),
        "runner_up": runner_up if scale_resolved else None,
    }


def floors_memory_bytes(d: int, P: int, n_fit: int, n_eval: int, n_grid: int, chunk: int = 1024) -> float:
    """Bytes ``reference_floors`` holds at once at least: the head inputs (cos, y, target: ``2 P + 1``
    numbers a context) of the fitting and evaluation contexts, the evaluation ones twice while they are
    joined, the grid outputs and their QR (three ``n_fit x (n_grid + 1)`` arrays) and one block of
    ``chunk`` contexts (``X`` and ``O``: ``P d + d^2`` numbers a context), all float64.

    >>> round(floors_memory_bytes(16, 128, 10_000, 10_000, 49) / 2**20, 1)
    88.3
    """
    per_ctx = 2 * P + 1
    return 8.0 * (
        n_fit * per_ctx
        + 2 * n_eval * per_ctx
        + 3 * n_fit * (n_grid + 1)
        + min(chunk, max(n_fit, n_eval)) * (P * d + d * d)
    )


def check_resolve(cap, kw: dict, ds, Ps, fit_follows: bool) -> int:
    """Validate ``--resolve`` (larger than the contexts, at most ``MAX_CONTEXTS``, within memory at the
    largest d and P of the grid); returns the cap."""
    n = kw["n_eval"]
    if isinstance(cap, bool) or not isinstance(cap, int) or not n < cap <= MAX_CONTEXTS:
        raise ValueError(
            f"resolve={cap!r}: must be an integer larger than contexts={n} and at most {MAX_CONTEXTS} "
            "(the largest evaluation count the tied candidates may be raised to)"
        )
    n_fit = cap if fit_follows else kw["n_fit"]
    check_memory(
        f"resolve={cap}, d={max(ds)}, P={max(Ps)}", floors_memory_bytes(max(ds), max(Ps), n_fit, cap, kw["n_grid"])
    )
    return cap


def resolve(out: dict, rows: list[dict], kw: dict, cap: int, fit_follows: bool, c_lambda=1.0, c_omega=1.0) -> list:
    """Raise the evaluation contexts of the tied candidates' scales until the ranking is resolved or
    every tied candidate is at ``cap``; updates ``out`` (``infer_scale``'s result) in place and
    returns the rounds ``[{"contexts", "scales", "seconds"}]``.

    Each round re-evaluates the scales (all three references) of the tied candidates below the new
    count ``min(cap, max(contexts_to_separate, 2 x the smallest tied count))``: at least a doubling,
    since the separating count is itself estimated from a noisy difference. Ties with equal scores
    (the same floors) are left alone: no count separates them. The fitting contexts
    follow the evaluation count when ``fit_follows`` (``--fit-contexts`` not given), else stay fixed.
    """
    rounds: list[dict] = []
    while True:
        res = resolution(out["ranking"], out["covariances"])
        # equal scores (the same floors) separate at no count: only the other ties drive the count
        group = [t for t in res["tied"] if t["contexts_to_separate"] is not None]
        if not group:
            return rounds
        group.append(res["best"])
        low = min(c["contexts"] for c in group)
        if low >= cap:
            return rounds
        need = max(t.get("contexts_to_separate") or 0 for t in group)
        n_new = min(cap, max(need, 2 * low))
        scales = list(dict.fromkeys((c["d"], c["P"]) for c in group if c["contexts"] < n_new))
        kw_new = {**kw, "n_eval": n_new, "n_fit": n_new if fit_follows else kw["n_fit"]}
        t0 = time.perf_counter()
        for d, P in scales:
            tasks = [task_from(r["task"], r["k"], r["a"], r["b"], d, P, c_lambda, c_omega) for r in rows]
            cands, table, out["covariances"][(d, P)] = scale_candidates(rows, tasks, kw_new)
            keep = [c for c in out["ranking"] if (c["d"], c["P"]) != (d, P)]
            out["ranking"] = rank(keep + cands)
            out["floors"] = [f for f in out["floors"] if (f["d"], f["P"]) != (d, P)] + table
        rounds.append({"contexts": n_new, "scales": [list(s) for s in scales], "seconds": time.perf_counter() - t0})


def public(out: dict) -> dict:
    """``out`` without the internal fields (per-candidate ``grad``, ``covariances``), for JSON."""
    hidden = ("grad",)
    return {
        **{k: v for k, v in out.items() if k != "covariances"},
        "ranking": [{k: v for k, v in c.items() if k not in hidden} for c in out["ranking"]],
    }

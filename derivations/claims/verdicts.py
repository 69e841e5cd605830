"""Claim results and the rules that turn evidence into a verdict (docs/claims.md).

Verdicts: ``pass`` / ``fail`` when the evidence is decisive; ``indicative`` when it points one way
but the scale is too small to decide (too few depths, seeds or evaluation contexts, or unconverged
runs, which never decide a claim), or when the fit it rests on is not identified (then it points
nowhere); ``not run`` when the sweep has no data for it; ``error`` when the claim's code raised (a bug,
never a lack of data). Every result says why it got its verdict.

Examples
--------
>>> r = ClaimResult("C1", "alpha near 1", expected=1.0, measured=0.97, error=0.01, tolerance="± 0.2",
...                 verdict="pass", reason="")
>>> r.to_dict()["measured"], r.to_dict()["verdict"]
(0.97, 'pass')
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field, replace

import numpy as np

from ...theory._json import finite_number
from ...theory._validate import check_choice
from ..analysis.estimate import Estimate
from ..formatting import format_estimate, format_interval

VERDICTS = ("pass", "fail", "indicative", "not run", "error")

# What makes evidence decisive (docs/choices.md, "When a claim is decided").
MIN_SEEDS = 3  # two seeds leave t(1) = 12.7 and a spread that is itself a guess
MIN_DEPTHS = 5
MIN_SPAN = 32  # largest / smallest depth
MIN_EVAL = 4096


@dataclass(frozen=True)
class Condition:
    """What one result of a claim was measured on: the label the report shows, and the typed settings
    behind it (empty or None where they do not apply).

    Examples
    --------
    >>> Condition("top-2 d=8", model="softmax", k=2, d=8).label
    'top-2 d=8'
    >>> Condition.of("(a,b)=(2,1)") == Condition("(a,b)=(2,1)")
    True
    """

    label: str = ""
    model: str = ""
    variant: str = ""
    task: str = ""
    k: int | None = None
    a: float | None = None
    b: float | None = None
    d: int | None = None
    P: int | None = None
    protocol: str = ""
    depth: int | None = None

    @classmethod
    def of(cls, where=None, **more) -> Condition:
        """A condition from a label (str), a :class:`Condition` (``more`` replaces fields), or anything
        with a curve's fields (``label``, ``model``, ``variant``, ``task``, ``k``, ``a``, ``b``, ``d``,
        ``P``: a :class:`~depthscale.derivations.analysis.curve.Curve`); ``more`` sets further fields."""
        if where is None or isinstance(where, str):
            return cls(where or "", **more)
        if isinstance(where, Condition):
            return replace(where, **more) if more else where
        fields_ = {n: getattr(where, n) for n in ("label", "model", "variant", "task", "k", "a", "b", "d", "P")}
        fields_["k"] = int(fields_["k"]) if fields_["k"] is not None else None
        return cls(**{**fields_, **more})

    def to_dict(self) -> dict:
        """The fields that are set (JSON-able)."""
        return {k: v for k, v in asdict(self).items() if v not in ("", None)}


@dataclass(frozen=True)
class ClaimResult:
    """One row of the claims table.

    Attributes
    ----------
    claim_id : str
        The claim's id (``"softmax-top2-exponent"``).
    claim : str
        The statement tested.
    expected : float, (float, float), str or None
        What the measurement is compared with: a theory value, an interval of them, or a reference
        (a reference floor's loss, the paper's value); a string when it is a condition (``"< 0"``).
    measured : float or None
        The measured value (None when not measured).
    error : float or None
        One standard error of ``measured`` (None when unknown).
    tolerance : str
        How close ``measured`` must be to ``expected``.
    verdict : str
        One of :data:`VERDICTS`.
    reason : str
        Why this verdict (what was measured, what was missing), for the reader; no code reads it.
    note : str
        Text shown after the measured value (a second measured number, e.g. the linear spread).
    expected_error : float or None
        One standard error of a computed ``expected`` (a Monte Carlo floor), else None.
    condition : Condition
        What it was measured on (a label alone is taken as ``Condition(label)``).
    would_be : str or None
        For an ``indicative`` verdict on evidence too small to decide: the verdict the measurement
        points to (``"pass"`` or ``"fail"``); None otherwise.
    test : str
        What the decision rested on (:attr:`~depthscale.derivations.analysis.estimate.Estimate.test`:
        the error's basis, its count and the t quantile used, ``"seeds n=5, t(4) = 2.78"``); ``""``
        where no error entered the decision.

    ``id`` is the row's id in the claims table: ``claim_id``, then the condition's label.
    """

    claim_id: str
    claim: str
    expected: object
    measured: float | None
    error: float | None
    tolerance: str
    verdict: str
    reason: str
    note: str = ""
    expected_error: float | None = None
    condition: Condition = Condition()
    would_be: str | None = None
    test: str = ""
    p: float | None = None
    family_note: str = ""
    curves: tuple = field(default=(), compare=False, repr=False)

    def __post_init__(self):
        check_choice("verdict", self.verdict, VERDICTS)
        if not isinstance(self.condition, Condition):
            if not isinstance(self.condition, str):
                raise TypeError(f"condition={self.condition!r}: must be a Condition or a label (str)")
            object.__setattr__(self, "condition", Condition(self.condition))
        if self.would_be is not None:
            check_choice("would_be", self.would_be, ("pass", "fail"))
            if self.verdict != "indicative":
                raise ValueError(
                    f"would_be={self.would_be!r}: only an indicative verdict has one, not {self.verdict!r}"
                )

    @property
    def id(self) -> str:
        """The row's id: the claim's id, then the condition's label."""
        label = self.condition.label
        return f"{self.claim_id} {label}" if label else self.claim_id

    def __repr__(self) -> str:
        """Two lines: id and verdict (with the verdict an indicative row points to), then measured
        against expected with the tolerance, and the reason (cut at 100 characters)."""
        cells = claim_cells(self)
        verdict = self.verdict + (f" (would be {self.would_be})" if self.would_be else "")
        reason = self.reason if len(self.reason) <= 100 else self.reason[:99] + "…"
        return (
            f"<ClaimResult {self.id}: {verdict}\n  measured {cells['measured']} vs expected {cells['expected']}"
            f" ({self.tolerance}){'; ' + reason if reason else ''}>"
        )

    def _repr_html_(self) -> str:
        """A one-row claims table in a notebook, as :class:`~depthscale.derivations.claims.display.ClaimTable`
        shows one (built here: the table's module imports this one)."""
        from ...theory.display import html_grid

        cells = claim_cells(self)
        return html_grid(COLUMNS, [[cells[k] for k in COLUMNS]], f"1 claim(s): 1 {self.verdict}")

    def to_dict(self) -> dict:
        """JSON-able fields (non-finite numbers as None) plus the rendered ``expected_text`` and ``measured_text``."""
        exp = self.expected
        if isinstance(exp, tuple):
            exp = [_num(x) for x in exp]
        elif isinstance(exp, (int, float)) and not isinstance(exp, bool):
            exp = _num(exp)
        cells = claim_cells(self)
        return {
            "id": self.id,
            "claim_id": self.claim_id,
            "condition": self.condition.to_dict(),
            "claim": self.claim,
            "expected": exp,
            "expected_error": _num(self.expected_error),
            "expected_text": cells["expected"],
            "measured": _num(self.measured),
            "error": _num(self.error),
            "note": self.note,
            "measured_text": cells["measured"],
            "tolerance": self.tolerance,
            "verdict": self.verdict,
            "would_be": self.would_be,
            "test": self.test,
            "p": _num(self.p),
            "family_note": self.family_note,
            "reason": self.reason,
        }


_num = finite_number


def not_run(cid: str, claim: str, reason: str, expected=None, tolerance: str = "") -> ClaimResult:
    """A claim with no data to test it."""
    return ClaimResult(cid, claim, expected, None, None, tolerance, "not run", reason)


def errored(cid: str, claim: str, exc: BaseException) -> ClaimResult:
    """A claim whose evaluation raised: verdict ``error``, the exception as the reason."""
    return ClaimResult(cid, claim, None, None, None, "", "error", f"evaluation error: {type(exc).__name__}: {exc}")


def decisive(curves, require_converged: bool = True, budget_stopped=()) -> tuple[bool, str]:
    """Whether these curves may decide a claim, and if not, why (``require_converged=False``, or a curve
    in ``budget_stopped``, for a protocol stopped early by design: its runs need not have converged)."""
    why = []
    for c in curves:
        if len(c.seeds) < MIN_SEEDS:
            why.append(f"{len(c.seeds)} seed(s) < {MIN_SEEDS}")
        elif thin := [int(L) for L, n in zip(c.depths, np.isfinite(c.loss).sum(axis=0)) if n < MIN_SEEDS]:
            # seeds counted per depth: a second seed at one depth does not make the others two-seeded
            why.append(f"depths {thin} with < {MIN_SEEDS} seeds")
        # only the depths a fit can use count: a zero or negative loss is dropped by every fit
        used = c.depths[np.isfinite(c.mean) & (c.mean > 0)] if len(c.depths) else c.depths
        if len(used) < MIN_DEPTHS or used[-1] / used[0] < MIN_SPAN:
            why.append(
                f"depths with a positive loss {list(map(int, used))} (need >= {MIN_DEPTHS} spanning x{MIN_SPAN})"
            )
        if require_converged and not c.all_converged and not any(c is b for b in budget_stopped):
            why.append(f"{c.n_unconverged} unconverged run(s)")
        if c.eval_contexts < MIN_EVAL:
            why.append(f"{c.eval_contexts} evaluation contexts < {MIN_EVAL}")
    why = sorted(set(why))
    return (not why), "; ".join(why)


def decide(ok: bool | None, curves, detail: str, budget_stopped=()) -> tuple[str, str]:
    """``(verdict, reason)`` of :func:`decision`."""
    verdict, reason, _ = decision(ok, curves, detail, budget_stopped)
    return verdict, reason


def decision(ok: bool | None, curves, detail: str, budget_stopped=()) -> tuple[str, str, str | None]:
    """``(verdict, reason, would_be)``: pass/fail on decisive evidence, else indicative with the
    would-be verdict (``would_be``, also stated in the reason).

    ``ok=None`` (the measurement is too imprecise to say) is indicative whatever the evidence, with no
    would-be verdict; curves in ``budget_stopped`` need not have converged (:func:`decisive`).

    >>> decision(True, [], "alpha = 1.0")
    ('pass', 'alpha = 1.0', None)
    >>> decision(None, [], "too wide")
    ('indicative', 'too wide', None)
    """
    if ok is None:
        return "indicative", detail, None
    dec, why = decisive(curves, budget_stopped=budget_stopped)
    would = "pass" if ok else "fail"
    if dec:
        return would, detail, None
    return "indicative", f"{detail}; would be {would}, but {why}", would


def in_range(e: Estimate, lo: float, hi: float) -> bool | None:
    """The one decision rule on a band ``[lo, hi]``: True when the whole 95 % interval
    ``value ± t s.e.`` (Student t at the estimate's degrees of freedom) lies inside the band (an
    equivalence test), False when it lies wholly outside, else None (undecided). ``lo`` may be
    ``-inf`` and ``hi`` ``inf`` (a one-sided band). ``t`` is :attr:`Estimate.t` (12.7 for two seeds).

    >>> from depthscale.derivations.analysis.estimate import Estimate
    >>> fit = lambda x, se: Estimate(x, se, 4, "fit", 7)   # 7 depths, 3 parameters: t(4) = 2.78
    >>> in_range(fit(1.0, 0.05), 0.8, 1.2), in_range(fit(0.3, 0.05), 0.8, 1.2), in_range(fit(1.0, 0.5), 0.8, 1.2)
    (True, False, None)
    >>> in_range(fit(0.97, 0.067), 0.8, 1.2) is None   # [0.78, 1.16] crosses 0.8: not inside
    True
    >>> in_range(Estimate(0.3, 0.05, 1, "seeds", 2), 0.8, 1.2) is None   # 0.5 below, but t(1) = 12.7
    True
    """
    _check_estimate(e)
    if not lo <= hi:
        raise ValueError(f"band=({lo!r}, {hi!r}): must be an interval with lo <= hi")
    m = e.margin
    if not math.isfinite(e.value) or math.isnan(m):
        return None
    if e.value + m < lo or e.value - m > hi:
        return False
    return True if lo <= e.value - m and e.value + m <= hi else None


def below_zero(e: Estimate, bound: float = 0.0) -> bool | None:
    """:func:`in_range` on the one-sided band ``(-inf, bound]``: True when the whole 95 % interval is
    below ``bound`` (0), False when wholly above it, else None (as when models of different seeds end
    on either side).

    >>> from depthscale.derivations.analysis.estimate import Estimate
    >>> below_zero(Estimate(-0.3, 0.1, 4, "fit", 7)), below_zero(Estimate(0.3, 0.1, 4, "fit", 7))
    (True, False)
    >>> below_zero(Estimate(-0.033, 0.012, 1, "seeds", 2)) is None   # 2.75 s.e. < t(1) = 12.7
    True
    """
    return in_range(e, -math.inf, bound)


def within(e: Estimate, target: float, tol: float) -> bool | None:
    """:func:`in_range` on the band ``[target - tol, target + tol]``: True when the whole 95 % interval
    lies within ``tol`` of ``target``, False when wholly further, else None. An imprecise estimate
    never passes for being imprecise.

    >>> from depthscale.derivations.analysis.estimate import Estimate
    >>> within(Estimate(1.04, 0.01, 1e4, "contexts", 10001), 1.0, 0.1), within(Estimate(1.2, 0.01, 4, "fit", 7), 1.0, 0.1)
    (True, False)
    >>> within(Estimate(1.04, 0.01, 1, "seeds", 2), 1.0, 0.1) is None   # t(1) = 12.7: 0.04 + 0.127 > 0.1
    True
    """
    return in_range(e, target - tol, target + tol)


def decision_p(e: Estimate, lo: float, hi: float) -> float:
    """The p-value of :func:`in_range`'s decision: the smallest two-sided level at which the interval
    ``value ± t s.e.`` lies wholly inside ``[lo, hi]`` (a pass) or wholly outside it (a fail), i.e.
    ``2 P(T > |distance to the nearer edge| / s.e.)``. The interval rule at 95 % decides exactly when
    this is below 0.05; Holm's rule (:func:`holm`) compares it with smaller levels in a family.

    >>> from depthscale.derivations.analysis.estimate import Estimate
    >>> round(decision_p(Estimate(1.0, 0.05, 4, "fit", 7), 0.8, 1.2), 4)   # 4 s.e. from either edge
    0.0161
    >>> decision_p(Estimate(1.0, 0.0, math.inf, "exact"), 0.8, 1.2)
    0.0
    """
    from scipy import stats

    _check_estimate(e)
    dist = min(abs(e.value - lo), abs(e.value - hi))
    if e.se == 0:
        return 0.0 if dist > 0 else 1.0
    if not (math.isfinite(e.se) and e.dof >= 1):
        return 1.0
    z = dist / e.se
    return float(2 * (stats.t.sf(z, e.dof) if math.isfinite(e.dof) else stats.norm.sf(z)))


def log_ratio(e: Estimate, reference: float, reference_se: float = 0.0) -> Estimate:
    """``log(e / reference)`` with its delta-method error: a ratio is tested on the log scale, where a
    relative band ``1 ± r`` is the band ``[log(1 - r), log(1 + r)]`` and the error is symmetric.
    ``reference_se`` adds an independent error of the reference (a Monte Carlo floor); the degrees of
    freedom are the estimate's.

    >>> from depthscale.derivations.analysis.estimate import Estimate
    >>> r = log_ratio(Estimate(1.02, 0.01, 4, "fit", 7), 1.0)
    >>> round(r.value, 4), round(r.se, 4), r.dof
    (0.0198, 0.0098, 4.0)
    """
    _check_estimate(e)
    if not (e.value > 0 and reference > 0):
        raise ValueError(f"log_ratio: value {e.value!r} and reference {reference!r} must both be > 0")
    se = math.hypot(e.se / e.value, reference_se / reference)
    return Estimate(math.log(e.value / reference), se, e.dof, e.basis, e.n)


def holm(p_values, level: float = 0.05) -> list[bool]:
    """Holm's step-down rule: which of a family's hypotheses are rejected at family-wise error ``level``.

    The ``i``-th smallest p is compared with ``level / (m - i)``; the first that fails stops the
    rejections. NaN p-values are never rejected.

    >>> holm([0.01, 0.04, 0.03, 0.5])
    [True, False, False, False]
    >>> holm([0.001, 0.01, 0.02])
    [True, True, True]
    """
    p = np.asarray([float(x) for x in p_values], dtype=float)
    m = int(np.isfinite(p).sum())
    out = [False] * len(p)
    for i, j in enumerate(sorted(np.flatnonzero(np.isfinite(p)), key=lambda k: p[k])):
        if p[j] > level / (m - i):
            break
        out[j] = True
    return out


FAMILY_LEVEL = 0.05  # family-wise error of one claim's decisions across its conditions (Holm)


def apply_holm(rows: list[ClaimResult], level: float = FAMILY_LEVEL) -> list[ClaimResult]:
    """One claim's rows across its conditions as a family, decided with Holm's rule at family-wise
    error ``level``: the rows with a decision p-value (``p``) are the family's hypotheses; a pass or
    fail whose p Holm does not keep becomes ``indicative`` with the verdict it would have had, and
    every tested row says in ``family_note`` what Holm did. A family of one is the plain rule.

    >>> rows = [ClaimResult("x", "c", (0, 1), 0.5, 0.1, "", "pass", "", p=p, condition=str(i))
    ...         for i, p in enumerate([0.001, 0.03, 0.04])]
    >>> [(r.verdict, r.would_be) for r in apply_holm(rows)]   # 0.03 > 0.05 / 2 stops the rejections
    [('pass', None), ('indicative', 'pass'), ('indicative', 'pass')]
    """
    tested = [i for i, r in enumerate(rows) if r.p is not None and math.isfinite(r.p)]
    if len(tested) < 2:
        return rows
    m = len(tested)
    ps = [float(rows[i].p) for i in tested]  # type: ignore[arg-type]
    kept = holm(ps, level)
    out = list(rows)
    for i, p, keep in zip(tested, ps, kept):
        r = rows[i]
        bound = level / (m - sorted(ps).index(p))
        if r.verdict in ("pass", "fail") and not keep:
            note = f"Holm over {m} conditions: p = {p:.2g} > {bound:.2g}, not kept"
            out[i] = replace(
                r, verdict="indicative", would_be=r.verdict, family_note=note, reason=f"{r.reason}; {note}"
            )
        elif r.verdict in ("pass", "fail"):
            out[i] = replace(r, family_note=f"Holm over {m} conditions: p = {p:.2g} <= {bound:.2g}, kept")
    return out


def _check_estimate(e) -> None:
    if not isinstance(e, Estimate):
        raise TypeError(f"e={e!r}: must be an Estimate (value, s.e., degrees of freedom and basis)")


def unidentified(fits_by_name: dict) -> str:
    """Reason text when any of the named fits is not identified, else ``""``.

    Such a fit never decides a claim nor points it one way: the claim is ``indicative`` with this reason.
    """
    bad = [f"{name}: {f.reason}" for name, f in fits_by_name.items() if not f.identified]
    return ("undecided: fit not identified (" + "; ".join(bad) + ")") if bad else ""


# the columns of a claims table, in order (ClaimTable, ClaimResult._repr_html_)
COLUMNS = ("id", "claim", "expected", "measured", "tolerance", "verdict", "reason")


def claim_cells(result) -> dict:
    """The text of a claim's cells from a :class:`~depthscale.derivations.claims.verdicts.ClaimResult`.

    ``expected`` is a number, an interval ``(lo, hi)`` shown as ``[lo, hi]``, a condition string or None.

    Examples
    --------
    >>> from depthscale.derivations.claims.verdicts import ClaimResult
    >>> cells = claim_cells(ClaimResult("x", "c", (1.0, 2.0), 1.5, 0.1, "2 s.e.", "pass", "why"))
    >>> cells["expected"], cells["measured"]
    ('[1, 2]', '1.5 ± 0.1')
    """
    exp = result.expected
    if isinstance(exp, tuple):
        exp_text = format_interval(*exp)
    else:
        exp_text = format_estimate(exp, getattr(result, "expected_error", None))
    measured = format_estimate(result.measured, result.error)
    if getattr(result, "test", ""):
        measured = f"{measured} [{result.test}]"
    if result.note:
        measured = f"{measured} {result.note}" if result.measured is not None else result.note
    return {
        "id": result.id,
        "claim": result.claim,
        "expected": exp_text,
        "measured": measured,
        "tolerance": result.tolerance,
        "verdict": result.verdict,
        "reason": result.reason,
    }


__all__ = [
    "VERDICTS",
    "MIN_SEEDS",
    "MIN_DEPTHS",
    "MIN_SPAN",
    "MIN_EVAL",
    "ClaimResult",
    "Condition",
    "not_run",
    "errored",
    "decisive",
    "decide",
    "decision",
    "in_range",
    "below_zero",
    "within",
    "decision_p",
    "log_ratio",
    "holm",
    "FAMILY_LEVEL",
    "apply_holm",
    "unidentified",
    "claim_cells",
]

"""How often a claim's verdict is right at the measured effect size, and what deciding would cost.

A verdict is a test; its error rates depend on the effect and the noise it is decided at. This
module measures them on the claim itself:

- :func:`noise_model` reads one :class:`~depthscale.derivations.analysis.curve.Curve`: its depths and
  seeds, the seed-mean loss at the shallowest depth ``R_1``, the measured gain ``R_first - R_last``
  (seed means), and the two noises of the additive model ``R[s, j] = mu + u_s + d_j + e_sj`` (a
  two-way analysis of variance without replication): the seed offsets ``u_s`` (a seed's common shift
  across depths) and the pure error ``e_sj``.
- :func:`synthetic_curve` draws ``R[s, j] = L0 + c L_j^-alpha + u_s + e_sj`` for a true ``alpha``,
  with ``c`` and ``L0`` set so that the noiseless curve has the measured ``R_1`` and the measured
  gain between the real curve's first and last depth. It keeps the real curve's key and label, so
  the claim selects it as it selected the real one.
- :func:`calibrate` replaces the one curve a claim's row is decided on by synthetic ones and runs
  the same claim object on them: the rates of pass, fail and indicative per true alpha.
- :func:`plan` searches the seeds (and depths) at which the rule decides correctly with a given
  probability against named alternatives, and what the missing runs cost in core-hours
  (:mod:`depthscale.sims.budget`).

Examples
--------
>>> import numpy as np
>>> from depthscale.derivations.analysis.curve import Curve
>>> rng = np.random.default_rng(0)
>>> L = np.array([1, 2, 4, 8, 16, 32, 64])
>>> R = 0.5 + 0.4 / L + 0.01 * rng.standard_normal((200, 1)) + 0.002 * rng.standard_normal((200, 7))
>>> m = noise_model(Curve.from_arrays(L, R))
>>> round(m.seed_sd, 2), round(m.pure_sd, 3), round(m.gain, 2)
(0.01, 0.002, 0.39)
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, fields, replace
from typing import Any

import numpy as np

from ...theory._validate import bad_argument, check_int, check_real
from ..analysis.curve import Curve
from ..analysis.fits import FitResult
from .claim import Claim
from .evidence import Evidence
from .verdicts import ClaimResult, apply_holm

DEFAULT_ALPHAS = (0.5, 0.75, 1.0, 1.5, 2.0)  # the true exponents a law claim is calibrated at
DEFAULT_ALTERNATIVES = (0.5, 1.0)  # what the planner asks the rule to tell apart
SEED_COUNTS = (3, 4, 6, 8, 12, 16, 24, 32, 48, 64)  # the seed counts the planner tries, in order
DOUBLING = ((1, 2, 4, 8, 16, 32, 64), (1, 2, 4, 8, 16, 32, 64, 128, 256))  # depth lists the planner adds
REPLICATES = (10, 100_000)  # the allowed number of synthetic curves per alpha
COUNTED = ("pass", "fail", "indicative")  # the verdicts counted; anything else (not run, no row) is "other"


# ------------------------------------------------------------------------------------------------ noise
@dataclass(frozen=True)
class NoiseModel:
    """The effect and the noise of one curve (:func:`noise_model`).

    Attributes
    ----------
    depths : tuple of int
        The curve's depths.
    seeds : tuple
        The curve's seeds.
    r1 : float
        Seed-mean loss at the shallowest depth.
    gain : float
        ``R_first - R_last`` of the seed means (positive when the loss falls with depth).
    seed_sd : float
        Standard deviation of the seed offsets: a seed's common shift across depths.
    pure_sd : float
        Standard deviation of the pure error: the residual of the additive seed + depth model.
    """

    depths: tuple[int, ...]
    seeds: tuple
    r1: float
    gain: float
    seed_sd: float
    pure_sd: float

    def law(self, alpha: float) -> tuple[float, float]:
        """``(L0, c)`` of the noiseless ``L0 + c L^-alpha`` with this ``R_1`` at the first depth and this
        gain between the first and the last depth.

        >>> NoiseModel((1, 4), (0, 1), 1.0, 0.75, 0.0, 0.0).law(1.0)
        (0.0, 1.0)
        """
        alpha = check_real("alpha", alpha, lo=0, lo_open=True)
        first, last = self.depths[0] ** -alpha, self.depths[-1] ** -alpha
        c = self.gain / (first - last)
        return self.r1 - c * first, c

    def losses(self, alpha: float, rng: np.random.Generator, n_seeds: int | None = None, depths=None) -> np.ndarray:
        """``(n_seeds, n_depths)`` losses ``L0 + c L^-alpha + u_s + e_sj`` (:meth:`law`) with
        ``u_s ~ N(0, seed_sd^2)`` and ``e_sj ~ N(0, pure_sd^2)``; by default at this model's seeds and
        depths.

        >>> m = NoiseModel((1, 4), (0, 1), 1.0, 0.75, 0.0, 0.0)
        >>> m.losses(1.0, np.random.default_rng(0), n_seeds=1, depths=[1, 2, 4]).tolist()
        [[1.0, 0.5, 0.25]]
        """
        n = len(self.seeds) if n_seeds is None else check_int("n_seeds", n_seeds, lo=1)
        L = np.asarray(self.depths if depths is None else depths, dtype=float)
        L0, c = self.law(alpha)
        u = self.seed_sd * rng.standard_normal((n, 1))
        e = self.pure_sd * rng.standard_normal((n, L.size))
        return L0 + c * L**-alpha + u + e

    def to_dict(self) -> dict:
        """JSON-able fields."""
        return {f.name: list(v) if isinstance(v := getattr(self, f.name), tuple) else v for f in fields(self)}


def noise_model(curve: Curve) -> NoiseModel:
    """The effect and noise of ``curve`` (:class:`NoiseModel`).

    ``R_1`` and the gain are the seed means' (every seed with a loss at that depth). The two
    standard deviations come from the seeds with a loss at every depth, by the two-way analysis of
    variance without replication: the pure error's variance is the residual mean square of the
    additive model, ``MS_res`` on ``(S - 1)(J - 1)`` degrees of freedom, and the seed offsets'
    is ``(MS_seeds - MS_res) / J`` (its unbiased estimate, taken as 0 when negative).

    Raises ``ValueError`` naming ``curve`` when fewer than two seeds have a loss at every depth, or
    the curve has fewer than two depths.

    >>> L = np.array([1, 2, 4])
    >>> R = 1.0 / L + np.array([[0.0], [0.1]])   # two seeds, a pure shift apart
    >>> m = noise_model(Curve.from_arrays(L, R))
    >>> round(m.r1, 3), round(m.gain, 3), round(m.seed_sd, 4), round(m.pure_sd, 12)
    (1.05, 0.75, 0.0707, 0.0)
    """
    if not isinstance(curve, Curve):
        raise TypeError(f"curve={curve!r}: must be a Curve (depthscale.derivations.analysis.curve)")
    loss = np.asarray(curve.loss, dtype=float)
    full = loss[np.all(np.isfinite(loss), axis=1)]
    S, J = full.shape
    if J < 2 or S < 2:
        bad_argument(
            "curve",
            curve.label,
            f"a curve with at least 2 seeds that have a loss at every depth, and 2 depths (it has {S} and {J})",
        )
    mean = curve.mean
    row = full.mean(axis=1, keepdims=True)
    col = full.mean(axis=0, keepdims=True)
    grand = float(full.mean())
    resid = full - row - col + grand
    ms_res = float(np.sum(resid**2)) / ((S - 1) * (J - 1))
    ms_seeds = J * float(np.sum((row - grand) ** 2)) / (S - 1)
    return NoiseModel(
        tuple(int(L) for L in curve.depths),
        tuple(curve.seeds),
        float(mean[0]),
        float(mean[0] - mean[-1]),
        math.sqrt(max(ms_seeds - ms_res, 0.0) / J),
        math.sqrt(ms_res),
    )


class SyntheticCurve(Curve):
    """A :class:`~depthscale.derivations.analysis.curve.Curve` drawn from a :class:`NoiseModel`
    (:func:`synthetic_curve`).

    It is a curve in every respect a claim reads, except that its fits carry no bootstrap over seeds:
    a bootstrap enters a row's reason, never its verdict, and costs one refit per resample on every
    synthetic curve (``bootstrap_refused`` says so).
    """

    def fit(
        self,
        kind: str = "offset",
        n_boot: int = 200,
        seed: int = 0,
        points: str = "auto",
        *,
        L_min: float | None = None,
        L_max: float | None = None,
    ) -> FitResult:
        """:meth:`Curve.fit <depthscale.derivations.analysis.curve.Curve.fit>` without the bootstrap."""
        f = super().fit(kind, 0, seed, points, L_min=L_min, L_max=L_max)
        if check_int("n_boot", n_boot, lo=0, hi=1_000_000) == 0 or f.failure:
            return f
        key = ("no bootstrap", kind, seed, points, L_min, L_max)
        if key not in self._fit_cache:
            self._fit_cache[key] = replace(f, bootstrap_refused="no bootstrap: a synthetic curve (calibration)")
        return self._fit_cache[key]

    def window(self, L_min=None, L_max=None) -> Curve:
        w = super().window(L_min, L_max)
        return SyntheticCurve(**{f.name: getattr(w, f.name) for f in fields(w) if f.name != "_fit_cache"})


def synthetic_curve(
    curve: Curve,
    alpha: float,
    rng: np.random.Generator,
    *,
    noise: NoiseModel | None = None,
    n_seeds: int | None = None,
    depths: Sequence[int] | None = None,
) -> Curve:
    """A curve of ``curve``'s condition whose losses follow ``L0 + c L^-alpha`` plus seed offsets and
    pure error (:meth:`NoiseModel.losses`; ``noise`` defaults to :func:`noise_model` of ``curve``).

    It keeps ``curve``'s ``key`` and ``label`` (claims select curves by them), has no run records
    (``runs={}``; its runs count as converged) and ``contexts`` equal to ``curve``'s evaluation
    contexts. ``n_seeds`` and ``depths`` (increasing, distinct, >= 1) default to ``curve``'s: the
    planner asks for others.

    >>> c = Curve.from_arrays([1, 2, 4, 8], [[1.0, 0.5, 0.25, 0.125], [1.1, 0.6, 0.35, 0.225]], label="mine")
    >>> s = synthetic_curve(c, 1.0, np.random.default_rng(0), n_seeds=3, depths=[1, 2, 4, 8, 16])
    >>> s.label, s.loss.shape, s.runs
    ('mine', (3, 5), {})
    """
    if not isinstance(curve, Curve):
        raise TypeError(f"curve={curve!r}: must be a Curve (depthscale.derivations.analysis.curve)")
    noise = noise_model(curve) if noise is None else noise
    L = np.asarray(noise.depths if depths is None else depths, dtype=float)
    if L.ndim != 1 or L.size == 0 or np.any(L < 1) or np.any(L != np.round(L)) or np.any(np.diff(L) <= 0):
        bad_argument("depths", depths, "increasing, distinct integers >= 1")
    loss = noise.losses(alpha, rng, n_seeds, L)
    seeds = list(curve.seeds) if n_seeds is None or n_seeds == len(curve.seeds) else list(range(n_seeds))
    ctx = curve.eval_contexts
    contexts = int(ctx) if math.isfinite(ctx) and ctx >= 1 else None
    return SyntheticCurve(curve.key, curve.label, L.astype(int), seeds, loss, {}, True, 0, contexts=contexts)


# ------------------------------------------------------------------------------------------------ the row
@dataclass(frozen=True)
class _Target:
    """The row a calibration is about, the evidence curve it is decided on, and the claim's other rows."""

    row: ClaimResult
    curve: Curve
    others: tuple[ClaimResult, ...]


def _target(claim: Claim, evidence: Evidence, condition: str) -> _Target:
    if not isinstance(claim, Claim):
        raise TypeError(f"claim={claim!r}: must be a Claim (depthscale.derivations.claims.claim)")
    if not isinstance(evidence, Evidence):
        raise TypeError(f"evidence={evidence!r}: must be an Evidence (depthscale.derivations.claims.evidence)")
    if not isinstance(condition, str):
        raise TypeError(f"condition={condition!r}: must be a str, the label of one of the claim's conditions")
    rows = claim(evidence)
    found = [r for r in rows if r.condition.label == condition]
    if not found:
        labels = "; ".join(repr(r.condition.label) for r in rows) or "none"
        bad_argument("condition", condition, f"the condition of a row of claim {claim.id!r}: {labels}")
    row = found[0]
    backing = list(row.curves)
    if not backing:  # a row not built by Claim.decided: the curve whose label the condition names
        backing = [c for c in evidence.curves if c.label == condition] or [
            c for c in evidence.curves if c.label and c.label in condition
        ]
    if len(backing) != 1:
        what = ", ".join(repr(c.label) for c in backing) or "no curve of the evidence"
        bad_argument(
            "condition",
            condition,
            f"a row decided on one curve (its verdict rests on {len(backing)}: {what}); calibration replaces one curve",
        )
    curve = next((c for c in evidence.curves if c is backing[0]), None)
    if curve is None:  # decided on a curve made from one of the evidence's (a window): replace that one
        same = [c for c in evidence.curves if c.key == backing[0].key]
        if len(same) != 1:
            bad_argument("condition", condition, "a row decided on a curve of the evidence (its curve is none of them)")
        curve = same[0]
    return _Target(row, curve, tuple(r for r in rows if r.id != row.id))


def backing_curve(claim: Claim, evidence: Evidence, condition: str) -> Curve:
    """The curve of ``evidence`` that ``claim``'s row on ``condition`` is decided on: the one
    :func:`calibrate` and :func:`plan` replace (see :func:`calibrate` for how it is found and which rows
    are refused).

    >>> from depthscale.derivations.claims.claim import claim
    >>> @claim("demo-some", tolerance="none", family="demo")
    ... def some(c, ev):
    ...     '''Each curve has a loss'''
    ...     return [c.decided(x.label, True, [x], "", None, None, None) for x in ev.curves]
    >>> ev = Evidence([Curve.from_arrays([1, 2], [[1.0, 0.5]], label="a"), Curve.from_arrays([1, 2], [[2.0, 1.0]], label="b")])
    >>> backing_curve(some, ev, "b") is ev.curves[1]
    True
    """
    return _target(claim, evidence, condition).curve


def _verdict(claim: Claim, evidence: Evidence, target: _Target, curve: Curve) -> str:
    """The verdict of ``target``'s row when its curve is ``curve``.

    The evidence holds only that curve (and the evidence's theory numbers: the floors and other
    numbers a report computes), so the claim has one row; Holm's rule then sees it beside the claim's
    other conditions, whose p-values are the real evidence's, as the report decides it.
    """
    ev = Evidence((curve,), evidence.theory)
    got = [r for r in claim(ev) if r.id == target.row.id]
    if not got:
        return "other"
    row = got[0]
    if claim.kind == "simulation" and target.others:
        row = apply_holm([*target.others, row])[-1]
    return row.verdict if row.verdict in COUNTED else "other"


def _rng(seed: int, alpha: float, *more: int) -> np.random.Generator:
    """A generator for one (seed, alpha, ...) cell: the same numbers whatever else is asked."""
    bits = int(np.float64(alpha).view(np.uint64))
    return np.random.default_rng(np.random.SeedSequence([seed, bits, *more]))


def _check_alphas(name: str, alphas) -> tuple[float, ...]:
    if isinstance(alphas, (int, float)):
        alphas = (alphas,)
    if isinstance(alphas, (str, bytes)) or not isinstance(alphas, Iterable):
        bad_argument(name, alphas, "positive numbers (true exponents)")
    out = tuple(check_real(name, a, lo=0, lo_open=True) for a in alphas)
    if not out:
        bad_argument(name, alphas, "at least one positive number")
    return out


def _check_replicates(replicates) -> int:
    return check_int("replicates", replicates, lo=REPLICATES[0], hi=REPLICATES[1])


def binomial_se(rate: float, n: int) -> float:
    """Standard error ``sqrt(p (1 - p) / n)`` of a rate ``p`` counted over ``n`` independent replicates.

    >>> binomial_se(0.5, 100)
    0.05
    """
    return math.sqrt(rate * (1 - rate) / n) if n > 0 else math.nan


# ------------------------------------------------------------------------------------------------ calibrate
@dataclass(frozen=True)
class CalibrationRates:
    """How often the rule gave each verdict on ``n`` synthetic curves of true exponent ``alpha``.

    ``other_rate`` counts the replicates with another verdict (``not run``: a fit that failed) or
    none (the claim made no such row); the four rates sum to 1.
    """

    alpha: float
    n: int
    pass_rate: float
    fail_rate: float
    indicative_rate: float
    other_rate: float = 0.0

    @property
    def pass_se(self) -> float:
        """Binomial standard error of :attr:`pass_rate`."""
        return binomial_se(self.pass_rate, self.n)

    @property
    def fail_se(self) -> float:
        """Binomial standard error of :attr:`fail_rate`."""
        return binomial_se(self.fail_rate, self.n)

    @property
    def indicative_se(self) -> float:
        """Binomial standard error of :attr:`indicative_rate`."""
        return binomial_se(self.indicative_rate, self.n)

    def to_dict(self) -> dict:
        """``{"alpha", "n", "pass", "fail", "indicative", "other", "pass_se", "fail_se", "indicative_se"}``."""
        return {
            "alpha": self.alpha,
            "n": self.n,
            "pass": self.pass_rate,
            "fail": self.fail_rate,
            "indicative": self.indicative_rate,
            "other": self.other_rate,
            "pass_se": self.pass_se,
            "fail_se": self.fail_se,
            "indicative_se": self.indicative_se,
        }


def calibrate(
    claim: Claim,
    evidence: Evidence,
    condition: str,
    alphas: Iterable[float] = DEFAULT_ALPHAS,
    replicates: int = 200,
    seed: int = 0,
) -> tuple[CalibrationRates, ...]:
    """The rates of pass, fail and indicative of ``claim``'s row on ``condition`` when its curve is
    replaced by synthetic curves of the measured effect and noise, per true exponent in ``alphas``.

    The row is the one of ``claim(evidence)`` whose condition label is ``condition``. Its curve is
    the one its verdict was decided on (``ClaimResult.curves``, set by
    :meth:`~depthscale.derivations.claims.claim.Claim.decided`); a row built another way is matched
    by label: the evidence's curve whose :attr:`~depthscale.derivations.analysis.curve.Curve.label`
    is the condition's, or is part of it. A row decided on several curves (an envelope over
    learning rates) is refused. For each alpha, ``replicates`` synthetic curves
    (:func:`synthetic_curve`: the same depths and seeds, the measured ``R_1``, gain, seed offsets and
    pure error) each replace that curve in an evidence that keeps the real one's theory numbers; the
    same claim object decides each, and its row of the same id is counted (beside the claim's other
    rows for Holm's rule, :func:`~depthscale.derivations.claims.verdicts.apply_holm`). Numbers a
    claim derives from the runs' stored arrays (paired excesses over floors) do not exist for a
    synthetic curve: calibrate law claims.

    Parameters
    ----------
    claim : Claim
        The claim, as the report evaluates it.
    evidence : Evidence
        What the report decides on (:func:`~depthscale.derivations.claims.registry.report_evidence`).
    condition : str
        The label of the row's condition.
    alphas : iterable of float
        True exponents (> 0).
    replicates : int
        Synthetic curves per alpha, 10 to 100,000.
    seed : int
        Seed of the synthetic draws (each alpha has its own stream).

    Returns
    -------
    tuple of CalibrationRates
        One per alpha, in order.

    Examples
    --------
    >>> from depthscale.derivations.claims.claim import claim
    >>> @claim("demo-falls", tolerance="none", family="demo")
    ... def falls(c, ev):
    ...     '''The loss falls with depth'''
    ...     return [c.decided(x.label, bool(x.mean[-1] < x.mean[0]), [], "", None, None, None) for x in ev.curves]
    >>> R = [[1.0, 0.6, 0.4], [1.1, 0.7, 0.5]]
    >>> ev = Evidence([Curve.from_arrays([1, 2, 4], R, label="mine")])
    >>> (r,) = calibrate(falls, ev, "mine", alphas=[1.0], replicates=10)
    >>> r.alpha, r.n, r.pass_rate, r.fail_rate + r.indicative_rate + r.other_rate
    (1.0, 10, 1.0, 0.0)
    """
    alphas = _check_alphas("alphas", alphas)
    replicates = _check_replicates(replicates)
    seed = check_int("seed", seed, lo=0)
    target = _target(claim, evidence, condition)
    noise = noise_model(target.curve)
    out = []
    for alpha in alphas:
        rng = _rng(seed, alpha)
        counts = dict.fromkeys((*COUNTED, "other"), 0)
        for _ in range(replicates):
            curve = synthetic_curve(target.curve, alpha, rng, noise=noise)
            counts[_verdict(claim, evidence, target, curve)] += 1
        out.append(CalibrationRates(alpha, replicates, *(counts[k] / replicates for k in (*COUNTED, "other"))))
    return tuple(out)


# ------------------------------------------------------------------------------------------------ plan
@dataclass(frozen=True)
class SeedPlan:
    """What it takes to decide a claim's row correctly against one alternative exponent on one depth list.

    Attributes
    ----------
    alternative : float
        The true exponent of the synthetic curves.
    correct : str
        The right verdict at that exponent: ``"pass"`` inside the claim's band, ``"fail"`` outside.
    depths : tuple of int
        The depths of the runs.
    power : float
        The probability of the right verdict asked for.
    seeds : int or None
        The fewest seeds (of :data:`SEED_COUNTS` up to the most allowed) that reach ``power``; None
        when the most allowed do not.
    achieved : float
        The estimated probability of the right verdict at ``seeds`` (at the most allowed when None).
    achieved_se : float
        Its binomial standard error.
    replicates : int
        Synthetic curves behind ``achieved``.
    extra_runs : int or None
        Runs the store lacks for ``seeds`` seeds at these depths (None with ``seeds``).
    core_hours : float or None
        Their cost by :mod:`depthscale.sims.budget` (None with ``seeds``, or when the curve has no
        run configuration to build them from).
    """

    alternative: float
    correct: str
    depths: tuple[int, ...]
    power: float
    seeds: int | None
    achieved: float
    achieved_se: float
    replicates: int
    extra_runs: int | None
    core_hours: float | None

    def to_dict(self) -> dict:
        """JSON-able fields (``depths`` as a list)."""
        return {f.name: list(v) if isinstance(v := getattr(self, f.name), tuple) else v for f in fields(self)}


def default_depth_sets(depths: Sequence[int]) -> tuple[tuple[int, ...], ...]:
    """The depth lists the planner tries: the curve's own, then each doubling list (1..64, 1..256) that
    extends it (reaches at least its deepest depth and adds a depth it lacks).

    >>> default_depth_sets([1, 2, 4, 16, 64])
    ((1, 2, 4, 16, 64), (1, 2, 4, 8, 16, 32, 64), (1, 2, 4, 8, 16, 32, 64, 128, 256))
    >>> default_depth_sets([1, 2, 4, 8, 16, 32, 64, 128, 256, 512])
    ((1, 2, 4, 8, 16, 32, 64, 128, 256, 512),)
    """
    own = tuple(int(L) for L in depths)
    out = [own]
    for d in DOUBLING:
        if d[-1] >= own[-1] and set(d) - set(own) and d not in out:
            out.append(d)
    return tuple(out)


def _band(row: ClaimResult, condition: str) -> tuple[float, float]:
    exp = row.expected
    if not (
        isinstance(exp, tuple)
        and len(exp) == 2
        and all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in exp)
        and exp[0] <= exp[1]
    ):
        bad_argument("condition", condition, f"a row whose expected value is a band (lo, hi) of alpha, not {exp!r}")
    return float(exp[0]), float(exp[1])


class _Counter:
    """Replicates at one (alternative, depths, seeds) cell, drawn on demand from the cell's own stream,
    so that stopping early and going on give the same counts as one full pass."""

    def __init__(self, claim, evidence, target, noise, alpha, n_seeds, depths, correct, seed):
        self.args = (claim, evidence, target)
        self.noise, self.alpha, self.n_seeds, self.depths, self.correct = noise, alpha, n_seeds, depths, correct
        self.rng = _rng(seed, alpha, n_seeds, *depths)
        self.done = self.right = 0

    def step(self) -> None:
        claim, evidence, target = self.args
        curve = synthetic_curve(
            target.curve, self.alpha, self.rng, noise=self.noise, n_seeds=self.n_seeds, depths=self.depths
        )
        self.right += _verdict(claim, evidence, target, curve) == self.correct
        self.done += 1

    def reaches(self, power: float, replicates: int) -> bool:
        """Whether the rate of right verdicts over ``replicates`` reaches ``power``, stopping as soon as
        the remaining replicates cannot change the answer (the answer of the full count)."""
        need = math.ceil(power * replicates - 1e-9)
        while self.done < replicates:
            if self.right >= need:
                return True
            if self.right + (replicates - self.done) < need:
                return False
            self.step()
        return self.right >= need

    def rate(self, replicates: int) -> float:
        while self.done < replicates:
            self.step()
        return self.right / replicates


def _extra_runs(curve: Curve, depths: tuple[int, ...], n_seeds: int) -> list[tuple[int, Any]]:
    """The (depth, seed) runs missing for ``n_seeds`` seeds (the curve's own first, then new ones)."""
    seeds = list(curve.seeds)
    fresh = max([s for s in seeds if isinstance(s, int)], default=-1) + 1
    while len(seeds) < n_seeds:
        seeds.append(fresh)
        fresh += 1
    have = (
        {(int(L), s) for (L, s) in curve.runs}
        if curve.runs
        else {
            (int(L), s)
            for i, s in enumerate(curve.seeds)
            for j, L in enumerate(curve.depths)
            if np.isfinite(curve.loss[i, j])
        }
    )
    return [(L, s) for L in depths for s in seeds[:n_seeds] if (L, s) not in have]


def _core_hours(curve: Curve, extra: list, records: list) -> float | None:
    """Core-hours of the ``extra`` (depth, seed) runs of ``curve``'s condition by the cost model, with
    the rates of ``records``; None when the curve has no run to take the configuration from."""
    from ...sims.budget import job_seconds, rates
    from ...sims.config import RunConfig

    if not curve.runs:
        return None
    try:
        base = RunConfig.from_dict(next(iter(curve.runs.values()))["config"])
    except (ValueError, TypeError, KeyError):  # a newer version's run: no configuration of this one
        return None
    configs = [replace(base, model=replace(base.model, depth=int(L))) for L, _ in extra]
    return job_seconds(configs, rates(records)) / 3600.0


def plan(
    claim: Claim,
    evidence: Evidence,
    condition: str,
    alternatives: Iterable[float] = DEFAULT_ALTERNATIVES,
    power: float = 0.8,
    seeds_max: int = 64,
    depth_sets: Iterable[Sequence[int]] | None = None,
    replicates: int = 100,
    seed: int = 0,
    records: Iterable[dict] | None = None,
) -> tuple[SeedPlan, ...]:
    """The fewest seeds, per alternative exponent and depth list, at which ``claim``'s row on
    ``condition`` is decided right with probability at least ``power``, and what the missing runs cost.

    The right verdict is ``pass`` when the alternative lies in the claim's band (the row's
    ``expected``, a ``(lo, hi)`` tuple) and ``fail`` otherwise: a claim whose pass means "alpha in
    its band". The rates come from synthetic curves as in :func:`calibrate` (the measured ``R_1``,
    gain, seed offsets and pure error), now with ``n`` seeds at the given depths. The seed counts
    of :data:`SEED_COUNTS` up to ``seeds_max`` (and ``seeds_max`` itself) are tried in order once
    ``seeds_max`` reaches ``power`` (the rate rises with the seeds; when ``seeds_max`` does not reach
    it, ``seeds`` is None); each count's replicates stop once the rest cannot change whether it
    reaches ``power``, which gives the answer of the full count, so the answer only grows with
    ``power``. The missing runs (the curve's own seeds first, then new ones, at every depth of the
    list) are configurations of the curve's runs with the depth changed (a seed is no part of a
    configuration); their core-hours are :func:`~depthscale.sims.budget.job_seconds` with the rates
    of ``records`` (default: the runs of the evidence's curves).

    Parameters
    ----------
    claim, evidence, condition
        As in :func:`calibrate`.
    alternatives : iterable of float
        True exponents (> 0) the rule must tell apart.
    power : float
        The probability of the right verdict asked for, in (0, 1).
    seeds_max : int
        The most seeds considered, 3 to 4096.
    depth_sets : iterable of lists of int, optional
        Depth lists to try (default: :func:`default_depth_sets` of the curve's depths).
    replicates : int
        Synthetic curves per (alternative, depths, seeds), 10 to 100,000.
    seed : int
        Seed of the synthetic draws.
    records : iterable of dict, optional
        Run records whose timings give the cost model's rates (a store's).

    Returns
    -------
    tuple of SeedPlan
        One per (alternative, depth list), alternatives first.

    Examples
    --------
    >>> from depthscale.derivations.claims.claim import claim
    >>> @claim("demo-steep", tolerance="none", expected=(0.9, 1.1), family="demo")
    ... def steep(c, ev):
    ...     '''The loss halves from the first depth to the second'''
    ...     x = ev.curves[0]
    ...     return [c.decided(x.label, bool(x.mean[1] < 0.6 * x.mean[0]), [], "", (0.9, 1.1), None, None)]
    >>> R = [[1.0, 0.5, 0.25], [1.0, 0.5, 0.25]]
    >>> ev = Evidence([Curve.from_arrays([1, 2, 4], R, label="mine")])
    >>> (p,) = plan(steep, ev, "mine", alternatives=[1.0], seeds_max=4, depth_sets=[[1, 2, 4]], replicates=10)
    >>> p.correct, p.seeds, p.achieved, p.extra_runs, p.core_hours
    ('pass', 3, 1.0, 3, None)
    """
    alternatives = _check_alphas("alternatives", alternatives)
    power = check_real("power", power, lo=0, hi=1, lo_open=True, hi_open=True)
    seeds_max = check_int("seeds_max", seeds_max, lo=3, hi=4096)
    replicates = _check_replicates(replicates)
    seed = check_int("seed", seed, lo=0)
    target = _target(claim, evidence, condition)
    lo, hi = _band(target.row, condition)
    noise = noise_model(target.curve)
    sets = default_depth_sets(noise.depths) if depth_sets is None else _check_depth_sets(depth_sets)
    timed: list = [r for c in evidence.curves for r in c.runs.values()] if records is None else list(records)
    counts = sorted({n for n in SEED_COUNTS if n <= seeds_max} | {seeds_max})
    out = []
    for alpha in alternatives:
        correct = "pass" if lo <= alpha <= hi else "fail"
        for depths in sets:

            def counter(n: int, alpha=alpha, depths=depths, correct=correct) -> _Counter:
                return _Counter(claim, evidence, target, noise, alpha, n, depths, correct, seed)

            top = counter(counts[-1])
            found = None
            if top.reaches(power, replicates):
                for n in counts:
                    cell = top if n == counts[-1] else counter(n)
                    if cell.reaches(power, replicates):
                        found = cell
                        break
            at = found or top
            rate = at.rate(replicates)
            extra = _extra_runs(target.curve, depths, found.n_seeds) if found else None
            hours = _core_hours(target.curve, extra, timed) if extra is not None else None
            out.append(
                SeedPlan(
                    alpha,
                    correct,
                    depths,
                    power,
                    found.n_seeds if found else None,
                    rate,
                    binomial_se(rate, replicates),
                    replicates,
                    None if extra is None else len(extra),
                    hours,
                )
            )
    return tuple(out)


def _check_depth_sets(depth_sets) -> tuple[tuple[int, ...], ...]:
    if isinstance(depth_sets, (str, bytes)) or not isinstance(depth_sets, Iterable):
        bad_argument("depth_sets", depth_sets, "lists of depths (increasing, distinct integers >= 1)")
    out = []
    for d in depth_sets:
        if isinstance(d, (str, bytes)) or not isinstance(d, Iterable):
            bad_argument("depth_sets", d, "a list of depths (increasing, distinct integers >= 1)")
        L = tuple(check_int("depth_sets", x, lo=1) for x in d)
        if len(L) < 2 or any(b <= a for a, b in zip(L, L[1:])):
            bad_argument("depth_sets", list(L), "a list of at least 2 increasing, distinct depths")
        out.append(L)
    if not out:
        bad_argument("depth_sets", depth_sets, "at least one list of depths")
    return tuple(out)


__all__ = [
    "DEFAULT_ALPHAS",
    "DEFAULT_ALTERNATIVES",
    "SEED_COUNTS",
    "CalibrationRates",
    "NoiseModel",
    "SeedPlan",
    "SyntheticCurve",
    "backing_curve",
    "binomial_se",
    "calibrate",
    "default_depth_sets",
    "noise_model",
    "plan",
    "synthetic_curve",
]

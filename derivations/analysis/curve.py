"""The analysis model: run records grouped into curves over depth, each owning its fits.

A *curve* is one experimental condition measured at several depths and seeds: every ``ok`` run
that shares its whole configuration except the depth (model and variant, task and spectrum, d and
P, width, initialisation, dtype and the training protocol). :func:`curve_key` is the one definition
of that grouping; claims, figures, ``depthscale fit`` and the report all use it through
:func:`curves`. Whether every run converged is kept so claims can refuse to be decided by
unconverged runs.

Examples
--------
>>> def rec(L, seed):  # 0.5 + 0.4 / L, with a 0.2 % wiggle over depth
...     return {"status": "ok", "seed": seed, "converged": True,
...             "final_loss": (0.5 + 0.4 / L) * (1 + 0.002 * (-1) ** L + 0.001 * seed),
...             "config": {"task": {"task": "topk", "k": 2, "a": 0.0, "b": 0.0, "d": 8, "P": 32},
...                        "model": {"model": "softmax", "depth": L}, "train": {"steps": 10}}}
>>> (c,) = curves([rec(L, s) for L in (1, 2, 4, 8, 16) for s in (0, 1)])
>>> c.label, c.depths.tolist(), len(c.seeds)
('softmax top-2 (a,b)=(0,0) d=8 P=32', [1, 2, 4, 8, 16], 2)
>>> f = c.fit("offset", n_boot=0)
>>> f.identified, round(f.params["alpha"], 1)
(True, 1.0)
"""

from __future__ import annotations

import importlib
import math
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from ...sims.config import without_later_defaults
from ...sims.engines import ENGINES
from ...sims.records import unknown_config_fields
from ...sims.task_registry import task_name
from ...theory._choices import EASY_TASKS, FLOOR_NAMES
from ...theory._validate import DEPTH_MAX, SEED_MAX, bad_argument, check_choice, check_int, check_real
from ...theory.spectra import PowerLawSpectrum
from . import fits as _fits
from .bootstrap import MIN_BOOT_SEEDS, bootstrap_over_seeds, refusal
from .display import window_text
from .estimate import Estimate

if TYPE_CHECKING:
    from ...sims.records import RunRecord

POINTS = ("auto", "mean", "seeds")  # what a curve's fit is made to (Curve.fit)
DEFAULT_ENGINE = ENGINES[0]  # numba: a run's variant names no engine when this one computed it


# the laws a curve is fitted with (fits.LAWS: formula, fitter, fewest depths, kind), by name
FIT_KINDS = {name: _fits.LAWS[name] for name in ("offset", "power")}


def variant_name(model_cfg: dict, engine: bool = True) -> str:
    """Short name of a model variant: ``"base"`` for the paper's model, else e.g. ``"tied"``.

    The engine of a run other than numba is the name's last part (``"jax"``, ``"sparsemax+jax"``):
    it separates curves. ``engine=False`` leaves it out: the variant a claim selects on, the same for
    the model whichever engine computed it (:func:`split_engine`).

    >>> variant_name({"attention": "sparsemax", "engine": "jax"}), variant_name({"engine": "jax"}, engine=False)
    ('sparsemax+jax', 'base')
    """
    parts = []
    if model_cfg.get("qk", "factorised") != "factorised":
        parts.append(model_cfg["qk"])
    if model_cfg.get("value", "shared") != "shared":
        parts.append("per-layer-value")
    if model_cfg.get("stream", "two") != "two":
        parts.append("single-stream")
    if model_cfg.get("context_update"):
        parts.append("context-update")
    if model_cfg.get("init", "scaled") != "scaled":
        parts.append(f"{model_cfg['init']}-init")
    if model_cfg.get("ensemble"):
        parts.append("ensemble")
    if model_cfg.get("attention", "softmax") != "softmax":
        parts.append(model_cfg["attention"])
    if engine and model_cfg.get("engine", "numba") != "numba":  # runs of another engine are their own condition
        parts.append(model_cfg["engine"])
    return "+".join(parts) or "base"


def split_engine(variant: str) -> tuple[str, str]:
    """``(variant without the engine, engine)`` of a curve's variant name (:func:`variant_name`).

    The engine is the last part when it is an engine other than numba (a user's map named like an
    engine still comes before it: ``"jax+jax"`` is the map ``jax`` on the JAX engine).

    >>> split_engine("base"), split_engine("jax"), split_engine("tied+sparsemax+jax")
    (('base', 'numba'), ('base', 'jax'), ('tied+sparsemax', 'jax'))
    """
    parts = variant.split("+")
    if len(parts) and parts[-1] in ENGINES and parts[-1] != DEFAULT_ENGINE:
        return "+".join(parts[:-1]) or "base", parts[-1]
    return variant, DEFAULT_ENGINE


class CurveKey(NamedTuple):
    """The condition of a curve: a run's whole configuration except depth and seed (:func:`curve_key`).

    Examples
    --------
    >>> key = CurveKey("softmax", "base", "topk", 2, 0.0, 0.0, 8, 32, None, None, None, None, None, ())
    >>> key.task, key.k, key[:3]
    ('topk', 2, ('softmax', 'base', 'topk'))
    """

    model: str
    variant: str
    task: str
    k: int  # 0 on the easy tasks (which ignore it); a task this version does not know keeps its k
    a: float
    b: float
    d: int
    P: int
    c_lambda: float | None
    c_omega: float | None
    width: int | None
    init_scale: float | None
    dtype: str | None
    train: tuple  # the training settings as sorted (name, value) pairs
    # the task and model fields (and config sections) this version does not know, as sorted
    # ("section.field", value) pairs: a newer version's runs with a new setting are another condition
    unknown: tuple = ()


def _hashable(value):
    """A stored value as a part of a key: a list or object (a newer version's setting) as its JSON text."""
    if isinstance(value, (dict, list)):
        import json

        return json.dumps(value, sort_keys=True)
    return value


def curve_key(record: RunRecord) -> CurveKey:
    """The condition a run belongs to: its whole configuration except depth (and seed).

    A :class:`CurveKey`: ``model, variant, task, k, a, b, d, P`` (``k = 0`` for the easy tasks, which
    ignore it; a task this version does not know, a newer version's, may use it: its k is kept), then
    ``c_lambda, c_omega, width, init_scale, dtype``, the training settings, and any task or model
    field this version does not know (so runs with it are never pooled with runs without it). A
    setting absent from a record is ``None``.
    """
    c = record["config"]
    t, m, tr = c["task"], c["model"], c.get("train") or {}
    task = t["task"]
    unknown = {k: v for k, v in unknown_config_fields(c).items() if not k.startswith("train.")}  # train: in train
    return CurveKey(
        m["model"],
        variant_name(m),
        task,
        0 if task in EASY_TASKS else int(t.get("k", 0)),
        float(t["a"]),
        float(t["b"]),
        int(t["d"]),
        int(t["P"]),
        t.get("c_lambda"),
        t.get("c_omega"),
        m.get("width"),
        m.get("init_scale"),
        m.get("dtype"),
        tuple(sorted((k, _hashable(v)) for k, v in without_later_defaults(tr).items())),  # as the run's hash
        tuple(sorted((k, _hashable(v)) for k, v in unknown.items())),
    )


@dataclass(frozen=True)
class FloorComparison:
    """The deepest model against one reference floor, averaged over the seeds at that depth.

    ``diff`` is the mean paired difference ``R_L - floor`` (same evaluation contexts per run)
    as an :class:`~.estimate.Estimate` (:func:`pool_paired`: the evaluation errors, or the seeds'
    scatter when larger, on ``n - 1`` degrees of freedom); ``loss_se`` combines the runs'
    independent evaluation errors (:func:`pool_independent`).
    """

    name: str
    depth: int
    loss: float
    loss_se: float
    diff: Estimate
    n_runs: int


@dataclass(repr=False)
class Curve:
    """One condition over depth: losses of every seed at every depth, and the fits made to them.

    Attributes
    ----------
    key : tuple
        :func:`curve_key` of its runs.
    label : str
        Human-readable condition.
    depths : numpy.ndarray
        Sorted unique depths.
    seeds : list
        Sorted seeds.
    loss : numpy.ndarray
        ``(n_seeds, n_depths)`` final losses, ``nan`` where a run is missing.
    runs : dict
        ``(depth, seed) -> record``.
    all_converged, n_unconverged
        Whether every run converged, and how many did not.
    contexts : int or None
        The evaluation contexts behind each loss when there are no run records to read them from
        (a curve from arrays, :meth:`from_arrays`); None: read from the runs.
    """

    key: CurveKey
    label: str
    depths: np.ndarray
    seeds: list
    loss: np.ndarray
    runs: dict[tuple[int, int], RunRecord] = field(default_factory=dict)
    all_converged: bool = True
    n_unconverged: int = 0
    _fit_cache: dict = field(default_factory=dict, repr=False)
    contexts: int | None = None

    @classmethod
    def from_arrays(cls, depths, loss, *, label: str = "arrays", contexts: int | None = None) -> Curve:
        """A curve from numbers alone: ``depths`` (increasing, distinct, >= 1) and ``loss``, one row per
        seed (``(n_seeds, n_depths)``; a 1-d array is one seed; ``nan`` where a run is missing).

        Such a curve has no run records: its runs count as converged, and ``contexts`` says how many
        evaluation contexts each loss was measured on (None: taken as exact, enough to decide).

        >>> c = Curve.from_arrays([1, 2, 4], [[1.0, 0.5, 0.25], [1.1, 0.5, 0.26]], label="mine")
        >>> c.label, c.depths.tolist(), len(c.seeds), round(float(c.mean[0]), 3)
        ('mine', [1, 2, 4], 2, 1.05)
        """
        try:
            L = np.asarray(depths, dtype=float)
            R = np.atleast_2d(np.asarray(loss, dtype=float))
        except (TypeError, ValueError):
            bad_argument("depths, loss", f"{depths!r}, {loss!r}", "arrays of numbers")
        if L.ndim != 1 or L.size == 0 or not np.all(np.isfinite(L)) or np.any(L < 1) or np.any(L != np.round(L)):
            bad_argument("depths", L.tolist() if L.size < 10 else f"array of shape {L.shape}", "integers >= 1, 1-d")
        if np.any(np.diff(L) <= 0):
            bad_argument("depths", L.tolist() if L.size < 10 else f"array of shape {L.shape}", "increasing, distinct")
        if R.ndim != 2 or R.shape[1] != L.size:
            bad_argument(
                "loss", f"array of shape {np.shape(loss)}", f"one row per seed of {L.size} losses (one per depth)"
            )
        if contexts is not None:
            contexts = check_int("contexts", contexts, lo=1)
        key = CurveKey("arrays", "base", "arrays", 0, math.nan, math.nan, 0, 0, None, None, None, None, None, ())
        return cls(key, str(label), L.astype(int), list(range(R.shape[0])), R.copy(), {}, True, 0, contexts=contexts)

    # ---- the condition
    model = property(lambda self: self.key.model)
    variant = property(lambda self: self.key.variant)
    task = property(lambda self: self.key.task)
    k = property(lambda self: self.key.k)
    a = property(lambda self: self.key.a)
    b = property(lambda self: self.key.b)
    d = property(lambda self: self.key.d)
    P = property(lambda self: self.key.P)

    @property
    def engine(self) -> str:
        """The engine that computed the curve's runs (``"numba"`` or ``"jax"``; part of its condition).

        >>> Curve.from_arrays([1, 2], [1.0, 0.5]).engine
        'numba'
        """
        return split_engine(self.variant)[1]

    @property
    def claim_variant(self) -> str:
        """The variant without the engine: what claims select on (a softmax curve of the JAX engine is
        ``"base"``, as the numba engine's; a user's map on the JAX engine is the map's name).

        >>> Curve.from_arrays([1, 2], [1.0, 0.5]).claim_variant
        'base'
        """
        return split_engine(self.variant)[0]

    @property
    def easy(self) -> bool:
        """True on the easy tasks (the linear law is a pure power law there)."""
        return self.task in EASY_TASKS

    @property
    def spectrum(self) -> PowerLawSpectrum:
        """The task's power-law spectrum (zeta and whether the asymptotic laws apply)."""
        c_lambda, c_omega = self.key.c_lambda, self.key.c_omega
        return PowerLawSpectrum(
            self.a, self.b, self.d, 1.0 if c_lambda is None else c_lambda, 1.0 if c_omega is None else c_omega
        )

    @property
    def eval_contexts(self) -> float:
        """Fewest evaluation contexts among the runs (a curve from arrays: its ``contexts``, or
        ``inf`` when its losses are taken as exact; a curve without runs: 0)."""
        if not self.runs:
            if self.contexts is not None:
                return self.contexts
            return math.inf if self.key.model == "arrays" else 0
        return min(int(r["config"]["train"]["eval_contexts"]) for r in self.runs.values())

    # ---- losses
    @property
    def mean(self) -> np.ndarray:
        """Seed-mean loss at each depth."""
        with np.errstate(all="ignore"):
            return np.nanmean(self.loss, axis=0)

    @property
    def se(self) -> np.ndarray:
        """Standard error over seeds at each depth (``nan`` with one seed)."""
        n = np.sum(np.isfinite(self.loss), axis=0)
        if self.loss.shape[0] < 2:
            return np.full(self.loss.shape[1], np.nan)
        with np.errstate(all="ignore"):
            sd = np.nanstd(self.loss, axis=0, ddof=1)
        return sd / np.sqrt(np.maximum(n, 1))

    def estimate(self, j: int) -> Estimate:
        """The seed-mean loss at the ``j``-th depth as an :class:`~.estimate.Estimate`: the seeds'
        scatter on ``n - 1`` degrees of freedom (the error a claim on this loss decides with)."""
        return Estimate.from_seeds(self.loss[:, j])

    @property
    def error_bar(self) -> np.ndarray:
        """One standard error for plotting: over seeds, or with one seed the run's own evaluation s.e."""
        se = self.se
        for j, L in enumerate(self.depths):
            if not np.isfinite(se[j]):
                own = [r.get("final_loss_se") for r in self.records_at(int(L))]
                own = [float(v) for v in own if v is not None and math.isfinite(v)]
                se[j] = own[0] if len(own) == 1 else np.nan
        return se

    def field_mean(self, name: str) -> np.ndarray:
        """Seed-average of a scalar record field at each depth (``nan`` where no run has a finite value)."""
        if not isinstance(name, str):  # a field no run has is all nan, as C_L of one-layer runs
            raise TypeError(f"name={name!r}: must be the name of a scalar field of the runs (a str)")
        out = np.full(len(self.depths), np.nan)
        for j, L in enumerate(self.depths):
            vals: list[Any] = [r.get(name) for r in self.records_at(int(L))]  # a field named at run time
            vals = [v for v in vals if v is not None and np.isfinite(v)]
            if vals:
                out[j] = float(np.mean(vals))
        return out

    def records_at(self, depth: int) -> list[RunRecord]:
        """The runs at one depth, by seed."""
        depth = check_int("depth", depth, lo=1, hi=DEPTH_MAX)
        return [r for (d, _), r in sorted(self.runs.items()) if d == depth]

    # ---- fits
    def window(self, L_min: float | None = None, L_max: float | None = None) -> Curve:
        """The curve restricted to the depths ``L_min <= L <= L_max`` (None: no bound at that end).

        A new :class:`Curve` of the same condition (key and label) holding only those depths' runs; its
        convergence counts are those of the runs kept. It may hold no depth at all (a window below the
        shallowest depth): its fits then say so.

        >>> def rec(L, s):
        ...     return {"status": "ok", "seed": s, "converged": True, "final_loss": 1.0 / L,
        ...             "config": {"task": {"task": "topk", "k": 2, "a": 0.0, "b": 0.0, "d": 8, "P": 32},
        ...                        "model": {"model": "softmax", "depth": L}, "train": {"steps": 10}}}
        >>> (c,) = curves([rec(L, s) for L in (1, 2, 4, 8) for s in (0, 1)])
        >>> c.window(L_max=4).depths.tolist(), c.window(2, 2.5).depths.tolist(), c.window(L_max=0.5).depths.tolist()
        ([1, 2, 4], [2], [])
        """
        lo, hi = window_bounds(L_min, L_max)
        keep = (self.depths >= lo) & (self.depths <= hi)
        runs = {k: r for k, r in self.runs.items() if lo <= k[0] <= hi}
        n_unconv = sum(not r.get("converged", False) for r in runs.values())
        return Curve(
            self.key,
            self.label,
            self.depths[keep],
            list(self.seeds),
            self.loss[:, keep],
            runs,
            n_unconv == 0,
            n_unconv,
            contexts=self.contexts,
        )

    def fit(
        self,
        kind: str = "offset",
        n_boot: int = 200,
        seed: int = 0,
        points: str = "auto",
        *,
        L_min: float | None = None,
        L_max: float | None = None,
    ) -> _fits.FitResult:
        """The fit of the losses over depth, with bootstrap intervals over seeds when there are three or more.

        Parameters
        ----------
        kind : {"offset", "power"}
            ``"offset"``: ``L0 + c L^-alpha`` (with the alpha = 1 comparison); ``"power"``: ``c L^-alpha``.
        n_boot : int
            Bootstrap replicates over seeds (0: none).
        seed : int
            Seed of the bootstrap resampling.
        points : {"auto", "mean", "seeds"}
            ``"mean"``: the seed-mean loss at each depth; ``"seeds"``: every run's loss (repeated
            depths count as degrees of freedom: 3 depths x 3 seeds are 9 points); ``"auto"``: the
            means when enough depths leave a degree of freedom (4 offset, 3 power), else the seeds.
        L_min, L_max : float, optional
            The depth window: only depths ``L_min <= L <= L_max`` are fitted (:meth:`window`), e.g.
            to leave out a tail that bends away from the law. None: no bound at that end.

        Returns
        -------
        FitResult
            Always a result: when no fit can be made it is :meth:`FitResult.missing` with the reason
            (naming the window when there is one). Its ``depths`` are the depths fitted and its
            ``window`` the window asked for. With ``n_boot > 0`` it has a bootstrap, or
            ``bootstrap_refused`` says why not (fewer than 3 seeds with every depth, a fit that is not
            identified, a fit to seed-level points). Cached per ``(kind, n_boot, seed, points, window)``.
        """
        if not isinstance(kind, str):  # a list is unhashable: the lookup below would raise its own error
            raise TypeError(f"kind={kind!r}: must be a str, one of {', '.join(FIT_KINDS)}")
        if kind not in FIT_KINDS:
            check_choice("kind", kind, tuple(FIT_KINDS))
        n_boot = check_int("n_boot", n_boot, lo=0, hi=1_000_000)  # the command line's cap
        if points not in POINTS:
            check_choice("points", points, POINTS)
        seed = check_int("seed", seed, lo=0, hi=SEED_MAX)
        bounds = window_bounds(L_min, L_max)
        key = (kind, int(n_boot), int(seed), points, bounds)
        if key not in self._fit_cache:
            if bounds == (-math.inf, math.inf):
                self._fit_cache[key] = self._make_fit(kind, int(n_boot), int(seed), points)
            else:
                inner = self.window(*bounds)._make_fit(kind, int(n_boot), int(seed), points)
                text = window_text(*bounds)
                changes: dict[str, Any] = {"window": bounds}
                if inner.failure:
                    changes["failure"] = f"{inner.failure} in the window {text}"
                self._fit_cache[key] = replace(inner, **changes)
        return self._fit_cache[key]

    def default_fit(self, n_boot: int = 200, seed: int = 0) -> _fits.FitResult:
        """The law the claims test: a pure power law for linear attention on the easy task, else with a floor."""
        return self.fit(self.default_kind, n_boot, seed)

    @property
    def default_kind(self) -> str:
        """``"power"`` for linear attention on the easy task, ``"offset"`` otherwise."""
        return "power" if self.model == "linear" and self.easy else "offset"

    def _make_fit(self, kind: str, n_boot: int, seed: int, points: str = "mean") -> _fits.FitResult:
        law = FIT_KINDS[kind]
        name, need = law.kind, law.fewest_depths
        mean = self.mean
        ok = np.isfinite(mean) & (mean > 0)
        extra: dict[str, Any] = {}
        if points == "seeds" or (points == "auto" and ok.sum() < need and self.loss.shape[0] > 1):
            # one point per (seed, depth), repeated depths included: the seeds' scatter is the error
            n_params = 3 if kind == "offset" else 2
            seed_idx, depth_idx = np.nonzero(np.isfinite(self.loss) & (self.loss > 0))
            L, R = self.depths[depth_idx].astype(float), self.loss[seed_idx, depth_idx]
            n_depths = len(set(depth_idx.tolist()))
            fitted = np.any(np.isfinite(self.loss) & (self.loss > 0), axis=0)
            depths = tuple(int(x) for x in self.depths[fitted])
            if n_depths < n_params or L.size <= n_params:
                why = (
                    f"{L.size} seed-level point(s) at {n_depths} depth(s): the law needs {n_params} depths "
                    f"and more than {n_params} points"
                )
                return replace(_fits.FitResult.missing(name, why, int(L.size)), depths=depths)
            try:
                res = law.fit(L, R)
            except (ValueError, RuntimeError, np.linalg.LinAlgError) as exc:
                return replace(_fits.FitResult.missing(name, f"fit failed: {exc}", int(L.size)), depths=depths)
            extra["depths"] = depths
            if n_boot > 0:
                extra["bootstrap_refused"] = (
                    "no bootstrap: a fit to seed-level points (its errors use the seeds' scatter)"
                )
            n_boot = 0  # refused above
        elif ok.sum() < need:
            return _fits.FitResult.missing(
                name, f"{int(ok.sum())} depth(s) with a positive loss < {need}", int(ok.sum())
            )
        else:
            L, R = self.depths[ok].astype(float), mean[ok]
            extra["depths"] = tuple(int(x) for x in L)
            try:
                res = law.fit(L, R)
            except (ValueError, RuntimeError, np.linalg.LinAlgError) as exc:
                return _fits.FitResult.missing(name, f"fit failed: {exc}", int(L.size))
        if kind == "offset":
            try:
                extra["delta_aic_alpha_one"] = _fits.compare_alpha_one(L, R).delta_aic
            except (ValueError, RuntimeError, np.linalg.LinAlgError):
                pass
        if n_boot > 0:  # asked for: a bootstrap, or the reason there is none
            full = self.loss[:, ok]
            rows = full[np.all(np.isfinite(full), axis=1)]
            if not res.identified:
                extra["bootstrap_refused"] = "no bootstrap: the fit is not identified"
            elif rows.shape[0] < MIN_BOOT_SEEDS:
                extra["bootstrap_refused"] = f"no bootstrap: {refusal(rows.shape[0]).split(': ', 1)[1]}"
            else:
                try:
                    extra["bootstrap"] = bootstrap_over_seeds(
                        L, rows, law.fit, n_boot=n_boot, rng=np.random.default_rng(seed)
                    )
                except (ValueError, RuntimeError, np.linalg.LinAlgError) as exc:
                    extra["bootstrap_refused"] = f"no bootstrap: {exc}"  # the Jacobian errors stand alone
        return replace(res, **extra)

    def fit_report(
        self, kind: str | None = None, points: str = "auto", *, L_min: float | None = None, L_max: float | None = None
    ) -> str:
        """The losses by depth and the lmfit-style :meth:`FitResult.fit_report` of a fit (no bootstrap).

        Parameters
        ----------
        kind : {"offset", "power"}, optional
            The law (default: :attr:`default_kind`, the law the claims test).
        points : {"auto", "mean", "seeds"}
            As in :meth:`fit`.
        L_min, L_max : float, optional
            The depth window, as in :meth:`fit`.
        """
        from .display import curve_report

        return curve_report(self, kind, points, L_min=L_min, L_max=L_max)  # checked by fit

    def __repr__(self) -> str:
        from .display import curve_repr  # noqa: I001  (display code apart from the numbers)

        return curve_repr(self)

    # ---- tables
    def to_frame(self):
        """The runs as a pandas DataFrame indexed by ``(depth, seed)``, sorted: ``final_loss``,
        ``final_loss_se``, ``converged``, ``steps`` (:func:`curve_frame`; needs pandas)."""
        return curve_frame(self)

    def to_xarray(self):
        """The losses as an ``xarray.DataArray`` ``final_loss`` over ``depth`` x ``seed`` (``nan``: no
        run), the condition in ``attrs``. Needs xarray (``pip install "depthscale[xarray]"``)."""
        return curve_xarray(self)

    def _repr_html_(self) -> str:
        from .display import curve_html

        return curve_html(self)

    # ---- reference floors
    def floor(self, name: str, depth: int | None = None) -> FloorComparison | None:
        """The model at ``depth`` (default: the deepest) against the reference floor ``name`` (one of
        ``FLOOR_NAMES``), or None when its runs stored no such floor."""
        if name not in FLOOR_NAMES:
            check_choice("name", name, FLOOR_NAMES)
        L = int(self.depths[-1]) if depth is None else check_int("depth", depth, lo=1, hi=DEPTH_MAX)
        recs = [r for r in self.records_at(L) if name in (r.get("floors") or {}) and _own_floor(r, r["floors"][name])]
        if not recs:
            return None
        b = [r["floors"][name] for r in recs]
        n = len(b)
        return FloorComparison(
            name,
            L,
            *pool_independent([(x["loss"], x["se"]) for x in b]),
            pool_paired([(x["diff"], x["diff_se"]) for x in b]),
            n,
        )


def _own_floor(rec, floor) -> bool:
    """Whether a stored floor has the run's own attention map (older records name none: their
    floors are softmax heads', whatever the run's map, and do not compare with a sparsemax run)."""
    attention = ((rec.get("config") or {}).get("model") or {}).get("attention", "softmax")
    return floor.get("attention", "softmax") == attention


def pool_paired(pairs) -> Estimate:
    """Mean over seeds of per-seed paired differences ``(value, evaluation se)`` as an
    :class:`~.estimate.Estimate`, with the larger of two standard errors: the evaluation errors
    combined, ``sqrt(sum se^2) / n``, and the seeds' scatter ``sd / sqrt(n)``, which also holds the
    training noise. Models of one depth can end on different plateaus, so the evaluation error alone
    can understate the error of the mean many times over; with few seeds the scatter is itself
    uncertain, so the evaluation error stays a floor under it. Either way the error counts the
    training noise only through the scatter of ``n`` seeds: ``n - 1`` degrees of freedom. One seed
    has no scatter, so no error of the mean at all (its evaluation error leaves the training noise
    out): its estimate carries no error, zero degrees of freedom, and decides nothing.

    >>> e = pool_paired([(2.0, 0.01), (6.0, 0.01)])
    >>> e.value, e.se, e.dof, e.basis
    (4.0, 2.0, 1.0, 'seeds')
    >>> one = pool_paired([(2.0, 0.01)])
    >>> one.value, one.dof, one.test
    (2.0, 0.0, 'one seed: no error estimate')
    """
    mean, se = pool_independent(pairs)
    n = len(pairs)
    if n >= 2:
        se = max(se, float(np.std([p[0] for p in pairs], ddof=1)) / math.sqrt(n))
        return Estimate(mean, se, n - 1, "seeds", n)
    return Estimate(mean, math.nan, 0, "seeds", n)


def pool_independent(pairs) -> tuple[float, float]:
    """Mean of independent estimates ``(value, se)`` and its standard error ``sqrt(sum se^2) / n``."""
    m = np.array([p[0] for p in pairs], dtype=float)
    s = np.array([p[1] for p in pairs], dtype=float)
    return float(m.mean()), float(math.sqrt(np.sum(s**2)) / len(s))


def window_bounds(L_min=None, L_max=None) -> tuple[float, float]:
    """``(lo, hi)`` of a depth window from its ends (None, or ``-inf`` / ``inf``: unbounded), checked.

    >>> window_bounds(), window_bounds(2, 16)
    ((-inf, inf), (2.0, 16.0))
    >>> window_bounds(8, 4)
    Traceback (most recent call last):
    ...
    ValueError: L_min=8: must be <= L_max (4)
    """
    open_lo = L_min is None or (isinstance(L_min, float) and L_min == -math.inf)  # a window's own open end
    open_hi = L_max is None or (isinstance(L_max, float) and L_max == math.inf)
    lo = -math.inf if open_lo else check_real("L_min", L_min, lo=0, lo_open=True)
    hi = math.inf if open_hi else check_real("L_max", L_max, lo=0, lo_open=True)
    if lo > hi:
        bad_argument("L_min", L_min, f"<= L_max ({L_max})")
    return (float(lo), float(hi))


def curve_label(key: tuple) -> str:
    """``softmax[tied] top-2 (a,b)=(0.5,0.5) d=16 P=128``-style name of a condition."""
    model, variant, task, k, a, b, d, P = key[:8]
    # a task this version does not know keeps its k in the key (it may use it): the label names it too
    tname = task_name(task, k) if task == "topk" or task in EASY_TASKS else f"{task} k={k}"
    return f"{model}{'' if variant == 'base' else '[' + variant + ']'} {tname} (a,b)=({a:g},{b:g}) d={d} P={P}"


def curves(records: Iterable[RunRecord]) -> list[Curve]:
    """Group the ``ok`` records into curves over depth (one row of ``loss`` per seed).

    ``records``: run records (dicts, as ``run()`` and ``Store.records()`` give them); anything else is
    a ``TypeError``, a record without its configuration a ``ValueError`` naming it."""
    if records is None or isinstance(records, (str, bytes, dict)) or not isinstance(records, Iterable):
        raise TypeError(
            f"records={records!r}: must be an iterable of run records (dicts), e.g. Store.records() or a list of run() results"
        )
    groups = defaultdict(list)
    for i, r in enumerate(records):
        if not isinstance(r, dict):
            raise TypeError(f"records[{i}]={r!r}: must be a run record (a dict), not {type(r).__name__}")
        if r.get("status", "ok") == "ok":
            cfg = r.get("config")
            if not (isinstance(cfg, dict) and isinstance(cfg.get("model"), dict) and "depth" in cfg["model"]):
                raise ValueError(f"records[{i}]: a run record needs config.model.depth (config=RunConfig.to_dict())")
            try:
                key = curve_key(r)
            except (KeyError, TypeError, AttributeError) as exc:
                raise ValueError(f"records[{i}]: not a complete run record (config field {exc} missing)") from None
            groups[key].append(r)
    out = []
    twice: list[str] = []  # (curve, depth, seed) cells that two runs claim
    for key, recs in sorted(groups.items(), key=lambda kv: str(kv[0])):
        depths = np.array(sorted({int(r["config"]["model"]["depth"]) for r in recs}))
        seeds = sorted({r.get("seed", 0) for r in recs})
        loss = np.full((len(seeds), len(depths)), np.nan)
        runs: dict = {}
        n_unconv = 0
        for r in recs:
            i, j = seeds.index(r.get("seed", 0)), int(np.searchsorted(depths, int(r["config"]["model"]["depth"])))
            cell = (int(depths[j]), r.get("seed", 0))
            if cell in runs:
                if runs[cell].get("key") is not None and runs[cell].get("key") == r.get("key"):
                    continue  # one run read twice (two stores that both hold it): the same run
                twice.append(
                    f"{curve_label(key)!r} depth {cell[0]} seed {cell[1]} (keys {runs[cell].get('key')!r}, {r.get('key')!r})"
                )
                continue
            v = r.get("final_loss")
            loss[i, j] = np.nan if v is None else v
            runs[cell] = r
            n_unconv += not r.get("converged", False)
        out.append(Curve(key, curve_label(key), depths, seeds, loss, runs, n_unconv == 0, n_unconv))
    if twice:
        # one would silently stand for both (the last by key order): configurations equal as numbers that
        # earlier versions hashed apart (1 and 1.0), an edited row, or runs differing in a field the task ignores
        raise ValueError(
            f"records: {len(twice)} (curve, depth, seed) cell(s) hold two runs, which one curve cannot tell "
            f"apart: {'; '.join(twice[:3])}{f'; and {len(twice) - 3} more' if len(twice) > 3 else ''}; "
            "keep one run per cell (Store.delete the other)"
        )
    _distinguish(out)
    return out


def _distinguish(cs: list) -> None:
    """Curves whose labels coincide (same model, task and spectrum, different training or width)
    get the settings that tell them apart appended, e.g. ``[schedule=constant, lr=0.01]``."""
    by_label = defaultdict(list)
    for c in cs:
        by_label[c.label].append(c)
    for same in (g for g in by_label.values() if len(g) > 1):
        settings = [_settings(next(iter(c.runs.values()))) for c in same]
        # every setting any of them has (a field only some runs carry, at None, tells them apart too)
        names = list(dict.fromkeys(k for s in settings for k in s))
        differ = [k for k in names if len({repr(s[k]) if k in s else "" for s in settings}) > 1]
        for c, s in zip(same, settings):
            c.label += " [" + ", ".join(_setting_text(k, s) for k in differ) + "]"


def _setting_text(name: str, settings: dict) -> str:
    """``name=value`` of one curve's setting for its label, ``name absent`` where its runs lack it."""
    if name not in settings:
        return f"{name} absent"
    v = settings[name]
    return f"{name}={v:g}" if isinstance(v, float) else f"{name}={v}"


def _settings(record: RunRecord) -> dict:
    """The settings beyond the label's that define a curve: training, width, initialisation, dtype, scales."""
    c = record["config"]
    m, t = c["model"], c["task"]
    return {  # a field added later, at its default, tells no curve apart (a record from before it lacks it)
        **without_later_defaults(c.get("train") or {}),
        "init_scale": m.get("init_scale"),
        "width": m.get("width"),
        "dtype": m.get("dtype"),
        "c_lambda": t.get("c_lambda"),
        "c_omega": t.get("c_omega"),
        **{k: _hashable(v) for k, v in unknown_config_fields(c).items() if not k.startswith("train.")},
    }


# -------------------------------------------------------------------------------------------
# a curve's runs as tables
def _optional(module: str, extra: str):
    """Import an optional dependency, or raise an ImportError that names the extra to install."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise ImportError(f'{module} is not installed: pip install "depthscale[{extra}]"') from None


def curve_frame(curve):
    """:meth:`Curve.to_frame`: one row per run, indexed by ``(depth, seed)``.

    Examples
    --------
    >>> from depthscale.derivations.analysis.curve import curves
    >>> def rec(L, s):
    ...     return {"status": "ok", "seed": s, "converged": True, "final_loss": 0.5 + 0.4 / L,
    ...             "config": {"task": {"task": "topk", "k": 2, "a": 0.0, "b": 0.0, "d": 8, "P": 32},
    ...                        "model": {"model": "softmax", "depth": L}, "train": {"steps": 10}}}
    >>> (c,) = curves([rec(L, s) for L in (4, 1, 2) for s in (1, 0)])
    >>> df = curve_frame(c)
    >>> df.index.names, df.index[:3].tolist(), float(df["final_loss"].iloc[0])
    (FrozenList(['depth', 'seed']), [(1, 0), (1, 1), (2, 0)], 0.9)
    """
    pd = _optional("pandas", "pandas")
    rows = []
    for (L, s), r in sorted(curve.runs.items()):
        v, se = r.get("final_loss"), r.get("final_loss_se")
        rows.append(
            {
                "depth": int(L),
                "seed": s,
                "final_loss": math.nan if v is None else float(v),
                "final_loss_se": math.nan if se is None else float(se),
                "converged": bool(r.get("converged", False)),
                "steps": r.get("steps_run", r.get("steps")),
            }
        )
    cols = ["depth", "seed", "final_loss", "final_loss_se", "converged", "steps"]
    df = pd.DataFrame(rows, columns=cols).set_index(["depth", "seed"])
    df.attrs["label"] = curve.label
    return df


def curve_xarray(curve):
    """:meth:`Curve.to_xarray`: the losses over ``depth`` x ``seed``."""
    xr = _optional("xarray", "xarray")
    attrs: dict[str, Any] = {"label": curve.label, "model": curve.model, "variant": curve.variant}
    attrs.update(task=curve.task, d=curve.d, P=curve.P, n_unconverged=curve.n_unconverged)
    return xr.DataArray(
        curve.loss.T.copy(),
        dims=("depth", "seed"),
        coords={"depth": curve.depths.astype(int), "seed": list(curve.seeds)},
        name="final_loss",
        attrs=attrs,
    )


__all__ = [
    "curve_frame",
    "curve_xarray",
    "EASY_TASKS",
    "FIT_KINDS",
    "FloorComparison",
    "Curve",
    "curve_key",
    "curve_label",
    "curves",
    "variant_name",
    "window_bounds",
    "window_text",
]

"""What a sweep job will cost, so a time budget stops starting work that would not finish.

A run's cost is modelled as ``rate x units``, with units proportional to its arithmetic:

- softmax: ``units = steps x batch x P x N x d x (19 + L)``. At d = N = 16, P = 128, batch 1024 a
  step costs about ``a + b L`` with ``a/b = 19`` (25 ms at L = 1, 104 ms at L = 64 on one core).
  Width enters about linearly, not squared: the step's flops are ``P N (4 d + 6 L) + 6 L N^2`` per
  context, and BLAS runs wider products faster; at L = 64, batch 256, N = 64 measured 2.8 times
  N = 16, which ``N d`` counts as 4 (the safe side). With a trainable context update every layer
  but the last (whose moved tokens are never read) also moves the P context tokens, each attending
  over the P keys: ``2 P / 5`` units a layer. That is what the recorded runs say at the base
  model's rate, whose whole steps carry data, evaluation and overheads that the moving layers'
  BLAS-bound products do not: at d = N = 16, P = 128, batch 256 a moving layer costs 44 ms a step
  on one core (L = 16 and 32 trained one to a core: 0.68 and 1.34 s a step), against the store's
  median base rate. (It was ``2 P / 3`` while the backward pass recomputed each layer's context
  attention.)
- ensemble control (``ModelConfig.ensemble``): depth L trains L one-layer models, ``L x`` the units
  of one; a lockstep group trains one pool, so only its largest depth counts.
- linear: ``units = steps x batch x d^2 x (P + 8 N L)``. Per context the kernel forms ``X^T X``
  once (``2 P d^2`` flops) and then does about eight ``N x d x d`` products per layer
  (``16 N d^2``); the data generation also scales with ``P d^2``.

The rate (seconds per unit) is the median over the store's finished runs of the same model kind,
d and P (their ``wall_seconds`` include evaluation and their share of the data), else of the same
kind, else a conservative default measured on a 2-core machine: BLAS runs small products at
different fractions of its peak, so a rate carries over between sizes only roughly.

Units count the step cap. A run that stops by the rule (constant or plateau schedules) may use far
fewer steps: once finished runs of the same kind, d, P and schedule exist, the estimate takes the
largest fraction of its cap any of them used (the safe side of what is known).
"""

from __future__ import annotations

import math
import re
import statistics

from .model_registry import get_model


def _costed(kind: str):
    """The class that costs a model (its ``DEFAULT_RATE``, seconds per unit on one busy core, and its
    ``context_units``): sims/model_registry.py, ``Model.spec_class``."""
    return get_model(kind).spec_class()


def run_units(config) -> float:
    """Work units of one run at its step cap (see the module docstring)."""
    d, P, L = config.task.d, config.task.P, config.model.depth
    if config.model.ensemble:
        return float(config.train.steps) * config.train.batch * P * config.model.n(d) * d * 20 * L
    per_context = _costed(config.model.model).context_units(config.model, d, P)
    return float(config.train.steps) * config.train.batch * per_context


def _kinds(config) -> tuple:
    """The keys a run's rate is filed under, most specific first."""
    kind = config.model.model
    return ((kind, config.task.d, config.task.P), kind)


def _steps_key(config) -> tuple:
    """Where the fraction of the step cap used is filed: runs of one kind, size, schedule, cap and
    rule window (a window of half the cap or more makes the rule unable to stop the run early)."""
    t = config.train
    return ("steps", config.model.model, config.task.d, config.task.P, t.schedule, t.steps, t.window)


def rates(records) -> dict:
    """Seconds per unit by ``(kind, d, P)`` and by kind, from finished (``ok``) records with
    ``wall_seconds``; and under :func:`_steps_key` the largest fraction of the step cap such runs
    used."""
    from .config import RunConfig

    seen: dict = {}
    used: dict = {}
    for rec in records:
        if rec.get("status") != "ok" or not rec.get("wall_seconds"):
            continue
        config = RunConfig.from_dict(rec["config"])
        fraction = rec.get("steps", config.train.steps) / max(config.train.steps, 1)
        units = run_units(config) * fraction
        if units > 0:
            for key in _kinds(config):
                seen.setdefault(key, []).append(rec["wall_seconds"] / units)
            used.setdefault(_steps_key(config), []).append(fraction)
    return {kind: statistics.median(v) for kind, v in seen.items()} | {k: max(v) for k, v in used.items()}


def job_seconds(configs, rate_by_kind: dict) -> float:
    """Estimated seconds of one job (a lockstep group runs its configs one after another on one core)."""
    configs = list(configs)
    pool = max((c.model.depth for c in configs if c.model.ensemble), default=0)
    total = 0.0
    for c in configs:
        if c.model.ensemble and c.model.depth < pool:
            continue  # trained once, in the group's pool
        specific, kind = _kinds(c)
        rate = rate_by_kind.get(specific, rate_by_kind.get(kind))
        rate = _costed(kind).DEFAULT_RATE if rate is None else rate
        total += rate * run_units(c) * min(rate_by_kind.get(_steps_key(c), 1.0), 1.0)
    return total


def duration_text(seconds: float) -> str:
    """Seconds in words for a reader: ``"45 s"``, ``"3.2 min"`` or ``"2.4 h"``.

    >>> duration_text(45.2), duration_text(190), duration_text(8640)
    ('45 s', '3.2 min', '2.4 h')
    """
    if seconds < 90:
        return f"{seconds:.0f} s"
    return f"{seconds / 60:.1f} min" if seconds < 5400 else f"{seconds / 3600:.1f} h"


def budget_at_least(seconds: float) -> str:
    """The shortest ``--budget`` in whole minutes (at least one) that holds ``seconds``, spelled as
    :func:`parse_duration` reads it.

    >>> budget_at_least(12), budget_at_least(190), budget_at_least(3600), budget_at_least(8641)
    ('1m', '4m', '1h', '2h25m')
    >>> parse_duration(budget_at_least(8641)) >= 8641
    True
    """
    minutes = max(1, math.ceil(seconds / 60))
    h, m = divmod(minutes, 60)
    return (f"{h}h" if h else "") + (f"{m}m" if m or not h else "")


def parse_duration(text: str) -> float:
    """``"2h"``, ``"90m"``, ``"1h30m"``, ``"45s"`` or plain seconds -> seconds (> 0).

    >>> parse_duration("1h30m"), parse_duration("90"), parse_duration("2.5h")
    (5400.0, 90.0, 9000.0)
    """
    s = str(text).strip().lower()
    m = re.fullmatch(r"(?:(\d+(?:\.\d+)?)h)?(?:(\d+(?:\.\d+)?)m)?(?:(\d+(?:\.\d+)?)s?)?", s)
    if not s or m is None or not any(m.groups()):
        raise ValueError(f"budget={text!r}: must be a duration such as 2h, 90m, 1h30m, 45s or seconds")
    h, mi, sec = (float(g) if g else 0.0 for g in m.groups())
    total = 3600 * h + 60 * mi + sec
    if total <= 0:
        raise ValueError(f"budget={text!r}: must be a positive duration")
    return total

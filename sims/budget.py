"""What a sweep job will cost, so a time budget stops starting work that would not finish.

A run's cost is modelled as ``rate x units`` with ``units = steps x batch x P x N^2 x (19 + L)``:
at d = N = 16, P = 128, batch 1024 one softmax step costs about ``a + b L`` with ``a/b = 19``
(25 ms at L = 1, 104 ms at L = 64 on one core), and every term of the step scales with
``batch x P x N^2``. The rate (seconds per unit) is the median over the finished runs of the same
model kind in the store (their ``wall_seconds`` include evaluation and their share of the data),
or a conservative default measured on a 2-core machine when the store has none.
"""

from __future__ import annotations

import re
import statistics

DEFAULT_RATE = 6e-11  # seconds per unit, one busy core (measured about 4e-11 for softmax at d=16, P=128)


def run_units(config) -> float:
    """Work units of one run at its step cap (see the module docstring)."""
    N = config.model.n(config.task.d)
    return float(config.train.steps) * config.train.batch * config.task.P * N * N * (19 + config.model.depth)


def rates(records) -> dict:
    """Seconds per unit by model kind, from finished (``ok``) records that carry ``wall_seconds``."""
    from depthscale.sims.config import RunConfig

    seen: dict = {}
    for rec in records:
        if rec.get("status") != "ok" or not rec.get("wall_seconds"):
            continue
        config = RunConfig.from_dict(rec["config"])
        units = run_units(config) * rec.get("steps", config.train.steps) / max(config.train.steps, 1)
        if units > 0:
            seen.setdefault(config.model.model, []).append(rec["wall_seconds"] / units)
    return {kind: statistics.median(v) for kind, v in seen.items()}


def job_seconds(configs, rate_by_kind: dict) -> float:
    """Estimated seconds of one job (a lockstep group runs its configs one after another on one core)."""
    return sum(rate_by_kind.get(c.model.model, DEFAULT_RATE) * run_units(c) for c in configs)


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

"""Curves per training protocol: which protocol a curve was trained under (the table of
:mod:`depthscale.sims.protocols`), the reference floors of its runs, one :class:`ProtocolRow` per
(protocol, task) curve, and the verdict rule for protocols stopped early by design.

Several studies decide claims per protocol on the same rows, so the rows live here, below all of
them. The floors are computed once per evidence: read from the theory numbers of the report when a
study computed them there (a :class:`ProtocolFloors` record, :func:`protocol_floors`), else
gathered from the runs' stored arrays on first use.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from ...sims.protocols import PROTOCOLS, Protocol
from ...sims.reference_floors import FLOOR_NAMES
from ...sims.task_registry import task_name
from ..analysis.curve import DEFAULT_ENGINE, Curve, pool_independent, pool_paired, variant_name
from ..analysis.fits import FitResult
from .claim import Claim
from .verdicts import ClaimResult


def protocol_of(curve: Curve) -> Protocol | None:
    """The protocol of :data:`~depthscale.sims.protocols.PROTOCOLS` a curve was trained under, or None
    (matched on the settings that define it: schedule, rate, batch, steps, initial scale, variant, width;
    not the engine, which a row's label names: :func:`row_label`). A curve without runs (a synthetic
    one, :mod:`~depthscale.derivations.claims.calibration`) is matched on its key, which holds the same
    settings."""
    if curve.runs:
        rec = next(iter(curve.runs.values()))
        tr, m = rec["config"]["train"], rec["config"]["model"]
        variant = variant_name(m, engine=False)
    else:
        tr, variant = dict(curve.key.train), curve.claim_variant
        m = {k: v for k, v in (("init_scale", curve.key.init_scale), ("width", curve.key.width)) if v is not None}
    for p in PROTOCOLS:
        if (
            tr.get("schedule") == p.schedule
            and math.isclose(tr.get("lr", 0), p.lr)
            and tr.get("batch") == p.batch
            and tr.get("steps") == p.steps
            and math.isclose(m.get("init_scale", 0.3), p.init_scale)
            and variant == p.variant
            and (m.get("width") or 0) == p.width
        ):
            return p
    return None


def protocol_curves(curves) -> list[tuple[Protocol, Curve]]:
    """The softmax curves trained under a named protocol, with their protocol."""
    out = []
    for c in curves:
        if c.model == "softmax" and (p := protocol_of(c)) is not None:
            out.append((p, c))
    return out


def task_label(c: Curve) -> str:
    """The task of a curve in a row label: ``top-2 (a,b)=(0.5,0.5) d=16 P=128``."""
    spectrum = f" (a,b)=({c.a:g},{c.b:g})" if c.task == "topk" else ""
    return f"{task_name(c.task, c.k)}{spectrum} d={c.d} P={c.P}"


# ------------------------------------------------------------------------------------------------ floors
@dataclass(frozen=True)
class ProtocolFloors:
    """The reference floors of the protocol curves, paired with their runs.

    ``by_curve``: ``{curve.key: {"floors": {name: (loss, se)}, "excess": {depth: {name: Estimate}}}}``,
    floors and excesses averaged over the seeds (:func:`gather_protocol_floors`).
    """

    by_curve: Mapping = field(default_factory=dict)


def gather_protocol_floors(curves, load_arrays) -> ProtocolFloors:
    """Reference floors of every protocol curve's task and seeds, paired with its runs.

    ``load_arrays(key)`` returns a run's stored arrays (``Store.load_arrays``). A floor's error is its
    evaluation error (independent contexts, so errors add in quadrature); an excess's also counts how
    far trained models of different seeds end apart (``curve.pool_paired``). Floors are computed
    once per (task, seed, evaluation contexts).
    """
    from ...sims.config import TaskConfig
    from ...sims.reference_floors import excess_over_floors, reference_floors

    cache: dict = {}
    out = {}
    for _, c in protocol_curves(curves):
        per_seed_floor: dict[str, list] = {n: [] for n in FLOOR_NAMES}
        per_depth: dict = {}
        seen: set = set()
        for (depth, seed), rec in sorted(c.runs.items()):
            arrays = load_arrays(rec["key"]) or {}
            sq = arrays.get("sq_err")
            task = TaskConfig(**rec["config"]["task"])
            n_eval = int(rec["config"]["train"]["eval_contexts"])
            fk = (task, seed, n_eval)
            if fk not in cache:
                cache[fk] = reference_floors(task, seed, n_eval=n_eval)
            if fk not in seen:  # each seed's floors once per curve (curves of one task share them)
                seen.add(fk)
                for n in FLOOR_NAMES:
                    f = getattr(cache[fk], n)
                    per_seed_floor[n].append((f.loss, f.se))
            if sq is not None and sq.shape == (n_eval,):
                for n, v in excess_over_floors(sq, cache[fk]).items():
                    per_depth.setdefault(depth, {}).setdefault(n, []).append(v)
        out[c.key] = {
            "floors": {n: pool_independent(v) for n, v in per_seed_floor.items() if v},
            "excess": {L: {n: pool_paired(v) for n, v in d.items()} for L, d in sorted(per_depth.items())},
        }
    return ProtocolFloors(out)


def protocol_floors(ev) -> ProtocolFloors:
    """The reference floors of the protocol curves of the evidence ``ev``: the report's (the
    :class:`ProtocolFloors` a study computed as its theory numbers), else gathered once from
    ``ev.load_arrays`` (empty without it)."""
    given = next((v for v in ev.theory.studies.values() if isinstance(v, ProtocolFloors)), None)
    if given is not None:
        return given

    def gather(e) -> ProtocolFloors:
        if e.load_arrays is None or not protocol_curves(e.curves):
            return ProtocolFloors()
        return gather_protocol_floors(e.curves, e.load_arrays)

    return ev.derived("protocol floors", gather)


# ------------------------------------------------------------------------------------------------ rows
@dataclass(frozen=True)
class ProtocolRow:
    """One (protocol, task) curve: the fit and the measurements claims per protocol use."""

    protocol: Protocol
    curve: Curve
    fit: FitResult  # of R_L = R_inf + c L^-alpha
    disagreement: float  # mean over depths >= 2 of A_L - C_L (seed means)
    layer_loss: float  # mean over depths >= 2 of A_L, the mean loss of one layer of the deep model
    r1: float  # loss of the one-layer model R_1 (seed mean)
    similarity: float  # mean query-key similarity of the layers at the deepest depth
    floors: dict  # name -> (loss, se)
    excess: dict  # depth -> name -> Estimate (paired, curve.pool_paired)

    @property
    def identified(self) -> bool:
        return not self.fit.failure and self.fit.identified

    def nearest_floor(self, value: float):
        """``(name, relative difference)`` of the reference floor closest to ``value``, or None."""
        if not self.floors or not np.isfinite(value):
            return None
        name = min(self.floors, key=lambda n: abs(value / self.floors[n][0] - 1))
        return name, value / self.floors[name][0] - 1


def protocol_rows(ev) -> list[ProtocolRow]:
    """One row per protocol curve of the evidence, with its reference floors (:func:`protocol_floors`)."""
    floors = protocol_floors(ev).by_curve
    out = []
    for p, c in protocol_curves(ev.curves):
        sim = c.field_mean("qk_similarity")
        fl = floors.get(c.key, {})
        out.append(
            ProtocolRow(
                p,
                c,
                c.fit("offset"),
                _deep_mean(c, "gap"),
                _deep_mean(c, "A_L"),
                float(c.mean[0]) if c.depths[0] == 1 else math.nan,
                float(sim[-1]) if np.isfinite(sim[-1]) else math.nan,
                fl.get("floors", {}),
                fl.get("excess", {}),
            )
        )
    return out


def _deep_mean(c: Curve, name: str) -> float:
    """Mean over the depths >= 2 of a record field's seed means (nan when none is finite)."""
    v = c.field_mean(name)[c.depths >= 2]
    return float(np.nanmean(v)) if np.any(np.isfinite(v)) else math.nan


def row_label(row: ProtocolRow) -> str:
    """A per-curve claim row's label (after the claim's id): the protocol and the task, and the engine
    when it is not numba (``cosine [jax] top-2 ...``: rows of two engines stay apart)."""
    engine = row.curve.engine
    return f"{row.protocol.name}{'' if engine == DEFAULT_ENGINE else f' [{engine}]'} {task_label(row.curve)}"


def budget_note(row: ProtocolRow) -> str:
    """The note a row of a fixed-budget protocol carries ("" for the others)."""
    return "; fixed budget by design (convergence not required)" if row.protocol.fixed_budget else ""


def budget_decided(
    claim: Claim, label: str, ok, rows: list[ProtocolRow], detail: str, expected, measured, error, **kw
) -> ClaimResult:
    """``claim.decided`` on protocol rows: the runs of a protocol stopped early by design
    (``fixed_budget``) need not have converged to be decisive."""
    stopped = [r.curve for r in rows if r.protocol.fixed_budget]
    return claim.decided(
        label, ok, [r.curve for r in rows], detail, expected, measured, error, budget_stopped=stopped, **kw
    )


__all__ = [
    "ProtocolFloors",
    "ProtocolRow",
    "protocol_of",
    "protocol_curves",
    "task_label",
    "gather_protocol_floors",
    "protocol_floors",
    "protocol_rows",
    "row_label",
    "budget_note",
    "budget_decided",
]

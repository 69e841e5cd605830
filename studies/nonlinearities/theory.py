"""The nonlinearity study's curves, their reference floors and the numbers its claims read.

A study curve is the base softmax-family model (two streams, context not updated, factorised
query-key maps, shared value) at d = 16, P = 128 on a top-k task, trained by the cosine or the
constant-rate protocol, with one attention nonlinearity (``ModelConfig.attention``: a built-in map
or a user's registered one), on either engine (the engine is no part of the selection; a row of a
run not computed by numba names it: ``softmax+jax``). Each is paired with the reference floors of
its own nonlinearity (temperature-only heads with that map) on the runs' own evaluation contexts,
per seed; a user's map not registered in this process has no floors (its claims that need them
are left out).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from depthscale.derivations.study import Condition, Curve, FitResult, pool_independent, pool_paired, variant_name
from depthscale.sims.attention_maps import ATTENTIONS
from depthscale.sims.attention_registry import attention_names
from depthscale.sims.reference_floors import FLOOR_NAMES  # single head, convex and signed mixtures

NAME = "nonlinearities"  # the study's name: its numbers are TheoryNumbers.studies[NAME]
D, P = 16, 128
PROTOCOLS = {"cosine": ("cosine", 4000), "constant": ("constant", 3000)}  # name: (schedule, step cap)
DEEP = 64  # the depth the cross-nonlinearity claims compare at (the deepest the preset trains)


def attention_of(c: Curve) -> str | None:
    """The curve's attention nonlinearity (a built-in or a user's map, read from its runs), or None if
    the curve is not the base model with one map (the engine is no part of it)."""
    if not c.runs:
        return None
    m = next(iter(c.runs.values()))["config"]["model"]
    return (
        m.get("attention", "softmax") if variant_name({**m, "attention": "softmax"}, engine=False) == "base" else None
    )


def _map_rank(att: str) -> tuple[int, str]:
    # the built-in maps in their order, then users' maps by name
    return (ATTENTIONS.index(att), "") if att in ATTENTIONS else (len(ATTENTIONS), att)


def protocol_of(c: Curve) -> str | None:
    """``"cosine"`` or ``"constant"`` for the study's two protocols (lr 3e-3, batch 1024), else None."""
    tr = dict(c.key.train)
    for name, (schedule, steps) in PROTOCOLS.items():
        if tr.get("schedule") == schedule and tr.get("steps") == steps and tr.get("lr") == 3e-3:
            if tr.get("batch") == 1024 and tr.get("warmup", 0) == 0:
                return name
    return None


def task_label(c: Curve) -> str:
    """``top-2 (0,0)``: the task as the study's page names it."""
    return f"top-{c.key.k} ({c.key.a:g},{c.key.b:g})"


def study_curves(curves) -> list[tuple[str, str, Curve]]:
    """``(attention, protocol, curve)`` for every curve of the study among ``curves``."""
    out = []
    for c in curves:
        k = c.key
        if (k.model, k.task, k.d, k.P) != ("softmax", "topk", D, P) or k.width not in (None, 0):
            continue
        att, prot = attention_of(c), protocol_of(c)
        if att is not None and prot is not None and k.init_scale in (None, 0.3) and k.dtype in (None, "float64"):
            out.append((att, prot, c))
    return sorted(out, key=lambda t: (task_label(t[2]), t[1], _map_rank(t[0]), t[2].engine != "numba"))


# ------------------------------------------------------------------------------------------------ floors
def gather_floors(curves, load_arrays) -> dict:
    """Each study curve's reference floors of its own nonlinearity, paired with its runs.

    Returns ``{curve.key: {"floors": {name: (loss, se)}, "excess": {depth: {name: Estimate}},
    "sq_err": {(depth, seed): per-context squared errors}}}``. A floor's error is its evaluation
    error (seeds are independent contexts); an excess's also counts how far the seeds end apart
    (``curve.pool_paired``). Floors are computed once per (task, seed, contexts, nonlinearity).
    """
    from depthscale.sims.config import TaskConfig
    from depthscale.sims.reference_floors import excess_over_floors, reference_floors

    cache: dict = {}
    out = {}
    registered = attention_names()
    for att, _, c in study_curves(curves):
        if att not in registered:  # a user's map this process cannot compute: no floors, no error
            continue
        per_seed: dict[str, list] = {n: [] for n in FLOOR_NAMES}
        per_depth: dict = {}
        sq_errs: dict = {}
        seen: set = set()
        for (depth, seed), rec in sorted(c.runs.items()):
            sq = (load_arrays(rec["key"]) or {}).get("sq_err")
            task = TaskConfig(**rec["config"]["task"])
            n_eval = int(rec["config"]["train"]["eval_contexts"])
            fk = (task, seed, n_eval, att)
            if fk not in cache:
                cache[fk] = reference_floors(task, seed, n_eval=n_eval, attention=att)
            if fk not in seen:
                seen.add(fk)
                for n in FLOOR_NAMES:
                    f = getattr(cache[fk], n, None)
                    if f is not None:
                        per_seed[n].append((f.loss, f.se))
            if sq is not None and np.shape(sq) == (n_eval,):
                sq_errs[(depth, seed)] = np.asarray(sq, np.float64)
                for n, v in excess_over_floors(sq, cache[fk]).items():
                    per_depth.setdefault(depth, {}).setdefault(n, []).append(v)
        out[c.key] = {
            "floors": {n: pool_independent(v) for n, v in per_seed.items() if v},
            "excess": {L: {n: pool_paired(v) for n, v in d.items()} for L, d in sorted(per_depth.items())},
            "sq_err": sq_errs,
        }
    return out


def theory_numbers(inputs) -> dict:
    """The study's theory numbers for a report (a ``TheoryInputs``): :func:`gather_floors`, or ``{}``
    without the runs' arrays."""
    if inputs.load_arrays is None or not study_curves(inputs.curves):
        return {}
    return gather_floors(inputs.curves, inputs.load_arrays)


def floors_of(ev) -> dict:
    """The floors of the evidence's study curves: the report's, else gathered from ``ev.load_arrays``."""

    def gather(e) -> dict:
        if e.load_arrays is None or not study_curves(e.curves):
            return {}
        return gather_floors(e.curves, e.load_arrays)

    return ev.study_numbers(NAME, gather)


# ------------------------------------------------------------------------------------------------ rows
@dataclass(frozen=True)
class Row:
    """One (nonlinearity, protocol, task) curve with the numbers the claims read (``attention``: the
    map, with the engine appended when it is not numba, ``softmax+jax``; :attr:`map` is the map alone)."""

    attention: str
    protocol: str
    curve: Curve
    fit: FitResult  # R_L = R_inf + c L^-alpha
    floors: dict = field(default_factory=dict)  # name -> (loss, se), this nonlinearity's heads
    excess: dict = field(default_factory=dict)  # depth -> name -> Estimate (paired, curve.pool_paired)
    sq_err: dict = field(default_factory=dict)  # (depth, seed) -> per-context squared errors

    @property
    def task(self) -> str:
        return task_label(self.curve)

    @property
    def map(self) -> str:
        """The attention map alone (``attention`` without the engine)."""
        return self.attention.split("+")[0]

    @property
    def label(self) -> str:
        """The claim row's label: ``sparsemax cosine top-2 (0,0)``."""
        return f"{self.attention} {self.protocol} {self.task}"

    def condition(self, label: str | None = None) -> Condition:
        """The typed condition of a claim row on this curve (``label`` defaults to :attr:`label`)."""
        k = self.curve.key
        return Condition(
            self.label if label is None else label,
            model=k.model,
            variant=self.attention,
            task=k.task,
            k=k.k,
            a=k.a,
            b=k.b,
            d=k.d,
            P=k.P,
            protocol=self.protocol,
        )

    def seed_values(self, name: str, depth: int) -> dict[int, float]:
        """A record field at one depth, by seed (finite values only)."""
        out = {}
        for rec in self.curve.records_at(depth):
            v = rec.get(name)
            if isinstance(v, (int, float)) and math.isfinite(v):
                out[int(rec["seed"])] = float(v)
        return out


def rows(ev) -> list[Row]:
    """The study's rows from the evidence."""
    floors = floors_of(ev)
    out = []
    for att, prot, c in study_curves(ev.curves):
        fl = floors.get(c.key, {})
        name = att if c.engine == "numba" else f"{att}+{c.engine}"  # rows of two engines stay apart
        out.append(
            Row(name, prot, c, c.fit("offset"), fl.get("floors", {}), fl.get("excess", {}), fl.get("sq_err", {}))
        )
    return out


def paired_across(a: Row, b: Row, depth_a: int, depth_b: int | None = None, minus: tuple | None = None):
    """A per-context difference between two rows of one task, seeds pooled (an ``Estimate``).

    Per seed, ``sq_a(depth_a) - sq_b(depth_b)`` (``depth_b`` defaults to ``depth_a``); with ``minus``
    ``(depth_a2, depth_b2)`` the difference of differences
    ``[sq_a(depth_a) - sq_a(depth_a2)] - [sq_b(depth_b) - sq_b(depth_b2)]``. Both rows' runs of one
    seed share their evaluation contexts, so each seed's mean has the paired error, and the seeds
    pool with ``curve.pool_paired`` (the larger of that and the seeds' scatter). None without a seed
    that has every run.
    """
    depth_b = depth_a if depth_b is None else depth_b
    per_seed = []
    seeds = {s for (_, s) in a.sq_err} & {s for (_, s) in b.sq_err}
    for s in sorted(seeds):
        keys_a = [(depth_a, s)] + ([(minus[0], s)] if minus else [])
        keys_b = [(depth_b, s)] + ([(minus[1], s)] if minus else [])
        if not all(k in a.sq_err for k in keys_a) or not all(k in b.sq_err for k in keys_b):
            continue
        d = a.sq_err[keys_a[0]] - b.sq_err[keys_b[0]]
        if minus:
            d = d - (a.sq_err[keys_a[1]] - b.sq_err[keys_b[1]])
        per_seed.append((float(d.mean()), float(d.std(ddof=1) / math.sqrt(d.size))))
    return pool_paired(per_seed) if per_seed else None

"""The training protocols of the protocol study (docs/studies/protocols.md): recognising a curve's protocol,
and the reference floors of its runs (the study's theory numbers: :func:`theory_numbers`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from depthscale.derivations.study import Curve, pool_independent, pool_paired, variant_name
from depthscale.sims.reference_floors import FLOOR_NAMES


@dataclass(frozen=True)
class Protocol:
    """A training protocol of the study: the settings that define it and what it probes."""

    name: str
    schedule: str
    lr: float
    batch: int
    steps: int
    init_scale: float
    probes: str
    fixed_budget: bool = False  # stopped early by design: convergence is not asked of its runs
    variant: str = "base"  # the model variant (analysis.variant_name) the protocol trains
    width: int = 0  # model width N (0: N = d)


PROTOCOLS = (
    Protocol("cosine", "cosine", 3e-3, 1024, 4000, 0.3, "annealed to a noise-free end (the cpu preset's setting)"),
    Protocol(
        "constant-3e-3", "constant", 3e-3, 1024, 3000, 0.3, "minibatch noise at a constant step (shared by the layers)"
    ),
    Protocol("constant-1e-2", "constant", 1e-2, 1024, 3000, 0.3, "more minibatch noise (larger constant step)"),
    Protocol(
        "large-init-short",
        "cosine",
        3e-3,
        1024,
        1000,
        1.0,
        "independent per-layer deviations from a large initialisation that a short budget leaves",
        fixed_budget=True,
    ),
    Protocol("small-batch", "constant", 3e-3, 128, 3000, 0.3, "eight times the gradient noise of constant-3e-3"),
    # the paper-curves study (docs/studies/paper-curves.md, preset ``curves``)
    Protocol(
        "ensemble-control",
        "cosine",
        3e-3,
        256,
        500,
        1.0,
        "positive control: L independently trained one-layer models averaged (R_L = C + (A - C)/L exactly)",
        fixed_budget=True,
        variant="ensemble",
    ),
    Protocol(
        "default-N16",
        "constant",
        1e-3,
        256,
        16000,
        0.3,
        "framework-default init, N = d, constant Adam 1e-3 until the rule fires",
        variant="default-init",
    ),
    Protocol(
        "default-N16-fixed",
        "constant",
        1e-3,
        256,
        12000,
        0.3,
        "framework-default init, N = d, constant Adam 1e-3 for 12,000 steps (the rule cannot stop it)",
        fixed_budget=True,
        variant="default-init",
    ),
    Protocol(
        "default-N64",
        "constant",
        1e-3,
        256,
        16000,
        0.3,
        "framework-default init, N = 64, constant Adam 1e-3 until the rule fires",
        variant="default-init",
        width=64,
    ),
    *(
        Protocol(
            "plateau" + ("" if v == "base" else f"-{v}"),
            "plateau",
            3e-3,
            1024,
            12000,
            0.3,
            f"trained until the rule has fired five times (halving the rate each time); {v} model",
            variant=v,
        )
        for v in ("base", "per-layer-value", "context-update")
    ),
    # the objections to the negative result (preset ``objections`` of the paper-curves study): other
    # learning rates, twice the width, the paper preset's 20,000 steps; the rest as ``cosine``
    Protocol("cosine-lr1e-3", "cosine", 1e-3, 1024, 4000, 0.3, "objection: a smaller learning rate"),
    Protocol("cosine-lr1e-2", "cosine", 1e-2, 1024, 4000, 0.3, "objection: a larger learning rate"),
    Protocol("cosine-N2d", "cosine", 3e-3, 1024, 4000, 0.3, "objection: width N = 2d = 32", width=32),
    Protocol("cosine-20k", "cosine", 3e-3, 1024, 20000, 0.3, "objection: the paper preset's 20,000 steps"),
    Protocol(
        "plateau-context-update-batch256",
        "plateau",
        3e-3,
        256,
        12000,
        0.3,
        "the plateau schedule at batch 256 (a step costs a third to a quarter of one at 1024); context-update model",
        variant="context-update",
    ),
)


def protocol_of(curve: Curve) -> Protocol | None:
    """The study protocol a curve was trained under, or None (matched on the settings that define it)."""
    rec = next(iter(curve.runs.values()))
    tr, m = rec["config"]["train"], rec["config"]["model"]
    for p in PROTOCOLS:
        if (
            tr.get("schedule") == p.schedule
            and math.isclose(tr.get("lr", 0), p.lr)
            and tr.get("batch") == p.batch
            and tr.get("steps") == p.steps
            and math.isclose(m.get("init_scale", 0.3), p.init_scale)
            and variant_name(m) == p.variant
            and (m.get("width") or 0) == p.width
        ):
            return p
    return None


def study_curves(curves) -> list[tuple[Protocol, Curve]]:
    """The softmax curves trained under a study protocol, with their protocol."""
    out = []
    for c in curves:
        if c.model == "softmax" and (p := protocol_of(c)) is not None:
            out.append((p, c))
    return out


def task_label(c: Curve) -> str:
    return f"top-{c.k} (a,b)=({c.a:g},{c.b:g}) d={c.d} P={c.P}" if c.task == "topk" else f"{c.task} d={c.d} P={c.P}"


# ------------------------------------------------------------------------------------------------ floors
def gather_floors(curves, load_arrays) -> dict:
    """Reference floors of every study curve's task and seeds, paired with its runs.

    ``load_arrays(key)`` returns a run's stored arrays (``Store.load_arrays``). Returns
    ``{curve.key: {"floors": {name: (loss, se)}, "excess": {depth: {name: Estimate}}}}``: floors
    and excesses averaged over the seeds. A floor's error is its evaluation error (independent
    contexts, so errors add in quadrature); an excess's also counts how far trained models of
    different seeds end apart (``curve.pool_paired``). Floors are computed once per (task, seed,
    evaluation contexts).
    """
    from depthscale.sims.config import TaskConfig
    from depthscale.sims.reference_floors import excess_over_floors, reference_floors

    cache: dict = {}
    out = {}
    for _, c in study_curves(curves):
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
    return out


NAME = "protocols"  # the study's name: its numbers are TheoryNumbers.studies[NAME]


def theory_numbers(inputs) -> dict:
    """The study's theory numbers for a report: the reference floors of its curves paired with their
    runs (:func:`gather_floors`; ``{}`` without the runs' arrays). ``inputs``: a
    :class:`~depthscale.derivations.study.TheoryInputs`."""
    if inputs.load_arrays is None or not study_curves(inputs.curves):
        return {}
    return gather_floors(inputs.curves, inputs.load_arrays)


def floors_of(ev) -> dict:
    """The reference floors of the study curves of the evidence ``ev``: the report's
    (``ev.theory.studies["protocols"]``), else gathered once from ``ev.load_arrays``."""

    def gather(e) -> dict:
        if e.load_arrays is None or not study_curves(e.curves):
            return {}
        return gather_floors(e.curves, e.load_arrays)

    return ev.study_numbers(NAME, gather)

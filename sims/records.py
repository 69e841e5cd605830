"""The run record: what :func:`depthscale.sims.runner.run` returns and the store keeps (docs/engine-contract.md).

:class:`RunRecord` names its fields and their types for the type checker; at run time a record is a
plain JSON-able dict (NumPy arrays only under ``arrays``), so stored records load as they are.
``key``, ``config``, ``seed`` and ``status`` are always present; the measurements only when the run
finished (``status == "ok"``), and the per-layer ones only where defined (else None).

Examples
--------
>>> rec: RunRecord = {"key": "abc-0", "config": {}, "seed": 0, "status": "failed", "reason": "diverged"}
>>> sorted(RUN_RECORD_FIELDS)[:3]
['A_L', 'C_L', 'arrays']
"""

import dataclasses
import math
from typing import Any, Required, TypedDict

from ..theory._validate import SEED_MAX
from .config import ModelConfig, TaskConfig, TrainConfig

STATUSES = ("ok", "diverged", "failed")


class Floor(TypedDict, total=False):
    """One reference floor of a run, paired on its evaluation contexts (``diff = R_L - loss``)."""

    loss: float
    se: float
    diff: float
    diff_se: float
    attention: str  # the heads' map: the run's own (absent in older records: softmax)
    kappa: float  # single
    kappas: list[float]  # mixture
    gains: list[float]  # mixture
    support: list[float]  # convex
    weights: list[float]  # convex


class RunRecord(TypedDict, total=False):
    """One run's record (fields and meanings: docs/engine-contract.md, "Run record")."""

    key: Required[str]  # config_hash(config) + "-" + str(seed)
    config: Required[dict[str, Any]]  # RunConfig.to_dict()
    seed: Required[int]
    status: Required[str]  # "ok" | "diverged" | "failed"
    reason: str | None
    converged: bool
    steps: int
    n_params: int
    wall_seconds: float
    train_curve: list[list[float]]  # [[step, smoothed loss], ...]
    checkpoints: list[dict[str, Any]]  # per training checkpoint: step and the loss decomposition
    final_loss: float  # R_L on the evaluation contexts
    final_loss_se: float
    target_power: float  # E[y*^2] on the evaluation contexts
    A_L: float
    C_L: float
    gap: float
    identity_residual: float
    layer_losses: list[float]
    mode_losses: list[float] | None
    top1_mass: list[float] | None
    topk_mass: list[float] | None
    target_mass: list[float] | None
    entropy: list[float] | None
    qk_norm: list[float]
    qk_similarity: float | None
    selection_error_pct: dict[str, float] | None
    n_contexts: int
    # "single", "mixture", "convex"; older stores spell the field "baseline" and "mixture" "pair",
    # both renamed on reading (Store)
    floors: dict[str, Floor]
    arrays: dict[str, Any]  # "sq_err" (per-context squared errors), "theta" (trained parameters)
    code_version: str
    resumed: list[dict[str, Any]]  # training resumed from snapshots: [{"step", "code_version"}, ...]


RUN_RECORD_FIELDS = frozenset(RunRecord.__annotations__)


class RecordWarning(UserWarning):
    """A stored record this version reads only in part: a row skipped as malformed, or a run whose
    configuration carries fields this version does not know (kept apart, never merged)."""


# The schema this version knows: each config section's fields and the type of its default
CONFIG_SECTIONS = {"task": TaskConfig, "model": ModelConfig, "train": TrainConfig}
_KINDS = {
    section: {f.name: type(f.default) for f in dataclasses.fields(cls)} for section, cls in CONFIG_SECTIONS.items()
}
# the scalar measurements readers compute with (null stands for NaN); the rest are lists or shown as they are
_REAL_FIELDS = ("final_loss", "final_loss_se", "target_power", "A_L", "C_L", "gap", "identity_residual", "wall_seconds")
_INT_FIELDS = ("steps", "n_params", "n_contexts")


def _is_int(v) -> bool:
    return (isinstance(v, int) and not isinstance(v, bool)) or (isinstance(v, float) and v.is_integer())


def _is_real(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _kind_problem(value, kind: type) -> str | None:
    """What is wrong with a stored ``value`` of a field whose default has type ``kind``, or None."""
    if kind is bool:
        return None if isinstance(value, bool) else "must be true or false"
    if kind is int:
        return None if _is_int(value) else "must be an integer"
    if kind is float:
        return None if _is_real(value) and math.isfinite(value) else "must be a finite real number"
    if kind is str:
        return None if isinstance(value, str) else "must be a string"
    return None


def unknown_config_fields(config) -> dict[str, Any]:
    """``{"section.field": value}`` for every field of ``config`` (a stored ``RunConfig.to_dict()``) that
    this version does not know: a section or a field added by a newer version, or an edit.

    >>> unknown_config_fields({"task": {"d": 4}, "model": {"depth": 2, "gating": "on"}, "optim": {"x": 1}})
    {'model.gating': 'on', 'optim': {'x': 1}}
    """
    out: dict[str, Any] = {}
    if not isinstance(config, dict):
        return out
    for section, fields in config.items():
        if section not in _KINDS:
            out[str(section)] = fields
        elif isinstance(fields, dict):
            out.update({f"{section}.{k}": v for k, v in fields.items() if k not in _KINDS[section]})
    return out


def record_problem(rec) -> str | None:
    """None if ``rec`` (a decoded stored record) can be read as a run record of this version's schema,
    else ``"field=value: must be ..."`` for its first malformed field.

    Checked: the record is a JSON object; ``key`` a string; ``seed`` an integer in [0, SEED_MAX];
    ``status`` one of :data:`STATUSES`; ``config`` an object whose known sections are objects and
    whose known fields have their types (values outside this version's choices pass: a newer version
    may have more); the scalar measurements numbers or null. Unknown config fields are no problem here
    (:func:`unknown_config_fields`: their runs are read and kept apart).

    >>> record_problem({"key": "k-0", "config": {"task": {"d": "abc"}}, "seed": 0, "status": "ok"})
    "config.task.d='abc': must be an integer"
    >>> record_problem([1, 2])
    'record=[1, 2]: must be a JSON object (a run record), not list'
    """
    if not isinstance(rec, dict):
        text = repr(rec) if len(repr(rec)) <= 40 else repr(rec)[:37] + "..."
        return f"record={text}: must be a JSON object (a run record), not {type(rec).__name__}"
    for name in ("key", "config", "seed", "status"):
        if name not in rec:
            return f"{name}: missing (a run record needs key, config, seed and status)"
    checks = [
        ("key", rec["key"], None if isinstance(rec["key"], str) else "must be a string"),
        (
            "seed",
            rec["seed"],
            None if _is_int(rec["seed"]) and 0 <= rec["seed"] <= SEED_MAX else "must be an integer >= 0",
        ),
        ("status", rec["status"], None if rec["status"] in STATUSES else "must be one of " + ", ".join(STATUSES)),
        ("config", rec["config"], None if isinstance(rec["config"], dict) else "must be an object"),
    ]
    config = rec["config"] if isinstance(rec["config"], dict) else {}
    for section, kinds in _KINDS.items():
        fields = config.get(section, {})
        if not isinstance(fields, dict):
            checks.append((f"config.{section}", fields, "must be an object"))
            continue
        checks += [(f"config.{section}.{k}", v, _kind_problem(v, kinds[k])) for k, v in fields.items() if k in kinds]
    checks += [
        (k, rec[k], None if rec[k] is None or _is_real(rec[k]) else "must be a number or null")
        for k in _REAL_FIELDS
        if k in rec
    ]
    checks += [(k, rec[k], None if _is_int(rec[k]) else "must be an integer") for k in _INT_FIELDS if k in rec]
    if "converged" in rec and not isinstance(rec["converged"], bool):
        checks.append(("converged", rec["converged"], "must be true or false"))
    for name, value, problem in checks:
        if problem is not None:
            text = repr(value) if len(repr(value)) <= 40 else repr(value)[:37] + "..."
            return f"{name}={text}: {problem}"
    return None


__all__ = [
    "RunRecord",
    "Floor",
    "RUN_RECORD_FIELDS",
    "STATUSES",
    "RecordWarning",
    "record_problem",
    "unknown_config_fields",
]

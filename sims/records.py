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

from typing import Any, Required, TypedDict


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


RUN_RECORD_FIELDS = frozenset(RunRecord.__annotations__)

__all__ = ["RunRecord", "Floor", "RUN_RECORD_FIELDS"]

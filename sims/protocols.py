"""Named training protocols: the training settings (schedule, learning rate, batch, steps), the
initial scale, the model variant and width that define each, and what it probes.

A protocol is configuration, not a result: a sweep's TOML sets its fields, and the analysis
(:func:`depthscale.derivations.claims.protocol_rows.protocol_of`) recognises a curve's protocol from
its runs' configuration. Several studies decide their claims per protocol, so the table lives here,
below all of them.

>>> cosine = next(p for p in PROTOCOLS if p.name == "cosine")
>>> cosine.schedule, cosine.lr, cosine.steps, cosine.fixed_budget
('cosine', 0.003, 4000, False)
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Protocol:
    """A training protocol: the settings that define it and what it probes."""

    name: str
    schedule: str
    lr: float
    batch: int
    steps: int
    init_scale: float
    probes: str
    fixed_budget: bool = False  # stopped early by design: convergence is not asked of its runs
    variant: str = "base"  # the model variant the protocol trains (derivations.analysis.curve.variant_name)
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
    # the positive control, the paper's likely model and the plateau schedule
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
    # the objections to the negative result: other learning rates, twice the width, the paper preset's
    # 20,000 steps; the rest as ``cosine``
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


__all__ = ["Protocol", "PROTOCOLS"]

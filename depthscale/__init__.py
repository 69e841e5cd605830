"""depthscale: theory and simulation of depth scaling in attention models.

Three subpackages, importing one way only (``theory`` <- ``sims`` <- ``derivations``):
``depthscale.theory`` (derivations and depth laws, no I/O), ``depthscale.sims`` (numba
simulations, sweeps, the results store) and ``depthscale.derivations`` (fits, claims, figures,
reports, and the ``Study`` record); the studies themselves are ``depthscale.studies`` (one package
per study, listed by ``depthscale.derivations.study.studies()``), importing the three. The names
below are re-exported here and imported on first use, so ``import depthscale`` loads neither numba
nor sympy.

The five entry points::

    from depthscale import (PowerLawSpectrum, linear_law_columns, build_derivation, RunConfig,
                            TaskConfig, ModelConfig, TrainConfig, run, load_grid, sweep, Store, to_frame,
                            curves, evaluate_claims, Evidence, build_context, write_report)

    # 1. a theory law: the linear-attention depth laws of one spectrum, in milliseconds
    laws = linear_law_columns(PowerLawSpectrum(a=2.0, b=1.0, d=1000), [1, 2, 4, 8, 16])

    # 2. a derivation: sympy steps, each machine-checked
    derivation = build_derivation("linear")
    derivation.check().all_passed

    # 3. one simulation: train and measure one model (a run record, a dict)
    record = run(RunConfig(TaskConfig(task="topk", d=8, P=64), ModelConfig(model="softmax", depth=4),
                           TrainConfig(steps=300)), seed=0)

    # 4. a sweep into a results store (resumable: finished runs are skipped)
    with Store("runs.sqlite", mode="write") as store:
        sweep(load_grid("grid.toml"), store)
    to_frame("runs.sqlite")  # a pandas DataFrame, one row per run ("layer_losses" etc.: long tables)

    # 5. fits, claims and a report from a store
    with Store("runs.sqlite", mode="read") as store:
        records = list(store.records())
    fitted = curves(records)  # one Curve per condition; each owns its FitResults
    claims = evaluate_claims(Evidence(fitted))  # ClaimResults with verdicts (no theory numbers given)
    write_report(build_context(records, title="My sweep"), "report")  # Markdown, HTML, LaTeX

Examples
--------
>>> import depthscale
>>> depthscale.__version__ == __import__("importlib.metadata").metadata.version("depthscale")
True
>>> depthscale.Store is depthscale.sims.Store
True
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

SUBPACKAGES = ("theory", "sims", "derivations")

# public name -> the subpackage that re-exports it; resolved through that subpackage's own lazy
# table (not a module path), so moving a module inside a subpackage does not touch this table
EXPORTS = {
    **dict.fromkeys(
        (
            "PowerLawSpectrum LINEAR_LAWS linear_law_columns linear_laws_frame linear_floor FloorResult DERIVATIONS Derivation "
            "build_derivation clt_loss decompose"
        ).split(),
        "theory",
    ),
    **dict.fromkeys(
        (
            "TaskConfig ModelConfig TrainConfig RunConfig run load_grid sweep SweepResult Store to_frame "
            "register_attention register_model register_task register_optimizer register_loss from_layer_outputs "
            "check_attention check_model check_task"
        ).split(),
        "sims",
    ),
    **dict.fromkeys(
        (
            "Curve curves FitResult fit_offset_power fit_power_law ClaimResult ClaimTable Evidence evaluate_claims "
            "build_context write_report plot_curve plot_linear_laws Study check_prediction"
        ).split(),
        "derivations",
    ),
}

__all__ = ["__version__", *SUBPACKAGES, *EXPORTS]

if TYPE_CHECKING:  # what type checkers and IDEs see; at run time __getattr__ below imports on first use
    from depthscale import derivations as derivations
    from depthscale import sims as sims
    from depthscale import theory as theory
    from depthscale.derivations.analysis.curve import Curve as Curve
    from depthscale.derivations.analysis.curve import curves as curves
    from depthscale.derivations.analysis.fits import FitResult as FitResult
    from depthscale.derivations.analysis.fits import fit_offset_power as fit_offset_power
    from depthscale.derivations.analysis.fits import fit_power_law as fit_power_law
    from depthscale.derivations.check import check_prediction as check_prediction
    from depthscale.derivations.claims.display import ClaimTable as ClaimTable
    from depthscale.derivations.claims.evidence import Evidence as Evidence
    from depthscale.derivations.claims.registry import evaluate_claims as evaluate_claims
    from depthscale.derivations.claims.verdicts import ClaimResult as ClaimResult
    from depthscale.derivations.report.plots import plot_curve as plot_curve
    from depthscale.derivations.report.plots import plot_linear_laws as plot_linear_laws
    from depthscale.derivations.report.render import write_report as write_report
    from depthscale.derivations.report.reporting import build_context as build_context
    from depthscale.derivations.study import Study as Study
    from depthscale.sims.attention_registry import register_attention as register_attention
    from depthscale.sims.config import ModelConfig as ModelConfig
    from depthscale.sims.config import RunConfig as RunConfig
    from depthscale.sims.config import TaskConfig as TaskConfig
    from depthscale.sims.config import TrainConfig as TrainConfig
    from depthscale.sims.conformance import check_attention as check_attention
    from depthscale.sims.conformance import check_model as check_model
    from depthscale.sims.conformance import check_task as check_task
    from depthscale.sims.frames import to_frame as to_frame
    from depthscale.sims.grid import load_grid as load_grid
    from depthscale.sims.loss_registry import register_loss as register_loss
    from depthscale.sims.model_registry import register_model as register_model
    from depthscale.sims.optimizer_registry import register_optimizer as register_optimizer
    from depthscale.sims.runner import from_layer_outputs as from_layer_outputs
    from depthscale.sims.runner import run as run
    from depthscale.sims.store import Store as Store
    from depthscale.sims.sweeps import SweepResult as SweepResult
    from depthscale.sims.sweeps import sweep as sweep
    from depthscale.sims.task_registry import register_task as register_task
    from depthscale.theory.clt import clt_loss as clt_loss
    from depthscale.theory.clt import decompose as decompose
    from depthscale.theory.derivation import DERIVATIONS as DERIVATIONS
    from depthscale.theory.derivation import Derivation as Derivation
    from depthscale.theory.derivation import build_derivation as build_derivation
    from depthscale.theory.floor import FloorResult as FloorResult
    from depthscale.theory.floor import linear_floor as linear_floor
    from depthscale.theory.linear_laws import LINEAR_LAWS as LINEAR_LAWS
    from depthscale.theory.linear_laws import linear_law_columns as linear_law_columns
    from depthscale.theory.linear_laws import linear_laws_frame as linear_laws_frame
    from depthscale.theory.spectra import PowerLawSpectrum as PowerLawSpectrum

    __version__: str


def __getattr__(name: str):
    value: object
    if name == "__version__":
        # looked up on first use: importing importlib.metadata costs more than the rest of this package
        from importlib.metadata import PackageNotFoundError, version

        try:
            value = version("depthscale")
        except PackageNotFoundError:  # a source tree on sys.path, never installed
            value = "unknown"
    elif name in SUBPACKAGES:
        value = importlib.import_module(f"{__name__}.{name}")
    elif name in EXPORTS:
        value = getattr(importlib.import_module(f"{__name__}.{EXPORTS[name]}"), name)
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))

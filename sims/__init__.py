"""numba-accelerated simulations: tasks, models, training, measurement, sweeps and the results store.

Public names are re-exported lazily: ``from depthscale.sims import X`` imports only the
module that defines ``X``.
"""

import os

from depthscale.theory.exports import lazy_exports

# numba's OpenMP threads spin while waiting; on a loaded machine (a sweep on every core) each
# parallel region then costs whole time slices (measured 250x slower). Sleep instead; must be
# set before the OpenMP runtime starts, i.e. before the first parallel kernel runs.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

_EXPORTS = {
    "SingleHead": "baselines",
    "TwoHeads": "baselines",
    "fit_single_head": "baselines",
    "fit_two_heads": "baselines",
    "head_inputs": "baselines",
    "head_outputs": "baselines",
    "optimal_gains": "baselines",
    "paired_difference": "baselines",
    "ConvexMixture": "reference_floors",
    "ReferenceFloors": "reference_floors",
    "SignedMixture": "reference_floors",
    "excess_over_floors": "reference_floors",
    "fit_convex": "reference_floors",
    "fit_signed_mixture": "reference_floors",
    "reference_floors": "reference_floors",
    "Batch": "batch",
    "ModelConfig": "config",
    "RunConfig": "config",
    "TaskConfig": "config",
    "TrainConfig": "config",
    "config_hash": "config",
    "rng_for": "config",
    "run_key": "config",
    "load_grid": "grid",
    "parse_grid": "grid",
    "linear_pass": "linear_kernels",
    "LinearAttention": "linear_model",
    "population_loss": "linear_model",
    "evaluate": "measure",
    "make_model": "models",
    "run": "runner",
    "core_pass": "softmax_kernels",
    "ctx_pass": "softmax_kernels",
    "single_pass": "softmax_kernels",
    "SoftmaxAttention": "softmax_model",
    "Store": "store",
    "flatten": "store",
    "is_finished": "store",
    "SerialExecutor": "sweeps",
    "SweepResult": "sweeps",
    "make_executor": "sweeps",
    "plan": "sweeps",
    "sweep": "sweeps",
    "batches": "tasks",
    "eval_batches": "tasks",
    "make_batch": "tasks",
    "standard_normal": "tasks",
    "Adam": "training",
    "TrainResult": "training",
    "lr_at": "training",
    "train": "training",
}

__all__, __getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

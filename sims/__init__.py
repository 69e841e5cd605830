"""numba-accelerated simulations: tasks, models, training, measurement, sweeps and the results store.

Public names are re-exported lazily: ``from depthscale.sims import X`` imports only the
module that defines ``X``. ``reference_floors`` is imported from its module of the same name: at
package level that name is the module.
"""

import os

from depthscale.theory._exports import lazy_exports

# numba's OpenMP threads spin while waiting; on a loaded machine (a sweep on every core) each
# parallel region then costs whole time slices (measured 250x slower). Sleep instead; must be
# set before the OpenMP runtime starts, i.e. before the first parallel kernel runs.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    temperature_heads=(
        "SingleHead TwoHeads fit_single_head fit_two_heads head_inputs head_outputs optimal_gains paired_difference"
    ),
    reference_floors="ConvexMixture ReferenceFloors SignedMixture excess_over_floors fit_convex fit_signed_mixture",
    attention_registry="AttentionMap attention_names register_attention",
    model_registry="Model model_names register_model",
    conformance="Check ConformanceError ConformanceReport check_attention check_model check_task",
    task_registry="Task task_names register_task",
    optimizer_registry="Adam SGD Optimizer optimizer_names register_optimizer",
    loss_registry="Loss loss_names register_loss",
    registry="Registry",
    batch="Batch",
    config="ModelConfig RunConfig TaskConfig TrainConfig config_hash rng_for run_key",
    display="RecordView",
    progress="Progress",
    protocols="PROTOCOLS Protocol",
    frames="to_frame",
    grid="load_grid override_grid parse_grid",
    linear_kernels="linear_pass",
    linear_model="LinearAttention population_loss",
    measure="evaluate",
    models="AttentionModel make_model",
    records="RunRecord",
    runner="from_layer_outputs run",
    softmax_kernels="core_pass ctx_pass single_pass",
    softmax_model="SoftmaxAttention",
    store="Store flatten is_finished",
    sweeps="SerialExecutor SweepResult make_executor plan sweep",
    tasks="batches eval_batches make_batch standard_normal",
    training="TrainResult lr_at train",
)

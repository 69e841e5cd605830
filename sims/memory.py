"""What one run needs in memory, estimated from its config alone (no model built, nothing compiled),
so ``simulate`` and ``sweep`` refuse an impossible size before any work. What a model's parameters
and a step's scratch take is the model class's own (``Model.spec_class``, sims/model_registry.py)."""

from __future__ import annotations

from .config import RunConfig
from .model_registry import get_model

# the JAX engine's scan blocks of training batches (sims/jax_engine.py reads them from here)
JAX_BLOCK_BYTES = 32 * 2**20
JAX_BLOCK_STEPS = 32


def memory_bytes(config: RunConfig, prefetch: bool = False) -> float:
    """Bytes a run holds at once at least: parameters with their gradient and Adam moments, and the
    largest batch of contexts (``X (n,P,d)``, ``O (n,d,d)`` and the vectors of each context; two
    training batches with ``prefetch``), the per-context errors of the evaluation and, with the context
    update, one chunk's kept context attention (``(L-1) x P x P``). On the JAX engine
    (``engine="jax"``) also what autograd keeps of a training step (softmax: the normalised tokens
    ``(B,P,N)`` and three ``(B,L,P)`` score-sized arrays and ``U (B,L,N)``; linear: ``X^T X (B,d,d)``
    and two ``(L,B,N,d)`` layer states) and one ``lax.scan`` block of training batches, on the host and
    on the device (:func:`depthscale.sims.jax_engine` blocks: at most 32 steps and 32 MiB, at least one
    batch). Other activations come on top, so this is a lower bound.

    >>> from depthscale.sims.config import RunConfig, TaskConfig, TrainConfig
    >>> cfg = RunConfig(TaskConfig(d=16, P=128), train=TrainConfig(batch=1024))
    >>> round(memory_bytes(cfg) / 2**20, 1)
    19.9
    """
    task, mcfg, tcfg = config.task, config.model, config.train
    itemsize = 4 if mcfg.dtype == "float32" else 8
    d, P = task.d, task.P
    per_context = P * d + d * d + P + 4 * d + 1 + task.k  # X, O, y, (x_test, t, beta), target, sel
    train_batch = tcfg.batch * per_context * itemsize * (2 if prefetch else 1)
    eval_batch = min(1024, tcfg.eval_contexts) * per_context * itemsize  # evaluate's default chunk
    model = get_model(mcfg.model).spec_class()  # a user's model: costed as the softmax model of its size
    params = 4 * model.layout_of(mcfg, d).n_params * itemsize  # theta, gradient, two Adam moments
    per_eval_context = 4 * 8  # the squared errors of the model and of the three floors, kept for paired errors
    scratch = model.scratch_elems(mcfg, d, P, tcfg.batch, mcfg.engine) * itemsize
    if mcfg.engine == "jax":
        one = tcfg.batch * per_context * itemsize
        scratch += 2 * max(one, min(JAX_BLOCK_BYTES, JAX_BLOCK_STEPS * one, tcfg.steps * one))
    return float(params + max(train_batch, eval_batch) + scratch + tcfg.eval_contexts * per_eval_context)


def check_memory_of(config: RunConfig, prefetch: bool = False) -> float:
    """Refuse (``ValueError`` naming the sizes and the estimate) a run that cannot fit in memory.

    >>> from depthscale.sims.config import RunConfig, TaskConfig
    >>> check_memory_of(RunConfig(TaskConfig(d=100_000, P=1_000_000)))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: d=100000, P=1000000, batch=1024, depth=1, eval-contexts=10240: needs at least 821 TiB of memory; ...
    """
    from ..theory._validate import check_memory

    t, m, tr = config.task, config.model, config.train
    return check_memory(
        f"d={t.d}, P={t.P}, batch={tr.batch}, depth={m.depth}, eval-contexts={tr.eval_contexts}",
        memory_bytes(config, prefetch),
    )

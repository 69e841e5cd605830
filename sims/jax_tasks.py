"""The tasks' contexts generated in JAX, on the device that trains (the JAX engine's training data).

The distributions are ``sims/tasks.py``'s (``make_batch``): per context a Haar rotation ``O`` (Q of the
QR factorisation of a Gaussian matrix, its columns multiplied by ``sign(diag R)``), ``beta = O
(sqrt(omega) * g)``, ``x_i = O (sqrt(lam) * z_i)``, ``y_i = beta . x_i``, and the targets
``easy-exact`` (a uniform context token as the query), ``easy-fresh`` (``beta . x_test``) and
``topk`` (the mean label of the ``k`` tokens of largest cosine similarity to the query, exact ties to
the lower index). The numbers are not ``make_batch``'s: they come from ``jax.random`` (threefry), a
batch being a pure function of a key, so a training step's batch is made inside the jitted step
(``jax.random.fold_in(key, step)``) with no host transfer. The key is derived from the run's
task and seed (:func:`data_key`), so a JAX run is reproducible; its training stream differs from
the numba engine's, and the two agree in distribution (tests/sims/test_jax_tasks.py compares the
moments by Monte Carlo). Evaluation contexts stay the host's (``eval_batches``): every engine and the
reference floors are measured on the same contexts.
"""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np

from ..theory._validate import bad_argument
from .config import TaskConfig, rng_for
from .task_registry import get_task


@dataclasses.dataclass(frozen=True)
class DataSpec:
    """What the generator needs at trace time (hashable: a jit's static argument)."""

    task: str
    k: int
    d: int
    P: int
    sqrt_lam: tuple
    sqrt_omega: tuple

    @classmethod
    def of(cls, task: TaskConfig) -> DataSpec:
        """The spec of a task: its kind, sizes and the square roots of its spectra (a built-in task:
        a user's is drawn on the host, ``ValueError`` naming ``task``)."""
        if not get_task(task.task).builtin:
            bad_argument("task", task.task, "a built-in task (a user's task is drawn on the host: data='host')")
        return cls(
            task.task, task.k, task.d, task.P, tuple(np.sqrt(task.lam).tolist()), tuple(np.sqrt(task.omega).tolist())
        )


def data_key(task: TaskConfig, seed: int) -> np.ndarray:
    """The run's data key (a raw ``uint32[2]`` threefry key), derived from ``(task, seed)`` as the
    numba engine's stream is (``rng_for(task, seed, ...)``), under a purpose of its own.

    >>> data_key(TaskConfig(d=4, P=8), 0).dtype
    dtype('uint32')
    """
    return rng_for(task, seed, "train-device").integers(0, 2**32, size=2, dtype=np.uint32)


def haar(key, n: int, d: int, dtype):
    """``n`` Haar-distributed ``d x d`` rotations: Q of QR(G) with ``Q diag(sign(diag R))``."""
    G = jax.random.normal(key, (n, d, d), dtype)
    q, r = jnp.linalg.qr(G)
    s = jnp.sign(jnp.diagonal(r, axis1=-2, axis2=-1))
    return q * jnp.where(s == 0, 1.0, s)[:, None, :].astype(dtype)


def contexts(spec: DataSpec, n: int, key, dtype=jnp.float64) -> dict:
    """``n`` contexts of ``spec``: ``X (n,P,d)``, ``y (n,P)``, ``x_test (n,d)``, ``target (n,)``,
    ``t (n,d)``, ``beta (n,d)``, ``O (n,d,d)``, ``sel (n,k)`` (as ``make_batch``'s ``Batch``).

    A pure function of ``key`` (call it inside ``jax.jit`` with ``spec`` and ``n`` static).
    """
    d, P = spec.d, spec.P
    kO, kb, kx, kq, kj = jax.random.split(key, 5)
    O = haar(kO, n, d, dtype)
    sl = jnp.asarray(spec.sqrt_lam, dtype)
    so = jnp.asarray(spec.sqrt_omega, dtype)
    beta = jnp.einsum("bij,bj->bi", O, so * jax.random.normal(kb, (n, d), dtype))
    X = jnp.einsum("bpj,bij->bpi", sl * jax.random.normal(kx, (n, P, d), dtype), O)
    y = jnp.einsum("bpi,bi->bp", X, beta)
    if spec.task == "easy-exact":
        j = jax.random.randint(kj, (n,), 0, P)
        xq = jnp.take_along_axis(X, j[:, None, None], axis=1)[:, 0]
        target = jnp.take_along_axis(y, j[:, None], axis=1)[:, 0]
        return dict(X=X, y=y, x_test=xq, target=target, t=xq, beta=beta, O=O, sel=j[:, None])
    xq = jnp.einsum("bij,bj->bi", O, sl * jax.random.normal(kq, (n, d), dtype))
    if spec.task == "easy-fresh":
        target = jnp.einsum("bi,bi->b", beta, xq)
        return dict(X=X, y=y, x_test=xq, target=target, t=xq, beta=beta, O=O, sel=jnp.zeros((n, 0), jnp.int32))
    # top-k by cosine similarity (the query's norm is common to all tokens: dropped, as make_batch does);
    # lax.top_k puts the lower index first among equal values
    if d == 1:  # every cosine is +-1: computed exactly, so that ties are ties (not rounding)
        cs = jnp.sign(X[:, :, 0]) * xq
    else:
        nn = jnp.einsum("bpi,bpi->bp", X, X)
        dot = jnp.einsum("bpi,bi->bp", X, xq)
        cs = jnp.where(nn > 0, dot / jnp.sqrt(jnp.where(nn > 0, nn, 1.0)), 0.0)
    _, sel = jax.lax.top_k(cs, spec.k)
    target = jnp.take_along_axis(y, sel, axis=1).mean(axis=1)
    t = jnp.take_along_axis(X, sel[:, :, None], axis=1).mean(axis=1)
    return dict(X=X, y=y, x_test=xq, target=target, t=t, beta=beta, O=O, sel=sel)


def step_batch(spec: DataSpec, n: int, key, step, dtype):
    """The training batch ``(X, y, x_test, target)`` of ``step``: ``contexts`` at ``fold_in(key, step)``."""
    c = contexts(spec, n, jax.random.fold_in(key, step), dtype)
    return c["X"], c["y"], c["x_test"], c["target"]

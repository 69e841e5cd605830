"""The JAX engine: the two-stream models written once with autograd, trained with a jitted optimiser loop.

``ModelConfig(engine="jax")`` (``pip install "depthscale[jax]"``). The forward passes are those of
docs/engine-contract.md and of the numba models, with the same flat parameter vector (layout,
initialisation and ``qk_norms`` come from the numba model classes), so a JAX run's record has the
numba record's schema and the numba model can measure a JAX run's parameters and the other way round:

- the softmax-family base layer (two streams, context tokens not updated) with any registered
  attention map, shared or per-layer value, and every query-key variant (factorised, merged, tied,
  temperature): ``yhat = (1/L) sum_l g_l p_l . y`` with ``p_l = map(xhat_test^T M_l xhat_i)``,
  ``g_l = W_o W_v^l W_y`` and RMS-normalised tokens;
- a map's learnable per-layer parameters (``register_attention(..., params=...)``) appended to the
  vector as blocks ``map.<name>`` of one entry per layer, at their initial values, trained with the rest;
- linear attention through its sufficient statistics (``sims/linear_model.py``'s recurrence of
  ``Chat^l``, exact and independent of P after the ``O(P d^2)`` statistic).

Gradients are ``jax.value_and_grad`` of the loss (no hand-derived backward pass). float64 runs in
double precision: the engine's own calls (a model's passes, training, the map heads) run inside
:func:`x64`, JAX's ``enable_x64`` scope, and importing this module leaves the process's
``jax_enable_x64`` as it was (float32 models still compute in float32). Training
(:func:`train_lockstep`) runs blocks of steps in one jitted ``lax.scan`` (the run's optimiser from optax, the
learning rate of each step an input), and replays the losses through ``sims.training``'s own
stopping and divergence rules on the host; a block in which
a rule fires (a stop, a plateau halving, a checkpoint) is recomputed up to that step. Training data
are generated on the device inside the jitted blocks (``sims/jax_tasks.py``: ``make_batch``'s
distributions from a ``jax.random`` key derived from the task and seed, so no batch crosses from the
host per step; a JAX run's stream is not the numba engine's, and agrees with it in distribution);
``train_lockstep(..., data="host")`` trains on the numba engine's own batches instead (exact
cross-engine checks). :func:`train_seeds` trains several seeds of one model in one compiled
program (``vmap``). A user's whole model (``depthscale.register_model``, sims/model_registry.py)
is trained and measured the same way. Measurement (A_L, C_L, the reference floors) runs on the
host from the per-layer outputs, on the evaluation contexts every engine shares. The JAX engine
runs unchanged on an accelerator (JAX picks the device); the GPU path is untested here
(docs/benchmarks.md).

Compiled programs persist across processes in JAX's compilation cache, ``<user cache>/depthscale/
<version>/jax`` beside numba's kernels (:func:`configure_cache`, at the engine's first use, unless
the user has configured JAX's cache; ``DEPTHSCALE_JAX_CACHE=0`` turns it off): a repeat run loads
its programs instead of compiling each shape again.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import importlib
import math
import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

try:
    import jax
    import jax.numpy as jnp
    import optax
except ImportError as exc:  # pragma: no cover - the extra is missing
    raise ImportError(
        "engine='jax': needs JAX and optax installed (pip install 'depthscale[jax]'); " + str(exc)
    ) from None

from ..theory._validate import bad_argument
from .attention_registry import AttentionMap, get_attention
from .config import ModelConfig, TaskConfig, TrainConfig, rng_for
from .jax_tasks import DataSpec, data_key, step_batch
from .jit import numba_cache_dir, writable_folder
from .loss_registry import get_loss
from .memory import JAX_BLOCK_BYTES, JAX_BLOCK_STEPS
from .model_registry import get_model
from .optimizer_registry import Hyper, get_optimizer
from .parameters import ParamLayout
from .softmax_kernels import RMS_EPS
from .task_registry import get_task
from .tasks import make_batch

# JAX's own scope of the x64 flag (newer JAX), else its older experimental one
_enable_x64: Any = getattr(jax, "enable_x64", None)
if _enable_x64 is None:  # pragma: no cover - older JAX
    _enable_x64 = vars(importlib.import_module("jax.experimental"))["enable_x64"]


def x64():
    """A context in which JAX computes in float64 (``jax_enable_x64`` on), restored on exit.

    Every public entry of the engine runs inside it, so importing or calling the engine leaves the
    process's flag as it was; call JAX functions of the engine's inputs (``sims.jax_tasks``) inside it.

    >>> with x64():
    ...     jnp.zeros(1).dtype
    dtype('float64')
    """
    return _enable_x64(True)


# ------------------------------------------------------------------------------------------------
# JAX's persistent compilation cache: a new process loads the engine's compiled programs instead
# of compiling each shape again (seconds each on a CPU)
CACHE_SWITCH = "DEPTHSCALE_JAX_CACHE"  # 0 / off turns the engine's default cache off
_SWITCH_ON, _SWITCH_OFF = ("", "1", "on", "true", "yes"), ("0", "off", "false", "no")
# the thread-local scope of JAX's threshold below which a compiled program is not written (1 s by
# default: most of the engine's programs compile faster on a CPU, and all are worth keeping); a JAX
# without the state keeps its global threshold
_min_compile_time: Any = getattr(
    importlib.import_module("jax._src.config"), "persistent_cache_min_compile_time_secs", None
)
_cache: dict[str, Any] = {"configured": False, "folder": None, "ours": False}


def cache_switch(value: str | None) -> bool:
    """Whether the value of ``DEPTHSCALE_JAX_CACHE`` asks for the engine's cache (unset: yes).

    >>> cache_switch(None), cache_switch("0"), cache_switch("on")
    (True, False, True)
    """
    v = (value or "").strip().lower()
    if v not in _SWITCH_ON + _SWITCH_OFF:
        bad_argument(CACHE_SWITCH, value, "1 or 0 (on, off; unset is on)")
    return v in _SWITCH_ON


def jax_cache_dir() -> Path | None:
    """The engine's compilation cache: ``<user cache>/depthscale/<version>/jax``, beside numba's
    (``sims.jit.numba_cache_dir``); None when there is no home directory.

    >>> jax_cache_dir().name
    'jax'
    """
    folder = numba_cache_dir()
    return None if folder is None else folder.with_name("jax")


def _jax_option(name: str) -> Any:
    return getattr(jax.config, name)  # JAX declares its options at run time: not typed


def configure_cache() -> str | None:
    """Point JAX's persistent compilation cache at :func:`jax_cache_dir`, once, at the engine's first
    use; return the cache folder in use (None: no persistent cache).

    Left as it is when the user has configured JAX's cache (``JAX_COMPILATION_CACHE_DIR`` or
    ``jax.config``'s ``jax_compilation_cache_dir``, whose thresholds then hold too), disabled it
    (``jax_enable_compilation_cache``), or turned the engine's default off
    (``DEPTHSCALE_JAX_CACHE=0``). The setting is JAX's, process-wide: once it is set, other JAX
    programs of the process that compile for over a second are kept there too.
    """
    if _cache["configured"]:
        return _cache["folder"]
    wanted = cache_switch(os.environ.get(CACHE_SWITCH))  # a bad value: a ValueError, nothing configured
    enabled = _jax_option("jax_enable_compilation_cache")
    users = _jax_option("jax_compilation_cache_dir") or os.environ.get("JAX_COMPILATION_CACHE_DIR") or None
    folder = None
    if users is not None or not enabled:
        folder = users if enabled else None
    elif wanted:
        mine = jax_cache_dir()
        if mine is not None and writable_folder(mine):
            folder = str(mine)
            jax.config.update("jax_compilation_cache_dir", folder)
            _cache["ours"] = True
        else:  # JAX would warn at every program it fails to write: one line, then no cache
            sys.stderr.write(
                f"depthscale: warning: the JAX cache folder {str(mine)!r} cannot be written; "
                "JAX programs are compiled without a cache\n"
            )
    _cache.update(configured=True, folder=folder)
    return folder


@contextlib.contextmanager
def _engine_scope():
    """float64 (:func:`x64`) and, where the cache is the engine's own, every program written to it."""
    configure_cache()
    with x64():
        if _cache["ours"] and _min_compile_time is not None:
            with _min_compile_time(0.0):
                yield
        else:
            yield


def _in_x64(fn):
    """``fn`` run inside the engine's scope (an engine entry point): :func:`x64` and the cache."""

    @functools.wraps(fn)
    def inside(*args, **kwargs):
        with _engine_scope():
            return fn(*args, **kwargs)

    return inside


# host batches stacked into one scan block: at most BLOCK_BYTES and BLOCK_STEPS steps (sims/memory.py counts them)
BLOCK_BYTES, BLOCK_STEPS = JAX_BLOCK_BYTES, JAX_BLOCK_STEPS


# ------------------------------------------------------------------------------------------------
# the built-in maps, in JAX (scores (..., P) -> weights (..., P)); the numba kernels are the others
def softmax(z):
    """``p = exp(z) / sum exp(z)``."""
    return jax.nn.softmax(z, axis=-1)


def sparsemax(z):
    """Euclidean projection of ``z`` onto the simplex (Martins and Astudillo 2016), by sorting."""
    P = z.shape[-1]
    zs = -jnp.sort(-z, axis=-1)
    k = jnp.arange(1, P + 1, dtype=z.dtype)
    cs = jnp.cumsum(zs, axis=-1)
    size = jnp.sum(1.0 + k * zs > cs, axis=-1, keepdims=True).astype(jnp.int32)
    tau = (jnp.take_along_axis(cs, size - 1, axis=-1) - 1.0) / size.astype(z.dtype)
    return jnp.maximum(z - tau, 0.0)


def entmax15(z):
    """1.5-entmax ``p_i = [z_i / 2 - tau]_+^2`` with ``sum p = 1`` (Peters et al. 2019), by sorting."""
    P = z.shape[-1]
    u = z / 2.0
    us = -jnp.sort(-u, axis=-1)
    k = jnp.arange(1, P + 1, dtype=z.dtype)
    mean = jnp.cumsum(us, axis=-1) / k
    mean_sq = jnp.cumsum(us * us, axis=-1) / k
    delta = (1.0 - k * (mean_sq - mean * mean)) / k
    pos = delta > 0
    root = jnp.where(pos, jnp.sqrt(jnp.where(pos, delta, 1.0)), 0.0)  # no 0 * inf in the backward pass
    tau = mean - root
    size = jnp.sum(tau <= us, axis=-1, keepdims=True).astype(jnp.int32)
    tau_star = jnp.take_along_axis(tau, size - 1, axis=-1)
    return jnp.square(jnp.maximum(u - tau_star, 0.0))


def sigmoid(z):
    """``sigmoid(z_i - log P)``: a fixed bias that makes zero scores give weights near ``1/P``."""
    return jax.nn.sigmoid(z - math.log(z.shape[-1]))


def relu(z):
    """``relu(z_i) / P``."""
    return jnp.maximum(z, 0.0) / z.shape[-1]


MAP_PREFIX = "map."  # a map's learnable parameters in the layout: map.<name>, one entry per layer
BUILTIN_JAX = {"softmax": softmax, "sparsemax": sparsemax, "entmax15": entmax15, "sigmoid": sigmoid, "relu": relu}


def jax_map(entry: AttentionMap):
    """The JAX function of a registered map (a built-in's from this module, a user's its own)."""
    fn = BUILTIN_JAX.get(entry.name) if entry.code is not None else entry.jax_fn
    if fn is None:
        bad_argument("attention", entry.name, "a map with a JAX function")
    return fn


@_in_x64
def map_head_outputs(entry: AttentionMap, cos: np.ndarray, y: np.ndarray, kappas: np.ndarray) -> np.ndarray:
    """``S[b, k] = map(kappas[k] cos[b]) . y[b]`` (float64) for a user's map: the temperature heads of
    its reference floors (``sims.temperature_heads.head_outputs`` runs the built-ins in numba); a map
    with learnable parameters gives its heads at their initial values."""
    fn = jax_map(entry)
    cos = np.asarray(cos, np.float64)
    y = np.asarray(y, np.float64)
    kap = np.asarray(kappas, np.float64)
    values = jnp.asarray([v for _, v in entry.params], jnp.float64)  # a map's parameters: their initial values
    n, K = cos.shape[0], kap.size
    # the floors' searches ask for many kappa counts and context counts: padded to powers of two
    # (the last kappa, the last context repeated) so that JAX compiles a few shapes, not one per call
    K_pad = _pow2(K)
    kap_pad = np.concatenate([kap, np.full(K_pad - K, kap[-1] if K else 0.0)])
    step = _pow2(max(1, 2**22 // max(cos.shape[1] * K_pad, 1))) // 2 or 1  # contexts per call: a few million weights
    out = np.empty((n, K))
    for b0 in range(0, n, step):
        c, yy = cos[b0 : b0 + step], y[b0 : b0 + step]
        m = c.shape[0]
        rows = np.r_[np.arange(m), np.full(_pow2(m) - m, m - 1)]
        chunk = _heads(fn, entry.param_names, c[rows], yy[rows], kap_pad, values)
        out[b0 : b0 + m] = np.asarray(chunk)[:m, :K]
    return out


def _pow2(n: int) -> int:
    """The least power of two >= n (1 for n <= 1)."""
    return 1 << max(int(n) - 1, 0).bit_length()


@functools.partial(jax.jit, static_argnums=(0, 1))
def _heads(fn, names, cos, y, kap, values):
    w = fn(kap[None, :, None] * cos[:, None, :], **dict(zip(names, values)))  # (n, K, P)
    return jnp.einsum("nkp,np->nk", w, y)


# ------------------------------------------------------------------------------------------------
# the models' forward passes (pure functions of theta and the batch arrays; spec is static)
@dataclasses.dataclass(frozen=True)
class Spec:
    """What the forward pass of a model needs to know at trace time (hashable: a jit's static argument)."""

    model: str
    qk: str
    value: str
    attention: str
    L: int
    N: int
    d: int
    slices: tuple  # ((name, start, stop, shape), ...)
    treedef: Any = None  # a user's model: the structure of its parameters (sims/model_registry.py)
    user: Any = None  # ... and its registry entry (in the jit's key: a name registered again recompiles)


def _unpack(spec: Spec, theta) -> dict:
    return {name: theta[a:b].reshape(shp) for name, a, b, shp in spec.slices}


def _qk_matrices(spec: Spec, p: dict):
    L, N = spec.L, spec.N
    if spec.qk == "factorised":
        return jnp.matmul(jnp.swapaxes(p["W_q"], 1, 2), p["W_k"])
    if spec.qk == "merged":
        return p["B"]
    if spec.qk == "tied":
        return jnp.broadcast_to(p["W_q"].T @ p["W_k"], (L, N, N))
    return p["kappa"][:, None, None] * jnp.eye(N, dtype=p["kappa"].dtype)


def _rms(h):
    return h / jnp.sqrt(jnp.mean(h * h, axis=-1, keepdims=True) + RMS_EPS)


def _softmax_parts(spec: Spec, theta, X, y, xq):
    """Per-layer outputs f (B, L) and weights (B, L, P) of the two-stream softmax-family base layer."""
    p = _unpack(spec, theta)
    Wx = p["W_x"]
    Xh = _rms(X @ Wx.T)  # (B, P, N)
    xt = _rms(xq @ Wx.T)  # (B, N)
    U = jnp.einsum("bn,lnm->blm", xt, _qk_matrices(spec, p))  # U[b, l] = M_l^T xhat_test
    Z = jnp.einsum("blm,bpm->blp", U, Xh)
    entry = get_attention(spec.attention)
    # a map's learnable parameters: one value per layer, shaped (L, 1) against the scores (B, L, P)
    W = jax_map(entry)(Z, **{name: p[MAP_PREFIX + name][:, None] for name in entry.param_names})
    s = jnp.einsum("blp,bp->bl", W, y)
    Wv = p["W_v"].reshape(-1, spec.N, spec.N)
    g = jnp.einsum("a,lab,b->l", p["W_o"], Wv, p["W_y"])  # g_l = W_o W_v^l W_y (one gain if shared)
    return s * g, W


def _linear_parts(spec: Spec, theta, X, y, xq):
    """Per-layer outputs f (B, L) and raw test-token scores (B, L, P) of linear attention."""
    p = _unpack(spec, theta)
    L, N = spec.L, spec.N
    P = X.shape[1]
    Wx = p["W_x"]
    Sxx = jnp.einsum("bpi,bpj->bij", X, X) / P
    u = jnp.einsum("bpi,bp->bi", X, y) / P
    Et = jnp.einsum("ai,lba,bj->lij", Wx, _qk_matrices(spec, p), Wx)  # Et_l = W_x^T B_l^T W_x
    Wv = jnp.broadcast_to(p["W_v"].reshape(-1, N, N), (L, N, N))
    C0 = p["W_y"][None, :, None] * u[:, None, :]  # Chat^1 = W_y u^T, (B, N, d)

    def layer(C, inp):
        E, V = inp
        CE = jnp.einsum("bnd,de->bne", C, E)
        f = jnp.einsum("a,an,bnd,bd->b", p["W_o"], V, CE, xq) / N
        C = C - jnp.einsum("an,bnd,bde->bae", V, CE, Sxx) / (L * N)
        return C, f

    _, f = jax.lax.scan(layer, C0, (Et, Wv))
    scores = jnp.einsum("lij,bj,bpi->blp", Et, xq, X) / (P * N)
    return f.T, scores


def _user_parts(spec: Spec, theta, X, y, xq):
    """Per-layer outputs f (B, L) of a user's model, and its weights (B, L, P) where it gives them.

    Their shapes are checked when the pass is traced (its first call for a shape): anything else is
    a ``ValueError`` naming the model and the shape expected, never a record of the wrong depth."""
    entry = spec.user
    params = jax.tree_util.tree_unflatten(spec.treedef, [theta[a:b].reshape(shp) for _, a, b, shp in spec.slices])
    B, P = X.shape[:2]
    f = _checked_shape(entry.name, "layer_outputs", entry.layer_outputs(params, X, y, xq), (B, spec.L), "(B, L)")
    if entry.attention is None:
        return f, None
    return f, _checked_shape(entry.name, "attention", entry.attention(params, X, y, xq), (B, spec.L, P), "(B, L, P)")


def _checked_shape(model: str, fn: str, out, shape: tuple, what: str):
    """``out`` if its shape is ``shape``, else a ``ValueError`` naming the model and what was expected."""
    got = tuple(getattr(out, "shape", ()) or ())
    if got != shape:
        raise ValueError(
            f"model={model!r}: {fn}(params, X, y, x_test) must return an array of shape {what} = {shape} "
            f"(batch B = {shape[0]}, depth L = {shape[1]}), not shape {got}"
        )
    return out


def _parts(spec: Spec, theta, X, y, xq):
    if spec.treedef is not None:
        return _user_parts(spec, theta, X, y, xq)
    return (_linear_parts if spec.model == "linear" else _softmax_parts)(spec, theta, X, y, xq)


@functools.partial(jax.jit, static_argnums=0)
def _loss_and_grad(spec, theta, X, y, xq, target):
    # the model contract's loss: the squared error the numba models' loss_and_grad give
    return jax.value_and_grad(functools.partial(_train_loss, spec, "mse"))(theta, X, y, xq, target)


@functools.partial(jax.jit, static_argnums=0)
def _outputs(spec, theta, X, y, xq):
    return _parts(spec, theta, X, y, xq)


@functools.partial(jax.jit, static_argnums=0)
def _label_weights(spec, theta, X, y, xq):
    # yhat is linear in the labels and context b's yhat reads only y[b]: c = d sum(yhat) / d y
    return jax.grad(lambda yy: _parts(spec, theta, X, yy, xq)[0].mean(axis=1).sum())(y)


class JaxModel:
    """A model of ``cfg`` (``engine="jax"``) with the numba models' interface (docs/engine-contract.md).

    The parameter layout, initialisation, ``qk_norms`` and ``qk_maps`` are the numba model's (the
    same ``theta`` means the same model on both engines); the passes are JAX's, with autograd.
    """

    @_in_x64
    def __init__(self, cfg: ModelConfig, d: int):
        if not isinstance(cfg, ModelConfig):
            bad_argument("cfg", type(cfg).__name__, "a ModelConfig")
        self.entry = get_model(cfg.model)
        if not self.entry.builtin:
            self._user_model(cfg, d)
            return
        entry = get_attention(cfg.attention)  # ModelConfig has refused what the engine lacks (engines.py)
        host_cfg = dataclasses.replace(cfg, engine="numba", attention="softmax")
        self.host: Any = self.entry.host_class()(host_cfg, d)
        self.cfg, self.d, self.N, self.L = cfg, self.host.d, self.host.N, cfg.depth
        self.dtype = np.dtype(cfg.dtype)
        # a map's learnable parameters follow the numba model's blocks (linear attention keeps softmax's: none)
        self.map_params = entry.params
        self.n_host = self.host.n_params
        extra = [(MAP_PREFIX + name, (cfg.depth,)) for name, _ in self.map_params]
        self.layout = ParamLayout([*self.host.layout.shapes, *extra]) if extra else self.host.layout
        self.n_params = self.layout.n_params
        slices = tuple((name, a, b, tuple(shp)) for name, (a, b, shp) in self.layout.slices.items())
        self.spec = Spec(cfg.model, cfg.qk, cfg.value, cfg.attention, cfg.depth, self.N, self.d, slices)

    def _user_model(self, cfg: ModelConfig, d: int) -> None:
        """A user's model: its parameters' pytree flattened into ``theta`` (blocks named by their paths)."""
        d = int(d)
        self.host = None
        self.cfg, self.d, self.N, self.L = cfg, d, cfg.n(d), cfg.depth
        self.dtype = np.dtype(cfg.dtype)
        self.map_params = ()
        assert self.entry.init is not None  # a user's model has its functions (registry)
        init = self.entry.init
        shapes = jax.eval_shape(lambda key: init(key, cfg, d), jax.random.PRNGKey(0))
        leaves, treedef = jax.tree_util.tree_flatten_with_path(shapes)
        if not leaves:
            bad_argument("init", cfg.model, "a function returning a pytree with at least one array")
        self.layout = ParamLayout([(jax.tree_util.keystr(path), tuple(leaf.shape)) for path, leaf in leaves])
        self.n_params = self.n_host = self.layout.n_params
        slices = tuple((name, a, b, tuple(shp)) for name, (a, b, shp) in self.layout.slices.items())
        self.spec = Spec(cfg.model, cfg.qk, cfg.value, cfg.attention, cfg.depth, self.N, d, slices, treedef, self.entry)

    def names(self) -> list[str]:
        return self.layout.names()

    def unpack(self, theta) -> dict:
        return self.layout.unpack(theta)

    def _with_map_params(self, theta) -> np.ndarray:
        tail = [np.full(self.L, value) for _, value in self.map_params]  # each layer at the initial value
        return np.asarray(np.concatenate([theta, *tail]) if tail else theta, self.dtype)

    @_in_x64
    def init(self, rng: np.random.Generator) -> np.ndarray:
        if self.host is None:  # a user's model: its init at a key drawn from rng (the run's init stream)
            assert self.entry.init is not None
            key = jax.random.PRNGKey(int(rng.integers(0, 2**63 - 1)))
            leaves = jax.tree_util.tree_leaves(self.entry.init(key, self.cfg, self.d))
            return np.concatenate([np.ravel(np.asarray(a, self.dtype)) for a in leaves]).astype(self.dtype)
        return self._with_map_params(self.host.init(rng))

    def init_steps(self, rng: np.random.Generator, gamma) -> np.ndarray:
        return self._with_map_params(self.host.init_steps(rng, gamma))

    @_in_x64
    def map_parameters(self, theta) -> dict[str, np.ndarray]:
        """The map's learnable parameters in ``theta``, one value per layer (``{}`` for a map without any)."""
        blocks = self.layout.unpack(np.asarray(self._theta(theta)))
        return {name: blocks[MAP_PREFIX + name].copy() for name, _ in self.map_params}

    def qk_norms(self, theta):
        """Each layer's query-key norm; ``None`` for a user's model (its query-key maps are its own)."""
        if self.host is None:
            return None
        return self.host.qk_norms(np.asarray(theta, self.dtype)[: self.n_host])

    def qk_maps(self, theta):
        if self.host is None:
            return None
        return self.host.qk_maps(np.asarray(theta, self.dtype)[: self.n_host])

    @_in_x64
    def arrays(self, batch) -> tuple:
        """The batch's ``X, y, x_test, target`` as device arrays in the model's dtype (shapes checked)."""
        X = np.asarray(batch.X)
        if X.ndim != 3 or X.shape[2] != self.d or X.shape[0] < 1 or X.shape[1] < 1:
            bad_argument("batch.X.shape", X.shape, f"(B, P, {self.d}) with B, P >= 1")
        B, P = X.shape[:2]
        for name, shp in (("y", (B, P)), ("x_test", (B, self.d)), ("target", (B,))):
            if np.shape(getattr(batch, name)) != shp:
                bad_argument(f"batch.{name}.shape", np.shape(getattr(batch, name)), str(shp))
        dt = self.dtype
        return tuple(jnp.asarray(np.asarray(a, dt)) for a in (X, batch.y, batch.x_test, batch.target))

    def _theta(self, theta):
        theta = np.asarray(theta, self.dtype)
        if theta.shape != (self.n_params,):
            bad_argument("theta.shape", theta.shape, f"({self.n_params},)")
        return jnp.asarray(theta)

    @_in_x64
    def loss_and_grad(self, theta, batch) -> tuple[float, np.ndarray]:
        """Mean squared error over the batch and its gradient (autograd)."""
        X, y, xq, target = self.arrays(batch)
        loss, grad = _loss_and_grad(self.spec, self._theta(theta), X, y, xq, target)
        return float(loss), np.asarray(grad)

    @_in_x64
    def layer_outputs(self, theta, batch) -> np.ndarray:
        X, y, xq, _ = self.arrays(batch)
        return np.asarray(_outputs(self.spec, self._theta(theta), X, y, xq)[0])

    def predict(self, theta, batch) -> np.ndarray:
        return self.layer_outputs(theta, batch).mean(axis=1)

    @_in_x64
    def label_weights(self, theta, batch):
        """``c = d yhat / d y`` (B, P); ``None`` for a user's model not declared linear in the labels."""
        if self.host is None and not self.entry.linear_in_labels:
            return None
        X, y, xq, _ = self.arrays(batch)
        return np.asarray(_label_weights(self.spec, self._theta(theta), X, y, xq))

    @_in_x64
    def attention(self, theta, batch):
        """The test token's weights per layer (B, L, P) (the raw scores for linear attention); ``None``
        for a user's model without an ``attention`` function."""
        if self.host is None and self.entry.attention is None:
            return None
        X, y, xq, _ = self.arrays(batch)
        return np.asarray(_outputs(self.spec, self._theta(theta), X, y, xq)[1])


# ------------------------------------------------------------------------------------------------
# training: jitted blocks of optimiser steps, the host's rules replayed on their losses
def _train_loss(spec: Spec, loss: str, theta, X, y, xq, target):
    """The batch mean of the registered training loss ``loss`` (sims/loss_registry.py)."""
    f, _ = _parts(spec, theta, X, y, xq)
    return jnp.mean(get_loss(loss).per_context(f.mean(axis=1), target))


def _transform(hyper):
    """The optax transformation of ``hyper`` = ``(optimizer name, Hyper, loss name)``: the run's optimiser."""
    name, h = hyper[:2]
    make = get_optimizer(name).optax
    if make is None:  # RunConfig refuses such a run on this engine before it gets here
        raise ValueError(f"optimizer={name!r}: has no optax transformation (numba engine only)")
    return make(h)


def _optimizer_step(spec, hyper, grad_fn, th, st, X, y, xq, target, lr, on):
    """One step: loss and gradient, then the optimiser's update where ``on`` (the flags the host's rules read)."""
    loss, g = grad_fn(th, X, y, xq, target)
    finite = jnp.isfinite(loss) & jnp.all(jnp.isfinite(g))
    upd, st1 = _transform(hyper).update(g, st)
    th1 = th - lr.astype(th.dtype) * upd
    # after the update: parameters and the optimiser's state finite (an overflowed second moment
    # freezes a run); a stateless optimiser (sgd) has no leaves
    after = jnp.all(jnp.isfinite(th1))
    for a in jax.tree_util.tree_leaves(st1):
        after = after & jnp.all(jnp.isfinite(a))
    keep = functools.partial(jnp.where, on)
    # the target's scale (the loss of predicting 0), which the host's divergence rule reads at step 0
    scale = jnp.mean(jnp.square(target.astype(jnp.float64)))
    return (keep(th1, th), jax.tree_util.tree_map(keep, st1, st)), (loss, finite, after, scale)


@functools.partial(jax.jit, static_argnums=(0, 1))
def _block_host(spec, hyper, theta, state, X, y, xq, target, lrs, mask):
    """``lax.scan`` over a block of steps whose batches come from the host (stacked ``X, y, ...``)."""
    grad_fn = jax.value_and_grad(functools.partial(_train_loss, spec, hyper[2]))

    def step(carry, inp):
        return _optimizer_step(spec, hyper, grad_fn, *carry, *inp)

    (theta, state), outs = jax.lax.scan(step, (theta, state), (X, y, xq, target, lrs, mask))
    return theta, state, *outs


def _block_device_one(spec, data, hyper, batch, theta, state, key, steps, lrs, mask):
    grad_fn = jax.value_and_grad(functools.partial(_train_loss, spec, hyper[2]))

    def step(carry, inp):
        (th, st), (s, lr, on) = carry, inp
        X, y, xq, target = step_batch(data, batch, key, s, theta.dtype)  # made here, on the device
        return _optimizer_step(spec, hyper, grad_fn, th, st, X, y, xq, target, lr, on)

    (theta, state), outs = jax.lax.scan(step, (theta, state), (steps, lrs, mask))
    return theta, state, *outs


@functools.partial(jax.jit, static_argnums=(0, 1, 2, 3))
def _block_device(spec, data, hyper, batch, theta, state, key, steps, lrs, mask):
    """A block of steps of ``G`` runs of one model (``vmap`` over the leading axis of every array
    argument: seeds), each step's batch generated on the device from ``(key, step)``."""
    one = functools.partial(_block_device_one, spec, data, hyper, batch)
    return jax.vmap(one)(theta, state, key, steps, lrs, mask)


class _Replay:
    """Stands in for the model and the optimiser of a ``sims.training.Trainee``: the loss of each
    step comes from a computed block, and the learning rate the trainee would apply is recorded."""

    def __init__(self):
        self.now: tuple[float, bool, bool] = (math.nan, False, False)  # loss, gradient finite, state finite after
        self.applied: dict[int, float] = {}
        self.step_now = -1

    # the model's side
    def loss_and_grad(self, theta, batch):
        loss, finite, _ = self.now
        return loss, np.array([0.0 if finite else np.nan])

    # the optimiser's side
    def step(self, theta, grad, lr) -> None:
        self.applied[self.step_now] = lr

    def finite(self) -> bool:
        return self.now[2]


@dataclasses.dataclass
class _Targets:
    """What the trainee reads of a batch: a target whose mean square is the batch's (its scale)."""

    target: np.ndarray


class _Run:
    """One model and seed on the JAX engine: the host trainee and its replay (the device state is its group's)."""

    def __init__(self, model: JaxModel, mcfg: ModelConfig, task: TaskConfig, cfg: TrainConfig, seed: int, dtype):
        from .training import Trainee, initial_parameters

        self.trainee = Trainee(model, mcfg, task, cfg, seed, dtype)
        # the numba engine's initialisation: the engine is no part of the init seed (the config as a
        # dict, as the numba engine hashes it: a user's map has no numba ModelConfig)
        as_numba = {**dataclasses.asdict(mcfg), "engine": "numba"}
        self.trainee.theta = initial_parameters(model, mcfg, task, rng_for(as_numba, seed, "init")).astype(dtype)
        self.model, self.cfg, self.seed = model, cfg, seed
        self.replay = _Replay()
        self.trainee.model = self.replay
        self.trainee.opt = self.replay  # the optimiser's interface, replayed
        self.pos = 0  # the next step to run


class _Group:
    """Runs of one model trained in one compiled program: their parameters and optimiser states stacked
    on a leading axis (one run per seed; a single run is a group of one)."""

    def __init__(self, runs: list[_Run], task: TaskConfig, data: str):
        cfg = runs[0].cfg
        self.runs, self.model, self.cfg, self.data = runs, runs[0].model, cfg, data
        self.hyper = (cfg.optimizer, Hyper.of(cfg), cfg.loss)  # static: one compiled program for every learning rate
        self.theta = jnp.asarray(np.stack([r.trainee.theta for r in runs]))
        self.state = jax.vmap(_transform(self.hyper).init)(self.theta)
        self.spec = DataSpec.of(task) if data == "device" else None  # host batches: no device sampler
        self.keys = jnp.asarray(np.stack([data_key(task, r.seed) for r in runs]))

    @property
    def active(self) -> bool:
        return any(r.trainee.active for r in self.runs)


def _block_len(task: TaskConfig, cfg: TrainConfig, itemsize: int) -> int:
    per_step = cfg.batch * (task.P * task.d + task.P + task.d + 1) * itemsize
    return int(max(1, min(BLOCK_STEPS, BLOCK_BYTES // max(per_step, 1), cfg.steps)))


DATA_SOURCES = ("device", "host")


@_in_x64
def train_lockstep(
    models,
    task: TaskConfig,
    cfg: TrainConfig,
    seed: int,
    progress: bool = False,
    prefetch: bool = False,
    measure=None,
    data: str | None = None,
) -> list:
    """``sims.training.train_lockstep`` on the JAX engine: the same schedules and rules.

    ``models`` is a list of ``(JaxModel, ModelConfig)`` sharing a dtype. Each model starts where the
    numba engine starts it and stops by the same rules (the host's ``Trainee`` judges every step's
    loss). ``data="device"``: each step's batch is generated inside the jitted block
    (``sims/jax_tasks.py``, the same distributions as ``make_batch``, not its numbers);
    ``data="host"``: the numba engine's stream itself (``make_batch``, the same batches in the same
    order; for exact cross-engine checks). ``None`` (what runs use): on the device where the task has
    a device sampler (a built-in task), else on the host (a user's task, whose ``make_batch`` is
    NumPy). ``prefetch`` is accepted and unused.
    """
    if data is None:
        data = "device" if get_task(task.task).builtin else "host"
    return _train(models, task, cfg, [seed], progress, measure, data)


@_in_x64
def train_seeds(
    model: JaxModel, mcfg: ModelConfig, task: TaskConfig, cfg: TrainConfig, seeds, progress=False, measure=None
) -> list:
    """Train one model at several ``seeds`` in one compiled program (``vmap`` over seeds, data on
    the device); each result is what ``train_lockstep([(model, mcfg)], task, cfg, seed)`` gives for
    that seed alone (each seed its own start, data and rules; a seed that stops early is masked off).

    ``measure(model, theta)`` is called at checkpoints as in ``train_lockstep`` (one run at a time).
    Measured (``benchmarks/jax_seeds.py``, one run, one CPU thread on a machine loaded by other
    work; d = 8, P = 32, L = 4, batch 64, 256 steps): 8 seeds vmapped took 5.0 s against 7.45 s in a
    loop (ratio 0.67), the same parameters to 1.5e-15. Sweeps do not use it yet: their job is one
    lockstep group at one seed (sims/sweeps.py).
    """
    seeds = [int(s) for s in seeds]
    if not seeds or len(set(seeds)) != len(seeds):
        bad_argument("seeds", seeds, "a non-empty list of distinct seeds")
    return _train([(model, mcfg)], task, cfg, seeds, progress, measure, "device")


def _train(models, task: TaskConfig, cfg: TrainConfig, seeds: list[int], progress, measure, data: str) -> list:
    from .training import TrainResult

    if data not in DATA_SOURCES:
        bad_argument("data", data, "'device' or 'host'")
    dtypes = {mcfg.dtype for _, mcfg in models}
    if len(dtypes) != 1:
        raise ValueError(f"models dtypes={sorted(dtypes)}: lockstep training needs one dtype (the batch is shared)")
    dtype = np.float32 if dtypes.pop() == "float32" else np.float64
    if data == "host" and len(seeds) != 1:
        bad_argument("data", data, "'device' for several seeds in one program")
    # one group per model: its seeds vmapped (the depths of a grid differ in their parameters' shapes)
    groups = [_Group([_Run(model, mcfg, task, cfg, s, dtype) for s in seeds], task, data) for model, mcfg in models]
    if cfg.steps == 0:  # nothing to train: the untrained models, as the numba loop gives them
        for g in groups:
            for r in g.runs:
                r.trainee.active = False
    K = _block_len(task, cfg, np.dtype(dtype).itemsize) if data == "host" else max(1, min(BLOCK_STEPS, cfg.steps))
    host = _HostData(task, cfg, seeds[0], dtype) if data == "host" else None
    checkpoints = set(cfg.checkpoint_steps()) if measure is not None else set()
    bar, shown = None, [0]
    if progress:
        from .progress import Progress

        bar = Progress(cfg.steps, unit="step", leave=False)
    while any(g.active for g in groups):
        for g in groups:
            if g.active:
                _advance(g, K, host, checkpoints, measure)
        low = min((r.pos for g in groups for r in g.runs if r.trainee.active), default=cfg.steps)
        if host is not None:
            host.drop_before(low)
        if bar is not None and min(low, cfg.steps) > shown[0]:
            bar.update(min(low, cfg.steps) - shown[0])
            if shown[0] == 0:
                bar.warmed_up()  # the first block compiled the step: no part of the time estimate
            shown[0] = min(low, cfg.steps)
    if bar is not None:
        bar.close()
    out = []
    data_seconds = host.seconds / len(models) if host is not None else 0.0
    for g in groups:
        thetas = np.asarray(g.theta, dtype)
        for i, r in enumerate(g.runs):
            r.trainee.theta = thetas[i]
            res: TrainResult = r.trainee.result(data_seconds)
            out.append(res)
    return out


class _HostData:
    """The numba engine's batch stream (``make_batch``), cached until every run has passed a step."""

    def __init__(self, task: TaskConfig, cfg: TrainConfig, seed: int, dtype):
        self.task, self.batch, self.dtype = task, cfg.batch, dtype
        self.rng = rng_for(task, seed, "train")
        self.cache: dict[int, tuple] = {}
        self.made = 0
        self.seconds = 0.0

    def __call__(self, step: int) -> tuple:
        while self.made <= step:
            t0 = time.perf_counter()
            b = make_batch(self.task, self.batch, self.rng, dtype=self.dtype)
            self.cache[self.made] = (b.X, b.y, b.x_test, b.target)
            self.made += 1
            self.seconds += time.perf_counter() - t0
        return self.cache[step]

    def drop_before(self, low: int) -> None:
        for s in [s for s in self.cache if s < low]:
            del self.cache[s]


def _compute(g: _Group, K: int, host, theta0, state0, steps, lrs, mask):
    """One block of ``g`` from ``(theta0, state0)``: stacked parameters and states, and per run and
    step the loss, the two finiteness flags and the target's scale (arrays ``(G, K)``)."""
    if host is None:
        return _block_device(
            g.model.spec, g.spec, g.hyper, g.cfg.batch, theta0, state0, g.keys,
            jnp.asarray(steps), jnp.asarray(lrs), jnp.asarray(mask),
        )  # fmt: skip
    data = [host(int(s)) for s in steps[0] if s < g.cfg.steps]
    data += [data[-1]] * (K - len(data))  # a short last block: padded, its extra steps switched off
    stacked = [jnp.asarray(np.stack([b[i] for b in data])) for i in range(4)]
    out = _block_host(
        g.model.spec, g.hyper, theta0[0], jax.tree_util.tree_map(lambda a: a[0], state0), *stacked,
        jnp.asarray(lrs[0]), jnp.asarray(mask[0]),
    )  # fmt: skip
    theta, state, *rest = out
    return theta[None], jax.tree_util.tree_map(lambda a: a[None], state), *(a[None] for a in rest)


def _advance(g: _Group, K: int, host, checkpoints: set, measure) -> None:
    """Run one block of every active run of ``g`` from its position; replay its losses through the
    trainee's rules and, where a rule fires inside the block, recompute the block up to that step
    (for that run; the others' steps are the same again)."""
    from .training import lr_at

    cfg, G = g.cfg, len(g.runs)
    starts = np.array([r.pos for r in g.runs])
    counts = np.array([max(0, min(K, cfg.steps - r.pos)) if r.trainee.active else 0 for r in g.runs])
    bases = [r.trainee.base_lr for r in g.runs]
    steps = starts[:, None] + np.arange(K)[None, :]
    lrs = np.array([[lr_at(cfg, int(s), bases[i]) if j < counts[i] else 0.0 for j, s in enumerate(steps[i])]
                    for i in range(G)])  # fmt: skip
    mask = np.arange(K)[None, :] < counts[:, None]
    t0 = time.perf_counter()
    theta0, state0 = g.theta, g.state
    theta, state, losses, finite, after, scales = _compute(g, K, host, theta0, state0, steps, lrs, mask)
    losses, finite, after = np.asarray(losses, np.float64), np.asarray(finite), np.asarray(after)
    scales = np.asarray(scales, np.float64)
    elapsed = time.perf_counter() - t0
    lasts = starts + counts - 1  # per run, the last step whose update stands
    events = np.zeros(G, bool)
    for i, r in enumerate(g.runs):
        tr = r.trainee
        if counts[i] == 0:
            continue
        tr.seconds += elapsed / int(np.count_nonzero(counts))  # the block's time, shared by its runs
        for j in range(counts[i]):
            s = int(steps[i, j])
            r.replay.now = (float(losses[i, j]), bool(finite[i, j]), bool(after[i, j]))
            r.replay.step_now = s
            # the host's rules (they read the batch's target once, for its scale); the replay records
            # the update the trainee applies
            tr.step(s, _Targets(np.array([math.sqrt(scales[i, j])])))
            applied = s in r.replay.applied
            if applied and not math.isclose(r.replay.applied.pop(s), lrs[i, j], rel_tol=1e-12):
                raise RuntimeError(
                    f"step {s}: the trainee's learning rate differs from the block's"
                )  # pragma: no cover
            if not tr.active or tr.base_lr != bases[i] or (s + 1) in checkpoints:
                lasts[i] = s if applied else s - 1
                events[i] = True
                break
    if np.any(lasts < starts + counts - 1):  # recompute with the updates after each run's `last` off
        t0 = time.perf_counter()
        mask = np.arange(K)[None, :] <= (lasts - starts)[:, None]
        theta, state, *_ = _compute(g, K, host, theta0, state0, steps, lrs, mask)
        elapsed = time.perf_counter() - t0
        for i in np.flatnonzero(events).tolist():
            g.runs[i].trainee.seconds += elapsed / int(np.count_nonzero(events))
    g.theta, g.state = theta, state
    for i, r in enumerate(g.runs):
        tr = r.trainee
        if counts[i] == 0:
            continue
        r.pos = int(lasts[i]) + 1 if events[i] else int(starts[i] + counts[i])
        if events[i] and measure is not None and r.pos in checkpoints and tr.status == "ok":
            # as the numba loop: measured after the step, also when the run stopped there as converged
            t1 = time.perf_counter()
            tr.checkpoints.append({"step": r.pos, **measure(r.model, np.asarray(theta[i], r.model.dtype))})
            tr.seconds += time.perf_counter() - t1
        if r.pos >= cfg.steps and tr.active:
            tr.active = False  # the step cap: as the numba loop ends


def engine_info() -> dict[str, Any]:
    """The JAX version and device the engine runs on (for benchmarks and device checks)."""
    dev = jax.devices()[0]
    return {"jax": jax.__version__, "optax": optax.__version__, "platform": dev.platform, "device": str(dev)}

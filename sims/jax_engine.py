"""The JAX engine: the two-stream models written once with autograd, trained with a jitted Adam loop.

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
double precision: importing this module turns on ``jax_enable_x64`` for the process (float32
models still compute in float32). Training (:func:`train_lockstep`) runs blocks of steps in one
jitted ``lax.scan`` (Adam from optax, the learning rate of each step an input), and replays the
losses through ``sims.training``'s own stopping and divergence rules on the host; a block in which
a rule fires (a stop, a plateau halving, a checkpoint) is recomputed up to that step. Training data
come from the host generator (``sims.tasks.make_batch``, the numba engine's stream: the same batches
in the same order), and measurement (A_L, C_L, the reference floors) runs on the host from the
per-layer outputs. The JAX engine runs unchanged on an accelerator (JAX picks the device); the
GPU path is untested here (docs/benchmarks.md).
"""

from __future__ import annotations

import dataclasses
import functools
import math
import time
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
from .memory import JAX_BLOCK_BYTES, JAX_BLOCK_STEPS
from .parameters import ParamLayout
from .softmax_kernels import RMS_EPS
from .tasks import make_batch

jax.config.update("jax_enable_x64", True)

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


def _parts(spec: Spec, theta, X, y, xq):
    return (_linear_parts if spec.model == "linear" else _softmax_parts)(spec, theta, X, y, xq)


def _loss(spec: Spec, theta, X, y, xq, target):
    f, _ = _parts(spec, theta, X, y, xq)
    return jnp.mean(jnp.square(f.mean(axis=1) - target))


@functools.partial(jax.jit, static_argnums=0)
def _loss_and_grad(spec, theta, X, y, xq, target):
    return jax.value_and_grad(functools.partial(_loss, spec))(theta, X, y, xq, target)


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

    def __init__(self, cfg: ModelConfig, d: int):
        from .linear_model import LinearAttention
        from .softmax_model import SoftmaxAttention

        if not isinstance(cfg, ModelConfig):
            bad_argument("cfg", type(cfg).__name__, "a ModelConfig")
        if cfg.model == "softmax" and (cfg.stream != "two" or cfg.context_update):
            bad_argument("stream", cfg.stream, "'two' without context update on the JAX engine (the base layer)")
        entry = get_attention(cfg.attention)
        host_cfg = dataclasses.replace(cfg, engine="numba", attention="softmax")
        self.host: Any = LinearAttention(host_cfg, d) if cfg.model == "linear" else SoftmaxAttention(host_cfg, d)
        self.cfg, self.d, self.N, self.L = cfg, self.host.d, self.host.N, cfg.depth
        self.dtype = np.dtype(cfg.dtype)
        # a map's learnable parameters follow the numba model's blocks (linear attention has no map)
        self.map_params = entry.params if cfg.model == "softmax" else ()
        self.n_host = self.host.n_params
        extra = [(MAP_PREFIX + name, (cfg.depth,)) for name, _ in self.map_params]
        self.layout = ParamLayout([*self.host.layout.shapes, *extra]) if extra else self.host.layout
        self.n_params = self.layout.n_params
        slices = tuple((name, a, b, tuple(shp)) for name, (a, b, shp) in self.layout.slices.items())
        self.spec = Spec(cfg.model, cfg.qk, cfg.value, cfg.attention, cfg.depth, self.N, self.d, slices)

    def names(self) -> list[str]:
        return self.layout.names()

    def unpack(self, theta) -> dict:
        return self.layout.unpack(theta)

    def _with_map_params(self, theta) -> np.ndarray:
        tail = [np.full(self.L, value) for _, value in self.map_params]  # each layer at the initial value
        return np.asarray(np.concatenate([theta, *tail]) if tail else theta, self.dtype)

    def init(self, rng: np.random.Generator) -> np.ndarray:
        return self._with_map_params(self.host.init(rng))

    def init_steps(self, rng: np.random.Generator, gamma) -> np.ndarray:
        return self._with_map_params(self.host.init_steps(rng, gamma))

    def map_parameters(self, theta) -> dict[str, np.ndarray]:
        """The map's learnable parameters in ``theta``, one value per layer (``{}`` for a map without any)."""
        blocks = self.layout.unpack(np.asarray(self._theta(theta)))
        return {name: blocks[MAP_PREFIX + name].copy() for name, _ in self.map_params}

    def qk_norms(self, theta) -> np.ndarray:
        return self.host.qk_norms(np.asarray(theta, self.dtype)[: self.n_host])

    def qk_maps(self, theta) -> np.ndarray:
        return self.host.qk_maps(np.asarray(theta, self.dtype)[: self.n_host])

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

    def loss_and_grad(self, theta, batch) -> tuple[float, np.ndarray]:
        """Mean squared error over the batch and its gradient (autograd)."""
        X, y, xq, target = self.arrays(batch)
        loss, grad = _loss_and_grad(self.spec, self._theta(theta), X, y, xq, target)
        return float(loss), np.asarray(grad)

    def layer_outputs(self, theta, batch) -> np.ndarray:
        X, y, xq, _ = self.arrays(batch)
        return np.asarray(_outputs(self.spec, self._theta(theta), X, y, xq)[0])

    def predict(self, theta, batch) -> np.ndarray:
        return self.layer_outputs(theta, batch).mean(axis=1)

    def label_weights(self, theta, batch) -> np.ndarray:
        X, y, xq, _ = self.arrays(batch)
        return np.asarray(_label_weights(self.spec, self._theta(theta), X, y, xq))

    def attention(self, theta, batch) -> np.ndarray:
        """The test token's weights per layer (B, L, P) (the raw scores for linear attention)."""
        X, y, xq, _ = self.arrays(batch)
        return np.asarray(_outputs(self.spec, self._theta(theta), X, y, xq)[1])


# ------------------------------------------------------------------------------------------------
# training: jitted blocks of Adam steps, the host's rules replayed on their losses
@functools.partial(jax.jit, static_argnums=(0, 1))
def _block(spec, hyper, theta, state, X, y, xq, target, lrs, mask):
    """``lax.scan`` over the steps of a block: loss and gradient, then Adam where ``mask`` is on."""
    b1, b2, eps = hyper
    adam = optax.scale_by_adam(b1=b1, b2=b2, eps=eps)
    grad_fn = jax.value_and_grad(functools.partial(_loss, spec))

    def step(carry, inp):
        th, st = carry
        Xs, ys, xs, ts, lr, on = inp
        loss, g = grad_fn(th, Xs, ys, xs, ts)
        finite = jnp.isfinite(loss) & jnp.all(jnp.isfinite(g))
        upd, st1 = adam.update(g, st)
        th1 = th - lr.astype(th.dtype) * upd
        # after the update: parameters and moments finite (an overflowed second moment freezes a run)
        after = jnp.all(jnp.isfinite(th1)) & jnp.all(
            jnp.stack([jnp.all(jnp.isfinite(a)) for a in jax.tree_util.tree_leaves(st1)])
        )
        keep = functools.partial(jnp.where, on)
        return (keep(th1, th), jax.tree_util.tree_map(keep, st1, st)), (loss, finite, after)

    (theta, state), outs = jax.lax.scan(step, (theta, state), (X, y, xq, target, lrs, mask))
    return theta, state, *outs


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
    target: np.ndarray


class _Run:
    """One model's training on the JAX engine: device state, the host trainee and its replay."""

    def __init__(self, model: JaxModel, mcfg: ModelConfig, task: TaskConfig, cfg: TrainConfig, seed: int, dtype):
        from .training import Trainee, initial_parameters

        self.trainee = Trainee(model, mcfg, task, cfg, seed, dtype)
        # the numba engine's initialisation: the engine is no part of the init seed (the config as a
        # dict, as the numba engine hashes it: a user's map has no numba ModelConfig)
        as_numba = {**dataclasses.asdict(mcfg), "engine": "numba"}
        self.trainee.theta = initial_parameters(model, mcfg, task, rng_for(as_numba, seed, "init")).astype(dtype)
        self.model, self.cfg = model, cfg
        self.replay = _Replay()
        self.trainee.model = self.replay
        self.trainee.opt = self.replay  # type: ignore[assignment]  # the optimiser's interface, replayed
        self.theta = jnp.asarray(self.trainee.theta)
        self.state = optax.scale_by_adam(b1=cfg.beta1, b2=cfg.beta2, eps=cfg.eps).init(self.theta)
        self.hyper = (cfg.beta1, cfg.beta2, cfg.eps)
        self.pos = 0  # the next step to run


def _block_len(task: TaskConfig, cfg: TrainConfig, itemsize: int) -> int:
    per_step = cfg.batch * (task.P * task.d + task.P + task.d + 1) * itemsize
    return int(max(1, min(BLOCK_STEPS, BLOCK_BYTES // max(per_step, 1), cfg.steps)))


def train_lockstep(
    models, task: TaskConfig, cfg: TrainConfig, seed: int, progress: bool = False, prefetch: bool = False, measure=None
) -> list:
    """``sims.training.train_lockstep`` on the JAX engine: the same batches, schedules and rules.

    ``models`` is a list of ``(JaxModel, ModelConfig)`` sharing a dtype. Each model starts where the
    numba engine starts it, sees the numba engine's batch stream, and stops by the same rules (the
    host's ``Trainee`` judges every step's loss); ``prefetch`` is accepted and unused.
    """
    from .training import TrainResult

    dtypes = {mcfg.dtype for _, mcfg in models}
    if len(dtypes) != 1:
        raise ValueError(f"models dtypes={sorted(dtypes)}: lockstep training needs one dtype (the batch is shared)")
    dtype = np.float32 if dtypes.pop() == "float32" else np.float64
    runs = [_Run(model, mcfg, task, cfg, seed, dtype) for model, mcfg in models]
    data_rng = rng_for(task, seed, "train")
    K = _block_len(task, cfg, np.dtype(dtype).itemsize)
    cache: dict[int, tuple] = {}
    made = [0]  # batches generated
    data_seconds = [0.0]
    checkpoints = set(cfg.checkpoint_steps()) if measure is not None else set()
    bar, shown = None, [0]
    if progress:
        from .progress import Progress

        bar = Progress(cfg.steps, unit="step", leave=False)

    def batch_of(step: int):
        while made[0] <= step:
            t0 = time.perf_counter()
            b = make_batch(task, cfg.batch, data_rng, dtype=dtype)
            cache[made[0]] = (b.X, b.y, b.x_test, b.target)
            made[0] += 1
            data_seconds[0] += time.perf_counter() - t0
        return cache[step]

    while any(r.trainee.active for r in runs):
        for r in runs:
            if r.trainee.active:
                _advance(r, K, batch_of, checkpoints, measure)
        low = min((r.pos for r in runs if r.trainee.active), default=made[0])
        for s in [s for s in cache if s < low]:
            del cache[s]
        if bar is not None and min(low, cfg.steps) > shown[0]:
            bar.update(min(low, cfg.steps) - shown[0])
            if shown[0] == 0:
                bar.warmed_up()  # the first block compiled the step: no part of the time estimate
            shown[0] = min(low, cfg.steps)
    if bar is not None:
        bar.close()
    out = []
    for r in runs:
        r.trainee.theta = np.asarray(r.theta, dtype)
        res: TrainResult = r.trainee.result(data_seconds[0] / len(runs))
        out.append(res)
    return out


def _advance(r: _Run, K: int, batch_of, checkpoints: set, measure) -> None:
    """Run one block of ``r`` from ``r.pos``; replay its losses through the trainee's rules and, where a
    rule fires inside the block, recompute the block up to that step."""
    from .training import lr_at

    tr, cfg = r.trainee, r.cfg
    start = r.pos
    steps = [s for s in range(start, start + K) if s < cfg.steps]
    data = [batch_of(s) for s in steps]
    data += [data[-1]] * (K - len(steps))  # a short last block: padded, its extra steps switched off
    stacked = [jnp.asarray(np.stack([b[i] for b in data])) for i in range(4)]
    base = tr.base_lr
    lrs = np.array([lr_at(cfg, s, base) for s in steps] + [0.0] * (K - len(steps)))
    mask = np.arange(K) < len(steps)
    t0 = time.perf_counter()
    theta0, state0 = r.theta, r.state
    theta, state, losses, finite, after = _block(
        r.model.spec, r.hyper, theta0, state0, *stacked, jnp.asarray(lrs), mask
    )
    losses, finite, after = np.asarray(losses, np.float64), np.asarray(finite), np.asarray(after)
    tr.seconds += time.perf_counter() - t0
    last = start + len(steps) - 1  # the last step whose update stands
    event = False
    for i, s in enumerate(steps):
        r.replay.now = (float(losses[i]), bool(finite[i]), bool(after[i]))
        r.replay.step_now = s
        # the host's rules (they read the batch's target once, for the target's scale); the replay
        # records the update the trainee applies
        tr.step(s, _Targets(data[i][3]))
        applied = s in r.replay.applied
        if applied and not math.isclose(r.replay.applied.pop(s), lrs[i], rel_tol=1e-12):
            raise RuntimeError(f"step {s}: the trainee's learning rate differs from the block's")  # pragma: no cover
        if not tr.active or tr.base_lr != base or (s + 1) in checkpoints:
            last = s if applied else s - 1
            event = True
            break
    if event and last < start + len(steps) - 1:  # recompute the block with the updates after `last` off
        t0 = time.perf_counter()
        mask = np.arange(K) <= last - start
        theta, state, *_ = _block(r.model.spec, r.hyper, theta0, state0, *stacked, jnp.asarray(lrs), mask)
        tr.seconds += time.perf_counter() - t0
    r.theta, r.state = theta, state
    r.pos = last + 1 if event else start + len(steps)
    if event and measure is not None and (last + 1) in checkpoints and tr.status == "ok":
        # as the numba loop: measured after the step, also when the run stopped there as converged
        t1 = time.perf_counter()
        tr.checkpoints.append({"step": last + 1, **measure(r.model, np.asarray(theta, r.model.dtype))})
        tr.seconds += time.perf_counter() - t1
    if r.pos >= cfg.steps and tr.active:
        tr.active = False  # the step cap: as the numba loop ends


def engine_info() -> dict[str, Any]:
    """The JAX version and device the engine runs on (for benchmarks and device checks)."""
    dev = jax.devices()[0]
    return {"jax": jax.__version__, "optax": optax.__version__, "platform": dev.platform, "device": str(dev)}

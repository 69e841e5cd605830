"""Conformance checks of an attention map, a model and a task: what a plugin must do to be used here.

In the spirit of scikit-learn's ``check_estimator``: :func:`check_attention`, :func:`check_model`
and :func:`check_task` take a registered name (a built-in or a plugin), run every check below at
tiny sizes (seconds; JAX compiles each new shape once per process), and return a
:class:`ConformanceReport`, a tuple of :class:`Check` records ``(name, passed, detail)``. Every
built-in passes them (tests/sims/test_conformance.py); a plugin author runs them in their own tests.

Failure. As ``check_estimator`` does, a failure raises by default (``raise_on_fail=True``): a
:class:`ConformanceError`, an ``AssertionError`` (so pytest reports it as a failed assertion) whose
message is the whole report and whose ``report`` attribute holds it. Unlike ``check_estimator``,
every check runs before it raises, so one error names every failure; a check that raises is a
failure whose detail is the exception, and a check that needs a failed one is not run (a failure
saying so). ``raise_on_fail=False`` returns the report to inspect (``report.passed``,
``report.failed``). An unknown name is a ``ValueError`` in one line naming ``name`` and what is
registered.

Attention map (scores ``z`` of shape ``(..., P)``, ``P = 16``, float64, inside the JAX engine's x64
scope; a map's learnable parameters at their initial values, per layer shaped ``(L, 1)`` as the
engine passes them):

- ``shape``: ``fn(z)`` has the scores' shape and dtype for ``z`` of shape ``(P,)`` and
  ``(2, 3, P)``, and acts along the last axis only: each row of the batch equals the row alone;
- ``finite``: finite weights for random scores, scores ten times larger, all-equal scores and ties;
- ``deterministic``: the same scores give the same weights, bit for bit;
- ``normalised`` (maps declared ``normalised=True``): every weight ``>= -1e-12`` and every row sums
  to 1 within ``1e-9``;
- ``gradient``: ``jax.grad`` of a random linear functional ``c . fn(z)`` agrees with central
  differences (``h = 1e-6``, float64) within ``1e-6`` (relative to the largest derivative, at least 1);
- ``parameter gradients`` (maps with learnable parameters): each parameter's ``jax.grad`` is finite,
  agrees with central differences as above and is not zero (a parameter the weights ignore);
- ``numba kernel`` (built-in maps): the numba kernels' weights
  (:func:`depthscale.sims.temperature_heads.head_outputs`, which runs the model's kernel of each map
  but softmax, and the reference floors' softmax) agree with the JAX function within ``1e-10``.

Model (``TaskConfig(task="topk", k=2, d=4, P=16)``, ``ModelConfig(model=name, depth=2,
engine=engine)``; ``engine=None`` picks the model's first engine: numba for a built-in, JAX for a
user's model):

- ``builds``: :func:`~depthscale.sims.models.make_model` gives an object with the engine contract's
  methods (docs/engine-contract.md); ``init(rng)`` is a finite vector of ``n_params`` entries, the
  same for the same seed, and ``unpack`` splits it into the blocks ``names()`` lists;
- ``layer outputs``: ``layer_outputs`` of a batch of 5 contexts has shape ``(B, L)`` and is finite,
  and ``predict`` is its mean over the layers (a user's model returning another shape fails here,
  with the engine's message naming the shape expected);
- ``loss``: ``loss_and_grad``'s loss is the mean squared error of ``predict``, its gradient a finite
  vector of ``n_params`` entries;
- ``gradient``: the gradient agrees with central differences along three random unit directions
  (``h = 1e-6``) within ``1e-6`` times the gradient's norm;
- ``label weights``: ``None``, or ``(B, P)`` finite weights with ``yhat = sum_i c_i y_i``;
- ``attention weights`` and ``query-key norms``: ``None`` or finite arrays ``(B, L, P)`` and ``(L,)``
  (the norms non-negative);
- ``training run``: six steps of :func:`~depthscale.sims.runner.run` give status ``ok``, a finite
  final loss and ``L`` finite layer losses;
- ``run record``: the record has only :data:`~depthscale.sims.records.RUN_RECORD_FIELDS`, every
  required field and a finished run's measurements, passes
  :func:`~depthscale.sims.records.record_problem`, has the key of its config and seed and is JSON-able
  but for ``arrays``.

Task (``TaskConfig(task=name, k=2, a=1, b=0.5, d=4, P=16, c_omega=2)``: unequal spectra, so a
generator that confuses them shows; the batches of ``sims.tasks.make_batch``, which draws a user's
task with its own ``make_batch``, unless another generator is given):

- ``shapes and dtypes``: a batch of 5 has the fields and shapes of docs/engine-contract.md, in the
  dtype asked for (float64 and float32), all finite, and integer ``sel`` ``(B, k)`` (a built-in's
  width: ``k`` for top-k, 1 for easy-exact, 0 for easy-fresh);
- ``deterministic``: the same seed gives the same batch, bit for bit, and another seed another;
- ``structure``: ``target = beta . t``, ``O`` orthogonal and ``sel`` inside the context (what every
  task promises, sims/task_registry.py); for a built-in also ``y = X beta`` and its definition of
  ``t`` (``x_test`` a context token for easy-exact, ``t = x_test`` for the easy tasks, the mean of
  the ``k`` tokens of largest cosine similarity, in decreasing order, for top-k);
- ``label second moment`` (built-ins): over 4,096 contexts, ``E[y_i^2]`` agrees with
  ``sum_k lam_k omega_k`` within ``Z_MAX = 4`` standard errors;
- ``target second moment``: over the same contexts, ``E[y*^2]`` agrees with the task's own
  ``second_moment`` (``sum_k lam_k omega_k`` for the easy tasks) or, for top-k (no closed form),
  with an independent NumPy Monte Carlo of 16,384 contexts (its own error bar), within ``Z_MAX``
  combined standard errors.

>>> report = check_task("easy-fresh", raise_on_fail=False)
>>> report.passed, [c.name for c in report.checks][:3]
(True, ['shapes and dtypes', 'deterministic', 'structure'])
>>> check_task("hard")
Traceback (most recent call last):
...
ValueError: name='hard': must be one of easy-exact, easy-fresh, topk (a registered task)
"""

from __future__ import annotations

import html
import json
import math
from collections.abc import Callable
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

import numpy as np

from ..theory._validate import bad_argument, check_int
from .attention_registry import attention_names, broken_attention_plugins, get_attention
from .engines import get_engine
from .model_registry import broken_model_plugins, check_model_engine, get_model, model_names
from .task_registry import broken_task_plugins, get_task, task_names

P_MAP = 16  # scores per row of the map checks
Z_MAX = 4.0  # standard errors a Monte Carlo moment may be off (two-sided, about 6e-5 by chance)
N_MOMENT, N_REFERENCE = 4096, 16384  # contexts of the moment checks: the generator's, the reference's


@dataclass(frozen=True)
class Check:
    """One conformance check: its name, whether it passed, and what was found (numbers or the reason)."""

    name: str
    passed: bool
    detail: str


@dataclass(frozen=True)
class ConformanceReport:
    """The checks of one attention map, model or task (``kind``), in the order they ran.

    >>> r = ConformanceReport("task", "x", (Check("a", True, "ok"), Check("b", False, "why")))
    >>> r.passed, [c.name for c in r.failed]
    (False, ['b'])
    >>> print(r)
    task 'x': 1 of 2 checks passed
      PASS  a: ok
      FAIL  b: why
    """

    kind: str
    name: str
    checks: tuple[Check, ...]

    @property
    def passed(self) -> bool:
        """Whether every check passed."""
        return all(c.passed for c in self.checks)

    @property
    def failed(self) -> tuple[Check, ...]:
        """The checks that failed."""
        return tuple(c for c in self.checks if not c.passed)

    def __getitem__(self, name: str) -> Check:
        """The check called ``name`` (``KeyError`` naming the checks otherwise)."""
        for c in self.checks:
            if c.name == name:
                return c
        raise KeyError(f"{name!r}: not a check of this report ({', '.join(c.name for c in self.checks)})")

    def __str__(self) -> str:
        head = f"{self.kind} {self.name!r}: {sum(c.passed for c in self.checks)} of {len(self.checks)} checks passed"
        return "\n".join([head, *(f"  {'PASS' if c.passed else 'FAIL'}  {c.name}: {c.detail}" for c in self.checks)])

    def _repr_html_(self) -> str:
        rows = "".join(
            f"<tr><td>{'pass' if c.passed else '<b>FAIL</b>'}</td><td>{html.escape(c.name)}</td>"
            f"<td>{html.escape(c.detail)}</td></tr>"
            for c in self.checks
        )
        return f"<p>{html.escape(self.kind)} <code>{html.escape(self.name)}</code></p><table>{rows}</table>"


class ConformanceError(AssertionError):
    """A conformance check failed; the message is the whole report, kept as ``report``."""

    def __init__(self, report: ConformanceReport):
        super().__init__(str(report))
        self.report = report


class _Fail(Exception):
    """A check's finding that fails it (the message is the detail)."""


def _require(ok, detail: str) -> None:
    if not ok:
        raise _Fail(detail)


def _run_checks(kind: str, name: str, steps, raise_on_fail: bool) -> ConformanceReport:
    """Run ``steps`` (``(check name, function returning the detail, names of checks it needs)``)."""
    checks: list[Check] = []
    failed: set[str] = set()
    for title, fn, needs in steps:
        missing = [n for n in needs if n in failed]
        if missing:
            checks.append(Check(title, False, f"not run: needs the check {missing[0]!r}, which failed"))
            failed.add(title)
            continue
        try:
            checks.append(Check(title, True, fn()))
        except _Fail as exc:
            checks.append(Check(title, False, str(exc)))
            failed.add(title)
        except Exception as exc:  # a plugin that raises fails the check; the report says what it raised
            text = str(exc).strip().splitlines()
            checks.append(Check(title, False, f"raised {type(exc).__name__}: {text[0] if text else ''}"[:400]))
            failed.add(title)
    report = ConformanceReport(kind, name, tuple(checks))
    if raise_on_fail and not report.passed:
        raise ConformanceError(report)
    return report


def _check_flag(raise_on_fail) -> bool:
    if not isinstance(raise_on_fail, (bool, np.bool_)):
        bad_argument("raise_on_fail", raise_on_fail, "True or False")
    return bool(raise_on_fail)


def _registered(name, names: tuple[str, ...], broken: dict[str, str], what: str) -> str:
    """``name`` if it is registered, else the one-line ``ValueError`` naming ``name``."""
    if isinstance(name, str) and name in broken:
        bad_argument("name", name, f"a {what} that loads; its plugin was left out ({broken[name]})")
    if not isinstance(name, str) or name not in names:
        bad_argument("name", name, f"one of {', '.join(names)} (a registered {what})")
    return name


def _fd_close(exact, numeric, scale: float) -> float:
    """The largest difference of two derivative arrays, failing it above ``1e-6`` times ``scale``."""
    exact, numeric = np.asarray(exact, np.float64), np.asarray(numeric, np.float64)
    _require(np.all(np.isfinite(exact)), f"non-finite gradient {exact}")
    err = float(np.max(np.abs(exact - numeric), initial=0.0))
    _require(err <= 1e-6 * scale, f"autograd and central differences differ by {err:.3g} (> {1e-6 * scale:.3g})")
    return err


# ------------------------------------------------------------------------------------------------
# attention maps
def check_attention(name: str, *, raise_on_fail: bool = True, seed: int = 0) -> ConformanceReport:
    """Check the registered attention map ``name`` (see the module docstring for the checks).

    Parameters
    ----------
    name : str
        A built-in map or one registered with ``depthscale.register_attention`` or an entry point.
    raise_on_fail : bool, default True
        Raise :class:`ConformanceError` (an ``AssertionError``) after the checks if any failed;
        ``False`` returns the report whatever it holds.
    seed : int, default 0
        Seeds the random scores and functionals.

    Returns
    -------
    ConformanceReport
    """
    name = _registered(name, attention_names(), broken_attention_plugins(), "attention map")
    raise_on_fail = _check_flag(raise_on_fail)
    seed = check_int("seed", seed, lo=0)
    from .jax_engine import jax_map, x64  # the map checks need JAX (pip install "depthscale[jax]")

    entry = get_attention(name)
    with x64():
        return _run_checks("attention map", name, _map_steps(entry, jax_map(entry), seed), raise_on_fail)


def _map_steps(entry, fn: Callable[..., Any], seed: int) -> list:
    import jax
    import jax.numpy as jnp

    rng = np.random.default_rng(seed)
    P = P_MAP
    z1 = 2.0 * rng.standard_normal(P)
    z3 = 2.0 * rng.standard_normal((2, 3, P))
    init = {k: float(v) for k, v in entry.params}
    # per-layer values near the initial ones, shaped (L, 1) against scores (B, L, P) as the engine passes them
    layer = {k: v + 0.1 * np.arange(3.0)[:, None] for k, v in init.items()}
    s = SimpleNamespace()
    # jitted as the engine runs it (one compilation per shape, far faster than op-by-op dispatch)
    jfn = jax.jit(fn)

    def weights(z, values) -> np.ndarray:
        return np.asarray(jfn(jnp.asarray(z), **{k: jnp.asarray(v) for k, v in values.items()}))

    def shape():
        for z, values in ((z1, init), (z3, layer)):
            w = weights(z, values)
            _require(w.shape == z.shape, f"scores of shape {z.shape} gave weights of shape {w.shape}: must be the same")
            _require(w.dtype == z.dtype, f"float64 scores gave {w.dtype} weights: must keep the scores' dtype")
        s.w3 = weights(z3, layer)
        for i, j in np.ndindex(2, 3):
            row = weights(z3[i, j], {k: v[j, 0] for k, v in layer.items()})
            _require(
                np.allclose(row, s.w3[i, j], rtol=1e-10, atol=1e-13),
                f"row {(i, j)} of a (2, 3, {P}) batch differs from the row alone by "
                f"{np.max(np.abs(row - s.w3[i, j])):.3g}: a map must act along the last axis only",
            )
        return f"(P,) and (2, 3, P) scores keep their shape and dtype; rows independent (P = {P})"

    def finite():
        s.tests = {
            "random": s.w3,
            "x10": weights(10.0 * z3, layer),
            "equal": weights(np.zeros_like(z3), layer),
            "ties": weights(np.round(z3), layer),
        }
        bad = [k for k, w in s.tests.items() if not np.all(np.isfinite(w))]
        _require(not bad, f"non-finite weights for the scores {', '.join(bad)}")
        return "finite for random, ten times larger, all-equal and tied scores"

    def deterministic():
        again = weights(z3, layer)
        _require(np.array_equal(again, s.w3), f"two calls differ by {np.max(np.abs(again - s.w3)):.3g}")
        return "the same scores give the same weights, bit for bit"

    def normalised():
        low = min(float(w.min()) for w in s.tests.values())
        sums = np.concatenate([w.sum(axis=-1).ravel() for w in s.tests.values()])
        worst = float(sums[np.argmax(np.abs(sums - 1.0))])
        _require(low >= -1e-12, f"declared normalised, but a weight is {low:.3g} < 0")
        _require(abs(worst - 1.0) <= 1e-9, f"declared normalised, but a row sums to {worst:.12g} (|sum - 1| > 1e-9)")
        return f"weights >= {low:.3g}, max |sum - 1| = {abs(worst - 1.0):.2g}"

    c1 = rng.standard_normal(P)
    h = 1e-6

    def gradient():
        grad = np.asarray(jax.jit(jax.grad(lambda z: jnp.sum(jnp.asarray(c1) * fn(z, **init))))(jnp.asarray(z1)))
        E = h * np.eye(P)  # row i: z1 + h e_i, the whole stencil in two calls (rows independent: checked)
        numeric = ((weights(z1 + E, init) - weights(z1 - E, init)) @ c1) / (2 * h)
        err = _fd_close(grad, numeric, max(1.0, float(np.max(np.abs(numeric)))))
        return f"jax.grad of c . fn(z) matches central differences (max error {err:.2g}, h = {h:g})"

    c3 = rng.standard_normal(z3.shape)

    def parameter_gradients():
        parts = []
        for key, v0 in init.items():

            def F(v, key=key):
                return jnp.sum(jnp.asarray(c3) * fn(jnp.asarray(z3), **{**init, key: v}))

            grad = float(jax.grad(F)(jnp.asarray(v0)))
            numeric = float((F(jnp.asarray(v0 + h)) - F(jnp.asarray(v0 - h))) / (2 * h))
            _require(abs(numeric) > 1e-10, f"{key}: the weights do not depend on it (derivative {numeric:.3g})")
            err = _fd_close(grad, numeric, max(1.0, abs(numeric)))
            parts.append(f"{key}: {grad:.4g} (error {err:.2g})")
        return "d(c . fn)/d param matches central differences: " + "; ".join(parts)

    def numba_kernel():
        from .temperature_heads import head_outputs

        rows = np.concatenate([z3.reshape(-1, P), 10.0 * z3.reshape(-1, P)])
        # head_outputs gives map(kappa z) . y: with y the unit vectors, weight j of each row
        out = head_outputs(np.repeat(rows, P, axis=0), np.tile(np.eye(P), (len(rows), 1)), [1.0], attention=entry.name)
        ref = np.concatenate([s.w3.reshape(-1, P), s.tests["x10"].reshape(-1, P)])
        err = float(np.max(np.abs(out[:, 0].reshape(-1, P) - ref)))
        _require(err <= 1e-10, f"the numba kernel's weights differ from the JAX function's by {err:.3g} (> 1e-10)")
        return f"numba and JAX weights agree (max difference {err:.2g})"

    steps = [("shape", shape, ()), ("finite", finite, ("shape",)), ("deterministic", deterministic, ("shape",))]
    if entry.normalised:
        steps.append(("normalised", normalised, ("finite",)))
    steps.append(("gradient", gradient, ("shape",)))
    if entry.params:
        steps.append(("parameter gradients", parameter_gradients, ("shape",)))
    if entry.code is not None:
        steps.append(("numba kernel", numba_kernel, ("finite",)))
    return steps


# ------------------------------------------------------------------------------------------------
# models
def check_model(
    name: str, *, engine: str | None = None, raise_on_fail: bool = True, seed: int = 0
) -> ConformanceReport:
    """Check the registered model ``name`` on one engine (see the module docstring for the checks).

    Parameters
    ----------
    name : str
        ``linear``, ``softmax`` or a model registered with ``depthscale.register_model`` or an entry point.
    engine : {"numba", "jax"} or None, default None
        The engine that builds and trains it; ``None``: the model's first (numba for a built-in,
        JAX for a user's model, which runs on JAX only).
    raise_on_fail : bool, default True
        Raise :class:`ConformanceError` (an ``AssertionError``) after the checks if any failed.
    seed : int, default 0
        Seeds the initialisation, the batches, the directions and the training run.

    Returns
    -------
    ConformanceReport
    """
    name = _registered(name, model_names(), broken_model_plugins(), "model")
    if engine is None:
        engine = get_model(name).engines[0]
    get_engine(engine)
    check_model_engine(name, engine)
    raise_on_fail = _check_flag(raise_on_fail)
    seed = check_int("seed", seed, lo=0)
    return _run_checks("model", f"{name} ({engine})", _model_steps(name, engine, seed), raise_on_fail)


def _model_steps(name: str, engine: str, seed: int) -> list:
    from .config import ModelConfig, RunConfig, TaskConfig, TrainConfig
    from .models import AttentionModel, make_model
    from .tasks import make_batch

    B, L = 5, 2
    task = TaskConfig(task="topk", k=2, d=4, P=16)
    mcfg = ModelConfig(model=name, depth=L, engine=engine)
    s = SimpleNamespace()

    def builds():
        s.model = m = make_model(mcfg, task.d)
        _require(isinstance(m, AttentionModel), f"{type(m).__name__} lacks methods of the engine contract")
        s.theta = theta = np.asarray(m.init(np.random.default_rng(seed)))
        _require(theta.shape == (m.n_params,), f"init gave shape {theta.shape}, not (n_params,) = ({m.n_params},)")
        _require(np.all(np.isfinite(theta)), "init gave non-finite parameters")
        _require(np.array_equal(m.init(np.random.default_rng(seed)), theta), "init differs for the same seed")
        blocks = m.unpack(theta)
        _require(list(blocks) == list(m.names()), f"unpack's blocks {list(blocks)} are not names() {m.names()}")
        sizes = sum(np.size(b) for b in blocks.values())
        _require(sizes == m.n_params, f"the blocks hold {sizes} numbers, not n_params = {m.n_params}")
        s.batch = make_batch(task, B, np.random.default_rng(seed + 1))
        return f"{type(m).__name__}: {m.n_params} parameters in {len(blocks)} blocks, the same for the same seed"

    def layer_outputs():
        f = np.asarray(s.model.layer_outputs(s.theta, s.batch))
        _require(f.shape == (B, L), f"layer_outputs gave shape {f.shape}: must be (B, L) = {(B, L)}")
        _require(np.all(np.isfinite(f)), "non-finite layer outputs")
        s.yhat = yhat = np.asarray(s.model.predict(s.theta, s.batch))
        _require(yhat.shape == (B,), f"predict gave shape {yhat.shape}: must be (B,) = ({B},)")
        _require(np.allclose(yhat, f.mean(axis=1), rtol=1e-10, atol=1e-12), "predict is not layer_outputs.mean(axis=1)")
        return f"(B, L) = {(B, L)}, finite; predict is their mean"

    def loss():
        s.loss, grad = s.model.loss_and_grad(s.theta, s.batch)
        s.grad = grad = np.asarray(grad)
        mse = float(np.mean((s.yhat - s.batch.target) ** 2))
        _require(math.isclose(s.loss, mse, rel_tol=1e-10), f"loss {s.loss!r} is not the mean squared error {mse!r}")
        _require(grad.shape == s.theta.shape and np.all(np.isfinite(grad)), f"gradient of shape {grad.shape}, finite?")
        return f"loss {s.loss:.6g} = mean squared error of predict; gradient finite"

    def gradient():
        rng = np.random.default_rng(seed + 2)
        h, errs = 1e-6, []
        for _ in range(3):
            v = rng.standard_normal(s.theta.size)
            v /= np.linalg.norm(v)
            up = s.model.loss_and_grad(s.theta + h * v, s.batch)[0]
            down = s.model.loss_and_grad(s.theta - h * v, s.batch)[0]
            errs.append(_fd_close(s.grad @ v, (up - down) / (2 * h), max(float(np.linalg.norm(s.grad)), 1e-12)))
        return f"directional derivatives match central differences (max error {max(errs):.2g}, h = {h:g})"

    def label_weights():
        c = s.model.label_weights(s.theta, s.batch)
        if c is None:
            return "None (the model is not declared linear in the labels)"
        c = np.asarray(c)
        _require(c.shape == (B, task.P), f"label_weights gave shape {c.shape}: must be (B, P) = {(B, task.P)}")
        err = float(np.max(np.abs((c * s.batch.y).sum(axis=1) - s.yhat)))
        _require(err <= 1e-8 * (1 + np.max(np.abs(s.yhat))), f"sum_i c_i y_i differs from predict by {err:.3g}")
        return f"(B, P), and sum_i c_i y_i = predict (max difference {err:.2g})"

    def attention():
        w = s.model.attention(s.theta, s.batch)
        if w is None:
            return "None (the model gives no attention weights)"
        w = np.asarray(w)
        _require(w.shape == (B, L, task.P), f"attention gave shape {w.shape}: must be (B, L, P) = {(B, L, task.P)}")
        _require(np.all(np.isfinite(w)), "non-finite attention weights")
        return "(B, L, P), finite"

    def qk_norms():
        q = s.model.qk_norms(s.theta)
        if q is None:
            return "None (the model's query-key maps are its own)"
        q = np.asarray(q)
        _require(q.shape == (L,), f"qk_norms gave shape {q.shape}: must be (L,) = ({L},)")
        _require(np.all(np.isfinite(q)) and np.all(q >= 0), f"query-key norms {q} must be finite and >= 0")
        return "(L,), finite, >= 0"

    return [
        ("builds", builds, ()),
        ("layer outputs", layer_outputs, ("builds",)),
        ("loss", loss, ("layer outputs",)),
        ("gradient", gradient, ("loss",)),
        ("label weights", label_weights, ("layer outputs",)),
        ("attention weights", attention, ("builds",)),
        ("query-key norms", qk_norms, ("builds",)),
        *_run_steps(s, RunConfig(task, mcfg, TrainConfig(steps=6, batch=8, lr=1e-2, eval_contexts=64, window=3)), seed),
    ]


def _run_steps(s: SimpleNamespace, config, seed: int) -> list:
    """A short training run of the model ``s.model`` was built for, and its record's schema."""
    from .config import config_hash
    from .records import RUN_RECORD_FIELDS, RunRecord, record_problem
    from .runner import run

    L = config.model.depth

    def training():
        s.rec = rec = run(config, seed)
        _require(rec["status"] == "ok", f"status {rec['status']!r} ({rec.get('reason')})")
        _require(math.isfinite(rec["final_loss"]), f"final loss {rec['final_loss']}")
        layers = np.asarray(rec["layer_losses"], np.float64)
        _require(layers.shape == (L,), f"{layers.size} layer losses, not L = {L}")
        _require(np.all(np.isfinite(layers)), f"non-finite layer losses {layers}")
        return f"{rec['steps']} steps: status ok, final loss {rec['final_loss']:.4g}, {L} finite layer losses"

    finished = set("converged steps n_params wall_seconds train_curve final_loss final_loss_se".split())
    finished |= set("target_power A_L C_L gap layer_losses n_contexts arrays".split())  # a finished run's fields

    def record():
        rec = dict(s.rec)
        extra = sorted(set(rec) - RUN_RECORD_FIELDS)
        _require(not extra, f"fields outside RUN_RECORD_FIELDS: {extra}")
        missing = sorted((RunRecord.__required_keys__ | finished) - set(rec))
        _require(not missing, f"a finished run's fields missing: {missing}")
        problem = record_problem(rec)
        _require(problem is None, f"record_problem: {problem}")
        key = f"{config_hash(config)}-{seed}"
        _require(rec["key"] == key and rec["config"] == config.to_dict(), f"key {rec['key']!r}, not {key!r}")
        _require(rec["n_params"] == s.model.n_params, f"n_params {rec['n_params']}, not {s.model.n_params}")
        json.dumps({k: v for k, v in rec.items() if k != "arrays"})  # a TypeError names what is not JSON-able
        return f"{len(rec)} fields of RUN_RECORD_FIELDS, the run's key and config, JSON-able"

    return [("training run", training, ("builds",)), ("run record", record, ("training run",))]


# ------------------------------------------------------------------------------------------------
# tasks
def check_task(
    name: str, *, make_batch: Callable[..., Any] | None = None, raise_on_fail: bool = True, seed: int = 0
) -> ConformanceReport:
    """Check the registered task ``name``'s contexts (see the module docstring for the checks).

    Parameters
    ----------
    name : str
        ``easy-exact``, ``easy-fresh``, ``topk`` or a task registered with ``depthscale.register_task``
        or an entry point.
    make_batch : callable or None, default None
        The generator checked, with the signature of :func:`depthscale.sims.tasks.make_batch`
        (``make_batch(task, n, rng, dtype=...)`` returning a batch): ``None`` checks that one (which
        draws a user's task with its own ``make_batch``); a port of a task's generator (another
        backend, a wrapper) is checked against the same definitions.
    raise_on_fail : bool, default True
        Raise :class:`ConformanceError` (an ``AssertionError``) after the checks if any failed.
    seed : int, default 0
        Seeds the batches; the reference Monte Carlo uses a stream of its own.

    Returns
    -------
    ConformanceReport
    """
    from . import tasks

    name = _registered(name, task_names(), broken_task_plugins(), "task")
    if make_batch is not None and not callable(make_batch):
        bad_argument("make_batch", make_batch, "None or a function with the signature of sims.tasks.make_batch")
    raise_on_fail = _check_flag(raise_on_fail)
    seed = check_int("seed", seed, lo=0)
    gen = tasks.make_batch if make_batch is None else make_batch
    return _run_checks("task", name, _task_steps(get_task(name), gen, seed), raise_on_fail)


def _task_steps(entry, gen: Callable[..., Any], seed: int) -> list:
    from .config import TaskConfig

    name, builtin = entry.name, entry.code is not None
    task = TaskConfig(task=name, k=2, a=1.0, b=0.5, d=4, P=16, c_omega=2.0)
    d, P, n = task.d, task.P, 5
    shapes = {"X": (n, P, d), "y": (n, P), "x_test": (n, d), "target": (n,), "t": (n, d), "beta": (n, d)}
    shapes |= {"O": (n, d, d)}
    width = {"topk": task.k, "easy-exact": 1, "easy-fresh": 0}.get(name)  # sel's width: a user's task chooses it
    power = float(np.sum(task.lam * task.omega))  # E[y^2] = E[beta^T x x^T beta] = tr(Sigma Omega)
    s = SimpleNamespace()

    def batch(size, seed_, dtype=np.float64):
        return gen(task, size, np.random.default_rng(seed_), dtype=dtype)

    def shapes_and_dtypes():
        for dtype in (np.float64, np.float32):
            b = batch(n, seed, dtype)
            for field, shape in shapes.items():
                a = np.asarray(getattr(b, field))
                _require(a.shape == shape, f"{field} has shape {a.shape}, not {shape}")
                _require(a.dtype == dtype, f"dtype={np.dtype(dtype).name}: {field} is {a.dtype}")
                _require(np.all(np.isfinite(a)), f"{field} is not finite")
            sel = np.asarray(b.sel)
            ok = sel.ndim == 2 and sel.shape[0] == n and (width is None or sel.shape[1] == width)
            _require(ok, f"sel has shape {sel.shape}, not (B, {'k' if width is None else width})")
            _require(sel.dtype.kind in "iu", f"sel is {sel.dtype}, not integer")
        s.b = batch(n, seed)
        return f"X (B, P, d) = {shapes['X']}, sel (B, {np.shape(s.b.sel)[1]}), ...; float64 and float32 as asked"

    def deterministic():
        again, other = batch(n, seed), batch(n, seed + 1)
        differ = [f for f in (*shapes, "sel") if not np.array_equal(getattr(again, f), getattr(s.b, f))]
        _require(not differ, f"the same seed gave other {', '.join(differ)}")
        _require(not np.array_equal(other.X, s.b.X), "another seed gave the same X")
        return "the same seed gives the same batch, another seed another"

    def structure():
        b = s.b
        X, beta, t, O, sel = (np.asarray(getattr(b, f)) for f in ("X", "beta", "t", "O", "sel"))
        close = lambda a, c: np.allclose(a, c, rtol=1e-10, atol=1e-10)  # noqa: E731
        # what every task promises (sims/task_registry.py): target = beta . t, O orthonormal, sel in the context
        _require(close(b.target, np.einsum("bd,bd->b", beta, t)), "target is not beta . t")
        _require(close(np.einsum("bij,bik->bjk", O, O), np.broadcast_to(np.eye(d), O.shape)), "O is not orthogonal")
        _require(np.all((sel >= 0) & (sel < P)), "sel indexes outside the context")
        if not builtin:
            return "target = beta . t, O orthogonal, sel inside the context"
        _require(close(b.y, np.einsum("bpd,bd->bp", X, beta)), "y is not X beta")
        rows = np.arange(n)[:, None]
        if name == "easy-exact":
            _require(close(b.x_test, X[rows, sel][:, 0]), "x_test is not the context token sel")
        if name in ("easy-exact", "easy-fresh"):
            _require(close(t, b.x_test), "t is not x_test")
        else:
            cos = np.einsum("bpd,bd->bp", X, b.x_test) / np.linalg.norm(X, axis=2)  # the query's norm is common
            top = np.argsort(-cos, axis=1, kind="stable")[:, : task.k]
            _require(np.array_equal(sel, top), f"sel {sel.tolist()} is not the top-{task.k} by cosine {top.tolist()}")
            _require(close(t, X[rows, sel].mean(axis=1)), "t is not the mean of the selected tokens")
        return "y = X beta, target = beta . t, O orthogonal, t as the task defines it"

    def moment(values, ref, ref_se, what):
        m, se = float(values.mean()), float(values.std(ddof=1) / math.sqrt(values.size))
        z = (m - ref) / math.hypot(se, ref_se)
        text = f"{what} {m:.4f} +- {se:.4f} against {ref:.4f}" + (f" +- {ref_se:.4f}" if ref_se else "")
        _require(abs(z) <= Z_MAX, f"{text}: {z:+.1f} standard errors (> {Z_MAX:g})")
        return f"{text} ({z:+.1f} standard errors, {values.size} contexts)"

    def big():
        if not hasattr(s, "big"):
            s.big = batch(N_MOMENT, seed + 2)
        return s.big

    def labels():
        # each context's mean of y_i^2: one value per independent context (a context's labels share beta)
        return moment(np.mean(np.asarray(big().y, np.float64) ** 2, axis=1), power, 0.0, "E[y^2]")

    def targets():
        values = np.asarray(big().target, np.float64) ** 2
        if entry.second_moment is not None:  # the task's own E[y*^2] (sum lam omega for the easy tasks)
            return moment(values, float(entry.second_moment(task)), 0.0, "E[y*^2]")
        _require(name == "topk", "the task gives no second_moment")
        ref = _topk_target_power(task, N_REFERENCE, np.random.default_rng([seed, 0x5EED]))
        return moment(values, ref.mean(), ref.std(ddof=1) / math.sqrt(ref.size), "E[y*^2]")

    steps = [
        ("shapes and dtypes", shapes_and_dtypes, ()),
        ("deterministic", deterministic, ("shapes and dtypes",)),
        ("structure", structure, ("shapes and dtypes",)),
    ]
    if builtin:  # the labels' law is the built-ins' (a user's task declares its target's moment only)
        steps.append(("label second moment", labels, ("shapes and dtypes",)))
    return [*steps, ("target second moment", targets, ("shapes and dtypes",))]


def _topk_target_power(task, n: int, rng: np.random.Generator) -> np.ndarray:
    """Per-context ``E[y*^2 | inputs]`` of the top-k task, by NumPy alone (the reference Monte Carlo).

    A rotation changes neither cosine similarities nor ``t^T Omega t``, so the inputs are drawn in the
    eigenbasis (``x = sqrt(lam) z``) and ``beta`` is integrated out: ``E[(beta . t)^2] = sum omega t^2``.
    """
    X = np.sqrt(task.lam) * rng.standard_normal((n, task.P, task.d))
    q = np.sqrt(task.lam) * rng.standard_normal((n, task.d))
    cos = np.einsum("bpd,bd->bp", X, q) / np.linalg.norm(X, axis=2)
    top = np.argsort(-cos, axis=1)[:, : task.k]
    t = np.take_along_axis(X, top[:, :, None], axis=1).mean(axis=1)
    return (task.omega * t**2).sum(axis=1)

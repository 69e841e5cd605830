"""Online training: fresh contexts every step, an optimiser (Adam by default; sims/optimizer_registry.py),
a learning-rate schedule and a stopping rule.

Stopping rule (recorded with every run): compare the mean training loss of the last ``window`` steps
with that of the ``window`` steps before; the run has *converged* when the drop is at most ``tol``
(relative) plus twice its standard error. At batch 1024 the per-step loss fluctuates by several per
cent, so a rule without the noise term fires or fails on noise (the second pilot, docs/sources.md).
- ``constant``: stop as soon as the rule fires (or at the step cap, then ``converged = False``).
- ``cosine``: the schedule fixes the length; the rule is evaluated at the end.
- ``plateau``: each time the rule fires the learning rate is halved; after five halvings the run
  stops as converged.
A NaN/Inf loss, a loss above ``divergence_factor`` times the loss of step 0 at any step, or a
smoothed loss above ``divergence_factor`` times its early value (step ``window/4``) stops the run
with status ``diverged`` and the reason, instead of raising. The step-0 comparison is what catches a
blow-up within the first steps: the early smoothed value is then already inflated by it. Both are
relative to the run's own start, so a run that starts huge (a large ``init_scale``) and stays huge
would pass them: the smoothed loss is also judged against the target's scale, the loss of predicting
0 (``mean(target^2)`` of the first batch). Once a full ``window`` of steps has passed, and at the end,
a smoothed loss above ``divergence_factor`` times that scale stops the run as ``diverged``.
The two relative tests have an absolute floor, the target's scale: a loss below the loss of predicting 0
is never a divergence, so a run that starts exact (machine zero, a degenerate task) is not called
diverged for moving off it (see ``_Trainee.step``). Non-finite optimiser state or parameters after
a step (Adam's second moment overflows when gradients pass ~1e154; the parameters then stop moving
and the run would look converged) stop the run as ``diverged`` too.
"""

from __future__ import annotations

import functools
import math
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np

from .config import ModelConfig, TaskConfig, TrainConfig, rng_for
from .optimizer_registry import Hyper, get_optimizer
from .tasks import make_batch
from .threads import one_blas_thread

PLATEAU_HALVINGS = 5


@dataclass
class TrainResult:
    theta: np.ndarray
    status: str  # "ok" | "diverged"
    reason: str | None
    converged: bool
    steps: int
    curve: list = field(default_factory=list)  # [[step, smoothed loss], ...]
    wall_seconds: float = 0.0
    checkpoints: list = field(default_factory=list)  # [{"step": s, **measurement}, ...] (TrainConfig.checkpoints_from)


def lr_at(cfg: TrainConfig, step: int, base: float) -> float:
    """Learning rate of ``step`` (0-based): linear warm-up, then constant or cosine decay."""
    if cfg.warmup and step < cfg.warmup:
        return base * (step + 1) / cfg.warmup
    if cfg.schedule == "cosine" and cfg.steps > cfg.warmup:
        frac = (step - cfg.warmup) / (cfg.steps - cfg.warmup)
        return base * 0.5 * (1 + math.cos(math.pi * min(frac, 1.0)))
    return base


def initial_parameters(model, mcfg: ModelConfig, task: TaskConfig, rng: np.random.Generator) -> np.ndarray:
    """The starting point of training: ``model.init``, or for ``init="jacobi"`` the layers' steps of
    :func:`depthscale.theory.linear_optimum.jacobi_start` at the task's spectrum and size."""
    if mcfg.init != "jacobi":
        return model.init(rng)
    from ..theory.linear_optimum import jacobi_start

    steps = jacobi_start(task.a, task.b, task.d, task.P, mcfg.depth, c_lambda=task.c_lambda)
    return model.init_steps(rng, steps.gamma)


class _Trainee:
    """One model's training state: parameters, optimiser, smoothed loss and stopping rule."""

    def __init__(self, model, mcfg: ModelConfig, task: TaskConfig, cfg: TrainConfig, seed: int, dtype):
        self.theta = initial_parameters(model, mcfg, task, rng_for(mcfg, seed, "init")).astype(dtype)
        self.model, self.cfg = model, cfg
        self.opt = get_optimizer(cfg.optimizer).make(self.theta.size, Hyper.of(cfg), dtype)
        self.tau = max(cfg.window / 4, 1.0)
        self.ema: float | None = None  # smoothed training loss, from the first step on
        self.first: float | None = None
        self.initial: float | None = None  # the step-0 loss (the divergence reference)
        self.scale: float | None = None  # the target's scale: the loss of predicting 0 on the first batch
        self.floor = 0.0  # the relative divergence tests' absolute floor (the target's scale; set at step 0)
        self.history: list[float] = []  # raw training loss of every step since the last learning-rate change
        self.curve: list[list[float]] = []
        self.every = max(cfg.steps // 200, 1)
        self.base_lr, self.halvings = cfg.lr, 0
        self.status, self.reason, self.converged = "ok", None, False
        self.active = True
        self.steps = cfg.steps
        self.seconds = 0.0
        self.checkpoints: list[dict] = []

    def step(self, step: int, batch) -> None:
        """One optimiser step on ``batch``; clears ``active`` when the run stops."""
        t0 = time.perf_counter()
        cfg = self.cfg
        loss, grad = self.model.loss_and_grad(self.theta, batch)
        if not (math.isfinite(loss) and np.all(np.isfinite(grad))):
            self._stop(step, "diverged", f"non-finite loss or gradient at step {step}")
            return
        if self.initial is None:
            self.initial = loss
            target = getattr(batch, "target", None)
            self.scale = float(np.mean(np.square(target, dtype=np.float64))) if target is not None else None
            # A run that starts exact (d = P = 1: loss 3.6e-34 against a target power of 1) has gradients
            # of rounding size, which Adam normalises into full steps: the loss leaves machine zero
            # (1e-21 at step 1, up to 1.6e-5 at lr 3e-3 and 0.015 at lr 0.1) and falls back (1e-16 by
            # step 300). Relative to such a start any excursion is a "1000-fold" rise, so the relative
            # tests only count a loss above the target's scale, the loss of predicting 0: below it
            # nothing has blown up. A start at the usual scale (small weights predict about 0) keeps
            # its threshold of 1000 x the start unchanged.
            self.floor = self.scale or 0.0
        if loss > max(cfg.divergence_factor * self.initial, self.floor):
            self._stop(
                step,
                "diverged",
                f"loss {loss:.3g} exceeded {cfg.divergence_factor:g} x the initial loss {self.initial:.3g} at step {step}",
            )
            return
        self.ema = loss if self.ema is None else self.ema + (loss - self.ema) / self.tau
        if step == int(self.tau):
            self.first = self.ema
        if self.first is not None and self.ema > max(cfg.divergence_factor * self.first, self.floor):
            self._stop(
                step,
                "diverged",
                f"smoothed loss {self.ema:.3g} exceeded {cfg.divergence_factor:g} x its early "
                f"value {self.first:.3g} at step {step}",
            )
            return
        if step >= cfg.window and self._above_scale(step):
            return
        with np.errstate(over="ignore", invalid="ignore"):  # an overflow is caught below, once, as a reason
            self.opt.step(self.theta, grad, lr_at(cfg, step, self.base_lr))
        if not (self.opt.finite() and np.all(np.isfinite(self.theta))):
            self._stop(step, "diverged", f"Adam's moments or the parameters overflowed (non-finite) at step {step}")
            return
        self.history.append(loss)
        if step % self.every == 0:
            self.curve.append([step, float(self.ema)])
        if settled(self.history, cfg):
            if cfg.schedule == "constant":
                self._stop(step, converged=True)
            elif cfg.schedule == "plateau":
                self.halvings += 1
                self.base_lr /= 2
                self.history.clear()  # a fresh window after each halving
                if self.halvings >= PLATEAU_HALVINGS:
                    self._stop(step, converged=True)
        self.seconds += time.perf_counter() - t0

    def _above_scale(self, step: int) -> bool:
        """Stop as diverged if the smoothed loss is above ``divergence_factor`` x the target's scale."""
        limit = self.cfg.divergence_factor * (self.scale or 0.0)
        if self.scale and self.ema is not None and self.ema > limit:
            self._stop(
                step,
                "diverged",
                f"smoothed loss {self.ema:.3g} above {self.cfg.divergence_factor:g} x the target's scale "
                f"{self.scale:.3g} (the loss of predicting 0) at step {step}",
            )
            return True
        return False

    def _stop(self, step, status="ok", reason=None, converged=False):
        self.status, self.reason, self.converged = status, reason, converged
        self.steps = step + 1
        self.active = False

    def result(self, data_seconds: float) -> TrainResult:
        if self.status == "ok":
            self._above_scale(self.steps - 1)
        if self.status == "ok" and self.cfg.schedule == "cosine":
            self.converged = settled(self.history, self.cfg)
        if self.ema is not None:
            self.curve.append([self.steps, float(self.ema)])
        return TrainResult(
            self.theta,
            self.status,
            self.reason,
            self.converged and self.status == "ok",
            self.steps,
            self.curve,
            self.seconds + data_seconds,
            self.checkpoints,
        )


def train(
    model,
    task: TaskConfig,
    mcfg: ModelConfig,
    cfg: TrainConfig,
    seed: int,
    progress: bool = False,
    prefetch: bool = False,
    measure=None,
) -> TrainResult:
    """Train ``model`` online on ``task``; deterministic in (configs, seed).

    Training batches depend only on (task, seed), so models of different depth see the same data
    stream (common random numbers make depth comparisons less noisy). With ``prefetch`` the next
    batch is generated in a background thread while the model computes (the data kernels release
    the GIL); worth it only when a core is free, so sweep workers leave it off.
    """
    return train_lockstep([(model, mcfg)], task, cfg, seed, progress, prefetch, measure)[0]


def train_lockstep(
    models,
    task: TaskConfig,
    cfg: TrainConfig,
    seed: int,
    progress: bool = False,
    prefetch: bool = False,
    measure=None,
    snapshot=None,
) -> list[TrainResult]:
    """Train several models on ONE stream of training batches, generated once per step.

    ``models`` is a list of ``(model, ModelConfig)`` sharing a dtype, typically the depths of one
    (task, training protocol, seed). Each model's numbers are bitwise those of :func:`train` on
    it alone: it is initialised from its own config, sees the same batches in the same order and
    runs the same arithmetic; a model that stops early (converged or diverged) simply leaves the
    loop. The data's cost is shared: the returned ``wall_seconds`` of each model is its own compute
    plus an equal share of the data generation. ``measure(model, theta) -> dict``, if given, is
    called after each of ``cfg.checkpoint_steps()`` for every model still training (or stopped as
    converged at that step); its results go to ``TrainResult.checkpoints``. With a
    :class:`~depthscale.sims.snapshots.Snapshot` the state is saved every ``snapshot.every`` seconds
    and training resumes from a saved state, with bitwise the same results.
    """
    dtypes = {mcfg.dtype for _, mcfg in models}
    if len(dtypes) != 1:
        raise ValueError(f"models dtypes={sorted(dtypes)}: lockstep training needs one dtype (the batch is shared)")
    dtype = np.float32 if dtypes.pop() == "float32" else np.float64
    runs = [_Trainee(model, mcfg, task, cfg, seed, dtype) for model, mcfg in models]
    data_rng = rng_for(task, seed, "train")
    data_seconds = 0.0
    bar = _bar(cfg.steps, progress)
    start = 0
    saved = snapshot.load() if snapshot is not None else None
    if saved is not None:
        states = dict(zip(saved["models"], saved["runs"]))  # by ModelConfig: the group's order may differ
        for r, (_, mcfg) in zip(runs, models):
            r.__dict__.update(states[mcfg])
        data_rng.bit_generator.state = saved["rng"]
        start, data_seconds = saved["step"], saved["data_seconds"]
        if bar is not None:
            bar.update(start)
    rng_next = None  # with prefetch: the generator's state before the batch of the next step
    pool = ThreadPoolExecutor(1) if prefetch else None
    make = functools.partial(make_batch, task, cfg.batch, data_rng, dtype=dtype)
    next_batch = pool.submit(make) if pool and start < cfg.steps else None
    checkpoints = set(cfg.checkpoint_steps()) if measure is not None else set()
    with one_blas_thread():
        for step in range(start, cfg.steps):
            t0 = time.perf_counter()
            if pool is None:
                batch = make()
            else:
                assert next_batch is not None  # submitted before the loop and at every step but the last
                batch = next_batch.result()
                if step + 1 < cfg.steps:
                    rng_next = data_rng.bit_generator.state  # before the prefetch draws from it
                    next_batch = pool.submit(make)
            data_seconds += time.perf_counter() - t0
            for r in runs:
                if r.active:
                    r.step(step, batch)
                    if step + 1 in checkpoints and r.status == "ok":
                        t1 = time.perf_counter()
                        r.checkpoints.append({"step": step + 1, **measure(r.model, r.theta)})
                        r.seconds += time.perf_counter() - t1
            if bar is not None:
                bar.update(1)
                if step == 0:
                    bar.warmed_up()  # the first step compiled the kernels: no part of the time estimate
                if step % 50 == 0 and runs[0].ema is not None:
                    bar.set_postfix(loss=f"{runs[0].ema:.4g}")
            if not any(r.active for r in runs):
                break
            if snapshot is not None and step + 1 < cfg.steps and snapshot.due():
                snapshot.save(
                    {
                        "step": step + 1,
                        "rng": data_rng.bit_generator.state if pool is None else rng_next,
                        "data_seconds": data_seconds,
                        "models": [mcfg for _, mcfg in models],
                        "runs": [{k: v for k, v in vars(r).items() if k not in ("model", "cfg")} for r in runs],
                    }
                )
    if pool is not None:
        pool.shutdown(wait=True, cancel_futures=True)
    if bar is not None:
        bar.close()
    return [r.result(data_seconds / len(runs)) for r in runs]


def settled(history: list, cfg: TrainConfig) -> bool:
    """The stopping rule of the module docstring on the raw losses ``history`` (oldest first)."""
    w = cfg.window
    if len(history) < 2 * w:
        return False
    before, last = np.asarray(history[-2 * w : -w]), np.asarray(history[-w:])
    drop = before.mean() - last.mean()
    se = np.sqrt(before.var(ddof=1) / w + last.var(ddof=1) / w) if w > 1 else 0.0
    return drop <= cfg.tol * abs(last.mean()) + 2 * se


def _bar(total: int, progress: bool):
    if not progress:
        return None
    from .progress import Progress

    return Progress(total, unit="step", leave=False)


# One model's training state and the stopping and divergence rules, public for the JAX engine
# (sims/jax_engine.py replays each step's loss through them, so both engines stop alike).
Trainee = _Trainee

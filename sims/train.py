"""Online training: fresh contexts every step, Adam, a learning-rate schedule and a stopping rule.

Stopping rule (recorded with every run): compare the mean training loss of the last ``window`` steps
with that of the ``window`` steps before; the run has *converged* when the drop is at most ``tol``
(relative) plus twice its standard error. At batch 1024 the per-step loss fluctuates by several per
cent, so a rule without the noise term fires or fails on noise (SCIENCE.md section 9).
- ``constant``: stop as soon as the rule fires (or at the step cap, then ``converged = False``).
- ``cosine``: the schedule fixes the length; the rule is evaluated at the end.
- ``plateau``: each time the rule fires the learning rate is halved; after five halvings the run
  stops as converged.
A NaN/Inf loss, or a smoothed loss above ``divergence_factor`` times its first value, stops the run
with status ``diverged`` and the reason, instead of raising.
"""

from __future__ import annotations

import math
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np

from depthscale.sims.config import ModelConfig, TaskConfig, TrainConfig, rng_for
from depthscale.sims.tasks import make_batch

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


class Adam:
    """Adam on a flat parameter vector (bias-corrected, in place)."""

    def __init__(self, n: int, cfg: TrainConfig, dtype):
        self.m = np.zeros(n, dtype=dtype)
        self.v = np.zeros(n, dtype=dtype)
        self.t = 0
        self.b1, self.b2, self.eps = cfg.beta1, cfg.beta2, cfg.eps

    def step(self, theta: np.ndarray, grad: np.ndarray, lr: float) -> None:
        self.t += 1
        self.m *= self.b1
        self.m += (1 - self.b1) * grad
        self.v *= self.b2
        self.v += (1 - self.b2) * grad * grad
        # the textbook (and PyTorch) form: eps is added to the bias-corrected sqrt(v)
        denom = np.sqrt(self.v) / math.sqrt(1 - self.b2**self.t) + self.eps
        theta -= (lr / (1 - self.b1**self.t)) * self.m / denom


def lr_at(cfg: TrainConfig, step: int, base: float) -> float:
    """Learning rate of ``step`` (0-based): linear warm-up, then constant or cosine decay."""
    if cfg.warmup and step < cfg.warmup:
        return base * (step + 1) / cfg.warmup
    if cfg.schedule == "cosine" and cfg.steps > cfg.warmup:
        frac = (step - cfg.warmup) / (cfg.steps - cfg.warmup)
        return base * 0.5 * (1 + math.cos(math.pi * min(frac, 1.0)))
    return base


def train(model, task: TaskConfig, mcfg: ModelConfig, cfg: TrainConfig, seed: int, progress: bool = False,
          prefetch: bool = False) -> TrainResult:
    """Train ``model`` online on ``task``; deterministic in (configs, seed).

    Training batches depend only on (task, seed), so models of different depth see the same data
    stream (common random numbers make depth comparisons less noisy). With ``prefetch`` the next
    batch is generated in a background thread while the model computes (the data kernels release
    the GIL); worth it only when a core is free, so sweep workers leave it off.
    """
    dtype = np.float32 if mcfg.dtype == "float32" else np.float64
    theta = model.init(rng_for(mcfg, seed, "init")).astype(dtype)
    data_rng = rng_for(task, seed, "train")
    opt = Adam(theta.size, cfg, dtype)
    tau = max(cfg.window / 4, 1.0)
    ema = None
    first = None
    history = []  # raw training loss of every step since the last learning-rate change
    curve = []
    every = max(cfg.steps // 200, 1)
    base_lr, halvings = cfg.lr, 0
    status, reason, converged = "ok", None, False
    t0 = time.perf_counter()
    bar = _bar(cfg.steps, progress)
    step = 0
    pool = ThreadPoolExecutor(1) if prefetch else None
    next_batch = pool.submit(make_batch, task, cfg.batch, data_rng, dtype=dtype) if pool and cfg.steps else None
    for step in range(cfg.steps):
        if pool is None:
            batch = make_batch(task, cfg.batch, data_rng, dtype=dtype)
        else:
            batch = next_batch.result()
            if step + 1 < cfg.steps:
                next_batch = pool.submit(make_batch, task, cfg.batch, data_rng, dtype=dtype)
        loss, grad = model.loss_and_grad(theta, batch)
        if not (math.isfinite(loss) and np.all(np.isfinite(grad))):
            status, reason = "diverged", f"non-finite loss or gradient at step {step}"
            break
        ema = loss if ema is None else ema + (loss - ema) / tau
        if step == int(tau):
            first = ema
        if first is not None and ema > cfg.divergence_factor * first:
            status, reason = "diverged", f"smoothed loss {ema:.3g} exceeded {cfg.divergence_factor:g} x its early value {first:.3g} at step {step}"
            break
        opt.step(theta, grad, lr_at(cfg, step, base_lr))
        history.append(loss)
        if step % every == 0:
            curve.append([step, float(ema)])
        if bar is not None:
            bar.update(1)
            if step % 50 == 0:
                bar.set_postfix(loss=f"{ema:.4g}")
        if _settled(history, cfg):
            if cfg.schedule == "constant":
                converged = True
                break
            if cfg.schedule == "plateau":
                halvings += 1
                base_lr /= 2
                history.clear()  # a fresh window after each halving
                if halvings >= PLATEAU_HALVINGS:
                    converged = True
                    break
    else:
        step = cfg.steps
    if pool is not None:
        pool.shutdown(wait=True, cancel_futures=True)
    if bar is not None:
        bar.close()
    steps_done = step + 1 if status == "diverged" or converged else cfg.steps
    if status == "ok" and cfg.schedule == "cosine":
        converged = _settled(history, cfg)
    if ema is not None:
        curve.append([steps_done, float(ema)])
    return TrainResult(theta, status, reason, converged and status == "ok", steps_done, curve, time.perf_counter() - t0)


def _settled(history: list, cfg: TrainConfig) -> bool:
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
    from tqdm import tqdm

    return tqdm(total=total, unit="step", leave=False, dynamic_ncols=True)

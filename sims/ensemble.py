"""The positive control of the central-limit mechanism: an average of independently trained one-layer models.

With ``ModelConfig(ensemble=True)`` a run of depth L is the average ``yhat = (1/L) sum_l f_l`` of the
first L members of one pool: member ``m`` is a one-layer model of the same config trained alone, from
its own initialisation and on its own batch stream (both from a member seed derived from the
ensemble's depth-free config, the run seed and ``m``). The members are i.i.d., so in expectation
``R_L = C + (A - C)/L`` exactly, with ``A`` a member's loss and ``C`` the covariance of two members'
errors: a pipeline must decide "inverse depth" on it. Because member ``m`` does not depend on L,
the depths of one group share the pool (trained once, up to the largest L) and each depth is
bitwise what it would be alone.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ..theory._validate import SEED_MAX
from .config import RunConfig, rng_for
from .models import make_model
from .training import TrainResult, train


def member_config(config: RunConfig) -> RunConfig:
    """The one-layer config every member of ``config``'s pool trains with."""
    return dataclasses.replace(config, model=dataclasses.replace(config.model, depth=1, ensemble=False))


def member_seed(config: RunConfig, seed: int, m: int) -> int:
    """Seed of member ``m`` (init and batch stream), independent of the ensemble's depth.

    >>> from depthscale.sims.config import ModelConfig
    >>> c2 = RunConfig(model=ModelConfig(depth=2, ensemble=True))
    >>> c8 = RunConfig(model=ModelConfig(depth=8, ensemble=True))
    >>> member_seed(c2, 0, 1) == member_seed(c8, 0, 1) != member_seed(c8, 0, 0)
    True
    """
    depth_free = dataclasses.replace(config, model=dataclasses.replace(config.model, depth=1))
    return int(rng_for(depth_free, seed, f"ensemble member {m}").integers(0, SEED_MAX))


class Ensemble:
    """Engine-contract view of L trained one-layer models: member ``l`` plays the role of layer ``l``.

    ``theta`` is the members' parameter vectors concatenated. ``layer_outputs`` stacks the members'
    predictions, so ``yhat = mean_l f_l`` and the central-limit decomposition (``A_L``, ``C_L``) of
    ``depthscale.sims.measure.evaluate`` apply unchanged.

    Examples
    --------
    >>> from depthscale.sims.config import ModelConfig, TaskConfig
    >>> from depthscale.sims.tasks import eval_batches
    >>> cfg = ModelConfig(depth=3, ensemble=True)
    >>> one = make_model(dataclasses.replace(cfg, depth=1, ensemble=False), 4)
    >>> thetas = [one.init(np.random.default_rng(i)) for i in range(3)]
    >>> ens = Ensemble(cfg, one, 3)
    >>> b = next(eval_batches(TaskConfig(d=4, P=8), 5, seed=0))
    >>> f = ens.layer_outputs(np.concatenate(thetas), b)
    >>> bool(np.allclose(f[:, 2], one.layer_outputs(thetas[2], b)[:, 0]))
    True
    """

    def __init__(self, cfg, member, L: int):
        self.cfg, self.member, self.L = cfg, member, L
        self.n_params = member.n_params * L

    def _split(self, theta):
        return np.asarray(theta).reshape(self.L, self.member.n_params)

    def _stack(self, fn, theta, batch, axis):
        return np.concatenate([fn(th, batch) for th in self._split(theta)], axis=axis)

    def layer_outputs(self, theta, batch):
        return self._stack(self.member.layer_outputs, theta, batch, axis=1)

    def attention(self, theta, batch):
        return self._stack(self.member.attention, theta, batch, axis=1)

    def label_weights(self, theta, batch):
        ws = [self.member.label_weights(th, batch) for th in self._split(theta)]
        return None if any(w is None for w in ws) else np.mean(ws, axis=0)

    def qk_norms(self, theta):
        return np.concatenate([self.member.qk_norms(th) for th in self._split(theta)])

    def qk_maps(self, theta):
        return np.concatenate([self.member.qk_maps(th) for th in self._split(theta)])


def train_pool(config: RunConfig, seed: int, size: int) -> tuple[object, list[TrainResult]]:
    """Train members ``0..size-1`` of ``config``'s pool; returns the one-layer model and their results."""
    one = member_config(config)
    model = make_model(one.model, one.task.d)
    results = [train(model, one.task, one.model, one.train, member_seed(config, seed, m)) for m in range(size)]
    return model, results


def ensemble_result(results: list[TrainResult]) -> TrainResult:
    """The training summary of an ensemble of these members: ok and converged only if every member is."""
    bad = next((r for r in results if r.status != "ok"), None)
    return TrainResult(
        theta=np.concatenate([r.theta for r in results]),
        status="ok" if bad is None else bad.status,
        reason=None if bad is None else f"member {results.index(bad)}: {bad.reason}",
        converged=all(r.converged for r in results),
        steps=max(r.steps for r in results),
        curve=results[0].curve,  # member 0's training curve stands for the pool's
        wall_seconds=sum(r.wall_seconds for r in results),
    )

"""One run: train a model, measure it on fresh evaluation contexts, compare with the reference floors.

``run(config, seed)`` is a pure function of its arguments returning a JSON-able record (a
:class:`~depthscale.sims.records.RunRecord`, docs/engine-contract.md), so sweeps can farm it out to any executor.
"""

from __future__ import annotations

import dataclasses
import re
import time
from typing import cast

import numpy as np

from ..theory._json import json_safe
from ..theory._validate import check_bool
from .config import RunConfig, config_hash, run_key
from .engines import get_engine
from .models import make_model
from .records import RunRecord
from .threads import one_blas_thread

EXTERNAL_PREFIX = "external-"  # the keys of records of models trained elsewhere (from_layer_outputs)
_EXTERNAL_NAME = re.compile(r"^[a-z][a-z0-9_.-]{0,39}$")  # a model's name, as the registry's


def run(config: RunConfig, seed: int, progress: bool = False, prefetch: bool = False) -> RunRecord:
    """Train and measure one model; never raises for a diverged run (it is recorded instead).

    Parameters
    ----------
    config : RunConfig
        The task, the model and the training. ``TrainConfig()``'s defaults are the paper's scale
        (minutes to hours a run); ``TrainConfig.quick()`` takes seconds.
    seed : int
        Seeds the initialisation, the training data and the evaluation contexts (with the task):
        the same config and seed give the same record.
    progress : bool
        Show a progress bar over the training steps (``tqdm.auto``: a widget in Jupyter).
    prefetch : bool
        Generate the next batch of training contexts in a background thread while the model
        computes; worth it only when a core is free (sweep workers leave it off).

    Returns
    -------
    RunRecord
        A :class:`~depthscale.sims.display.RecordView`: the record as a ``dict`` (status, final
        loss and its error, A_L, C_L, the training curve, ...; docs/engine-contract.md) that prints
        as two lines and shows as a table in a notebook.

    Examples
    --------
    >>> from depthscale.sims.config import RunConfig, TaskConfig, ModelConfig, TrainConfig
    >>> cfg = RunConfig(TaskConfig(task="topk", d=4, P=16), ModelConfig(depth=2),
    ...                 TrainConfig(steps=5, batch=8, eval_contexts=64))
    >>> run(cfg, 0)["status"]
    'ok'
    """
    from .display import RecordView  # a dict that shows as two lines of text and a table in a notebook

    if not isinstance(config, RunConfig):
        raise TypeError(
            f"config={config!r}: must be a RunConfig (from a dict: RunConfig.from_dict(d)), not {type(config).__name__}"
        )
    return cast(RunRecord, RecordView(run_group([config], seed, progress=progress, prefetch=prefetch)[0]))


def from_layer_outputs(
    f, target, config: RunConfig, seed: int, *, n_params: int = 0, model: str = "external"
) -> RunRecord:
    """The run record of a model trained elsewhere (your own PyTorch or JAX model) from its per-layer
    predictions ``f`` (contexts x L) and the ``target`` (contexts,) of the same evaluation contexts.

    ``config`` describes the run (its task, ``model.depth == L``, training), ``seed`` tells its seeds
    apart; the record has the engine's schema, so the store, ``curves`` and their fits, claims and
    reports take it. Measured from ``f`` alone as a run's evaluation is (:func:`depthscale.theory.clt.decompose`:
    ``yhat = mean_l f_l``, R_L, A_L, C_L, the layer losses and the per-context errors); what needs
    the model itself (attention statistics, mode losses, query-key norms, the reference floors) is
    absent (``None``), and ``steps`` is 0 (the training is not this package's).

    ``model`` is your model's name (lower-case letters, digits, ``_ . -``; not a registered model's):
    the record's ``config.model.model``, so its curves, labels and ``where`` filters
    (``Store.records(model="my-gpt")``) name it. The record's key starts with ``external-`` and
    hashes that name with the config, so it never equals a trained run's key: ``Store.put`` of an
    external record never replaces a run this package trained.

    Examples
    --------
    >>> from depthscale.sims.config import ModelConfig, TaskConfig
    >>> rng = np.random.default_rng(0)
    >>> target = rng.standard_normal(2000)
    >>> f = target[:, None] + 0.5 * rng.standard_normal((2000, 4))  # independent layer errors
    >>> rec = from_layer_outputs(f, target, RunConfig(TaskConfig(d=4, P=16), ModelConfig(depth=4)), seed=0)
    >>> rec["status"], round(rec["A_L"], 2), abs(rec["C_L"]) < 0.01, round(rec["final_loss"], 3)
    ('ok', 0.25, True, 0.063)
    >>> rec["config"]["model"]["model"], rec["key"].startswith("external-")
    ('external', True)
    """
    from ..theory._validate import SEED_MAX, bad_argument, check_int
    from .measure import decomposed_loss
    from .model_registry import model_names

    if not isinstance(config, RunConfig):
        bad_argument("config", type(config).__name__, "a RunConfig describing the run")
    if not isinstance(model, str) or not _EXTERNAL_NAME.match(model) or model in model_names():
        bad_argument(
            "model",
            model,
            "your model's name: lower-case letters, digits, '_', '.' or '-', starting with a letter (<= 40), "
            f"not a registered model's ({', '.join(model_names())}: their runs are trained by run())",
        )
    seed = check_int("seed", seed, lo=0, hi=SEED_MAX)
    n_params = check_int("n_params", n_params, lo=0)
    f = np.asarray(f, dtype=np.float64)
    target = np.asarray(target, dtype=np.float64)
    L = config.model.depth
    if f.ndim != 2 or f.shape[1] != L or f.shape[0] < 2:
        bad_argument("f.shape", f.shape, f"(contexts, {L}): at least 2 contexts, one column per layer (model.depth)")
    if target.shape != (f.shape[0],):
        bad_argument("target.shape", target.shape, f"({f.shape[0]},), one target per context of f")
    if not (np.all(np.isfinite(f)) and np.all(np.isfinite(target))):
        bad_argument("f", "non-finite values", "finite predictions and targets")
    sq_err, fields = decomposed_loss(f, target)
    cfg = config.to_dict()
    cfg["model"]["model"] = model
    record: RunRecord = {
        # a prefix no trained run's key has (theirs: run_key, 24 hex digits), and the name hashed in
        "key": f"{EXTERNAL_PREFIX}{config_hash(cfg)}-{seed}",
        "config": cfg,
        "seed": seed,
        "status": "ok",
        "reason": None,
        "converged": True,
        "steps": 0,
        "train_curve": [],
        "n_params": n_params,
        **fields,
        "mode_losses": None,
        "top1_mass": None,
        "topk_mass": None,
        "target_mass": None,
        "entropy": None,
        "qk_norm": None,  # type: ignore[typeddict-item]  # unknown: the model is not this package's
        "qk_similarity": None,
        "selection_error_pct": None,
        "n_contexts": int(f.shape[0]),
        "arrays": {"sq_err": sq_err.astype(np.float32)},
        "wall_seconds": 0.0,
    }
    return _plain_record(record)


def _plain_record(record: RunRecord) -> RunRecord:
    """The record with its NumPy scalars as Python numbers (its ``arrays`` kept as arrays)."""
    arrays = record.pop("arrays", None)
    out = cast(RunRecord, _plain(dict(record)))
    if arrays is not None:
        out["arrays"] = arrays
    return out


def lockstep_key(config: RunConfig) -> str:
    """Runs with equal keys (and seeds) differ only in depth: they can train on one batch stream.

    >>> from depthscale.sims.config import ModelConfig
    >>> lockstep_key(RunConfig(model=ModelConfig(depth=2))) == lockstep_key(RunConfig(model=ModelConfig(depth=8)))
    True
    """
    return config_hash(dataclasses.replace(config, model=dataclasses.replace(config.model, depth=1)))


def run_group(
    configs, seed: int, progress: bool = False, prefetch: bool = False, snapshots=None, snapshot_every: float = 600.0
) -> list[RunRecord]:
    """Train the runs of one lockstep group together (one batch stream) and measure each.

    Every record is what :func:`run` gives for that config alone (tested bitwise), except
    ``wall_seconds``, which counts the run's own compute and an equal share of the shared data.
    ``snapshots``: a folder where the numba engine saves the group's training state every
    ``snapshot_every`` seconds and resumes from it (:mod:`depthscale.sims.snapshots`); the caller deletes the snapshot
    once the records are stored.
    """
    progress, prefetch = check_bool("progress", progress), check_bool("prefetch", prefetch)
    configs = list(configs)
    if not configs or len({lockstep_key(c) for c in configs}) != 1:
        raise ValueError("configs: must be a non-empty list of RunConfigs that differ only in model.depth")
    task, tcfg = configs[0].task, configs[0].train
    snapshot = None
    if configs[0].model.ensemble:  # one pool of one-layer models; depth L averages its first L members
        from .ensemble import Ensemble, ensemble_result, train_pool

        member, pool = train_pool(configs[0], seed, max(c.model.depth for c in configs))
        models = [(Ensemble(c.model, member, c.model.depth), c.model) for c in configs]
        results = [ensemble_result(pool[: c.model.depth]) for c in configs]
    else:
        models = [(make_model(c.model, task.d), c.model) for c in configs]
        measure = _checkpoint_measure(task, tcfg, seed)
        engine = get_engine(configs[0].model.engine)  # the group shares its engine (it differs only in depth)
        options: dict = {"progress": progress, "prefetch": prefetch, "measure": measure}
        if snapshots is not None and engine.snapshots:
            from .snapshots import Snapshot

            snapshot = options["snapshot"] = Snapshot(snapshots, configs, seed, snapshot_every)
        results = engine.train_lockstep(models, task, tcfg, seed, **options)
    floors = None
    if any(res.status == "ok" for res in results):  # the group's reference floors, fitted once
        from .reference_floors import reference_floors

        with one_blas_thread():
            # heads with the runs' own map (the group shares it: it differs only in depth)
            floors = reference_floors(task, seed, n_eval=tcfg.eval_contexts, attention=configs[0].model.attention)
    records = [_measure(config, seed, model, res, floors) for config, (model, _), res in zip(configs, models, results)]
    if snapshot is not None and snapshot.resumed:
        for rec in records:
            rec["resumed"] = snapshot.resumed
    return records


def _checkpoint_measure(task, tcfg, seed: int):
    """What a run records at each training checkpoint: its loss and the central-limit decomposition."""
    if not tcfg.checkpoint_steps():
        return None
    from .measure import LOSS_KEYS, evaluate

    def measure(model, theta) -> dict:
        ev = evaluate(model, theta, task, tcfg.eval_contexts, seed)
        return {k: _plain(ev[k]) for k in (*LOSS_KEYS, "qk_norm", "qk_similarity")}

    return measure


def _measure(config: RunConfig, seed: int, model, res, floors) -> RunRecord:
    """The record of one trained run: training summary, evaluation, reference floors, parameters."""
    from .measure import evaluate

    task, tcfg = config.task, config.train
    t0 = time.perf_counter()
    record: RunRecord = {
        "key": run_key(config, seed),
        "config": config.to_dict(),
        "seed": int(seed),
        "status": res.status,
        "reason": res.reason,
        "converged": bool(res.converged),
        "steps": int(res.steps),
        "train_curve": res.curve,
        "n_params": int(model.n_params),
    }
    if config.train.checkpoints_from:
        record["checkpoints"] = res.checkpoints
    if res.status == "ok":
        with one_blas_thread():  # evaluation numbers independent of the BLAS pool (and fast)
            ev = evaluate(model, res.theta, task, tcfg.eval_contexts, seed)
            against = _floor_summary(floors, np.asarray(ev["sq_err"], np.float64))
        sq_err = np.asarray(ev.pop("sq_err"), dtype=np.float64)
        record.update(cast(RunRecord, {k: _plain(v) for k, v in ev.items()}))
        record["floors"] = against
        # the trained parameters, so later measurements need no retraining
        # float32 halves the store; errors beyond its range (a blown-up but finite run) stay float64
        fits32 = np.all(sq_err <= np.finfo(np.float32).max)
        record["arrays"] = {
            "sq_err": sq_err.astype(np.float32) if fits32 else sq_err,
            "theta": np.asarray(res.theta, np.float64),
        }
    record["wall_seconds"] = res.wall_seconds + time.perf_counter() - t0
    return record


def _floor_summary(floors, sq_err: np.ndarray) -> dict:
    """The run against the reference floors of its task on the same contexts: ``single`` (best
    temperature head), ``mixture`` (best two-temperature mixture) and ``convex`` (best non-negative
    mixture over the temperature grid), each with its loss, the paired difference ``R_L - floor``
    and the ``attention`` map of its heads (the run's own)."""
    from .temperature_heads import paired_difference

    out = {}
    for name, b, fitted in (
        ("single", floors.single, {"kappa": floors.single.kappa}),
        ("mixture", floors.mixture, {"kappas": floors.mixture.kappas, "gains": floors.mixture.gains}),
        ("convex", floors.convex, {"support": floors.convex.support, "weights": floors.convex.weights}),
    ):
        diff, diff_se = paired_difference(sq_err, b.sq_err)
        out[name] = {
            **_plain(fitted),
            "attention": floors.attention,  # older records name none: softmax heads, whatever the map
            "loss": float(b.loss),
            "se": float(b.se),
            "diff": float(diff),
            "diff_se": float(diff_se),
        }
    return out


_plain = json_safe  # NumPy values to Python numbers and lists, so the record is JSON-able

"""Frozen, validated configurations of a run, and the seeding derived from them.

A run is a pure function of ``RunConfig`` and a seed. Evaluation contexts depend only on the task
and the seed, so runs that differ only in model or training share their evaluation contexts and
can be compared with paired standard errors.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from dataclasses import dataclass, field

import numpy as np

from ..theory._choices import EASY_TASKS, MODELS, SCHEDULES, TASKS  # noqa: F401  (MODELS, TASKS: the built-ins' names)
from ..theory._validate import D_MAX, DEPTH_MAX, P_MAX, SEED_MAX, bad_argument, check_choice, check_int, check_real
from ..theory.spectra import PowerLawSpectrum
from .attention_registry import BUILTIN_NAMES, check_attention_engine
from .engines import get_engine
from .loss_registry import check_loss_engine, get_loss
from .model_registry import check_model_engine, get_model
from .optimizer_registry import check_optimizer_engine, get_optimizer
from .task_registry import check_task_engine, get_task

QK_KINDS = ("factorised", "merged", "tied", "temperature")  # tied / temperature are the controls
VALUE_KINDS = ("shared", "per-layer")
STREAMS = ("two", "single")
DTYPES = ("float64", "float32")
# the toolkit's gentle start; the frameworks' uniform +-1/sqrt(fan_in); linear layers started at
# the Jacobi steps of theory.linear_optimum.jacobi_start (near the run's finite-(d, P) optimum)
INITS = ("scaled", "default", "jacobi")
ATTENTIONS = BUILTIN_NAMES  # the built-in maps (a user's map: sims/attention_registry.py)

# Fields added after stores were written. At their default they are left out of a config's hash, so
# every earlier run keeps its key (and its seeds): a store written before they existed still resumes.
_LATER_FIELDS = {
    "init": "scaled",
    "ensemble": False,
    "checkpoints_from": 0,
    "attention": "softmax",
    "engine": "numba",
    "optimizer": "adam",
    "loss": "mse",
}


# Version of the context generator (sims/tasks.py). Contexts of a (config, seed) are identical only
# within one version; stores record it so a sweep never mixes versions (evaluation contexts must be
# shared by the runs and reference floors it compares). 1: numpy PCG64 bits + LAPACK QR; 2: counter-based
# SplitMix64 streams per context + Gram-Schmidt.
CONTEXTS_VERSION = 2


def without_later_defaults(fields: dict) -> dict:
    """``fields`` without the later fields at their defaults: a record written before a field
    existed and one written after, at its default, describe the same run (same hash, same curve).

    >>> without_later_defaults({"steps": 10, "checkpoints_from": 0})
    {'steps': 10}
    """
    return {k: v for k, v in fields.items() if not (k in _LATER_FIELDS and v == _LATER_FIELDS[k])}


def _set(cfg, name: str, value) -> None:
    """Keep the checked value, a plain int or float: ``a=0`` and ``a=0.0``, ``depth=np.int64(4)`` and
    ``depth=4`` are one config (one hash, one seed)."""
    object.__setattr__(cfg, name, value)


def _check_bool(name: str, value) -> None:
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name}={value!r}: must be True or False")


@dataclass(frozen=True)
class TaskConfig:
    """One in-context regression task (docs/sources.md, Data): ``P`` context tokens and a query in
    ``d`` dimensions with power-law spectra; the model predicts the query's label.

    Parameters
    ----------
    task : {"topk", "easy-exact", "easy-fresh"} or a registered task, default "topk"
        ``"topk"``: the target is the mean label of the ``k`` context tokens most similar to the
        query (the difficult task); ``"easy-exact"``: the query is a copy of a uniformly drawn
        context token and the target its label; ``"easy-fresh"``: a fresh query with the linear
        target ``beta . x_test`` of the context's teacher ``beta``. A task registered by a user
        (``depthscale.register_task``, entry-point group ``depthscale.tasks``) runs on the numba
        engine (sims/task_registry.py).
    k : int, default 2
        Tokens averaged by the top-k target, 1 to ``P`` (ignored by the easy tasks).
    a : float, default 0.0
        Eigenvalue decay, ``lambda_k = c_lambda k^-a``, ``a >= 0`` (0: a flat spectrum).
    b : float, default 0.0
        Target-power decay, ``omega_k = c_omega k^-b``, ``b >= 0``; the depth exponent of linear
        attention is ``zeta = (a + b - 1) / a`` when ``a > 0`` and ``a + b > 1``.
    d : int, default 16
        Dimension (number of modes), 1 to ``D_MAX`` (100,000).
    P : int, default 128
        Context tokens per context, 1 to ``P_MAX`` (1,000,000).
    c_lambda, c_omega : float, default 1.0
        Scales of the two spectra, > 0.
    """

    task: str = "topk"
    k: int = 2
    a: float = 0.0
    b: float = 0.0
    d: int = 16
    P: int = 128
    c_lambda: float = 1.0
    c_omega: float = 1.0

    def __post_init__(self):
        get_task(self.task)  # a registered name (built-in or a user's: sims/task_registry.py)
        _set(self, "d", check_int("d", self.d, lo=1, hi=D_MAX))
        _set(self, "P", check_int("P", self.P, lo=1, hi=P_MAX))
        _set(self, "k", check_int("k", self.k, lo=1, hi=self.P))
        _set(self, "a", check_real("a", self.a, lo=0))
        _set(self, "b", check_real("b", self.b, lo=0))
        _set(self, "c_lambda", check_real("c_lambda", self.c_lambda, lo=0, lo_open=True))
        _set(self, "c_omega", check_real("c_omega", self.c_omega, lo=0, lo_open=True))

    @property
    def spectrum(self) -> PowerLawSpectrum:
        """The task's power-law spectra (``lam``, ``omega``, ``zeta``)."""
        return PowerLawSpectrum(self.a, self.b, self.d, self.c_lambda, self.c_omega)

    @property
    def lam(self) -> np.ndarray:
        """Input spectrum lambda_k = c_lambda k^-a, k = 1..d."""
        return self.spectrum.lam

    @property
    def omega(self) -> np.ndarray:
        """Teacher spectrum omega_k = c_omega k^-b, k = 1..d."""
        return self.spectrum.omega

    @property
    def second_moment(self) -> float | None:
        """``E[y*^2]`` of the task's target, as its registered task gives it (``None``: topk, no closed form).

        >>> TaskConfig(task="easy-fresh", d=2, c_lambda=2.0, c_omega=3.0).second_moment
        12.0
        """
        moment = get_task(self.task).second_moment
        return None if moment is None else float(moment(self))


@dataclass(frozen=True)
class ModelConfig:
    """An attention model of docs/sources.md (Models) and its variants.

    Parameters
    ----------
    model : {"softmax", "linear"} or a registered model, default "softmax"
        The attention of every layer. A model registered by a user (``depthscale.register_model``,
        entry-point group ``depthscale.models``) needs ``engine="jax"`` and leaves ``qk``, ``value``,
        ``attention`` and ``init`` at their defaults.
    depth : int, default 1
        Layers L, 1 to ``DEPTH_MAX`` (4,096); the prediction is the mean of the layers' predictors.
    width : int, default 0
        Query-key width N, 0 to ``D_MAX``; 0 means N = d.
    qk : {"factorised", "merged", "tied", "temperature"}, default "factorised"
        Query-key maps: ``W_Q^T W_K`` per layer, one merged matrix per layer, one map shared by every
        layer (control), or a scalar temperature per layer on a fixed map (control).
    value : {"shared", "per-layer"}, default "shared"
        One value/read-out map for all layers, or one per layer.
    stream : {"two", "single"}, default "two"
        Separate token and label streams, or one stream (a variant).
    context_update : bool, default False
        Softmax only: context tokens are updated too, through a trainable scalar ``m``.
    init_scale : float, default 0.3
        Query/key entries ~ N(0, (init_scale / sqrt(d))^2), independent per layer; > 0.
    dtype : {"float64", "float32"}, default "float64"
        Precision of training.
    init : {"scaled", "default", "jacobi"}, default "scaled"
        ``"scaled"``: as ``init_scale`` says; ``"default"``: every matrix uniform in +-1/sqrt(fan_in)
        as common frameworks do (softmax, ``init_scale`` 0.3 only); ``"jacobi"``: linear attention
        started at the free optimum's per-layer steps (the Jacobi roots of
        ``depthscale.theory.free_poly.jacobi_steps``; per-layer maps, not ``qk="tied"``).
    ensemble : bool, default False
        Positive control: depth L is the average of L independently trained one-layer models
        (softmax base layer only).
    attention : {"softmax", "sparsemax", "entmax15", "sigmoid", "relu"} or a registered map, default "softmax"
        The map from the test token's scores to its weights (sims/attention_maps.py); softmax
        model with two streams and no context update only. A map registered by a user
        (``depthscale.register_attention``, entry-point group ``depthscale.attention``) needs
        ``engine="jax"``.
    engine : {"numba", "jax"}, default "numba"
        What computes the model: the hand-derived numba kernels (the CPU engine) or the JAX engine
        written with autograd (``pip install "depthscale[jax]"``; CPU or an accelerator; the base
        softmax-family layer with any map, its value and query-key variants, and linear attention).
        The initialisation does not depend on it: both engines start a seed at one point.
    """

    model: str = "softmax"
    depth: int = 1
    width: int = 0  # N; 0 means N = d
    qk: str = "factorised"
    value: str = "shared"
    stream: str = "two"
    context_update: bool = False  # softmax: context tokens updated through a trainable scalar m
    init_scale: float = 0.3  # query/key entries ~ N(0, (init_scale / sqrt(d))^2), independent per layer
    dtype: str = "float64"
    # "default": every matrix uniform in +-1/sqrt(fan_in), as common frameworks initialise (softmax only)
    init: str = "scaled"
    # positive control: depth L is the average of L independently trained one-layer models
    ensemble: bool = False
    # the map from the test token's scores to its weights (sims/attention_maps.py): softmax,
    # sparsemax, entmax15, sigmoid (fixed bias -log P) or relu (relu(z) / P); base layer only
    attention: str = "softmax"
    # what computes the model: numba (hand-derived kernels) or jax (autograd; CPU or an accelerator)
    engine: str = "numba"

    def __post_init__(self):
        get_model(self.model)  # a registered name (built-in or a user's: sims/model_registry.py); engine checked below
        _set(self, "depth", check_int("depth", self.depth, lo=1, hi=DEPTH_MAX))
        _set(self, "width", check_int("width", self.width, lo=0, hi=D_MAX))
        check_choice("qk", self.qk, QK_KINDS)
        check_choice("value", self.value, VALUE_KINDS)
        check_choice("stream", self.stream, STREAMS)
        _set(self, "init_scale", check_real("init_scale", self.init_scale, lo=0, lo_open=True))
        check_choice("dtype", self.dtype, DTYPES)
        check_choice("init", self.init, INITS)
        for name in ("context_update", "ensemble"):
            _check_bool(name, getattr(self, name))
            _set(self, name, bool(getattr(self, name)))
        engine = get_engine(self.engine)
        check_attention_engine(self.attention, self.engine)
        model = check_model_engine(self.model, self.engine)
        if not model.builtin:
            # a user's model reads depth, width, init_scale and dtype; the built-ins' switches would
            # only give one run several hashes
            for name in ("qk", "value", "attention", "init"):
                if getattr(self, name) != _DEFAULTS[name]:
                    bad_argument(name, getattr(self, name), f"{_DEFAULTS[name]!r} for a user's model ({self.model!r})")
        if engine.base_layer_only and (self.stream != "two" or self.context_update or self.ensemble):
            raise ValueError(
                f"engine={self.engine!r}: needs two streams, no context update and no ensemble "
                "(the JAX engine has the base layer, its value and query-key variants, and linear attention)"
            )
        if model.builtin:
            model.spec_class().check_options(self)  # the variants the built-in model has (sims/model_specs.py)

    def n(self, d: int) -> int:
        """Width N (defaults to d)."""
        return self.width or d


_DEFAULTS = {"qk": "factorised", "value": "shared", "attention": "softmax", "init": "scaled"}


STEPS_MAX = 10_000_000  # the step cap of a run, and so of its window and first checkpoint


@dataclass(frozen=True)
class TrainConfig:
    """Online training: fresh contexts every step, an optimiser (Adam), a schedule and a stated stopping rule.

    The defaults are the paper's scale (8,000 steps of batch 1,024, 10,240 evaluation contexts:
    minutes to hours a run); :meth:`quick` is a preset of seconds for notebooks and trials.

    Parameters
    ----------
    lr : float, default 3e-3
        Adam's peak learning rate, in (0, 10].
    batch : int, default 1024
        Fresh contexts per step, 1 to 1,000,000.
    steps : int, default 8000
        Step cap, 0 to ``STEPS_MAX``; a run also stops when the stopping rule says so (schedule
        ``"constant"``) or diverges.
    warmup : int, default 0
        Steps of linear warm-up, 0 to ``steps``.
    schedule : {"cosine", "constant", "plateau"}, default "cosine"
        Cosine decay to 0 over ``steps`` (the rule is checked at the end); constant (the rule stops
        the run); or halve the rate when the rule fires (five halvings, then stop).
    optimizer : {"adam", "sgd"} or a registered optimiser, default "adam"
        What steps the parameters (sims/optimizer_registry.py); ``"sgd"``: plain gradient descent.
    loss : "mse" or a registered loss, default "mse"
        What training minimises (sims/loss_registry.py); evaluation stays the squared error.
    beta1, beta2 : float, default 0.9, 0.999
        Adam's moment decays, in [0, 1).
    eps : float, default 1e-8
        Adam's epsilon, > 0.
    window : int, default 1000
        Steps of the stopping rule's windows (converged: the mean loss of the last ``window`` steps
        is at most ``tol`` (relative) plus 2 s.e. below the window before), 1 to ``STEPS_MAX``. The
        recorded training curve is a moving average with time constant ``window / 4`` steps, so on
        a short run a large window leaves the curve far above the evaluation loss.
    tol : float, default 2e-3
        Relative tolerance of the stopping rule, > 0.
    eval_contexts : int, default 10240
        Fresh evaluation contexts, seeded by (task, seed) and shared by every depth, at least 2.
    divergence_factor : float, default 1000
        A loss above this factor times the step-0 loss, at any step, is a divergence (status
        ``diverged``); > 1.
    checkpoints_from : int, default 0
        Measure R_L, A_L and C_L after this many steps and after each doubling of it (0: only at
        the end), 0 to ``STEPS_MAX``.
    """

    lr: float = 3e-3
    batch: int = 1024
    steps: int = 8000  # step cap
    warmup: int = 0
    schedule: str = "cosine"
    beta1: float = 0.9
    beta2: float = 0.999
    eps: float = 1e-8
    # convergence: the mean loss of the last `window` steps is at most `tol` (relative) + 2 s.e. below the window before
    window: int = 1000
    tol: float = 2e-3
    eval_contexts: int = 10240
    divergence_factor: float = 1e3  # loss above factor * the step-0 loss, at any step, counts as divergence
    # measure R_L, A_L and C_L on the evaluation contexts after this many steps and after each
    # doubling of it (0: only at the end), so a depth law at a fixed budget can be told from one at convergence
    checkpoints_from: int = 0
    optimizer: str = "adam"  # a registered optimiser (sims/optimizer_registry.py)
    loss: str = "mse"  # a registered training loss (sims/loss_registry.py)

    def __post_init__(self):
        _set(self, "lr", check_real("lr", self.lr, lo=0, lo_open=True, hi=10))
        _set(self, "batch", check_int("batch", self.batch, lo=1, hi=1_000_000))
        _set(self, "steps", check_int("steps", self.steps, lo=0, hi=STEPS_MAX))
        _set(self, "warmup", check_int("warmup", self.warmup, lo=0, hi=self.steps if self.steps > 0 else 0))
        check_choice("schedule", self.schedule, SCHEDULES)
        get_optimizer(self.optimizer)  # a registered name (ValueError naming optimizer)
        get_loss(self.loss)
        _set(self, "beta1", check_real("beta1", self.beta1, lo=0, hi=1, hi_open=True))
        _set(self, "beta2", check_real("beta2", self.beta2, lo=0, hi=1, hi_open=True))
        _set(self, "eps", check_real("eps", self.eps, lo=0, lo_open=True))
        _set(self, "window", check_int("window", self.window, lo=1, hi=STEPS_MAX))  # at most the step cap
        _set(self, "tol", check_real("tol", self.tol, lo=0, lo_open=True))
        _set(self, "eval_contexts", check_int("eval_contexts", self.eval_contexts, lo=2))  # a s.e. needs two
        _set(self, "divergence_factor", check_real("divergence_factor", self.divergence_factor, lo=1, lo_open=True))
        _set(self, "checkpoints_from", check_int("checkpoints_from", self.checkpoints_from, lo=0, hi=STEPS_MAX))

    @classmethod
    def quick(cls, **changes) -> TrainConfig:
        """A small preset for notebooks and trials: 300 steps of batch 64, learning rate 1e-2,
        1,024 evaluation contexts, a 40-step window (seconds a run, not the paper's scale).

        ``changes`` override any field.

        >>> TrainConfig.quick().steps, TrainConfig.quick(steps=500).steps
        (300, 500)
        """
        settings = {"steps": 300, "batch": 64, "lr": 1e-2, "eval_contexts": 1024, "window": 40}
        return cls(**{**settings, **changes})

    def checkpoint_steps(self) -> list[int]:
        """Steps after which a run is measured: ``checkpoints_from`` doubled up to the cap.

        >>> TrainConfig(steps=10000, checkpoints_from=1000).checkpoint_steps()
        [1000, 2000, 4000, 8000]
        """
        out, s = [], self.checkpoints_from
        while 0 < s < self.steps:
            out.append(s)
            s *= 2
        return out


@dataclass(frozen=True)
class RunConfig:
    """One run's whole configuration: the task, the model and the training (with a seed, all a run
    depends on).

    Parameters
    ----------
    task : TaskConfig, default TaskConfig()
    model : ModelConfig, default ModelConfig()
    train : TrainConfig, default TrainConfig() (the paper's scale; ``TrainConfig.quick()`` for trials)
    """

    task: TaskConfig = field(default_factory=TaskConfig)
    model: ModelConfig = field(default_factory=ModelConfig)
    train: TrainConfig = field(default_factory=TrainConfig)

    def __post_init__(self):
        for name, cls in (("task", TaskConfig), ("model", ModelConfig), ("train", TrainConfig)):
            if not isinstance(getattr(self, name), cls):
                raise ValueError(
                    f"{name}={getattr(self, name)!r}: must be a {cls.__name__} (RunConfig.from_dict takes dicts)"
                )
        t = self.task
        check_task_engine(t.task, self.model.engine)
        check_optimizer_engine(self.train.optimizer, self.model.engine)
        check_loss_engine(self.train.loss, self.model.engine)
        if self.model.init == "jacobi" and (t.task not in EASY_TASKS or t.a <= 0 or t.a + t.b <= 1):
            raise ValueError(
                f"init='jacobi' with task={t.task!r}, a={t.a!r}, b={t.b!r}: needs an easy task with a > 0 and "
                "a + b > 1 (the Jacobi steps need zeta = (a + b - 1) / a > 0)"
            )

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> RunConfig:
        """The config of ``{"task": {...}, "model": {...}, "train": {...}}`` (``to_dict()``'s form; a
        section or field left out takes its default). Not a dict is a ``TypeError``; a section or
        field this version does not know is a ``ValueError`` naming it.

        >>> RunConfig.from_dict({"model": {"depth": 2, "gating": "on"}})
        Traceback (most recent call last):
        ...
        ValueError: d['model']['gating']: not a field of ModelConfig (a newer version's setting, or a misspelling)
        """
        sections = {"task": TaskConfig, "model": ModelConfig, "train": TrainConfig}
        if not isinstance(d, dict):
            raise TypeError(f"d={d!r}: must be a dict of sections task, model and train (RunConfig.to_dict())")
        for name, part in d.items():
            if name not in sections:
                raise ValueError(f"d[{name!r}]: not a section of a RunConfig (task, model or train)")
            if not isinstance(part, dict):
                raise TypeError(f"d[{name!r}]={part!r}: must be a dict of {sections[name].__name__} fields")
            known = {f.name for f in dataclasses.fields(sections[name])}
            for key in part:
                if key not in known:
                    raise ValueError(
                        f"d[{name!r}][{key!r}]: not a field of {sections[name].__name__} "
                        "(a newer version's setting, or a misspelling)"
                    )
        return cls(*(sections[name](**d.get(name, {})) for name in ("task", "model", "train")))


def _hashed(obj):
    """``obj`` as hashed: nested dicts without the later fields that sit at their default."""
    if isinstance(obj, dict):
        return {k: _hashed(v) for k, v in without_later_defaults(obj).items()}
    return obj


_NUMBER_TYPES = {"float": float, "int": int}  # the annotations (text: postponed) of the number fields


def _schema(cls) -> dict:
    """``{field: float or int}`` of a config dataclass's number fields, by its annotations."""
    return {f.name: _NUMBER_TYPES[str(f.type)] for f in dataclasses.fields(cls) if str(f.type) in _NUMBER_TYPES}


def _number(x, kind):
    """A value as hashed: NumPy scalars as Python's, a float field's ``1`` as ``1.0``, an int field's
    ``4.0`` as ``4``, and ``-0.0`` as ``0.0``: numbers that are equal give one key."""
    if isinstance(x, (bool, np.bool_)):
        return bool(x)
    if isinstance(x, np.integer):
        x = int(x)
    elif isinstance(x, np.floating):
        x = float(x)
    if kind is float and isinstance(x, int):
        return float(x)
    if kind is int and isinstance(x, float) and x.is_integer():
        return int(x)
    return 0.0 if isinstance(x, float) and x == 0 else x


def _normalised(obj, schema):
    """``obj`` (dicts, lists, values) with each value as :func:`_number` gives it, for its field's type
    where ``schema`` (nested like ``obj``) names one."""
    if isinstance(obj, dict):
        return {k: _normalised(v, schema.get(k) if isinstance(schema, dict) else None) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_normalised(v, None) for v in obj]
    return _number(obj, schema if isinstance(schema, type) else None)


def _schema_of(obj) -> dict | None:
    """The number types of a config, a section, or a dict shaped like ``RunConfig.to_dict()``."""
    sections = {"task": TaskConfig, "model": ModelConfig, "train": TrainConfig}
    if isinstance(obj, RunConfig) or (isinstance(obj, dict) and obj and set(obj) <= set(sections)):
        return {name: _schema(cls) for name, cls in sections.items()}
    if isinstance(obj, (TaskConfig, ModelConfig, TrainConfig)):
        return _schema(type(obj))
    return None


def config_hash(obj) -> str:
    """Stable hex digest of a (nested) dataclass or dict: the key of a run in the store.

    Fields added later leave the hash unchanged at their default:

    >>> config_hash(ModelConfig()) == config_hash({k: v for k, v in dataclasses.asdict(ModelConfig()).items()
    ...                                            if k not in ("init", "ensemble")})
    True

    Numbers equal as numbers hash alike (a float field given as an int, ``-0.0``, NumPy's scalars). A
    ``RunConfig`` already holds its fields as Python floats and ints (its checks convert them), so the
    keys of stored runs are unchanged:

    >>> config_hash({"task": {"a": 1, "d": 16.0}}) == config_hash({"task": {"a": 1.0, "d": 16}})
    True
    >>> run_key(RunConfig(task=TaskConfig(a=-0.0)), 0) == run_key(RunConfig(), 0)
    True
    """
    schema = _schema_of(obj)
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        obj = dataclasses.asdict(obj)
    text = json.dumps(_hashed(_normalised(obj, schema)), sort_keys=True, separators=(",", ":"), default=float)
    return hashlib.sha256(text.encode()).hexdigest()[:24]


def run_key(config: RunConfig, seed: int) -> str:
    """The store key of a run: ``config_hash(config) + "-" + str(seed)``.

    >>> run_key(RunConfig(), 3).endswith("-3")
    True
    """
    return f"{config_hash(config)}-{int(seed)}"


def rng_for(obj, seed: int, purpose: str) -> np.random.Generator:
    """Generator seeded from (config, seed, purpose) through ``SeedSequence``.

    >>> a = rng_for(TaskConfig(), 0, "eval").standard_normal()
    >>> a == rng_for(TaskConfig(), 0, "eval").standard_normal()
    True
    """
    check_int("seed", seed, lo=0, hi=SEED_MAX)
    words = [int(config_hash(obj)[i : i + 8], 16) for i in range(0, 24, 8)]
    tag = int(hashlib.sha256(purpose.encode()).hexdigest()[:8], 16)
    return np.random.default_rng(np.random.SeedSequence([*words, seed, tag]))

"""One registry of tasks by name: the built-in ``easy-exact``, ``easy-fresh`` and ``topk``, and the tasks a user adds.

A task names what ``TaskConfig.task`` draws contexts of. The registry is a
:class:`~depthscale.sims.registry.Registry` (sims/registry.py: the one registry type of every
pluggable kind). The three built-ins are registered here, once, through the call that registers a
user's; their numba context kernel (sims/tasks.py) and the JAX engine's device sampler
(sims/jax_tasks.py) draw them, so they run on both engines. A user's task is two functions of the
run's :class:`~depthscale.sims.config.TaskConfig` (its ``d``, ``P``, ``k`` and spectra ``lam``,
``omega`` are the user's to read):

- ``make_batch(cfg, n, rng) -> Batch``: ``n`` contexts drawn from the ``numpy.random.Generator`` ``rng``
  (a deterministic function of its state), with every field of :class:`~depthscale.sims.batch.Batch`:
  ``X (n, P, d)``, ``y (n, P)``, ``x_test (n, d)``, ``target (n,)``, ``t (n, d)`` and ``beta (n, d)``
  (the target is ``beta . t``: the mode losses of linear models read them), ``O (n, d, d)`` (the
  eigenvectors of the context's covariance, columns), ``sel (n, k)`` integer indices of the context
  tokens the target rewards (``(n, 0)``: none);
- ``second_moment(cfg) -> float``: ``E[y*^2]`` of its target, the loss of predicting 0 (the scale a
  loss is read against).

A user's task draws its batches on the host, with NumPy; it runs on both engines (the JAX engine
draws a built-in task's batches on the device, sims/jax_tasks.py, and copies a user's task's host
batches to it, a block of steps at a time). It comes in two ways:
``depthscale.register_task("name", make_batch=..., second_moment=...)`` from Python, or an entry point
of the group ``depthscale.tasks`` in an installed package (``name = "mypackage.tasks:TASK"``, naming
a :class:`Task` or an object with ``make_batch`` and ``second_moment`` attributes), read on the first
look-up of a name this process has not registered. A line that cannot be used costs one warning
line on stderr and is left out (sims/plugins.py). An unknown name is an error everywhere
(``TaskConfig``, ``--task``, sweep grids, store filters) in one line.

>>> [t.name for t in BUILTIN_TASKS], get_task("topk").engines
(['easy-exact', 'easy-fresh', 'topk'], ('numba', 'jax'))
>>> get_task("hard")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
ValueError: task='hard': must be one of easy-exact, easy-fresh, topk (or a task registered ...)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..theory._choices import TASKS
from ..theory._validate import bad_argument
from .attention_registry import ENGINES
from .registry import Registry, check_engine

ENTRY_POINT_GROUP = "depthscale.tasks"


@dataclass(frozen=True)
class Task:
    """One task: its name, where it came from, and its batches and target second moment.

    Parameters
    ----------
    name : str
        Lower-case letters, digits, ``_ . -``, starting with a letter (at most 40 characters).
    code : int or None
        The numba context kernel's code (built-ins only); ``None`` for a user's task.
    make_batch : callable or None
        ``make_batch(cfg, n, rng) -> Batch`` (see the module docstring); ``None`` for a built-in.
    second_moment : callable or None
        ``second_moment(cfg) -> float``, ``E[y*^2]``; ``None`` only for ``topk`` (no closed form:
        its cosine top-k selection; records measure it, ``target_power``).
    source : str
        ``built-in``, ``python`` or ``entry point <value>``.
    """

    name: str
    code: int | None = None
    make_batch: Callable[..., Any] | None = None
    second_moment: Callable[..., float] | None = None
    source: str = "python"

    @property
    def builtin(self) -> bool:
        """Whether the task is one of the package's own (drawn by the numba kernel and on the device).

        >>> get_task("easy-fresh").builtin
        True
        """
        return self.source == "built-in"

    @property
    def engines(self) -> tuple[str, ...]:
        """The engines that can train on it: every task on both (the JAX engine trains a user's task on
        its host batches, a built-in's on batches drawn on the device)."""
        return ENGINES


def _linear_target_power(cfg: Any) -> float:  # a TaskConfig (sims/config.py imports this module)
    # y* = beta . x with beta ~ N(0, Omega), x ~ N(0, Sigma) independent and Sigma, Omega sharing
    # their eigenvectors: E[y*^2] = tr(Sigma Omega) = sum_k lam_k omega_k (x_test a copy of a
    # context token, easy-exact, or a fresh one, easy-fresh)
    return float(np.dot(cfg.lam, cfg.omega))


def _user_task(name, make_batch, second_moment, source: str) -> Task:
    """A user's task, checked (``ValueError`` naming the argument; the name first)."""
    REGISTRY.check_name(name)
    if not callable(make_batch):
        bad_argument("make_batch", make_batch, "a function cfg, n, rng -> Batch (see depthscale.sims.task_registry)")
    if not callable(second_moment):
        bad_argument("second_moment", second_moment, "a function cfg -> E[y*^2] of the task's target")
    return Task(name, None, make_batch, second_moment, source)


def _task_of_entry_point(ep, obj) -> Task:
    """The task an entry point names (a ``Task`` or an object with ``make_batch`` and ``second_moment``);
    ``ValueError`` saying why not."""
    make, moment = getattr(obj, "make_batch", None), getattr(obj, "second_moment", None)
    if not (callable(make) and callable(moment)) or (isinstance(obj, Task) and obj.name != ep.name):
        raise ValueError(
            f"names a {type(obj).__name__}: must name a Task called {ep.name!r} or an object with make_batch "
            "and second_moment functions"
        )
    return _user_task(ep.name, make, moment, f"entry point {ep.value}")


REGISTRY = Registry[Task]("task", "task", ENTRY_POINT_GROUP, _task_of_entry_point, "register_task")
# the codes are the numba context kernel's (sims/tasks.py): easy-exact 0, easy-fresh 1, topk 2
BUILTIN_TASKS = tuple(
    REGISTRY.register(name, Task(name, code, None, moment, "built-in"), builtin=True)
    for code, (name, moment) in enumerate(zip(TASKS, (_linear_target_power, _linear_target_power, None)))
)


def register_task(name: str, *, make_batch: Callable[..., Any], second_moment: Callable[..., float]) -> Task:
    """Register a user's task as ``name`` (see the module docstring for the two functions).

    The task then names ``TaskConfig(task=name)``, ``--task name`` and sweep-grid values of this
    process, on both engines. Registering the same name again replaces a user's task; a
    built-in name is refused.

    >>> from depthscale.sims import tasks
    >>> from depthscale.sims.config import TaskConfig
    >>> def fresh(cfg, n, rng):  # the built-in easy-fresh task's contexts, under another name
    ...     return tasks.make_batch(TaskConfig(task="easy-fresh", d=cfg.d, P=cfg.P), n, rng)
    >>> t = register_task("my-fresh", make_batch=fresh, second_moment=lambda cfg: float(cfg.lam @ cfg.omega))
    >>> t.engines, get_task("my-fresh") is t, TaskConfig(task="my-fresh", d=3).second_moment
    (('numba', 'jax'), True, 3.0)
    >>> unregister_task("my-fresh")
    """
    return REGISTRY.register(name, _user_task(name, make_batch, second_moment, "python"))


# the registry's own methods under this kind's public names (tests, notebooks, other modules)
unregister_task = REGISTRY.unregister  # a built-in task cannot be removed
reload_task_entry_points = REGISTRY.reload  # read the group again on the next look-up (a package installed since)
broken_task_plugins = REGISTRY.broken  # {entry point name: "name = 'value': reason"} of the lines left out


def task_name(task, k) -> str:
    """A task as labels and tables name it: ``top-2`` for the top-k task (its ``k`` is its own), any
    other task by its name.

    >>> task_name("topk", 2), task_name("easy-fresh", 2)
    ('top-2', 'easy-fresh')
    """
    return f"top-{k}" if task == "topk" else str(task)


def get_task(name) -> Task:
    """The registered task ``name`` (``ValueError`` naming ``task`` and the registered names otherwise)."""
    return REGISTRY.get(name)


def task_names() -> tuple[str, ...]:
    """Every registered task's name: the built-ins first, then the users' in registration order.

    >>> task_names()[:3]
    ('easy-exact', 'easy-fresh', 'topk')
    """
    return REGISTRY.names()


def check_task_engine(name: str, engine: str) -> Task:
    """The task ``name`` if ``engine`` can train on it (today every task trains on both engines).

    >>> check_task_engine("topk", "jax").code
    2
    """
    return check_engine(REGISTRY, name, engine, lambda t: "a user's task draws its batches on the host")

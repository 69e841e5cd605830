"""Compile the numba kernels before the work that needs them: each once, spread over processes.

With an empty kernel cache (a new install or version, ``sims/jit.py``) a process compiles every
kernel on its first call: most of a first ``simulate`` and of a first smoke job. A sweep's process
workers compiled the same kernels at the same time, each all of them (smoke preset, 2 workers:
128 s of compile CPU, 63 s of it the same kernels twice; docs/benchmarks.md). Here the kernels are
grouped into units that compile apart (the data generator, each model's pass, the temperature
heads); a sweep first hands the units its runs need to its workers, longest first, so each kernel
is compiled by one process and the others load it from the on-disk cache. With a warm cache a unit
only loads its kernels, as the runs would. ``depthscale warm`` compiles every unit ahead of the
first run.

Units call the public functions on tiny inputs, so they compile the signatures the runs use
(tests/sims/test_warm.py checks that a run after its units compiles nothing).
"""

from __future__ import annotations

import concurrent.futures as cf
import time
from dataclasses import dataclass

import numpy as np

from ..theory._validate import check_choice

DTYPES = ("float64", "float32")
# compile CPU seconds of one unit in one process, measured with an empty cache (docs/benchmarks.md):
# the order in which a pool takes them (longest first), not a promise
_COST = {"softmax": 17.0, "data": 15.0, "linear": 13.0, "heads": 1.5}


@dataclass(frozen=True)
class Unit:
    """Kernels that compile together: ``kind`` is ``data`` (``make_batch``), ``linear`` or ``softmax``
    (the model's pass; softmax's depends on ``stream`` and ``context_update``) or ``heads`` (the
    reference floors' temperature heads: ``attention`` ``softmax`` or ``map``, one kernel for every
    other built-in map)."""

    kind: str
    dtype: str = "float64"
    stream: str = "two"
    context_update: bool = False
    attention: str = "softmax"

    def label(self) -> str:
        """A short name.

        >>> Unit("softmax", context_update=True).label()
        'softmax model (context update), float64'
        """
        if self.kind == "heads":
            return f"temperature heads ({'softmax' if self.attention == 'softmax' else 'other maps'})"
        if self.kind == "data":
            return f"data, {self.dtype}"
        what = {"single": " (single stream)"}.get(self.stream, " (context update)" if self.context_update else "")
        return f"{self.kind} model{what}, {self.dtype}"


def _order(units) -> list[Unit]:
    return sorted(set(units), key=lambda u: (-_COST[u.kind], u.kind, u.dtype, u.stream, u.context_update, u.attention))


def units_for(configs) -> list[Unit]:
    """The units the runs of ``configs`` (RunConfigs) call, longest first.

    >>> from depthscale.sims.config import ModelConfig, RunConfig
    >>> [u.label() for u in units_for([RunConfig(model=ModelConfig(model="linear"))])]
    ['data, float64', 'linear model, float64', 'temperature heads (softmax)']
    """
    from .attention_registry import BUILTIN_NAMES
    from .model_registry import get_model

    out = {Unit("data")}  # evaluation and floor contexts are float64 whatever the model's dtype
    for c in configs:
        m = c.model
        out.add(Unit("data", m.dtype))  # training batches in the model's dtype
        if m.engine == "numba" and get_model(m.model).builtin:  # a built-in's pass is its unit (a user's is JAX)
            out.add(Unit(m.model, m.dtype, m.stream, m.context_update))
        if m.attention in BUILTIN_NAMES:  # a user's map computes its heads with JAX
            out.add(Unit("heads", attention="softmax" if m.attention == "softmax" else "map"))
    return _order(out)


def all_units(dtypes=("float64",)) -> list[Unit]:
    """Every unit of the numba engine in ``dtypes``, longest first.

    >>> len(all_units()), len(all_units(DTYPES))
    (7, 12)
    """
    for dt in dtypes:
        check_choice("dtype", dt, DTYPES)
    out = [Unit("heads"), Unit("heads", attention="map")]
    for dt in dtypes:
        out += [Unit("data", dt), Unit("linear", dt)]
        out += [Unit("softmax", dt), Unit("softmax", dt, context_update=True), Unit("softmax", dt, stream="single")]
    return _order(out)


def _kernels():
    """Every numba dispatcher of the kernel modules."""
    from numba.core.dispatcher import Dispatcher

    from . import attention_maps, linear_kernels, softmax_kernels, tasks, temperature_heads

    mods = (attention_maps, linear_kernels, softmax_kernels, tasks, temperature_heads)
    return [v for m in mods for v in vars(m).values() if isinstance(v, Dispatcher)]


_TOP = {  # the kernel that calls the rest of a unit: its cache entry stands for the unit's
    "data": ("tasks", "_contexts"),
    "linear": ("linear_kernels", "linear_pass"),
    ("softmax", "two", False): ("softmax_kernels", "core_pass"),
    ("softmax", "two", True): ("softmax_kernels", "ctx_pass"),
    ("softmax", "single", False): ("softmax_kernels", "single_pass"),
    ("heads", "softmax"): ("temperature_heads", "_head_outputs"),
    ("heads", "map"): ("temperature_heads", "_map_head_outputs"),
}


def missing(units) -> list[Unit]:
    """The units whose kernels are not in the on-disk cache for this source and dtype (to compile).

    Read from numba's cache index (its private API: if that changes, every unit counts as missing,
    and compiling ahead only loads what is there).
    """
    import importlib

    out = []
    for u in units:
        key = {"softmax": (u.kind, u.stream, u.context_update), "heads": (u.kind, u.attention)}.get(u.kind, u.kind)
        module, name = _TOP[key]
        try:
            kernel = getattr(importlib.import_module(f"{__package__}.{module}"), name)
            index = kernel._cache._cache_file._load_index()  # {} when absent or stale
            cached = any(u.dtype in str(k[0]) for k in index)
        except Exception:
            cached = False
        if not cached:
            out.append(u)
    return out


def kernel_counts() -> tuple[int, int]:
    """``(compiled, loaded)``: kernel signatures this process has compiled and loaded from the cache."""
    compiled = loaded = 0
    for k in _kernels():
        compiled += sum(k.stats.cache_misses.values())
        loaded += sum(k.stats.cache_hits.values())
    return compiled, loaded


def _batch(dtype: str, B: int = 3, P: int = 4, d: int = 2):
    """A batch of the shapes and dtype ``make_batch`` gives, drawn without it (so a model unit does
    not compile the data generator, which another process may be compiling)."""
    from .batch import Batch

    r = np.random.default_rng(0)
    dt = np.dtype(dtype)
    X = r.standard_normal((B, P, d)).astype(dt)
    beta = r.standard_normal((B, d)).astype(dt)
    y = np.einsum("bpd,bd->bp", X, beta)
    sel = np.tile(np.arange(2, dtype=np.int64), (B, 1))
    t = X[:, :2].mean(axis=1)
    return Batch(X, y, X[:, 0].copy(), (beta * t).sum(axis=1), t, beta, np.tile(np.eye(d, dtype=dt), (B, 1, 1)), sel)


def compile_unit(unit: Unit) -> dict:
    """Compile (or load from the cache) the kernels of ``unit`` in this process; its seconds (wall and
    CPU) and the kernel signatures it compiled and loaded."""
    from .threads import one_blas_thread

    w0, c0 = time.perf_counter(), time.process_time()
    before = kernel_counts()
    with one_blas_thread():
        if unit.kind == "data":
            from .config import TaskConfig
            from .tasks import make_batch

            make_batch(TaskConfig(task="topk", k=2, d=2, P=4), 2, np.random.default_rng(0), dtype=unit.dtype)
        elif unit.kind == "heads":
            from .temperature_heads import head_inputs, head_outputs

            cos, y, _ = head_inputs(_batch("float64"))
            head_outputs(cos, y, np.array([0.0, 4.0]), 1, "softmax" if unit.attention == "softmax" else "sparsemax")
        else:
            from .config import ModelConfig
            from .models import make_model

            cfg = ModelConfig(
                model=unit.kind, depth=2, dtype=unit.dtype, stream=unit.stream, context_update=unit.context_update
            )
            model = make_model(cfg, 2)
            theta = model.init(np.random.default_rng(0))
            batch = _batch(unit.dtype)
            model.loss_and_grad(theta, batch)
            model.layer_outputs(theta, batch)
            model.attention(theta, batch)
    after = kernel_counts()
    return {
        "unit": unit.label(),
        "wall": time.perf_counter() - w0,
        "cpu": time.process_time() - c0,
        "compiled": after[0] - before[0],
        "loaded": after[1] - before[1],
    }


def warm_pool(executor: cf.Executor, units, on_wait=None, every: float = 1.0) -> list[dict]:
    """Compile ``units`` on ``executor``'s workers, one unit per free worker, and wait for them;
    ``on_wait(seconds, left)`` is called every ``every`` seconds while ``left`` units are unfinished.

    A unit that fails gives ``{"unit": label, "error": reason}`` (its runs will fail, or compile, on
    their own); a broken pool raises ``concurrent.futures.BrokenExecutor``.
    """
    t0 = time.perf_counter()
    futures = [executor.submit(compile_unit, u) for u in units]
    pending = set(futures)
    while pending:
        _, pending = cf.wait(pending, timeout=every)
        if pending and on_wait is not None:
            on_wait(time.perf_counter() - t0, len(pending))
    out = []
    for u, f in zip(units, futures):
        try:
            out.append(f.result())
        except (cf.BrokenExecutor, cf.CancelledError):
            raise
        except Exception as exc:
            out.append({"unit": u.label(), "error": f"{type(exc).__name__}: {exc}"})
    return out

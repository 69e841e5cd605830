"""Progress bars that work in a terminal and in a Jupyter notebook alike (``tqdm.auto``), whose
time estimate leaves out the warm-up (numba compiling its kernels on the first step or run).

A bar is shown on a terminal or in a notebook kernel; elsewhere (output to a log file) there is
none, and a sweep asked for lines (:class:`RunLines`) prints one line per finished run instead, each
naming the run (:func:`run_label`), and a line at least every 30 s while runs are in progress.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from functools import cache


def in_notebook() -> bool:
    """True inside a Jupyter kernel (where stderr is not a terminal but a bar is still seen).

    Examples
    --------
    >>> in_notebook()  # a doctest runs in no kernel
    False
    """
    shell = getattr(sys.modules.get("IPython"), "get_ipython", lambda: None)()
    return shell is not None and "IPKernelApp" in getattr(shell, "config", {})


def interactive(stream=None) -> bool:
    """True when someone watches ``stream`` (default stderr): a terminal or a notebook."""
    stream = sys.stderr if stream is None else stream
    isatty = getattr(stream, "isatty", None)
    return in_notebook() or bool(isatty and isatty())


class Progress:
    """A ``tqdm.auto`` bar with a warm-up: :meth:`warmed_up` restarts its clock, so the rate and the
    time left are those of the steps after it, not of the compilation before.

    The rate, and the time left from it, is the average over every step completed since the warm-up
    (tqdm's ``smoothing=0``), not tqdm's default moving average, which follows the latest steps: runs
    of a sweep finish in bursts (a lockstep group's depths at once, after minutes of nothing), and a
    moving average made the time left jump from 19 minutes to 1 second and back to 45 within 40 s.

    Parameters
    ----------
    total : int
        Steps (or runs) in all.
    unit, desc : str
        tqdm's unit and label.
    **kwargs
        Passed to ``tqdm.auto.tqdm`` (e.g. ``file``, ``leave``, ``disable``).

    Examples
    --------
    >>> import io
    >>> bar = Progress(10, unit="step", file=io.StringIO())
    >>> bar.update()  # the first step: compilation included
    >>> bar.warmed_up()  # from here on the clock counts only warm steps
    >>> bar.update(9); bar.bar.n, bar.bar.initial
    (10, 1)
    >>> bar.close()
    """

    def __init__(self, total: int, unit: str = "it", desc: str | None = None, **kwargs):
        from tqdm.auto import tqdm

        kwargs.setdefault("dynamic_ncols", True)
        kwargs.setdefault("smoothing", 0)  # the average since the warm-up (see the class notes)
        self.bar = tqdm(total=total, unit=unit, desc=desc, **kwargs)
        self._warm = False

    def update(self, n: int = 1) -> None:
        self.bar.update(n)

    def set_postfix(self, **values) -> None:
        self.bar.set_postfix(**values)

    def warmed_up(self) -> None:
        """Restart the clock at the current count (once; later calls do nothing).

        tqdm's rate is ``(n - initial) / elapsed`` and an average of the later updates: with the
        clock, ``initial`` and the averages reset here, the steps done so far count for neither.
        """
        if self._warm:
            return
        self._warm = True
        done = self.bar.n
        self.bar.reset(total=self.bar.total)  # clock and rate averages restart, n = 0
        self.bar.n = self.bar.initial = self.bar.last_print_n = done
        self.bar.refresh()

    @property
    def rate(self) -> float | None:
        """Steps per second as the bar shows them: those completed since the warm-up over the time
        since (None before any); the time left is the steps left at this rate."""
        d = self.bar.format_dict
        done, elapsed = d["n"] - d["initial"], d["elapsed"]
        return done / elapsed if done > 0 and elapsed > 0 else None

    def close(self) -> None:
        self.bar.close()


@cache
def _defaults() -> dict:
    import dataclasses

    from .config import ModelConfig, TaskConfig, TrainConfig

    return {
        part: dataclasses.asdict(cls())
        for part, cls in (("task", TaskConfig), ("model", ModelConfig), ("train", TrainConfig))
    }


# named in every label (the rest of a section only where it differs from its default)
_ALWAYS = {
    "task": ("task", "k", "a", "b", "d", "P"),
    "model": ("model", "attention", "depth"),
    "train": ("schedule", "lr", "batch", "steps"),
}


def run_label(config: dict, seed) -> str:
    """Everything that tells a run from the others of a grid, in one line: the model (a softmax-family
    model by its attention map), the task (k only for top-k), the spectrum ``(a,b)``, d, P and L, the
    other model and task fields that differ from their defaults, the training protocol (schedule,
    lr, batch, steps, and the other training fields not at their defaults) and the seed.

    ``config`` is a record's config dict (``RunConfig.to_dict()``); a field a record lacks (written
    before the field existed) counts as its default.

    >>> run_label({"task": {"task": "topk", "k": 2, "a": 0.5, "b": 0.5}, "model": {"depth": 4, "qk": "tied"},
    ...            "train": {"schedule": "constant", "lr": 0.01, "steps": 3000}}, 1)
    'softmax topk k=2 (a,b)=(0.5,0.5) d=16 P=128 L=4 qk=tied | constant lr=0.01 batch=1024 steps=3000 | seed=1'
    """
    defaults = _defaults()
    part = {name: {**defaults[name], **((config or {}).get(name) or {})} for name in defaults}
    task, model, train = part["task"], part["model"], part["train"]

    def extras(name: str) -> list[str]:
        return [f"{k}={v}" for k, v in part[name].items() if k not in _ALWAYS[name] and v != defaults[name].get(k, v)]

    # a model with a map of its own is named by the map (a sparsemax run is no softmax run)
    name = model["attention"] if model.get("attention", "softmax") != "softmax" else model["model"]
    k = f" k={task['k']}" if task["task"] == "topk" else ""  # k is the top-k task's alone
    what = [
        f"{name} {task['task']}{k} (a,b)=({task['a']:g},{task['b']:g}) d={task['d']} P={task['P']} L={model['depth']}"
    ]
    protocol = [f"{train['schedule']} lr={train['lr']:g} batch={train['batch']} steps={train['steps']}"]
    return (
        " ".join(what + extras("task") + extras("model"))
        + " | "
        + " ".join(protocol + extras("train"))
        + f" | seed={seed}"
    )


class RunLines:
    """Progress as lines on a stream that no one watches live (a log file): a first line saying how
    many runs were already done, one line per finished run counted from there (``run 13/168``), and
    a heartbeat naming the runs in progress when no line was written for ``heartbeat`` seconds.

    Parameters
    ----------
    total : int
        Runs in the grid.
    done, failed : int
        Runs of it finished before, and failed before and not retried now.
    stream : file, optional
        Default stderr.
    heartbeat : float
        Seconds without a line after which :meth:`beat` writes one (default 30).
    clock : callable
        Seconds, monotonic (tests pass a fake one).

    Examples
    --------
    >>> import io
    >>> t = [0.0]
    >>> out = io.StringIO()
    >>> lines = RunLines(total=5, done=2, failed=1, stream=out, clock=lambda: t[0])
    >>> lines.started(todo=2)
    >>> t[0] = 31.0; lines.beat([({"model": {"depth": 2}}, 0)])
    >>> lines.finished({"status": "ok", "seed": 0, "config": {"model": {"depth": 2}}})
    >>> print(out.getvalue(), end="")  # doctest: +ELLIPSIS
    depthscale: 3 of 5 runs already done (1 of them failed earlier, not retried); 2 to run
    depthscale: running: softmax topk k=2 (a,b)=(0,0) d=16 P=128 L=2 | cosine ... | seed=0 (31 s elapsed)
    depthscale: run 4/5 ok: softmax topk k=2 (a,b)=(0,0) d=16 P=128 L=2 | cosine ... | seed=0 (31 s elapsed)
    """

    def __init__(
        self,
        total: int,
        done: int = 0,
        failed: int = 0,
        stream=None,
        heartbeat: float = 30.0,
        clock: Callable[[], float] = time.monotonic,
    ):
        self.total, self.done, self.failed = total, done, failed
        self.count = done + failed  # the numbering goes on from the runs done before
        self.stream = sys.stderr if stream is None else stream
        self.heartbeat, self.clock = heartbeat, clock
        self.t0 = self.last = clock()

    def _write(self, text: str) -> None:
        self.stream.write(f"depthscale: {text} ({self.clock() - self.t0:.0f} s elapsed)\n")
        self.stream.flush()
        self.last = self.clock()

    def started(self, todo: int) -> None:
        """Say how many runs were done before and how many are to run (nothing when none were done)."""
        if self.count:
            failed = f" ({self.failed} of them failed earlier, not retried)" if self.failed else ""
            self.stream.write(f"depthscale: {self.count} of {self.total} runs already done{failed}; {todo} to run\n")
            self.stream.flush()

    def finished(self, rec: dict) -> None:
        self.count += 1
        label = run_label(rec.get("config") or {}, rec.get("seed"))
        self._write(f"run {self.count}/{self.total} {rec.get('status')}: {label}")

    def note(self, text: str, due_only: bool = False) -> None:
        """A line saying ``text``; with ``due_only``, only if none was written for ``heartbeat`` seconds."""
        if not due_only or self.clock() - self.last >= self.heartbeat:
            self._write(text)

    def beat(self, running) -> None:
        """A line naming the runs in progress (``(config dict, seed)`` pairs) if none was written for
        ``heartbeat`` seconds."""
        running = list(running)
        if not running or self.clock() - self.last < self.heartbeat:
            return
        more = f" and {len(running) - 1} more" if len(running) > 1 else ""
        self._write(f"running: {run_label(*running[0])}{more}")


__all__ = ["Progress", "RunLines", "run_label", "in_notebook", "interactive"]

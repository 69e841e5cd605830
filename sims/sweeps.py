"""Run a list of ``(RunConfig, seed)`` through one ``concurrent.futures.Executor`` into a store.

Every run is a pure function ``run_fn(config, seed) -> record``. Workers only compute; the client
(the process calling :func:`sweep`) alone writes the store, one transaction per finished run. A
rerun skips runs already stored (any status but ``failed``); failed runs are retried only with
``retry_failed=True``. On Ctrl-C the client stops submitting, cancels what has not started and
returns: only the runs in flight are lost.

Executors: ``"process"`` (local process pool, one numba and one BLAS thread per worker),
``"serial"`` (in-process, for debugging) and ``"dask"`` (``distributed.Client(address)``'s
executor), or any ``Executor`` instance you pass in.
"""

from __future__ import annotations

import concurrent.futures as cf
import contextlib
import functools
import os
import signal
import sys
import time
import traceback
from dataclasses import asdict, dataclass, field

from ..theory._validate import check_choice, check_int, check_real
from .config import CONTEXTS_VERSION
from .grid import run_key
from .lifeline import exit_with_parent
from .progress import Progress, RunLines, interactive
from .provenance import code_version
from .snapshots import SNAPSHOT_EVERY, Snapshot, snapshot_dir
from .store import compact_record, contexts_mismatch, unstorable
from .threads import limit_worker_threads

EXECUTORS = ("process", "serial", "dask")


@dataclass(frozen=True)
class SweepResult:
    """What a sweep did: counts, failed keys, and whether it was interrupted."""

    total: int  # runs in the grid
    skipped: int  # already finished in the store
    skipped_failed: int  # failed earlier and not retried
    done: int  # finished in this sweep (status ok or diverged)
    failed: int  # failed in this sweep
    lost: int  # submitted but not finished (interrupt): nothing written for them
    interrupted: bool
    failed_keys: tuple = field(default_factory=tuple)
    seconds: float = 0.0
    not_started: int = 0  # never submitted (interrupt or broken executor)
    broken: bool = False  # the executor lost a worker; runs in it were recorded as failed
    out_of_budget: bool = False  # stopped starting runs because the next would not finish within the budget
    # the cost model's seconds for the first job the budget did not start (None: none was held back);
    # with nothing started, a budget shorter than this (plus the start-up) cannot start anything
    first_held_seconds: float | None = None
    snapshotted: int = 0  # of the lost runs, those whose group left a snapshot: a rerun resumes them

    def to_dict(self) -> dict:
        d = asdict(self)
        d["failed_keys"] = list(self.failed_keys)
        return d


class SerialExecutor(cf.Executor):
    """An Executor that runs each call in-process at submission (for debugging and tests).

    >>> SerialExecutor().submit(pow, 2, 5).result()
    32
    """

    def submit(self, fn, /, *args, **kwargs):
        fut: cf.Future = cf.Future()
        fut.set_running_or_notify_cancel()
        try:
            fut.set_result(fn(*args, **kwargs))
        except Exception as exc:  # KeyboardInterrupt propagates: the caller stops the sweep
            fut.set_exception(exc)
        return fut


def _init_worker(parent: int | None = None) -> None:
    """Process-pool initializer: one compute thread per worker, Ctrl-C handled by the client only,
    and the worker exits when the client ``parent`` dies (a ``kill -9`` of the sweep)."""
    # The client decides what happens on Ctrl-C; a worker interrupted mid-run would break the pool.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if parent is not None:
        exit_with_parent(parent)
    limit_worker_threads(set_env=True)


def _call(job_fn, configs, seed, limit_threads: bool = False):
    """Worker side: run one job (a list of configs, one seed) into a list of records; exceptions
    become ``("error", reason)`` so any executor can return them."""
    if limit_threads:
        limit_worker_threads()
    try:
        return ("ok", job_fn(configs, seed))
    except Exception as exc:
        tb = traceback.extract_tb(exc.__traceback__)
        where = f" at {os.path.basename(tb[-1].filename)}:{tb[-1].lineno}" if tb else ""
        return ("error", f"{type(exc).__name__}: {exc}{where}")


class _PerRun:
    """A job function from a per-run function: ``run_fn(config, seed)`` for each config (picklable)."""

    def __init__(self, run_fn):
        self.run_fn = run_fn

    def __call__(self, configs, seed):
        return [self.run_fn(c, seed) for c in configs]


def _jobs(todo, lockstep: bool) -> list:
    """``todo`` entries ``(key, config, seed)`` as jobs ``[(key, config), ...], seed``: one per run, or
    one per lockstep group (the depths of one task, training protocol and seed), in first-seen order."""
    if not lockstep:
        return [([(key, config)], seed) for key, config, seed in todo]
    from .runner import lockstep_key

    groups: dict = {}
    for key, config, seed in todo:
        groups.setdefault((lockstep_key(config), seed), []).append((key, config))
    return [(members, seed) for (_, seed), members in groups.items()]


def make_executor(
    kind: str = "process", workers: int | None = None, scheduler: str | None = None, connect_timeout: float = 20.0
):
    """Build an executor; returns ``(executor, slots, close)`` with ``close()`` releasing it.

    Parameters
    ----------
    kind : {"process", "serial", "dask"}
    workers : int, optional
        Pool size for ``"process"`` (default: the number of CPUs).
    scheduler : str, optional
        Address of a dask scheduler (``tcp://host:port``), required for ``"dask"``.
    connect_timeout : float
        Seconds to wait for the dask scheduler.

    Examples
    --------
    >>> ex, slots, close = make_executor("serial")
    >>> ex.submit(abs, -3).result(), slots
    (3, 1)
    >>> close()
    """
    check_choice("executor", kind, EXECUTORS)
    if workers is not None:
        check_int("workers", workers, lo=1, hi=4096)
    if kind == "serial":
        ex: cf.Executor = SerialExecutor()
        return ex, 1, lambda: None
    if kind == "process":
        import multiprocessing as mp

        n = workers or os.cpu_count() or 1
        # spawn: a fresh interpreter per worker, safe whatever threads the client has started
        ex = cf.ProcessPoolExecutor(
            max_workers=n, mp_context=mp.get_context("spawn"), initializer=_init_worker, initargs=(os.getpid(),)
        )
        return ex, n, lambda: ex.shutdown(wait=True, cancel_futures=True)
    if not scheduler:
        raise ValueError("scheduler=None: the dask executor needs a scheduler address such as tcp://127.0.0.1:8786")
    try:
        from distributed import Client
    except ImportError:
        raise ValueError(
            "executor='dask': must have dask.distributed installed (pip install 'depthscale[dask]')"
        ) from None
    try:
        client = Client(scheduler, timeout=f"{check_real('connect_timeout', connect_timeout, lo=0, lo_open=True)}s")
    except (OSError, TimeoutError) as exc:
        raise ValueError(f"scheduler={scheduler!r}: must be a reachable dask scheduler ({exc})") from None
    slots = max(1, sum(client.nthreads().values()))
    ex = client.get_executor(pure=False)

    def close():
        try:
            ex.shutdown(wait=False)
        finally:
            client.close()

    return ex, slots, close


def _terminate_pool(ex) -> None:
    # A process pool would otherwise wait at shutdown for runs in flight, which an interrupt abandons.
    procs = getattr(ex, "_processes", None) or {}
    for p in list(procs.values()):
        try:
            p.terminate()
        except Exception:
            pass


def _failure_record(config, seed, reason: str) -> dict:
    return {
        "key": run_key(config, seed),
        "config": config.to_dict(),
        "seed": int(seed),
        "status": "failed",
        "reason": reason,
    }


def plan(runs, store, retry_failed: bool = False):
    """Split runs into ``(todo, n_skipped, n_skipped_failed)`` against what the store holds."""
    status = store.statuses()
    todo, skipped, skipped_failed, seen = [], 0, 0, set()
    for config, seed in runs:
        key = run_key(config, seed)
        if key in seen:
            continue
        seen.add(key)
        s = status.get(key)
        if s is None or (s == "failed" and retry_failed):
            todo.append((key, config, seed))
        elif s == "failed":
            skipped_failed += 1
        else:
            skipped += 1
    return todo, skipped, skipped_failed


def forecast(jobs, budget: float, rate_by_kind: dict, slots: int, beyond: int = 0) -> str:
    """What a budget will and will not finish, by the cost model: the jobs started in order on
    ``slots`` workers, each on the first free one, until the first that would end past the budget
    (the sweep's own rule); ``beyond`` runs were already past its reach.

    At 1e-9 s a unit, depths 1 and 64 (100 steps) are estimated at 67 and 278 s:

    >>> from depthscale.sims.config import ModelConfig, RunConfig, TrainConfig
    >>> one = lambda L: ([("k", RunConfig(model=ModelConfig(depth=L), train=TrainConfig(steps=100)))], 0)
    >>> forecast([one(1), one(1), one(64)], budget=150.0, rate_by_kind={"softmax": 1e-9}, slots=2)
    'budget 2.5 min: by the cost model, 2 of 3 runs to do fit (all 3: about 5.8 min on 2 workers); rerun to continue'
    """
    from . import budget as cost

    free = [0.0] * max(1, slots)
    fit = total = 0
    ends = 0.0
    stopped = False
    for members, _ in jobs:
        sec = cost.job_seconds([c for _, c in members], rate_by_kind)
        i = min(range(len(free)), key=free.__getitem__)
        free[i] += sec
        total += len(members)
        if not stopped and free[i] <= budget:
            fit += len(members)
        else:
            stopped = True
        ends = max(ends, free[i])
    n = total + beyond

    def dur(x: float) -> str:
        return f"{x / 3600:.1f} h" if x >= 5400 else f"{x / 60:.1f} min"

    on = f"{len(free)} worker" + ("s" if len(free) > 1 else "")

    if fit == n:
        return f"budget {dur(budget)}: by the cost model, all {n} runs to do fit (about {dur(ends)} on {on})"
    return (
        f"budget {dur(budget)}: by the cost model, {fit} of {n} runs to do fit (all {total}: about {dur(ends)} on {on})"
        f"{'' if not beyond else f', and {beyond} cost more than the budget alone'}; rerun to continue"
    )


def startable(runs, store, budget: float, rate_by_kind: dict, retry_failed: bool = False) -> tuple[list, list]:
    """``(head, rest)`` of ``runs`` in order: ``rest`` starts at the first missing run whose own
    estimate exceeds ``budget``. Its job (it, or its lockstep group, which costs at least as much)
    cannot start, and a sweep starts jobs in order, stopping at the first that does not fit: no run
    of ``rest`` can start, so none is keyed or grouped. Only the runs that cost too much alone are
    looked up in the store (to skip one already done).

    At 1e-9 s a unit, depths 1, 64 and 2 (100 steps) are estimated at 67, 278 and 70 s:

    >>> import os, tempfile
    >>> from depthscale.sims.grid import load_grid
    >>> from depthscale.sims.store import Store
    >>> runs = load_grid({"seeds": [0], "model": {"depth": [1, 64, 2]}, "train": {"steps": 100}})
    >>> with Store(os.path.join(tempfile.mkdtemp(), "s.sqlite"), mode="write") as st:
    ...     head, rest = startable(runs, st, budget=100.0, rate_by_kind={"softmax": 1e-9})
    >>> [c.model.depth for c, _ in head], [c.model.depth for c, _ in rest]
    ([1], [64, 2])
    """
    from . import budget as cost

    statuses: dict | None = None
    for i, (config, seed) in enumerate(runs):
        if cost.job_seconds([config], rate_by_kind) <= budget:
            continue
        if statuses is None:
            statuses = store.statuses()
        status = statuses.get(run_key(config, seed))
        if status is None or (status == "failed" and retry_failed):
            return runs[:i], runs[i:]
    return runs, []


def sweep(
    runs,
    store,
    *,
    run_fn=None,
    executor="process",
    workers: int | None = None,
    scheduler: str | None = None,
    retry_failed: bool = False,
    quiet: bool = False,
    max_in_flight: int | None = None,
    on_result=None,
    lockstep: bool = True,
    budget: float | None = None,
    keep_parameters: bool = False,
    lines: bool = False,
    heartbeat: float = 30.0,
    snapshot_every: float | None = SNAPSHOT_EVERY,
) -> SweepResult:
    """Run every ``(config, seed)`` not yet in ``store`` and write each record as it finishes.

    Parameters
    ----------
    runs : list of (RunConfig, int)
        From :func:`depthscale.sims.grid.load_grid`.
    store : depthscale.sims.store.Store
    run_fn : callable, optional
        ``run_fn(config, seed) -> record``; picklable for process and dask executors. Default: the
        engine (:func:`depthscale.sims.runner.run_group` on lockstep groups).
    executor : {"process", "serial", "dask"} or concurrent.futures.Executor
        An Executor instance is used as is and not shut down here.
    workers : int, optional
        Process-pool size (default: CPU count).
    scheduler : str, optional
        Dask scheduler address (needed for ``"dask"``).
    retry_failed : bool
        Rerun runs stored as failed (otherwise they are skipped).
    quiet : bool
        No progress output.
    max_in_flight : int, optional
        Jobs submitted and unfinished at most (default: twice the slots; with a budget the slots).
    on_result : callable, optional
        ``on_result(record)`` after each write (the client side), e.g. for logging.
    lockstep : bool
        With the default engine, train the depths of one (task, protocol, seed) as one job on one
        batch stream (the records of separate runs, the data made once).
    budget : float, optional
        Seconds. A job starts only if its estimated cost (:mod:`depthscale.sims.budget`) ends within
        the budget; jobs in flight finish unless still running 10 % of it (at least a minute) past its
        end. Runs from the first one that alone exceeds it are not planned (:func:`startable`).
    keep_parameters : bool
        Store the trained ``theta`` and full-precision per-context errors; by default records are
        stored compact (:func:`depthscale.sims.store.compact_record`), as no claim or figure reads them.
    lines : bool
        Without a progress bar (stderr a log file): progress lines (:class:`~depthscale.sims.progress.RunLines`),
        one per finished run and, while runs are in flight, one at least every ``heartbeat`` seconds.
    heartbeat : float
        Seconds, > 0 (default 30).
    snapshot_every : float or None
        Seconds between snapshots of a lockstep group (default 600) in ``<store>.snapshots/``, from
        which a rerun resumes a killed group bitwise (:mod:`depthscale.sims.snapshots`). None: none.

    Returns
    -------
    SweepResult

    Examples
    --------
    >>> import os, tempfile
    >>> from depthscale.sims.store import Store
    >>> from depthscale.sims.grid import load_grid
    >>> runs = load_grid({"seeds": [0, 1], "model": {"depth": [1, 2]}})
    >>> fake = lambda cfg, seed: {"status": "ok", "final_loss": 1.0 / cfg.model.depth}
    >>> with Store(os.path.join(tempfile.mkdtemp(), "s.sqlite"), mode="write") as st:
    ...     r1 = sweep(runs, st, run_fn=fake, executor="serial", quiet=True)
    ...     r2 = sweep(runs, st, run_fn=fake, executor="serial", quiet=True)
    >>> (r1.done, r2.done, r2.skipped)
    (4, 0, 4)
    """
    from . import budget as cost

    t0 = time.perf_counter()
    runs = list(runs)
    job_fn, lockstep, snapshots = _job_function(store, run_fn, lockstep, snapshot_every)
    heartbeat, budget = _checked_options(executor, workers, scheduler, max_in_flight, heartbeat, budget)
    total = len(runs)
    rates = cost.rates(store.records(status="ok")) if budget is not None else {}
    todo, skipped, skipped_failed, beyond, held = _what_to_run(runs, store, budget, rates, retry_failed, lockstep)
    if not todo:
        elapsed = time.perf_counter() - t0
        return SweepResult(total, skipped, skipped_failed, 0, 0, 0, False, (), elapsed, beyond, False, beyond > 0, held)
    jobs = _jobs(todo, lockstep)
    book = _Book(store, code_version(), keep_parameters, on_result)  # the version now, with the code the workers load
    ex, slots, close, kind = _executor(executor, workers, scheduler)
    status = _Status(len(todo), quiet, lines and RunLines(total, skipped, skipped_failed, heartbeat=heartbeat))
    if budget is not None and not quiet and lines:
        sys.stderr.write(f"depthscale: {forecast(jobs, budget, rates, slots, beyond)}\n")
    window = max_in_flight or (slots if budget is not None else max(1, 2 * slots))
    call = functools.partial(_call, job_fn, limit_threads=kind == "dask")  # process workers: limited at start
    drive = _Drive(ex, call, book, status, snapshots, jobs, window, t0, budget, rates, heartbeat)
    try:
        if kind == "process" and slots > 1 and run_fn is None and len(jobs) > 1:
            _warm_workers(ex, jobs, slots, status)
        drive.run()
    except KeyboardInterrupt:
        drive.interrupted = True
    except _Broken as exc:
        drive.salvage(exc)
    finally:
        lost, snapshotted = drive.abandon()
        status.close()
        _close(ex, close, terminate=(drive.interrupted or drive.out_of_budget) and kind == "process")
    out_of_budget = drive.out_of_budget or beyond > 0
    held = (drive.held if drive.out_of_budget else held) if out_of_budget else None
    not_started = sum(len(members) for members, _ in drive.queue) + beyond
    counts = (total, skipped, skipped_failed, book.done, book.failed, lost, drive.interrupted)
    elapsed = time.perf_counter() - t0
    return SweepResult(
        *counts, tuple(book.failed_keys), elapsed, not_started, drive.broken, out_of_budget, held, snapshotted
    )


def _executor(executor, workers, scheduler):
    """``(ex, slots, close, kind)``: an executor made here (closed by ``close``) or the caller's,
    used as is and not shut down."""
    if not isinstance(executor, cf.Executor):
        ex, slots, close = make_executor(executor, workers, scheduler)
        return ex, slots, close, executor
    # a foreign executor does not say how many workers it has: pass max_in_flight to keep more busy
    return executor, 1, (lambda: None), "custom"


def _close(ex, close, terminate: bool) -> None:
    """Shut the executor down; a process pool with runs still in flight (an interrupt, or the budget
    spent) is terminated first, as those runs are abandoned."""
    if terminate:
        _terminate_pool(ex)
    with contextlib.suppress(Exception):
        close()


def _what_to_run(runs, store, budget, rate_by_kind, retry_failed: bool, lockstep: bool):
    """``(todo, skipped, skipped_failed, beyond, held)``: the runs to start; those finished or failed
    before; how many lie past the budget's reach (never keyed or grouped); and the cost model's seconds
    of the first job the budget holds back (None: none)."""
    beyond = done_before = failed_before = 0
    held: float | None = None
    if budget is not None:
        runs, rest = startable(runs, store, budget, rate_by_kind, retry_failed)
        if rest:
            # counted against the store only when it holds runs (a fresh store holds none of them)
            left, done_before, failed_before = plan(rest, store, retry_failed) if store.statuses() else (rest, 0, 0)
            beyond = len(left)
            held = _first_job_seconds(rest, lockstep, rate_by_kind)
    todo, skipped, skipped_failed = plan(runs, store, retry_failed)
    return todo, skipped + done_before, skipped_failed + failed_before, beyond, held


def _job_function(store, run_fn, lockstep: bool, snapshot_every):
    """``(job_fn, lockstep, snapshots)``: what a worker calls on ``(configs, seed)``, whether runs go in
    lockstep groups, and the store's snapshot folder (None: no snapshots)."""
    if snapshot_every is not None:
        snapshot_every = check_real("snapshot_every", snapshot_every, lo=0, lo_open=True)
    if run_fn is not None:
        if not callable(run_fn):
            raise ValueError(f"run_fn={run_fn!r}: must be a callable run_fn(config, seed) -> record")
        return _PerRun(run_fn), False, None
    if getattr(store, "contexts_version", CONTEXTS_VERSION) != CONTEXTS_VERSION:
        raise ValueError(contexts_mismatch(store.path, store.contexts_version))
    from .runner import run_group

    path = getattr(store, "path", None)
    if snapshot_every is None or path is None:  # only a store on disk has groups that can resume
        return run_group, lockstep, None
    snapshots = snapshot_dir(path)
    return functools.partial(run_group, snapshots=snapshots, snapshot_every=snapshot_every), lockstep, snapshots


def _checked_options(executor, workers, scheduler, max_in_flight, heartbeat, budget) -> tuple[float, float | None]:
    """Check :func:`sweep`'s executor options (``ValueError`` naming the first bad one); return
    ``(heartbeat, budget)`` as floats."""
    if max_in_flight is not None:
        check_int("max_in_flight", max_in_flight, lo=1)
    heartbeat = check_real("heartbeat", heartbeat, lo=0, lo_open=True)
    if budget is not None:
        budget = check_real("budget", budget, lo=0, lo_open=True)
    if not isinstance(executor, cf.Executor):
        check_choice("executor", executor, EXECUTORS)
        if workers is not None:
            check_int("workers", workers, lo=1, hi=4096)
        if executor == "dask" and not scheduler:
            raise ValueError("scheduler=None: the dask executor needs a scheduler address such as tcp://127.0.0.1:8786")
    return heartbeat, budget


class _Book:
    """The client's side of a sweep: stores each finished record (one transaction) and counts it."""

    def __init__(self, store, version: str, keep_parameters: bool, on_result) -> None:
        self.store, self.version = store, version
        self.keep_parameters, self.on_result = keep_parameters, on_result
        self.done = self.failed = 0
        self.failed_keys: list = []
        self.counted: set = set()  # keys stored and counted as done or failed in this sweep

    def keep(self, rec: dict) -> None:
        rec.setdefault("code_version", self.version)
        self.store.put(rec if self.keep_parameters else compact_record(rec))
        self.counted.add(rec["key"])
        if rec["status"] == "failed":
            self.failed += 1
            self.failed_keys.append(rec["key"])
        else:
            self.done += 1
        if self.on_result is not None:
            self.on_result(rec)


def _records_of(members, seed, fut) -> list[dict]:
    """The records of a finished job's future (failure records where the job failed)."""
    try:
        tag, value = fut.result()
    except cf.CancelledError:
        return []
    except cf.BrokenExecutor as exc:
        raise _Broken.of(exc) from None
    except Exception as exc:  # the executor itself failed to run the job (e.g. unpicklable)
        tag, value = "error", f"{type(exc).__name__}: {exc}"
    if tag == "error":
        return [_failure_record(config, seed, value) for _, config in members]
    if not isinstance(value, list) or len(value) != len(members):
        return [
            _failure_record(config, seed, f"job returned {type(value).__name__}, not one record per run")
            for _, config in members
        ]
    return [_checked(key, config, seed, rec) for (key, config), rec in zip(members, value)]


class _Drive:
    """Submits jobs while the window and the budget allow, and books each as it finishes."""

    def __init__(
        self, ex, call, book: _Book, status, snapshots, jobs, window: int, t0: float, budget, rates, heartbeat
    ):
        self.ex, self.call, self.book, self.status, self.snapshots = ex, call, book, status, snapshots
        self.budget, self.rate_by_kind, self.heartbeat, self.window = budget, rates, heartbeat, window
        self.deadline = t0 + budget if budget is not None else None
        self.queue = list(reversed(jobs))
        self.pending: dict = {}  # future -> (members, seed)
        self.interrupted = self.broken = self.out_of_budget = False
        self.held: float | None = None  # the cost model's seconds of the first job held back

    def run(self) -> None:
        from . import budget as cost

        while self.queue or self.pending:
            while self.queue and len(self.pending) < self.window:
                members, seed = self.queue[-1]
                configs = [config for _, config in members]
                if self.deadline is not None:
                    needs = cost.job_seconds(configs, self.rate_by_kind)
                    if time.perf_counter() + needs > self.deadline:
                        if not self.out_of_budget:  # the first job held back: a budget must hold it
                            self.held = needs
                        self.out_of_budget = True
                        break
                try:
                    fut = self.ex.submit(self.call, configs, seed)
                except cf.BrokenExecutor as exc:  # a worker died before its result was seen
                    raise _Broken.of(exc) from None
                self.queue.pop()
                self.pending[fut] = (members, seed)
            if self._overdue():
                self.interrupted = True  # in flight far past the budget: abandon like an interrupt
                return
            finished, _ = cf.wait(list(self.pending), timeout=min(1.0, self.heartbeat), return_when=cf.FIRST_COMPLETED)
            self.status.beat((config, seed) for members, seed in self.pending.values() for _, config in members)
            for fut in finished:
                # the job stays pending until its records are stored and counted: a broken pool (the
                # result raises) or an interrupt mid-way then still counts each of its runs, once
                members, seed = self.pending[fut]
                records = _records_of(members, seed, fut)
                for rec in records:
                    self.book.keep(rec)
                    self.status.finished(rec, self.book.done, self.book.failed)
                del self.pending[fut]
                if self.snapshots is not None and records:  # stored: its training state is no longer needed
                    Snapshot(self.snapshots, [config for _, config in members], seed).discard()
            if self.out_of_budget and not self.pending:
                return

    def _overdue(self) -> bool:
        """Held back by the budget, with jobs still running 10 % of it (at least a minute) past its end."""
        if not (self.out_of_budget and self.pending) or self.deadline is None or self.budget is None:
            return False
        return time.perf_counter() > self.deadline + max(60.0, 0.1 * self.budget)

    def salvage(self, exc: _Broken) -> None:
        """The pool lost a worker (killed or crashed): every run still in it is unrecoverable here;
        a job that ended before the break keeps its records."""
        self.broken = True
        for fut, (members, seed) in list(self.pending.items()):
            finished_ok = fut.done() and not fut.cancelled() and fut.exception() is None
            by_key = {rec["key"]: rec for rec in (_records_of(members, seed, fut) if finished_ok else [])}
            for key, config in members:
                if key not in self.book.counted:
                    reason = f"executor broke while this run was in flight: {exc}"
                    self.book.keep(by_key.get(key) or _failure_record(config, seed, reason))
        self.pending.clear()

    def abandon(self) -> tuple[int, int]:
        """Cancel what is still pending; ``(lost, snapshotted)``: its runs not stored (an interrupt,
        counted once, here) and those a snapshot lets a rerun resume."""
        lost = sum(key not in self.book.counted for members, _ in self.pending.values() for key, _ in members)
        snapshotted = sum(
            len(members)
            for members, seed in self.pending.values()
            if self.snapshots is not None and Snapshot(self.snapshots, [c for _, c in members], seed).path.exists()
        )
        for fut in self.pending:
            fut.cancel()
        return lost, snapshotted


def _first_job_seconds(rest, lockstep: bool, rate_by_kind: dict) -> float:
    """The cost model's seconds of the job of ``rest``'s first run (``(config, seed)`` pairs, the first
    one missing from the store and too long for the budget alone): its lockstep group, or the run."""
    from . import budget as cost

    first, seed = rest[0]
    if not lockstep:
        return cost.job_seconds([first], rate_by_kind)
    from .runner import lockstep_key

    group = lockstep_key(first)
    return cost.job_seconds([c for c, s in rest if s == seed and lockstep_key(c) == group], rate_by_kind)


def _checked(key, config, seed, value) -> dict:
    """A worker's record, validated and completed, or a failure record saying what was wrong."""
    if not isinstance(value, dict):
        return _failure_record(config, seed, f"run_fn returned {type(value).__name__}, not a record dict")
    rec = dict(value)
    if rec.get("key", key) != key:
        return _failure_record(config, seed, f"run_fn returned key {rec.get('key')!r} for run {key!r}")
    rec["key"] = key
    rec.setdefault("config", config.to_dict())
    rec.setdefault("seed", int(seed))
    rec.setdefault("reason", None)
    if rec.get("status") not in ("ok", "diverged", "failed"):
        return _failure_record(config, seed, f"run_fn returned status {rec.get('status')!r}")
    if (problem := unstorable(rec)) is not None:  # the store would refuse it: a failed run, not a traceback
        return _failure_record(config, seed, f"run_fn returned a record the store cannot hold: {problem}")
    return rec


def compile_ahead(units, workers: int) -> list[dict]:
    """Compile ``units`` in a pool of ``workers`` fresh processes (spawned), so this process only loads
    them; nothing when fewer than two units are missing from the cache or ``workers < 2``."""
    from .jit import cache_usable
    from .warm import missing, warm_pool

    todo = missing(units)
    if workers < 2 or len(todo) < 2 or not cache_usable():
        return []
    ex, _, close = make_executor("process", min(workers, len(todo)))
    try:
        return warm_pool(ex, todo)
    finally:
        close()


def _warm_workers(ex, jobs, slots: int, status: _Status) -> None:
    """Compile the kernels the jobs call once, spread over the pool's workers, before any run: with an
    empty kernel cache every worker would otherwise compile all of them at the same time (sims/warm.py).
    Nothing when the cache holds them all."""
    from .warm import missing, units_for, warm_pool

    units = missing(units_for([config for members, _ in jobs for _, config in members]))
    if not units:
        return

    def say(left: int) -> str:
        return (
            f"compiling the numba kernels on {slots} workers, {left} of {len(units)} parts left "
            "(once per version of depthscale; `depthscale warm` does it ahead)"
        )

    status.note(say(len(units)))
    try:
        warm_pool(ex, units, lambda seconds, left: status.note(say(left)))
    except cf.BrokenExecutor as exc:
        raise _Broken.of(exc) from None


class _Status:
    """A progress bar on a terminal or in a notebook; elsewhere, if asked, progress lines (a log file)."""

    def __init__(self, total: int, quiet: bool, lines: RunLines | bool = False):
        self.bar = None
        self.lines = None
        self._noted = False
        if quiet or not total:
            return
        if interactive(sys.stderr):
            self.bar = Progress(total, unit="run", desc="sweep", file=sys.stderr)
        elif isinstance(lines, RunLines):
            self.lines = lines
            lines.started(total)

    def finished(self, rec: dict, done: int, failed: int) -> None:
        if self.bar is not None:
            self.bar.update(1)
            self.bar.warmed_up()  # the first finished job carried the compilation: restart the clock after it
            self.bar.set_postfix(done=done, failed=failed)
        if self.lines is not None:
            self.lines.finished(rec)

    def beat(self, running) -> None:
        """A heartbeat line naming the runs in flight (``(RunConfig, seed)`` pairs), when due."""
        if self.lines is not None and self.lines.clock() - self.lines.last >= self.lines.heartbeat:
            self.lines.beat((config.to_dict(), seed) for config, seed in running)

    def note(self, text: str) -> None:
        """``text`` once above the bar; as a progress line when the last line is ``heartbeat`` old."""
        if self.bar is not None and not self._noted:
            self.bar.bar.write(f"depthscale: {text}", file=sys.stderr)
        if self.lines is not None:
            self.lines.note(text, due_only=self._noted)
        self._noted = True

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


class _Broken(Exception):
    """The pool lost a worker; the message is the executor's."""

    @classmethod
    def of(cls, exc: BaseException) -> _Broken:
        return cls(str(exc) or type(exc).__name__)


__all__ = ["sweep", "plan", "startable", "make_executor", "SerialExecutor", "SweepResult", "EXECUTORS"]

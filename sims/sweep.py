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
import os
import signal
import sys
import time
import traceback
from dataclasses import asdict, dataclass, field

from depthscale.sims.config import CONTEXTS_VERSION
from depthscale.sims.grid import run_key
from depthscale.theory.validate import check_choice, check_int, check_real

EXECUTORS = ("process", "serial", "dask")
_THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS")


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
        fut = cf.Future()
        fut.set_running_or_notify_cancel()
        try:
            fut.set_result(fn(*args, **kwargs))
        except Exception as exc:  # KeyboardInterrupt propagates: the caller stops the sweep
            fut.set_exception(exc)
        return fut


def _init_worker() -> None:
    """Process-pool initializer: one compute thread per worker, Ctrl-C handled by the client only."""
    for var in _THREAD_VARS:
        os.environ[var] = "1"
    # The client decides what happens on Ctrl-C; a worker interrupted mid-run would break the pool.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _limit_threads()


def _limit_threads() -> None:
    try:
        from threadpoolctl import threadpool_limits

        import numpy  # noqa: F401 - load BLAS first so the limit applies to it

        threadpool_limits(limits=1)
    except ImportError:
        pass
    if "numba" in sys.modules:
        try:
            sys.modules["numba"].set_num_threads(1)
        except Exception:  # numba before its threading layer starts: env var above applies
            pass


def _call(run_fn, config, seed, limit_threads: bool = False):
    """Worker side: run one job; exceptions become ``("error", reason)`` so any executor can return them."""
    if limit_threads:
        _limit_threads()
    try:
        return ("ok", run_fn(config, seed))
    except Exception as exc:
        tb = traceback.extract_tb(exc.__traceback__)
        where = f" at {os.path.basename(tb[-1].filename)}:{tb[-1].lineno}" if tb else ""
        return ("error", f"{type(exc).__name__}: {exc}{where}")


def _default_run_fn():
    from depthscale.sims.runner import run

    return run


def make_executor(kind: str = "process", workers: int | None = None, scheduler: str | None = None,
                  connect_timeout: float = 20.0):
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
        ex = SerialExecutor()
        return ex, 1, lambda: None
    if kind == "process":
        import multiprocessing as mp

        n = workers or os.cpu_count() or 1
        # spawn: a fresh interpreter per worker, safe whatever threads the client has started
        ex = cf.ProcessPoolExecutor(max_workers=n, mp_context=mp.get_context("spawn"), initializer=_init_worker)
        return ex, n, lambda: ex.shutdown(wait=True, cancel_futures=True)
    if not scheduler:
        raise ValueError("scheduler=None: the dask executor needs a scheduler address such as tcp://127.0.0.1:8786")
    try:
        from distributed import Client
    except ImportError:
        raise ValueError("executor='dask': must have dask.distributed installed (pip install 'depthscale[dask]')") from None
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
    return {"key": run_key(config, seed), "config": config.to_dict(), "seed": int(seed), "status": "failed",
            "reason": reason}


def _progress(total: int, quiet: bool):
    disable = quiet or not (hasattr(sys.stderr, "isatty") and sys.stderr.isatty())
    if disable or total == 0:
        return None
    from tqdm import tqdm

    return tqdm(total=total, unit="run", file=sys.stderr, dynamic_ncols=True, desc="sweep")


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


def sweep(runs, store, *, run_fn=None, executor="process", workers: int | None = None, scheduler: str | None = None,
          retry_failed: bool = False, quiet: bool = False, max_in_flight: int | None = None,
          on_result=None) -> SweepResult:
    """Run every ``(config, seed)`` not yet in ``store`` and write each record as it finishes.

    Parameters
    ----------
    runs : list of (RunConfig, int)
        From :func:`depthscale.sims.grid.load_grid`.
    store : depthscale.sims.store.Store
    run_fn : callable, optional
        ``run_fn(config, seed) -> record``; picklable for process and dask executors. Default:
        :func:`depthscale.sims.runner.run`.
    executor : {"process", "serial", "dask"} or concurrent.futures.Executor
        An Executor instance is used as is and not shut down here.
    workers : int, optional
        Process-pool size (default: CPU count).
    scheduler : str, optional
        Dask scheduler address (needed for ``"dask"``).
    retry_failed : bool
        Rerun runs stored as failed (otherwise they are skipped).
    quiet : bool
        No progress bar (it is also off when stderr is not a terminal).
    max_in_flight : int, optional
        Submitted-but-unfinished runs at most (default: twice the executor's slots), so an interrupt
        has little to cancel.
    on_result : callable, optional
        ``on_result(record)`` after each write (the client side), e.g. for logging.

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
    >>> with Store(os.path.join(tempfile.mkdtemp(), "s.sqlite")) as st:
    ...     r1 = sweep(runs, st, run_fn=fake, executor="serial", quiet=True)
    ...     r2 = sweep(runs, st, run_fn=fake, executor="serial", quiet=True)
    >>> (r1.done, r2.done, r2.skipped)
    (4, 0, 4)
    """
    t0 = time.perf_counter()
    runs = list(runs)
    if run_fn is None:
        if getattr(store, "contexts_version", CONTEXTS_VERSION) != CONTEXTS_VERSION:
            raise ValueError(
                f"store={str(store.path)!r}: holds runs on version-{store.contexts_version} contexts; this depthscale "
                f"draws version {CONTEXTS_VERSION}, whose runs would not share evaluation contexts with them: use a new store"
            )
        run_fn = _default_run_fn()
    if not callable(run_fn):
        raise ValueError(f"run_fn={run_fn!r}: must be a callable run_fn(config, seed) -> record")
    if max_in_flight is not None:
        check_int("max_in_flight", max_in_flight, lo=1)
    own = not isinstance(executor, cf.Executor)
    if own:
        check_choice("executor", executor, EXECUTORS)
        if workers is not None:
            check_int("workers", workers, lo=1, hi=4096)
        if executor == "dask" and not scheduler:
            raise ValueError("scheduler=None: the dask executor needs a scheduler address such as tcp://127.0.0.1:8786")
    todo, skipped, skipped_failed = plan(runs, store, retry_failed)
    total = len(runs)
    if not todo:
        return SweepResult(total, skipped, skipped_failed, 0, 0, 0, False, (), time.perf_counter() - t0)

    if own:
        ex, slots, close = make_executor(executor, workers, scheduler)
        kind = executor
    else:
        ex, slots, close, kind = executor, getattr(executor, "_max_workers", 1) or 1, (lambda: None), "custom"
    limit = kind == "dask"  # process workers are limited once by their initializer
    window = max_in_flight or max(1, 2 * slots)
    bar = _progress(len(todo), quiet)
    done = failed = 0
    failed_keys = []
    pending = {}  # future -> (key, config, seed)
    queue = list(reversed(todo))
    interrupted = broken = False

    def record_of(key, config, seed, fut):
        try:
            tag, value = fut.result()
        except cf.CancelledError:
            return None
        except cf.BrokenExecutor as exc:
            raise _Broken(str(exc) or type(exc).__name__) from None
        except Exception as exc:  # the executor itself failed to run the job (e.g. unpicklable)
            tag, value = "error", f"{type(exc).__name__}: {exc}"
        if tag == "error":
            return _failure_record(config, seed, value)
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
        return rec

    try:
        while queue or pending:
            while queue and len(pending) < window:
                key, config, seed = queue.pop()
                pending[ex.submit(_call, run_fn, config, seed, limit)] = (key, config, seed)
            finished, _ = cf.wait(list(pending), timeout=1.0, return_when=cf.FIRST_COMPLETED)
            for fut in finished:
                key, config, seed = pending.pop(fut)
                rec = record_of(key, config, seed, fut)
                if rec is None:
                    continue
                store.put(rec)  # one transaction per finished run
                if rec["status"] == "failed":
                    failed += 1
                    failed_keys.append(key)
                else:
                    done += 1
                if on_result is not None:
                    on_result(rec)
                if bar is not None:
                    bar.update(1)
            if bar is not None:
                bar.set_postfix(done=done, running=min(len(pending), slots), failed=failed, refresh=False)
                bar.refresh()
    except KeyboardInterrupt:
        interrupted = True
    except _Broken as exc:
        # The pool lost a worker (killed or crashed): every run still in it is unrecoverable here.
        broken = True
        for fut, (key, config, seed) in list(pending.items()):
            store.put(_failure_record(config, seed, f"executor broke while this run was in flight: {exc}"))
            failed += 1
            failed_keys.append(key)
        pending.clear()
    finally:
        for fut in pending:
            fut.cancel()
        if bar is not None:
            bar.close()
        if interrupted and kind == "process":
            _terminate_pool(ex)
        if own:
            try:
                close()
            except Exception:
                pass
    return SweepResult(total, skipped, skipped_failed, done, failed, len(pending), interrupted, tuple(failed_keys),
                       time.perf_counter() - t0, len(queue), broken)


class _Broken(Exception):
    pass


__all__ = ["sweep", "plan", "make_executor", "SerialExecutor", "SweepResult", "EXECUTORS"]

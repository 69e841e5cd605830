"""Sweeps: resume, failures and retries, executors (serial, process, dask), SIGKILL and SIGINT."""

import concurrent.futures as cf
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time

import pytest
from subprocs import all_exit, integrity, kill_survivors, running, sigkill_after

from depthscale.sims.grid import load_grid, run_key
from depthscale.sims.store import Store
from depthscale.sims.sweeps import SerialExecutor, make_executor, plan, sweep

GRID = {"seeds": [0, 1, 2], "task": {"d": 4, "P": 16}, "model": {"depth": [1, 2, 4, 8]}}


def fake_run(config, seed):
    """A deterministic stand-in for the runner: loss 0.5 + 2/L times a seed factor."""
    L = config.model.depth
    return {"status": "ok", "converged": True, "final_loss": (0.5 + 2.0 / L) * (1 + 0.01 * seed)}


def logged_run(config, seed):
    """fake_run that appends its key to the file named by $SWEEP_LOG (counts calls across processes)."""
    with open(os.environ["SWEEP_LOG"], "a") as fh:
        fh.write(run_key(config, seed) + "\n")
    return fake_run(config, seed)


def flaky_run(config, seed):
    """Fails for seed 1 unless the file $SWEEP_FIXED exists."""
    if seed == 1 and not os.path.exists(os.environ["SWEEP_FIXED"]):
        raise RuntimeError(f"no luck at depth {config.model.depth}")
    return fake_run(config, seed)


def dying_run(config, seed):
    """Kills its worker process for seed 2 (a crash the pool cannot report as an exception)."""
    if seed == 2:
        os._exit(3)
    time.sleep(0.05)
    return fake_run(config, seed)


def thread_report(config, seed):
    """Reports the worker's compute-thread settings."""
    import numba
    from threadpoolctl import threadpool_info

    blas = [i["num_threads"] for i in threadpool_info() if i.get("user_api") == "blas"]
    return {
        "status": "ok",
        "blas_threads": max(blas) if blas else 1,
        "numba_threads": numba.get_num_threads(),  # what the work runs on (the variable keeps numba's pool size)
        "pid": os.getpid(),
    }


class Counter:
    def __init__(self, fn=fake_run):
        self.calls, self.fn = [], fn

    def __call__(self, config, seed):
        self.calls.append(run_key(config, seed))
        return self.fn(config, seed)


@pytest.fixture
def runs():
    return load_grid(GRID)


def test_serial_sweep_writes_every_run_and_resumes(tmp_path, runs):
    with Store(tmp_path / "s.sqlite", mode="write") as st:
        c = Counter()
        res = sweep(runs[:5], st, run_fn=c, executor="serial", quiet=True)
        assert (res.done, res.skipped, res.failed, res.interrupted) == (5, 0, 0, False)
        assert len(c.calls) == 5
        c2 = Counter()
        res = sweep(runs, st, run_fn=c2, executor="serial", quiet=True)  # resumes: only the 7 missing
        assert (res.total, res.done, res.skipped) == (12, 7, 5)
        assert sorted(c2.calls) == sorted(run_key(cfg, s) for cfg, s in runs[5:])
        c3 = Counter()
        res = sweep(runs, st, run_fn=c3, executor="serial", quiet=True)
        assert c3.calls == [] and res.skipped == 12 and res.done == 0
        for cfg, s in runs:
            rec = st.get(run_key(cfg, s))
            assert rec["status"] == "ok" and rec["seed"] == s and rec["config"] == cfg.to_dict()
            assert rec["final_loss"] == pytest.approx((0.5 + 2.0 / cfg.model.depth) * (1 + 0.01 * s))


def test_failures_recorded_and_retried_only_on_request(tmp_path, runs, monkeypatch):
    monkeypatch.setenv("SWEEP_FIXED", str(tmp_path / "fixed"))
    with Store(tmp_path / "s.sqlite", mode="write") as st:
        res = sweep(runs, st, run_fn=flaky_run, executor="serial", quiet=True)
        assert (res.done, res.failed) == (8, 4)
        assert len(st.keys("failed")) == 4
        (f,) = [f for f in st.failed() if f["config"]["model"]["depth"] == 2]
        assert f["seed"] == 1 and "RuntimeError: no luck at depth 2" in f["reason"]
        (tmp_path / "fixed").touch()
        c = Counter(flaky_run)
        res = sweep(runs, st, run_fn=c, executor="serial", quiet=True)  # failed runs are not retried
        assert c.calls == [] and res.skipped_failed == 4 and res.skipped == 8
        res = sweep(runs, st, run_fn=c, executor="serial", quiet=True, retry_failed=True)
        assert len(c.calls) == 4 and res.done == 4 and st.keys("failed") == []


@pytest.mark.parametrize(
    "ret, match",
    [
        ([1, 2], "not a record dict"),
        ({"status": "fine"}, "status 'fine'"),
        ({"status": "ok", "key": "other-0"}, "returned key 'other-0'"),
    ],
)
def test_bad_records_become_failures(tmp_path, runs, ret, match):
    with Store(tmp_path / "s.sqlite", mode="write") as st:
        res = sweep(runs[:1], st, run_fn=lambda c, s: ret, executor="serial", quiet=True)
        assert res.failed == 1
        assert match in st.failed()[0]["reason"]


def test_diverged_runs_count_as_done(tmp_path, runs):
    with Store(tmp_path / "s.sqlite", mode="write") as st:
        sweep(
            runs[:2],
            st,
            run_fn=lambda c, s: {"status": "diverged", "reason": "loss blew up"},
            executor="serial",
            quiet=True,
        )
        c = Counter()
        res = sweep(runs[:2], st, run_fn=c, executor="serial", quiet=True, retry_failed=True)
        assert c.calls == [] and res.skipped == 2


def test_process_pool(tmp_path, runs, monkeypatch):
    log = tmp_path / "log"
    monkeypatch.setenv("SWEEP_LOG", str(log))
    with Store(tmp_path / "s.sqlite", mode="write") as st:
        res = sweep(runs, st, run_fn=logged_run, executor="process", workers=2, quiet=True)
        assert (res.done, res.failed) == (12, 0)
        assert sorted(log.read_text().split()) == sorted(run_key(c, s) for c, s in runs)
        assert all(st.get(run_key(c, s))["final_loss"] > 0.5 for c, s in runs)


def test_process_workers_use_one_compute_thread(tmp_path, runs, monkeypatch):
    monkeypatch.setenv("NUMBA_NUM_THREADS", "2")
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "2")
    with Store(tmp_path / "s.sqlite", mode="write") as st:
        sweep(runs[:4], st, run_fn=thread_report, executor="process", workers=2, quiet=True)
        recs = list(st.records())
    assert len(recs) == 4 and {r["pid"] for r in recs} != {os.getpid()}
    assert all(r["blas_threads"] == 1 and r["numba_threads"] == 1 for r in recs)


def test_worker_crash_is_recorded_and_rest_resumes(tmp_path, runs):
    with Store(tmp_path / "s.sqlite", mode="write") as st:
        res = sweep(runs, st, run_fn=dying_run, executor="process", workers=2, quiet=True)
        assert res.broken and res.failed >= 1
        assert all("executor broke" in f["reason"] for f in st.failed())
        assert all(st.status(run_key(c, s)) != "ok" for c, s in runs if s == 2)
        res2 = sweep(runs, st, run_fn=fake_run, executor="serial", quiet=True, retry_failed=True)
        assert res2.done + res2.skipped == 12 and res2.done == 12 - res.done


class BreaksOnThirdSubmit(SerialExecutor):
    """Two jobs stay in flight; the third submit finds the pool broken, as a process pool does when a
    worker died before the client saw any result."""

    def __init__(self):
        self.calls = 0

    def submit(self, fn, /, *args, **kwargs):
        self.calls += 1
        if self.calls == 3:
            raise cf.BrokenExecutor("a worker died")
        return cf.Future()  # never completes


def test_pool_found_broken_at_submit_is_recorded_and_rest_resumes(tmp_path, runs):
    with Store(tmp_path / "s.sqlite", mode="write") as st:
        res = sweep(runs, st, run_fn=fake_run, executor=BreaksOnThirdSubmit(), max_in_flight=3, quiet=True)
        assert res.broken and (res.done, res.failed) == (0, 2)
        assert len(st) == 2 and all("executor broke" in f["reason"] for f in st.failed())
        res2 = sweep(runs, st, run_fn=fake_run, executor="serial", quiet=True, retry_failed=True)
        assert (res2.done, res2.skipped) == (12, 0)


def test_custom_executor_instance_is_not_shut_down(tmp_path, runs):
    ex = SerialExecutor()
    with Store(tmp_path / "s.sqlite", mode="write") as st:
        res = sweep(runs[:3], st, run_fn=fake_run, executor=ex, quiet=True)
    assert res.done == 3
    assert ex.submit(abs, -1).result() == 1


def test_bad_arguments(tmp_path, runs):
    with Store(tmp_path / "s.sqlite", mode="write") as st:
        with pytest.raises(ValueError, match="executor='threads'"):
            sweep(runs, st, run_fn=fake_run, executor="threads")
        with pytest.raises(ValueError, match="workers=0"):
            sweep(runs, st, run_fn=fake_run, workers=0)
        with pytest.raises(ValueError, match="scheduler=None"):
            sweep(runs, st, run_fn=fake_run, executor="dask")
        with pytest.raises(ValueError, match="run_fn=3"):
            sweep(runs, st, run_fn=3)
        assert len(st) == 0
    with pytest.raises(ValueError, match="scheduler='tcp://127.0.0.1:1'"):
        make_executor("dask", scheduler="tcp://127.0.0.1:1", connect_timeout=1)


def test_plan_counts(tmp_path, runs):
    with Store(tmp_path / "s.sqlite", mode="write") as st:
        k0, k1 = run_key(*runs[0]), run_key(*runs[1])
        st.put({"key": k0, "config": {}, "seed": 0, "status": "ok"})
        st.put({"key": k1, "config": {}, "seed": 1, "status": "failed", "reason": "x"})
        todo, skipped, skipped_failed = plan(runs + runs[:2], st)
        assert (len(todo), skipped, skipped_failed) == (10, 1, 1)
        todo, _, _ = plan(runs, st, retry_failed=True)
        assert len(todo) == 11 and todo[0][0] == k1


def test_dask_local_cluster(tmp_path, runs):
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(
        n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None
    ) as cluster:
        with Store(tmp_path / "s.sqlite", mode="write") as st:
            res = sweep(runs, st, run_fn=fake_run, executor="dask", scheduler=cluster.scheduler_address, quiet=True)
            assert (res.done, res.failed) == (12, 0)
            rec = st.get(run_key(*runs[-1]))
            assert rec["final_loss"] == pytest.approx((0.5 + 2.0 / 8) * 1.02)
            res = sweep(runs, st, run_fn=fake_run, executor="dask", scheduler=cluster.scheduler_address, quiet=True)
            assert res.skipped == 12


# -- killing a sweep from outside -------------------------------------------------------------
SLOW_MODULE = textwrap.dedent(
    """
    import os, time
    from depthscale.sims.grid import run_key

    def slow_run(config, seed):
        time.sleep(float(os.environ.get("SLOW_SECONDS", "0.3")))
        return {"status": "ok", "converged": True, "final_loss": 1.0 + config.model.depth + seed / 100}
    """
)

DRIVER = textwrap.dedent(
    """
    import signal
    import sys
    sys.path.insert(0, sys.argv[1])
    # as in a terminal: a parent started in the background (shell `&`) passes SIGINT on as ignored
    signal.signal(signal.SIGINT, signal.default_int_handler)
    from slowmod import slow_run
    from depthscale.sims.grid import load_grid
    from depthscale.sims.store import Store
    from depthscale.sims.sweeps import sweep

    def main():
        runs = load_grid({"seeds": list(range(6)), "task": {"d": 4, "P": 16}, "model": {"depth": [1, 2, 3, 4, 5]}})
        with Store(sys.argv[2], mode="write") as st:
            res = sweep(runs, st, run_fn=slow_run, executor=sys.argv[3], workers=2, quiet=True)
        print("RESULT", res.interrupted, res.done, res.lost, flush=True)

    if __name__ == "__main__":
        main()
    """
)


def _start_driver(tmp_path, executor):
    (tmp_path / "slowmod.py").write_text(SLOW_MODULE)
    (tmp_path / "driver.py").write_text(DRIVER)
    store = tmp_path / "s.sqlite"
    env = dict(os.environ, SLOW_SECONDS="0.3")
    proc = subprocess.Popen(
        [sys.executable, str(tmp_path / "driver.py"), str(tmp_path), str(store), executor],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    return proc, store


def _wait_for_rows(proc, store, n, timeout=60):
    t0 = time.time()
    while time.time() - t0 < timeout:
        assert proc.poll() is None, proc.stderr.read()
        if store.exists():
            try:
                con = sqlite3.connect(store, timeout=5)
                k = con.execute("SELECT COUNT(*) FROM runs").fetchone()[0]
                con.close()
                if k >= n:
                    return
            except sqlite3.OperationalError:  # tables not created yet
                pass
        time.sleep(0.05)
    raise AssertionError("the sweep did not write runs in time")


def _check_and_resume(tmp_path, store):
    assert integrity(store) == "ok"
    sys.path.insert(0, str(tmp_path))
    try:
        from slowmod import slow_run  # noqa: F401 - the same grid as the driver
    finally:
        sys.path.remove(str(tmp_path))
    runs = load_grid({"seeds": list(range(6)), "task": {"d": 4, "P": 16}, "model": {"depth": [1, 2, 3, 4, 5]}})
    with Store(store, mode="write") as st:
        stored = st.keys()
        assert 0 < len(stored) < 30 and st.keys("failed") == []
        for key in stored:  # finished runs intact
            rec = st.get(key)
            assert rec["final_loss"] == 1.0 + rec["config"]["model"]["depth"] + rec["seed"] / 100
        c = Counter()
        res = sweep(runs, st, run_fn=c, executor="serial", quiet=True)
        assert sorted(c.calls) == sorted(set(run_key(cfg, s) for cfg, s in runs) - set(stored))
        assert res.skipped == len(stored) and len(st) == 30


def test_sigkill_mid_sweep(tmp_path):
    proc, store = _start_driver(tmp_path, "serial")
    with sigkill_after(proc):
        _wait_for_rows(proc, store, 3)
    assert proc.returncode == -signal.SIGKILL
    _check_and_resume(tmp_path, store)


def test_sigint_mid_sweep_process_pool(tmp_path):
    proc, store = _start_driver(tmp_path, "process")
    try:
        _wait_for_rows(proc, store, 3)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)  # stops promptly: does not wait for the remaining runs
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    line = [ln for ln in out.splitlines() if ln.startswith("RESULT")][0]
    _, interrupted, done, lost = line.split()
    assert interrupted == "True" and int(lost) <= 4, line
    _check_and_resume(tmp_path, store)


def test_store_from_an_older_context_generator_is_read_only_for_the_engine(tmp_path, runs):
    # A store whose runs predate the contexts_version field holds version-1 contexts: the engine's
    # sweep refuses to add version-2 runs to it (they would not share evaluation contexts), while
    # reading it, and sweeping with a custom run function, still work.
    from depthscale.sims.config import CONTEXTS_VERSION

    path = tmp_path / "old.sqlite"
    with Store(path, mode="write") as st:
        assert st.contexts_version == CONTEXTS_VERSION
        sweep(runs[:1], st, run_fn=fake_run, executor="serial", quiet=True)
    con = sqlite3.connect(path)
    con.execute("DELETE FROM meta WHERE name='contexts_version'")
    con.commit()
    con.close()
    with Store(path, mode="write") as st:
        assert st.contexts_version == 1
        assert len(list(st.records())) == 1
        with pytest.raises(ValueError, match=r"store=.*version-1 contexts.*new store"):
            sweep(runs, st, executor="serial", quiet=True)
        assert len(st) == 1
        assert sweep(runs, st, run_fn=fake_run, executor="serial", quiet=True).done == len(runs) - 1


def test_code_version_is_read_before_the_first_run(tmp_path, runs, monkeypatch):
    # The stamp must name the code the runs execute; read after the first run finishes, it would name
    # whatever the working tree holds by then (a long sweep outlives edits and commits).
    import depthscale.sims.sweeps as sweeps_mod

    events = []

    def version():
        events.append("version")
        return f"v{len(events)}"

    def run(config, seed):
        events.append("run")
        return fake_run(config, seed)

    monkeypatch.setattr(sweeps_mod, "code_version", version)
    with Store(tmp_path / "s.sqlite", mode="write") as st:
        sweep(runs[:3], st, run_fn=run, executor="serial", quiet=True)
        stamps = {r["code_version"] for r in st.records()}
    assert events[0] == "version" and events.count("version") == 1 and events.count("run") == 3
    assert stamps == {"v1"}


# -- workers die with their sweep (issue 21) ---------------------------------------------------
HANGING_MODULE = textwrap.dedent(
    """
    import os
    import time

    def hanging_run(config, seed):
        open(os.path.join(os.environ["WORKER_PIDS"], str(os.getpid())), "w").close()
        time.sleep(3600)  # a long run: only its parent's death may end it early
    """
)

ORPHANING_DRIVER = textwrap.dedent(
    """
    import sys
    sys.path.insert(0, sys.argv[1])
    from hangmod import hanging_run
    from depthscale.sims.grid import load_grid
    from depthscale.sims.store import Store
    from depthscale.sims.sweeps import sweep

    if __name__ == "__main__":
        runs = load_grid({"seeds": [0, 1], "task": {"d": 4, "P": 16}, "model": {"depth": [1]}})
        with Store(sys.argv[2], mode="write") as st:
            sweep(runs, st, run_fn=hanging_run, executor="process", workers=2, quiet=True)
    """
)


def test_pool_workers_exit_when_the_sweep_is_killed(tmp_path):
    (tmp_path / "hangmod.py").write_text(HANGING_MODULE)
    (tmp_path / "driver.py").write_text(ORPHANING_DRIVER)
    pids_dir = tmp_path / "pids"
    pids_dir.mkdir()
    env = dict(os.environ, WORKER_PIDS=str(pids_dir))
    proc = subprocess.Popen(
        [sys.executable, str(tmp_path / "driver.py"), str(tmp_path), str(tmp_path / "s.sqlite")],
        stderr=subprocess.PIPE,
        env=env,
    )
    workers = []
    try:
        for _ in range(1200):  # both workers inside a run (spawning and importing take a while)
            workers = [int(p.name) for p in pids_dir.iterdir()]
            if len(workers) == 2 or proc.poll() is not None:
                break
            time.sleep(0.1)
        assert len(workers) == 2 and proc.poll() is None, proc.stderr.read() if proc.poll() is not None else ""
        assert all(running(pid) for pid in workers)
    finally:
        proc.kill()  # kill -9 of the sweep's main process only, not its process group
        proc.wait(timeout=30)
    try:
        assert all_exit(workers, 600, 0.1), "orphaned pool workers still running"
    finally:
        kill_survivors(workers)


def test_worker_compiles_after_its_thread_limits(tmp_path):
    """A fresh process-pool worker (numba imported with the package, then limited to one thread) can
    still compile: every compilation reloads numba's configuration from the environment, which used
    to say NUMBA_NUM_THREADS=1 against the pool size read at import, so a cold cache failed every run."""
    import subprocess
    import sys

    code = (
        "from depthscale.sims.sweeps import _init_worker\n"
        "_init_worker(None)\n"
        "import numba\n"
        "f = numba.njit(lambda x: x + 1)\n"
        "print(f(1), numba.get_num_threads())\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("NUMBA_") and k not in ("OMP_NUM_THREADS",)}
    env["NUMBA_CACHE_DIR"] = str(tmp_path)
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["2", "1"]

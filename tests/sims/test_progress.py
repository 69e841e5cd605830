"""Progress bars: shown on a terminal or in a notebook, and their time estimate leaves out the warm-up."""

import io
import sys
import types

import pytest

from depthscale.sims import progress as progress_mod
from depthscale.sims import sweeps
from depthscale.sims.grid import load_grid
from depthscale.sims.progress import Progress, in_notebook, interactive
from depthscale.sims.store import Store


class Clock:
    def __init__(self):
        self.t = 1000.0

    def __call__(self):
        return self.t


def _bar(total, clock):
    bar = Progress(total, unit="step", file=io.StringIO(), mininterval=0, miniters=1)
    bar.bar._time = clock  # tqdm reads its clock through this attribute
    bar.bar.start_t = bar.bar.last_print_t = clock()
    return bar


def test_the_rate_leaves_out_the_warm_up():
    """Step 0 takes 100 s (compilation), every later step 10 ms: the rate is 100 steps/s from the second step on."""
    clock = Clock()
    bar = _bar(1000, clock)
    clock.t += 100.0
    bar.update()
    bar.warmed_up()
    for i in range(1, 6):
        clock.t += 0.01
        bar.update()
        d = bar.bar.format_dict
        assert d["n"] == 1 + i and d["elapsed"] == pytest.approx(0.01 * i)
        assert bar.rate == pytest.approx(100.0, rel=1e-6)  # 1000 steps would have read about 1/100 s without it
    bar.close()


def test_without_the_warm_up_the_first_estimate_is_the_compilation():
    # the old behaviour, for contrast: the same clock without warmed_up() gives a rate near 1 step / 100 s
    clock = Clock()
    bar = _bar(1000, clock)
    clock.t += 100.0
    bar.update()
    clock.t += 0.01
    bar.update()
    assert bar.rate < 0.1
    bar.close()


def test_training_restarts_the_clock_after_its_first_step(monkeypatch):
    from depthscale.sims.config import ModelConfig, RunConfig, TaskConfig, TrainConfig
    from depthscale.sims.runner import run

    calls = []
    original = Progress.warmed_up

    def spy(self):
        calls.append(self.bar.n)
        original(self)

    monkeypatch.setattr(progress_mod.Progress, "warmed_up", spy)
    cfg = RunConfig(
        TaskConfig(task="topk", d=4, P=16), ModelConfig(depth=2), TrainConfig(steps=5, batch=8, eval_contexts=64)
    )
    assert run(cfg, 0, progress=True)["status"] == "ok"
    assert calls == [1]  # once, after the first step


def test_a_sweep_shows_a_bar_in_a_notebook_and_none_in_a_log(tmp_path, monkeypatch, capsys):
    runs = load_grid({"seeds": [0, 1], "model": {"depth": [1, 2]}})
    fake = lambda cfg, seed: {"status": "ok", "final_loss": 1.0 / cfg.model.depth}  # noqa: E731
    with Store(tmp_path / "a.sqlite", mode="write") as st:
        monkeypatch.setattr(sweeps, "interactive", lambda stream=None: False)
        sweeps.sweep(runs, st, run_fn=fake, executor="serial")
    assert capsys.readouterr().err == ""  # a log file gets no bar (the command line prints lines instead)
    with Store(tmp_path / "b.sqlite", mode="write") as st:
        monkeypatch.setattr(sweeps, "interactive", lambda stream=None: True)
        sweeps.sweep(runs, st, run_fn=fake, executor="serial")
    err = capsys.readouterr().err
    assert "sweep" in err and "4/4" in err


def test_a_notebook_kernel_counts_as_interactive(monkeypatch):
    class Shell:
        config = {"IPKernelApp": {"connection_file": "kernel.json"}}

    assert not in_notebook()
    monkeypatch.setitem(sys.modules, "IPython", types.SimpleNamespace(get_ipython=lambda: Shell()))
    assert in_notebook() and interactive(io.StringIO())
    monkeypatch.setitem(sys.modules, "IPython", types.SimpleNamespace(get_ipython=lambda: None))
    assert not in_notebook() and not interactive(io.StringIO())

"""The first hour with the command line (issue 42): a bare ``depthscale`` says what it can do, each
``--help`` lists the names it takes, progress in a log file names every run and says where a resumed
sweep starts, a log hears from a long run at least every 30 s, ``simulate --json`` says which code
made its record, and a virtual environment in the checkout is not a change to commit."""

from __future__ import annotations

import concurrent.futures as cf
import io
import json
import re
import shutil
import subprocess
import threading
from importlib import metadata
from pathlib import Path

import pytest

from depthscale.derivations.cli.app import COMMANDS, main

ROOT = Path(__file__).resolve().parents[1]


def fake_run(config, seed):
    """A record without training: progress lines are what is tested."""
    return {"status": "ok", "converged": True, "final_loss": 1.0 / config.model.depth}


RUN_FN = f"{__name__}:fake_run"


def test_a_bare_depthscale_lists_its_commands(capsys):
    code = main([])
    out, err = capsys.readouterr()
    assert code == 0 and err == "", err
    assert out.splitlines()[0].startswith("usage: depthscale COMMAND")
    listed = [line.split()[0] for line in out.splitlines() if line.startswith("  ")]
    assert listed == [c.replace("_", "-") for c in COMMANDS]  # one line each, in order


def _choices(command):
    if command == "derive":
        from depthscale.theory.derivation_index import BUILDERS

        return list(BUILDERS)
    if command == "reproduce":
        from depthscale.derivations.study import preset_names

        return preset_names()
    from depthscale.theory._choices import ATTENTIONS

    return list(ATTENTIONS)


@pytest.mark.parametrize("command", ["derive", "reproduce", "simulate"])
def test_help_lists_the_names_each_command_takes(command, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "400")  # no wrapping inside a hyphenated name
    with pytest.raises(SystemExit) as stop:
        main([command, "--help"])
    assert stop.value.code == 0
    text = capsys.readouterr().out
    for name in _choices(command):
        assert re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", text), (command, name)


def _grid(tmp_path, seeds):
    path = tmp_path / f"grid-{len(seeds)}.toml"
    path.write_text(
        f"seeds = {seeds}\n[task]\nspectra = [[0.0, 0.0], [0.5, 0.5]]\n[model]\ndepth = [1, 2]\n"
        '[train]\nschedule = ["cosine", "constant"]\nsteps = 100\n'
    )
    return path


def _sweep(capsys, grid, store):
    code = main(["sweep", str(grid), "--store", str(store), "--executor", "serial", "--run-fn", RUN_FN])
    out, err = capsys.readouterr()
    assert code == 0, err
    return err.splitlines()


def test_progress_lines_tell_every_run_apart(tmp_path, capsys):
    lines = _sweep(capsys, _grid(tmp_path, [0]), tmp_path / "s.sqlite")  # stderr is captured: no terminal
    labels = [
        m.group(1) for m in (re.match(r"depthscale: run \d+/8 ok: (.*) \(\d+ s elapsed\)$", x) for x in lines) if m
    ]
    assert len(labels) == 8 and len(set(labels)) == 8, lines  # 2 spectra x 2 depths x 2 protocols
    assert sum("constant" in x for x in labels) == 4 and sum("(a,b)=(0.5,0.5)" in x for x in labels) == 4


def test_a_resumed_sweep_says_what_was_done_and_counts_on(tmp_path, capsys):
    store = tmp_path / "s.sqlite"
    _sweep(capsys, _grid(tmp_path, [0]), store)
    lines = _sweep(capsys, _grid(tmp_path, [0, 1, 2]), store)
    # two depths can never decide a depth law: the sweep says so once, first, then counts on
    assert lines[0].startswith("depthscale: warning: this grid can never decide a depth-law claim: depths"), lines
    assert lines[1] == "depthscale: 8 of 24 runs already done; 16 to run", lines
    numbers = [int(m.group(1)) for m in (re.match(r"depthscale: run (\d+)/24 ", x) for x in lines) if m]
    assert numbers == list(range(9, 25))


def test_a_budgeted_sweep_says_at_its_start_what_it_will_finish(tmp_path, capsys):
    grid = _grid(tmp_path, [0])
    code = main(["sweep", str(grid), "--store", str(tmp_path / "s.sqlite"), "--executor", "serial",
                 "--run-fn", RUN_FN, "--budget", "10h"])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 0 and "depthscale: budget 10.0 h: by the cost model, all 8 runs to do fit" in err, err


class _Log(io.StringIO):
    """stderr as a log file that tells when a heartbeat line was written."""

    def __init__(self):
        super().__init__()
        self.heard = threading.Event()

    def write(self, text):
        if "running: " in text:
            self.heard.set()
        return super().write(text)


def test_a_log_hears_from_a_run_in_progress(tmp_path, monkeypatch):
    from depthscale.sims.grid import load_grid
    from depthscale.sims.store import Store
    from depthscale.sims.sweeps import sweep

    log = _Log()
    monkeypatch.setattr("sys.stderr", log)

    def slow_run(config, seed):  # finishes only once the sweep has said it is running
        log.heard.wait(timeout=60)
        return fake_run(config, seed)

    runs = load_grid({"seeds": [7], "task": {"a": 0.5, "b": 0.25}, "model": {"depth": 3}})
    with cf.ThreadPoolExecutor(max_workers=1) as ex, Store(tmp_path / "s.sqlite", mode="write") as st:
        res = sweep(runs, st, run_fn=slow_run, executor=ex, lines=True, heartbeat=0.05)
    assert res.done == 1 and log.heard.is_set()
    (beat,) = [x for x in log.getvalue().splitlines() if "running: " in x][:1]
    assert "(a,b)=(0.5,0.25)" in beat and "L=3" in beat and "seed=7" in beat, beat


def test_simulate_json_says_which_code_made_the_record(capsys):
    from depthscale.sims.provenance import code_version

    argv = "simulate --d 4 --P 8 --steps 3 --batch 8 --eval-contexts 64 --threads 1 --quiet --json".split()
    code = main(argv)
    out, err = capsys.readouterr()
    assert code in (0, 1), err
    record = json.loads(out)
    assert record["code_version"] == code_version()
    assert record["code_version"].startswith(metadata.version("depthscale"))


@pytest.mark.skipif(shutil.which("git") is None or not (ROOT / ".git").exists(), reason="needs a git checkout")
def test_a_virtual_environment_in_the_checkout_is_ignored():
    proc = subprocess.run(["git", "check-ignore", "-q", ".venv/bin/python"], cwd=ROOT)
    assert proc.returncode == 0

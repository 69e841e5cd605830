"""The command line's promise, checked through the real entry point (a subprocess per case).

Bad input of any kind ends with exit status 2, exactly one line on stderr that names the
parameter, nothing on stdout, and no file created or changed. Read-only commands leave foreign
files byte-identical. Ctrl-C of ``reproduce`` stops it with status 130 and an intact store.
Every case fails before any heavy work, so the table is fast.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

CLI = [sys.executable, "-m", "depthscale.derivations.cli.app"]
# A directory no one can write into, root included (the tests may run as root, where chmod does not bind).
UNWRITABLE = "/proc/depthscale-no-such-dir"
needs_proc = pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs Linux /proc as an unwritable place")

LINEAR = ["predict", "linear", "--a", "2", "--b", "1"]
OPTIMUM = "predict linear-optimum --a 1 --b 1 --d 8 --P 32 --contexts 10 --seed 0".split()
FLOOR = ["predict", "floor", "--a", "1", "--b", "1", "--k", "2", "--contexts", "10", "--seed", "0"]
CLT = ["predict", "clt", "--depths", "1,2", "--sigma2", "1", "--shared", "0.5"]

# (id, argv, the parameter the one stderr line must name). Paths are relative to a prepared
# directory holding: foreign.sqlite (another application's SQLite database), empty.sqlite (0 bytes),
# notes.txt (text), store.sqlite (a depthscale store with one run), corrupt.sqlite (that store with
# its record garbled), grid.toml (a valid tiny grid), big.toml (a valid grid whose run cannot fit in
# memory).
CASES = [
    # derive
    ("derive-out-unwritable", ["derive", "linear", "--out", UNWRITABLE + "/d.md"], "out="),
    ("derive-out-under-a-file", ["derive", "linear", "--out", "notes.txt/d.md"], "out="),
    ("derive-out-dir-under-a-file", ["derive", "linear", "--out", "notes.txt/sub/"], "out="),
    ("derive-name", ["derive", "nope", "--out", "d.md"], "name="),
    ("derive-format", ["derive", "linear", "--format", "pdf", "--out", "d.md"], "format="),
    # reproduce: nothing created until every input is known good
    ("reproduce-out-unwritable", ["reproduce", "--preset", "smoke", "--out", UNWRITABLE], "out="),
    ("reproduce-out-is-a-file", ["reproduce", "--preset", "smoke", "--out", "notes.txt"], "out="),
    (
        "reproduce-store-foreign",
        ["reproduce", "--preset", "smoke", "--out", "new", "--store", "foreign.sqlite"],
        "store=",
    ),
    ("reproduce-store-text", ["reproduce", "--preset", "smoke", "--out", "new", "--store", "notes.txt"], "store="),
    (
        "reproduce-store-no-dir",
        ["reproduce", "--preset", "smoke", "--out", "new", "--store", "nodir/s.sqlite"],
        "store=",
    ),
    ("reproduce-store-is-dir", ["reproduce", "--preset", "smoke", "--out", "new", "--store", "."], "store="),
    ("reproduce-preset", ["reproduce", "--preset", "tiny", "--out", "new"], "preset="),
    ("reproduce-workers", ["reproduce", "--preset", "smoke", "--out", "new", "--workers", "0"], "workers="),
    ("reproduce-executor", ["reproduce", "--preset", "smoke", "--out", "new", "--executor", "threads"], "executor="),
    (
        "reproduce-dask-no-scheduler",
        ["reproduce", "--preset", "smoke", "--out", "new", "--executor", "dask"],
        "scheduler=",
    ),
    (
        "reproduce-scheduler-unreachable",
        ["reproduce", "--preset", "smoke", "--out", "new", "--scheduler", "tcp://127.0.0.1:1"],
        "scheduler=",
    ),
    (
        "reproduce-floor-contexts",
        ["reproduce", "--preset", "smoke", "--out", "new", "--floor-contexts", "5"],
        "floor-contexts=",
    ),
    # report: read-only on the store, output checked before computing
    ("report-out-unwritable", ["report", "--store", "store.sqlite", "--out", UNWRITABLE], "out="),
    ("report-out-is-a-file", ["report", "--store", "store.sqlite", "--out", "notes.txt"], "out="),
    ("report-store-empty", ["report", "--store", "empty.sqlite", "--out", "r"], "store="),
    ("report-store-foreign", ["report", "--store", "foreign.sqlite", "--out", "r"], "store="),
    ("report-store-text", ["report", "--store", "notes.txt", "--out", "r"], "store="),
    ("report-store-missing", ["report", "--store", "missing.sqlite", "--out", "r"], "store="),
    (
        "report-reference-contexts",
        ["report", "--store", "store.sqlite", "--out", "r", "--reference-contexts", "3"],
        "reference-contexts=",
    ),
    # fit: read-only on the store
    ("fit-store-foreign", ["fit", "--store", "foreign.sqlite"], "store="),
    ("fit-store-empty", ["fit", "--store", "empty.sqlite"], "store="),
    ("fit-store-text", ["fit", "--store", "notes.txt"], "store="),
    ("fit-store-dir", ["fit", "--store", "."], "store="),
    ("fit-kind", ["fit", "--store", "store.sqlite", "--kind", "spline"], "kind="),
    ("fit-n-boot", ["fit", "--store", "store.sqlite", "--n-boot", "-1"], "n-boot="),
    ("fit-model", ["fit", "--store", "store.sqlite", "--model", "rnn"], "model="),
    # sweep: creates a store only at a new path or an empty file
    ("sweep-store-foreign", ["sweep", "grid.toml", "--store", "foreign.sqlite"], "store="),
    ("sweep-store-text", ["sweep", "grid.toml", "--store", "notes.txt"], "store="),
    ("sweep-grid-not-toml", ["sweep", "notes.txt", "--store", "new.sqlite"], "grid="),
    ("sweep-grid-missing", ["sweep", "missing.toml", "--store", "new.sqlite"], "grid="),
    ("sweep-workers", ["sweep", "grid.toml", "--store", "new.sqlite", "--workers", "0"], "workers="),
    (
        "sweep-scheduler-unreachable",
        ["sweep", "grid.toml", "--store", "new.sqlite", "--scheduler", "tcp://127.0.0.1:1"],
        "scheduler=",
    ),
    ("sweep-scheduler-address", ["sweep", "grid.toml", "--store", "new.sqlite", "--scheduler", "nohost"], "scheduler="),
    (
        "sweep-scheduler-serial",
        ["sweep", "grid.toml", "--store", "new.sqlite", "--executor", "serial", "--scheduler", "tcp://127.0.0.1:1"],
        "scheduler=",
    ),
    ("sweep-memory", ["sweep", "big.toml", "--store", "new.sqlite"], "d=100000, P=1000000"),
    ("sweep-run-fn", ["sweep", "grid.toml", "--store", "new.sqlite", "--run-fn", "nomodule:run"], "run-fn="),
    # simulate: memory estimated before anything is allocated
    ("simulate-memory", ["simulate", "--d", "100000", "--P", "1000000"], "d=100000, P=1000000"),
    ("simulate-eval-memory", ["simulate", "--eval-contexts", "100000000000"], "eval-contexts="),
    ("simulate-d", ["simulate", "--d", "0"], "d="),
    ("simulate-eval-one", ["simulate", "--eval-contexts", "1"], "eval_contexts=1"),
    ("simulate-P", ["simulate", "--P", "10000000"], "P="),
    ("simulate-lr-nan", ["simulate", "--lr", "nan"], "lr="),
    ("simulate-steps", ["simulate", "--steps", "-1"], "steps="),
    ("simulate-batch", ["simulate", "--batch", "0"], "batch="),
    ("simulate-variant", ["simulate", "--variant", "wide"], "variant="),
    ("simulate-width", ["simulate", "--d", "16", "--width", "3"], "width="),
    ("simulate-seed", ["simulate", "--seed", "-1"], "seed="),
    ("simulate-init-scale", ["simulate", "--init-scale", "0"], "init_scale="),
    # predict
    ("floor-P-limit", FLOOR + ["--d", "100000", "--P", "10000000"], "P="),
    ("floor-memory", FLOOR + ["--d", "100000", "--P", "1000000"], "d=100000, P=1000000"),
    (
        "floor-contexts-memory",
        "predict floor --a 1 --b 1 --k 2 --d 8 --P 32 --contexts 100000000000 --seed 0".split(),
        "contexts=",
    ),
    ("floor-k", FLOOR + ["--d", "16", "--P", "8", "--k", "9"], "k="),
    ("linear-optimum-depths", OPTIMUM + ["--depths", "1,128"], "depths="),
    ("linear-optimum-memory", OPTIMUM + ["--depths", "4", "--contexts", "100000000000"], "contexts=100000000000"),
    ("linear-optimum-task", OPTIMUM + ["--depths", "4", "--task", "topk"], "task="),
    ("linear-work", LINEAR + ["--d", "10000000", "--depths", "4096"], "depths="),
    ("linear-depth-limit", LINEAR + ["--d", "100", "--depths", "8,5000"], "depths="),
    ("linear-depths-zero", LINEAR + ["--d", "100", "--depths", "0"], "depths="),
    ("linear-depths-text", LINEAR + ["--d", "100", "--depths", "8,x"], "depths="),
    ("linear-depths-empty-item", LINEAR + ["--d", "100", "--depths", "1,,2"], "depths="),
    ("linear-depths-repeated", LINEAR + ["--d", "100", "--depths", "2,1,2"], "repeated"),
    ("fit-kind-trailing-comma", ["fit", "--store", "store.sqlite", "--kind", "offset,"], "kind="),
    ("linear-d", LINEAR + ["--d", "100000000", "--depths", "4"], "d="),
    ("linear-a", ["predict", "linear", "--a", "-1", "--b", "1", "--d", "10", "--depths", "4"], "a="),
    ("clt-r", CLT + ["--model", "ar1", "--r", "1"], "r="),
    ("clt-foreign-parameter", CLT + ["--model", "iid", "--r", "0.5"], "r="),
    ("clt-model", CLT + ["--model", "gauss"], "model="),
    (
        "clt-sigma2-inf",
        ["predict", "clt", "--model", "iid", "--depths", "1", "--sigma2", "inf", "--shared", "1"],
        "sigma2=",
    ),
    # the parser itself
    ("unknown-command", ["frobnicate"], "command"),
    # a bare `depthscale` is no error: it lists the commands (tests/test_first_hour.py)
    ("predict-missing-what", ["predict"], "{linear,floor,clt,softmax-floor,linear-optimum}"),
    ("unknown-option", ["fit", "--store", "store.sqlite", "--colour"], "--colour"),
    ("bad-int", ["simulate", "--d", "ten"], "--d"),
    ("bad-int-names-the-range", ["simulate", "--depth", "abc"], "expected: number of layers L, 1 <= L <="),
    ("derive-out-special-file", ["derive", "linear", "--out", os.devnull], "not a special file"),
    ("infer-scale-floors-directory", ["infer-scale", "--d", "16", "--P", "128", "--floors", "."], "not a directory"),
    ("fit-store-empty-path", ["fit", "--store", ""], "store=''"),
    ("sweep-store-empty-path", ["sweep", "grid.toml", "--store", ""], "store=''"),
    ("floor-seed-beyond-64-bit", FLOOR[:-1] + ["99999999999999999999", "--d", "4", "--P", "8"], "seed="),
    ("simulate-threads-beyond-cores", ["simulate", "--threads", "100000"], "threads="),
    # issue 21: an overflowing loss is refused by name (no numpy warning); a repeated column is refused
    (
        "clt-overflow",
        ["predict", "clt", "--model", "iid", "--depths", "1", "--sigma2", "1e308", "--shared", "1e308"],
        "sigma2=",
    ),
    (
        "linear-a-overflows",
        ["predict", "linear", "--a", "1e308", "--b", "0.5", "--d", "100000", "--depths", "4"],
        "a=1e+308",
    ),
    ("infer-scale-two-L0-columns", ["infer-scale", "--d", "8", "--P", "16", "--floors", "twol0.csv"], "L0 appear"),
]


def _prepare(directory: Path) -> None:
    from depthscale.sims.config import RunConfig, TaskConfig
    from depthscale.sims.grid import run_key
    from depthscale.sims.store import Store

    con = sqlite3.connect(directory / "foreign.sqlite")
    con.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT)")
    con.execute("INSERT INTO notes (text) VALUES ('not yours')")
    con.commit()
    con.close()
    (directory / "empty.sqlite").write_bytes(b"")
    (directory / "notes.txt").write_text("name,value\na,1\n")
    (directory / "twol0.csv").write_text("task,k,a,b,L0,L0\ntopk,2,0,0,1.9,2.5\n")
    (directory / "big.toml").write_text("seeds = [0]\n[task]\nd = 100000\nP = 1000000\n")
    (directory / "grid.toml").write_text("seeds = [0]\n[task]\nd = 4\nP = 16\n[train]\nsteps = 2\nbatch = 4\n")
    cfg = RunConfig(TaskConfig(d=4, P=16))
    with Store(directory / "store.sqlite", mode="write") as st:
        st.put(
            {
                "key": run_key(cfg, 0),
                "config": cfg.to_dict(),
                "seed": 0,
                "status": "ok",
                "reason": None,
                "converged": True,
                "final_loss": 0.5,
                "C_L": float("nan"),
            }
        )
    con = sqlite3.connect(directory / "store.sqlite")
    con.execute("PRAGMA journal_mode=DELETE")  # one file, so the copy below is the whole store
    con.close()
    (directory / "corrupt.sqlite").write_bytes((directory / "store.sqlite").read_bytes())
    con = sqlite3.connect(directory / "corrupt.sqlite")
    con.execute("UPDATE runs SET record = '{not json'")
    con.commit()
    con.close()


def _snapshot(directory: Path) -> dict:
    """Every path under ``directory`` with its bytes (None for a directory)."""
    return {
        str(p.relative_to(directory)): (None if p.is_dir() else p.read_bytes()) for p in sorted(directory.rglob("*"))
    }


def _run(argv, cwd, **kw):
    return subprocess.run(CLI + list(argv), cwd=cwd, capture_output=True, text=True, timeout=300, **kw)


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    d = tmp_path_factory.mktemp("cli")
    _prepare(d)
    return d


def test_a_garbled_record_is_one_warning_naming_the_store_and_the_run(workdir):
    # a malformed row is left out with one line naming it, and the rest of the store reads (here: none)
    before = _snapshot(workdir)
    proc = _run(["fit", "--store", "corrupt.sqlite"], workdir)
    lines = proc.stderr.splitlines()
    assert proc.returncode == 0 and len(lines) == 1, proc.stderr
    assert lines[0].startswith("depthscale: warning: store='corrupt.sqlite': run '") and "not valid JSON" in lines[0]
    assert _snapshot(workdir) == before


@pytest.mark.parametrize("argv, names", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_input_is_one_line_exit_2_and_touches_nothing(workdir, argv, names):
    if any(a.startswith(UNWRITABLE) for a in argv) and not os.path.isdir("/proc/self"):
        pytest.skip("needs Linux /proc as an unwritable place")
    before = _snapshot(workdir)
    proc = _run(argv, workdir)
    lines = proc.stderr.splitlines()
    assert proc.returncode == 2, proc.stderr
    assert len(lines) == 1 and lines[0].startswith("depthscale: error: "), proc.stderr
    assert names in lines[0], lines[0]
    assert proc.stdout == ""
    assert _snapshot(workdir) == before  # nothing created, nothing changed, byte for byte


@pytest.mark.skipif(os.geteuid() == 0 if hasattr(os, "geteuid") else True, reason="root writes through permission bits")
def test_read_only_directory_by_permissions(tmp_path):
    _prepare(tmp_path)
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o555)
    try:
        for argv in (
            ["derive", "linear", "--out", "ro/d.md"],
            ["report", "--store", "store.sqlite", "--out", "ro/r"],
            ["reproduce", "--preset", "smoke", "--out", "ro/r"],
        ):
            before = _snapshot(tmp_path)
            proc = _run(argv, tmp_path)
            assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "out=" in proc.stderr, proc.stderr
            assert _snapshot(tmp_path) == before
    finally:
        ro.chmod(0o755)


def test_special_paths_are_refused_for_what_they_are(tmp_path):
    # issue 21: a pipe given as floors is not "no such file" (and reading it would block); an --out
    # that is a symbolic link to itself is refused before the report is computed
    _prepare(tmp_path)
    if hasattr(os, "mkfifo"):
        os.mkfifo(tmp_path / "pipe")
        proc = _run(["infer-scale", "--d", "8", "--P", "16", "--floors", "pipe"], tmp_path)
        assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
        assert "floors='pipe'" in proc.stderr and "pipe" in proc.stderr.split(":", 2)[2]
    (tmp_path / "loop").symlink_to("loop")
    proc = _run(["report", "--store", "store.sqlite", "--out", "loop"], tmp_path)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
    assert "out='loop'" in proc.stderr and "symbolic link" in proc.stderr


def test_reproduce_with_a_budget_too_short_for_any_run_says_so_and_writes_no_report(tmp_path):
    proc = _run(["reproduce", "--preset", "smoke", "--out", "r", "--budget", "1s", "--quiet"], tmp_path)
    assert proc.returncode == 1, proc.stderr
    assert "too short to start any of the 49 missing run(s)" in proc.stderr and "no report written" in proc.stderr
    assert sorted(p.name for p in (tmp_path / "r").iterdir()) == ["store.sqlite"]  # resumable, no report
    assert proc.stdout == ""


def test_foreign_sqlite_keeps_its_journal_mode(workdir):
    # the foreign database was created in rollback-journal mode; reading commands must not switch it to WAL
    for argv in (["fit", "--store", "foreign.sqlite"], ["report", "--store", "foreign.sqlite", "--out", "r"]):
        assert _run(argv, workdir).returncode == 2
    con = sqlite3.connect(workdir / "foreign.sqlite")
    assert con.execute("PRAGMA journal_mode").fetchone()[0] == "delete"
    assert con.execute("SELECT name FROM sqlite_master").fetchall() == [("notes",)]
    con.close()


def test_fit_reads_a_store_without_writing_it(workdir):
    before = _snapshot(workdir)
    proc = _run(["fit", "--store", "store.sqlite", "--json"], workdir)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout, parse_constant=_refuse)["store"] == "store.sqlite"
    assert _snapshot(workdir) == before  # no -wal/-shm files left, no bytes changed


# -- strict JSON from every --json output ---------------------------------------------------------
def _refuse(constant):
    raise ValueError(f"not JSON: {constant}")


@pytest.mark.parametrize(
    "argv",
    [
        LINEAR + ["--d", "200", "--depths", "1,4,16", "--json"],
        "predict linear --a 0.5 --b 0.2 --d 50 --depths 2 --json".split(),  # laws that do not apply: null
        CLT + ["--model", "ar1", "--r", "0.5", "--json"],
        "predict floor --a 1 --b 1 --k 2 --d 8 --P 32 --contexts 20 --seed 0 --json".split(),
    ],
    ids=["linear", "linear-not-asymptotic", "clt", "floor"],
)
def test_json_outputs_parse_strictly(workdir, argv):
    proc = _run(argv, workdir)
    assert proc.returncode == 0, proc.stderr
    json.loads(proc.stdout, parse_constant=_refuse)


def test_emit_writes_null_for_nan(capsys):
    from depthscale.derivations.cli.app import emit

    emit({"C_L": float("nan"), "rows": [{"x": float("-inf"), "y": 1.5}]}, as_json=True)
    out = capsys.readouterr().out
    assert json.loads(out, parse_constant=_refuse) == {"C_L": None, "rows": [{"x": None, "y": 1.5}]}


# -- the parser: version, help everywhere, no silent skips, light imports -------------------------
def test_version(workdir):
    from importlib import metadata

    proc = _run(["--version"], workdir)
    assert proc.returncode == 0 and proc.stdout.strip() == f"depthscale {metadata.version('depthscale')}"


def _all_parsers(parser, path=()):
    import argparse

    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _all_parsers(sub, path + (name,))


def test_every_option_of_every_command_has_help():
    from depthscale.derivations.cli.app import build_parser

    missing = []
    commands = set()
    for path, parser in _all_parsers(build_parser()):
        commands.add(path)
        for action in parser._actions:
            if action.option_strings and action.help in (None, "") and action.dest != "help":
                missing.append(f"{' '.join(path)} {'/'.join(action.option_strings)}")
            if (
                not action.option_strings
                and action.help in (None, "")
                and action.dest not in ("command", "predict_command")
            ):
                missing.append(f"{' '.join(path)} {action.dest}")
    assert not missing, missing
    assert ("predict", "floor") in commands and ("reproduce",) in commands


def test_a_missing_command_module_fails_loudly(monkeypatch):
    from depthscale.derivations.cli import app as cli

    monkeypatch.setattr(cli, "COMMANDS", cli.COMMANDS + ("no_such_command",))
    with pytest.raises(ModuleNotFoundError, match="no_such_command"):
        cli.build_parser()


LIGHT = textwrap.dedent(
    """
    import sys
    from depthscale.derivations.cli import app as cli
    try:
        cli.main(sys.argv[1:])
    except SystemExit:
        pass
    print(sorted(m for m in ("sympy", "numba", "matplotlib", "scipy", "jinja2") if m in sys.modules))
    """
)


@pytest.mark.parametrize(
    "argv",
    [
        ["--help"],
        ["predict", "linear", "--help"],
        ["derive", "--help"],
        ["simulate", "--help"],
        ["sweep", "--help"],
        ["fit", "--help"],
        ["report", "--help"],
        ["reproduce", "--help"],
        ["fit", "--store", "missing.sqlite"],
        ["simulate", "--d", "0"],
        # the memory refusal comes before numba loads (it was about a second under load)
        ["simulate", "--variant", "context-update", "--d", "8", "--P", "100000", "--depth", "2", "--batch", "1"],
        ["reproduce", "--preset", "tiny", "--out", "o"],  # the names are read from the preset folders
        ["reproduce", "--preset", "smoke", "--out", "o", "--workers", "0"],  # checked before the study loads
        ["reproduce", "--preset", "smoke", "--out", "o", "--floor-contexts", "5"],
        ["predict", "softmax-floor", "--a", "0", "--b", "0", "--contexts", "64", "--seed", "0", "--attention", "Relu"],
        ["report", "--preset", "tiny", "--store", "store.sqlite", "--out", "o"],
        ["derive", "linear", "--out", "notes.txt/x.md"],
        LINEAR + ["--d", "10000000", "--depths", "4096"],
    ],
)
def test_light_commands_import_nothing_heavy(workdir, argv):
    proc = subprocess.run(
        [sys.executable, "-c", LIGHT, *argv], cwd=workdir, capture_output=True, text=True, timeout=120
    )
    assert proc.stdout.strip().splitlines()[-1] == "[]", proc.stdout + proc.stderr


@pytest.mark.parametrize("argv", [["--help"], ["fit", "--help"], ["report", "--help"]])
def test_help_does_not_import_numpy(workdir, argv):
    # every command module is imported to build the parser: none may import numpy at module level
    code = LIGHT.replace('("sympy", "numba", "matplotlib", "scipy", "jinja2")', '("numpy",)')
    proc = subprocess.run([sys.executable, "-c", code, *argv], cwd=workdir, capture_output=True, text=True, timeout=120)
    assert proc.stdout.strip().splitlines()[-1] == "[]", proc.stdout + proc.stderr


# -- Ctrl-C of reproduce ----------------------------------------------------------------------------
SLOW_MODULE = textwrap.dedent(
    """
    import time

    def slow_run(config, seed):
        time.sleep(0.3)
        return {"status": "ok", "converged": True, "final_loss": 1.0 + config.model.depth + seed / 100}

    def slow_group(configs, seed, **options):  # the engine's lockstep job (options: snapshots): one record per config
        return [slow_run(c, seed) for c in configs]
    """
)

# `reproduce` with a tiny grid in place of the preset and a sleeping run function in place of the engine.
DRIVER = textwrap.dedent(
    """
    import signal
    import sys
    sys.path.insert(0, sys.argv[1])
    # as in a terminal: a parent started in the background (shell `&`) passes SIGINT on as ignored
    signal.signal(signal.SIGINT, signal.default_int_handler)
    from slowmod import slow_group, slow_run
    import depthscale.sims.runner
    from depthscale.derivations.cli.commands import reproduce
    from depthscale.derivations.cli.app import main
    from depthscale.sims.grid import load_grid

    def tiny_grid(name):
        return load_grid({"seeds": list(range(6)), "task": {"d": 4, "P": 16}, "model": {"depth": [1, 2, 3, 4, 5]}})

    if __name__ == "__main__":  # process-pool workers re-import this file
        depthscale.sims.runner.run = slow_run
        depthscale.sims.runner.run_group = slow_group
        reproduce.preset_runs = tiny_grid
        sys.exit(main(sys.argv[2:]))
    """
)


def _stat(pid) -> list[str]:
    """State and parent of a process from Linux /proc (empty when it is gone or there is no /proc)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[:2]
    except (OSError, IndexError):
        return []


def _children(pid: int) -> set[int]:
    """PIDs of the live processes whose parent is ``pid``."""
    return {int(p.name) for p in Path("/proc").glob("[0-9]*") if _stat(p.name)[1:] == [str(pid)]}


def _running(pids) -> set[int]:
    return {p for p in pids if _stat(p)[:1] not in ([], ["Z"])}


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
@pytest.mark.parametrize("executor", ["serial", pytest.param("process", marks=pytest.mark.slow)])
def test_ctrl_c_of_reproduce_exits_130_with_the_store_intact(tmp_path, executor, sig):
    # SIGTERM (kill, a scheduler's time limit) takes the same path as Ctrl-C: workers stopped, store whole.
    from depthscale.sims.store import Store

    (tmp_path / "slowmod.py").write_text(SLOW_MODULE)
    (tmp_path / "driver.py").write_text(DRIVER)
    out, store = tmp_path / "out", tmp_path / "out" / "store.sqlite"
    argv = [
        "reproduce",
        "--preset",
        "smoke",
        "--out",
        str(out),
        "--executor",
        executor,
        "--floor-contexts",
        "10",
        "--reference-contexts",
        "0",
    ] + (["--workers", "2"] if executor == "process" else [])
    proc = subprocess.Popen(
        [sys.executable, str(tmp_path / "driver.py"), str(tmp_path), *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        t0 = time.time()
        while True:
            assert proc.poll() is None, proc.communicate()
            assert time.time() - t0 < 120, "no run was stored in time"
            if store.exists():
                try:
                    con = sqlite3.connect(store, timeout=5)
                    n = con.execute("SELECT COUNT(*) FROM runs").fetchone()[0]
                    con.close()
                    if n >= 3:
                        break
                except sqlite3.OperationalError:  # tables not created yet
                    pass
            time.sleep(0.05)
        workers = _children(proc.pid)
        proc.send_signal(sig)
        stdout, stderr = proc.communicate(timeout=60)  # stops promptly: no report is computed
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, stderr
    t0 = time.time()  # no worker outlives the command (one left running would compute for nobody)
    while _running(workers) and time.time() - t0 < 10:
        time.sleep(0.1)
    assert not _running(workers), workers
    progress = [ln for ln in stderr.splitlines() if ln.startswith("depthscale: run ")]
    final = [ln for ln in stderr.splitlines() if not ln.startswith("depthscale: run ")]
    assert len(progress) >= 3, stderr  # stderr is not a terminal: one line per finished run
    assert len(final) == 1 and "interrupted" in final[0] and "rerun the same command to resume" in final[0], stderr
    assert stdout == "" and not (out / "report.md").exists()  # no report presented as finished
    con = sqlite3.connect(store)
    assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    con.close()
    with Store(store, mode="read") as st:
        recs = list(st.records())
    assert 3 <= len(recs) < 30 and all(r["status"] == "ok" for r in recs)
    for r in recs:  # the finished runs are whole
        assert r["final_loss"] == 1.0 + r["config"]["model"]["depth"] + r["seed"] / 100


def test_report_of_an_incomplete_store_says_so_first():
    from depthscale.derivations.cli.commands.reproduce import missing_sentence
    from depthscale.sims.grid import load_grid, run_key

    runs = load_grid({"seeds": [0, 1], "model": {"depth": [1, 2, 3]}})
    keys = [run_key(c, s) for c, s in runs]
    statuses = {keys[0]: "ok", keys[1]: "diverged", keys[2]: "failed"}
    text = missing_sentence("smoke", runs, statuses)
    assert text.startswith("Incomplete: 2 of 6 runs of the preset 'smoke' finished")
    assert missing_sentence("smoke", runs, {k: "ok" for k in keys}) is None


@pytest.mark.parametrize(
    "exc, words",
    [
        (PermissionError(13, "Permission denied", "/somewhere/report.md"), "/somewhere/report.md: Permission denied"),
        (MemoryError(), "out of memory"),
        (ValueError("d=3: must be even\nsecond line"), "d=3: must be even"),
    ],
)
def test_errors_at_the_command_boundary_are_one_line(monkeypatch, capsys, exc, words):
    # whatever a handler raises past its own checks (an OSError while writing, a MemoryError) ends as
    # one line and exit status 2, not a traceback
    from depthscale.derivations.cli import app as cli
    from depthscale.derivations.cli.commands import predict

    def fail(args):
        raise exc

    monkeypatch.setattr(predict, "handle_clt", fail)
    code = cli.main(CLT + ["--model", "iid"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and err.startswith("depthscale: error: ") and words in err, err

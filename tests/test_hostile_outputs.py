"""Hostile outputs (issue 40, "nothing a user types loses their runs"): an output is never written over
one of the command's inputs, however it is spelled; a store path is a file name, never an SQLite URI;
``store compact`` refuses what it cannot read and leaves nothing a kill interrupted; an output that
cannot be written is refused before any work, and a failed write leaves the previous output whole.

Every refusal is one line (exit status 2 on the command line, a ``ValueError`` in Python) naming the
parameter, with nothing created or changed. "Before any work" is checked by making the work itself
fail the test (the report's build, the sweep, the derivation), never by timing."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from depthscale.derivations.cli.app import main
from depthscale.sims.store import Store, compact_store


def _record(i: int) -> dict:
    return {
        "key": f"h{i}-{i}",
        "seed": i,
        "status": "ok",
        "reason": None,
        "final_loss": 0.5 + i,
        "config": {"task": {"task": "topk", "k": 2, "d": 4, "P": 16}, "model": {"model": "softmax", "depth": 1 + i}},
        "arrays": {"sq_err": np.linspace(0.0, 1.0, 50), "theta": np.zeros(20)},
    }


def _store(path, n: int = 3) -> Path:
    """A store of ``n`` runs in one file (no -wal), so its bytes are the whole store."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with Store(path, mode="write") as st:
        for i in range(n):
            st.put(_record(i))
    con = sqlite3.connect(path)
    con.execute("PRAGMA journal_mode=DELETE")
    con.close()
    return path


def _snapshot(directory: Path) -> dict:
    """Every path under ``directory`` (links as links) with its bytes or link target."""
    out = {}
    for p in sorted(directory.rglob("*")):
        rel = str(p.relative_to(directory))
        out[rel] = os.readlink(p) if p.is_symlink() else (None if p.is_dir() else p.read_bytes())
    return out


def _refused(capsys, argv, *words) -> str:
    code = main(argv)
    out, err = capsys.readouterr()
    assert code == 2 and out == "" and err.count("\n") == 1 and err.startswith("depthscale: error: "), (code, err)
    for word in words:
        assert word in err, err
    return err


@pytest.fixture
def no_work(monkeypatch):
    """The work each command does after its checks fails the test: a refusal must come first."""
    import depthscale.derivations.cli.commands.reproduce as reproduce
    import depthscale.derivations.cli.commands.sweep as sweep_cmd
    import depthscale.derivations.report.reporting as reporting
    import depthscale.theory.derivation as derivation

    def work(*args, **kwargs):
        raise AssertionError("the work started before the refusal")

    monkeypatch.setattr(reporting, "build_context", work)
    monkeypatch.setattr(reproduce, "run_sweep", work)
    monkeypatch.setattr(sweep_cmd, "run_sweep", work)
    monkeypatch.setattr(derivation, "build_derivation", work)


# -- 1. an output written over an input --------------------------------------------------------------
def _hard_link(src: Path, dst: Path) -> Path:
    dst.parent.mkdir(parents=True, exist_ok=True)
    os.link(src, dst)
    return src


def _output_over_input_cases(d: Path) -> dict:
    """``{case: (argv, words the line names)}``; the files are made in ``d``, the current directory."""
    (d / "real").mkdir()
    (d / "link").symlink_to("real")
    (d / "empty").mkdir()
    (d / "g.toml").write_text("seeds = [0]\n")
    return {
        "report: store is OUT/report.md": (
            ["report", "--store", str(_store(d / "out" / "report.md")), "--out", "out"],
            ("out='out'", "report.md", "store="),
        ),
        "report: store is OUT/report.html": (
            ["report", "--store", str(_store(d / "h" / "report.html")), "--out", "h"],
            ("out='h'", "store="),
        ),
        "report: store is OUT/claims.json": (
            ["report", "--store", str(_store(d / "c" / "claims.json")), "--out", "c"],
            ("out='c'", "store="),
        ),
        "report: store spelled through a link to OUT": (
            ["report", "--store", str(_store(d / "real" / "report.md")), "--out", "link"],
            ("out='link'", "store="),
        ),
        "report: OUT spelled with ..": (
            ["report", "--store", str(_store(d / "o2" / "report.tex")), "--out", "o2/../o2"],
            ("out='o2/../o2'", "store="),
        ),
        "report: OUT/report.md a hard link to the store": (
            ["report", "--store", str(_hard_link(_store(d / "hl.sqlite"), d / "o3" / "report.md")), "--out", "o3"],
            ("out='o3'", "store="),
        ),
        "reproduce: new store at OUT/report.md": (
            ["reproduce", "--preset", "smoke", "--store", "empty/report.md", "--out", "empty"],
            ("out='empty'", "store='empty/report.md'"),
        ),
        "reproduce: existing store at OUT/figures/x.png": (
            ["reproduce", "--preset", "smoke", "--store", str(_store(d / "f" / "figures" / "x.png")), "--out", "f"],
            ("out='f'", "store="),
        ),
        "sweep: store is the grid": (["sweep", "g.toml", "--store", "./g.toml"], ("store='./g.toml'", "grid=")),
        "store compact: dst is the source's -wal": (
            ["store", "compact", str(_store(d / "s.sqlite")), "s.sqlite-wal"],
            ("dst='s.sqlite-wal'", "src="),
        ),
    }


_OVER_INPUT_IDS = [
    "report: store is OUT/report.md",
    "report: store is OUT/report.html",
    "report: store is OUT/claims.json",
    "report: store spelled through a link to OUT",
    "report: OUT spelled with ..",
    "report: OUT/report.md a hard link to the store",
    "reproduce: new store at OUT/report.md",
    "reproduce: existing store at OUT/figures/x.png",
    "sweep: store is the grid",
    "store compact: dst is the source's -wal",
]


@pytest.mark.timeout(120)
@pytest.mark.parametrize("case", _OVER_INPUT_IDS)
def test_no_command_writes_an_output_over_one_of_its_inputs(tmp_path, monkeypatch, capsys, no_work, case):
    monkeypatch.chdir(tmp_path)
    cases = _output_over_input_cases(tmp_path)
    assert sorted(cases) == sorted(_OVER_INPUT_IDS)
    argv, words = cases[case]
    before = _snapshot(tmp_path)
    _refused(capsys, argv, *words)
    assert _snapshot(tmp_path) == before  # every store byte-identical, nothing created


@pytest.mark.parametrize("mode", ["read", "write"])
@pytest.mark.parametrize("export", ["export_csv", "export_json"])
@pytest.mark.parametrize("spelling", ["same", "through a link", "its -wal"])
def test_a_store_is_never_exported_over_itself(tmp_path, monkeypatch, mode, export, spelling):
    monkeypatch.chdir(tmp_path)
    _store("s.sqlite")
    Path("alias.sqlite").symlink_to("s.sqlite")
    target = {"same": "s.sqlite", "through a link": "alias.sqlite", "its -wal": "s.sqlite-wal"}[spelling]
    with Store("s.sqlite", mode=mode) as st:
        before = _snapshot(tmp_path)
        with pytest.raises(ValueError, match=f"path={target!r}: .*store=") as info:
            getattr(st, export)(target)
        assert str(info.value).count("\n") == 0
        assert _snapshot(tmp_path) == before
        assert len(st) == 3
    with Store("s.sqlite") as st:  # every run still there
        assert st.keys() == ["h0-0", "h1-1", "h2-2"]


# -- 2. a store path read as a URI ---------------------------------------------------------------------
def _foreign(path: Path) -> bytes:
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE notes (text TEXT)")
    con.execute("INSERT INTO notes VALUES ('not yours')")
    con.commit()
    con.close()
    return path.read_bytes()


@pytest.mark.parametrize("name", ["file:x.sqlite", "file:x.sqlite?mode=memory", "file:x.sqlite#a%41"])
def test_a_store_path_is_a_file_name_never_an_sqlite_uri(tmp_path, monkeypatch, name):
    monkeypatch.chdir(tmp_path)
    foreign = _foreign(tmp_path / "x.sqlite")
    with Store(name, mode="write") as st:
        st.put(_record(0))
    assert (tmp_path / "x.sqlite").read_bytes() == foreign  # another application's file: not a byte changed
    assert (tmp_path / name).is_file()  # the file of that very name, here, which keeps the run
    with Store(name) as st:
        assert st.keys() == ["h0-0"]
    with Store(tmp_path / name) as st:  # the same file, named by its absolute path
        assert st.keys() == ["h0-0"]


def test_sweep_into_a_store_named_file_colon_keeps_its_runs_in_that_file(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / "fake_runs.py").write_text(
        "def run(config, seed):\n    return {'status': 'ok', 'final_loss': 1.0 / config.model.depth}\n"
    )
    (tmp_path / "g.toml").write_text("seeds = [0]\n[model]\ndepth = [1, 2]\n")
    foreign = _foreign(tmp_path / "x.sqlite")
    for name in ("file:x.sqlite", "file:s.sqlite?mode=memory"):
        argv = ["sweep", "g.toml", "--store", name, "--executor", "serial", "--run-fn", "fake_runs:run", "--quiet"]
        assert main(argv) == 0
        capsys.readouterr()
        with Store(tmp_path / name) as st:  # the runs are in the file of that name
            assert len(st) == 2
    assert (tmp_path / "x.sqlite").read_bytes() == foreign
    assert not (tmp_path / "s.sqlite").exists()


# -- 3. store compact: damaged arrays, an empty destination, a kill ----------------------------------
def _damage_arrays(path: Path, key: str) -> None:
    con = sqlite3.connect(path)
    blob = con.execute("SELECT data FROM arrays WHERE key=?", (key,)).fetchone()[0]
    con.execute("UPDATE arrays SET data=? WHERE key=?", (blob[: len(blob) // 2], key))  # a zip cut in half
    con.commit()
    con.close()


def test_store_compact_refuses_damaged_arrays_and_an_empty_destination_in_one_line(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    _damage_arrays(_store("s.sqlite"), "h1-1")
    before = _snapshot(tmp_path)
    with pytest.raises(ValueError, match=r"src='s.sqlite': the arrays of run 'h1-1' are damaged"):
        compact_store("s.sqlite", "c.sqlite")
    _refused(capsys, ["store", "compact", "s.sqlite", "c.sqlite"], "src='s.sqlite'", "'h1-1'")
    with pytest.raises(ValueError, match=r"^dst='': must be a file path$"):
        compact_store("s.sqlite", "")
    _refused(capsys, ["store", "compact", "s.sqlite", ""], "dst=''")
    assert _snapshot(tmp_path) == before  # no copy, no temporary file


_KILLED_COMPACT = """
import os, signal, sys
import depthscale.sims.store as store

calls = []
real = store.compact_arrays


def compact_then_die(arrays):
    calls.append(1)
    if len(calls) == 2:  # the copy is half written
        os.kill(os.getpid(), signal.SIGKILL)
    return real(arrays)


store.compact_arrays = compact_then_die
store.compact_store(sys.argv[1], sys.argv[2])
"""


def test_a_killed_store_compact_leaves_nothing_the_next_run_keeps(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    _store("s.sqlite", n=4)
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(_KILLED_COMPACT), "s.sqlite", "c.sqlite"])
    assert proc.returncode == -signal.SIGKILL
    left = sorted(p.name for p in tmp_path.iterdir())
    assert "c.sqlite" not in left and [n for n in left if not n.startswith(".")] == ["s.sqlite"]  # nothing in sight
    assert main(["store", "compact", "s.sqlite", "c.sqlite", "--json"]) == 0
    capsys.readouterr()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.sqlite", "s.sqlite"]  # the leftovers are gone
    with Store("c.sqlite") as st:
        assert st.keys() == ["h0-0", "h1-1", "h2-2", "h3-3"]


# -- 4. refused before any work: links to nothing, entries in the way, names too long; writes whole ---
def _before_any_work_cases(d: Path) -> dict:
    _store(d / "s.sqlite")
    for name in ("fig-file", "fig-dangling", "fig-loop", "claims-dir", "link-dir"):
        (d / name).mkdir()
    (d / "fig-file" / "figures").write_text("not a folder")
    (d / "fig-dangling" / "figures").symlink_to("nowhere")
    (d / "fig-loop" / "figures").symlink_to("figures")
    (d / "claims-dir" / "claims.json").mkdir()
    (d / "dangling.md").symlink_to("nowhere/d.md")
    (d / "loop.md").symlink_to("loop.md")
    (d / "link-dir" / "derivation-linear.md").symlink_to("nowhere.md")
    report = ["report", "--store", "s.sqlite", "--out"]
    long = "x" * 240  # fits the file system alone, not with what is written beside it
    return {
        "report: OUT/figures is a file": (report + ["fig-file"], "out='fig-file'"),
        "report: OUT/figures is a link to nothing": (report + ["fig-dangling"], "out='fig-dangling'"),
        "report: OUT/figures is a loop of links": (report + ["fig-loop"], "out='fig-loop'"),
        "report: OUT/claims.json is a folder": (report + ["claims-dir"], "out='claims-dir'"),
        "report: OUT's name too long": (report + [long], "out='xxx"),
        "reproduce: OUT/figures is a file": (["reproduce", "--preset", "smoke", "--out", "fig-file"], "out='fig-file'"),
        "reproduce: store name too long": (
            ["reproduce", "--preset", "smoke", "--out", "new", "--store", "new/" + "y" * 250],
            "store='new/yyy",
        ),
        "derive: --out a link to nothing": (["derive", "linear", "--out", "dangling.md"], "out='dangling.md'"),
        "derive: --out a loop of links": (["derive", "linear", "--out", "loop.md"], "out='loop.md'"),
        "derive: its file in --out a link to nothing": (["derive", "linear", "--out", "link-dir"], "out="),
        "derive: --out name too long": (["derive", "linear", "--out", long + ".md"], "out='xxx"),
        "derive: --out folder's name too long": (["derive", "linear", "--out", "n/" + "z" * 260], "out='n/zzz"),
        "sweep: store name too long": (["sweep", "g.toml", "--store", "y" * 250], "store='yyy"),
    }


_BEFORE_WORK_IDS = [
    "report: OUT/figures is a file",
    "report: OUT/figures is a link to nothing",
    "report: OUT/figures is a loop of links",
    "report: OUT/claims.json is a folder",
    "report: OUT's name too long",
    "reproduce: OUT/figures is a file",
    "reproduce: store name too long",
    "derive: --out a link to nothing",
    "derive: --out a loop of links",
    "derive: its file in --out a link to nothing",
    "derive: --out name too long",
    "derive: --out folder's name too long",
    "sweep: store name too long",
]


@pytest.mark.timeout(120)
@pytest.mark.parametrize("case", _BEFORE_WORK_IDS)
def test_an_output_that_cannot_be_written_is_refused_before_any_work(tmp_path, monkeypatch, capsys, no_work, case):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "g.toml").write_text("seeds = [0]\n[model]\ndepth = [1]\n")
    cases = _before_any_work_cases(tmp_path)
    assert sorted(cases) == sorted(_BEFORE_WORK_IDS)
    argv, word = cases[case]
    before = _snapshot(tmp_path)
    _refused(capsys, argv, word)
    assert _snapshot(tmp_path) == before


def test_a_store_name_too_long_is_refused_before_the_file_is_created(tmp_path):
    name = tmp_path / ("y" * 250)  # the store fits, its -journal would not
    with pytest.raises(ValueError, match=r"^store='.*yyy.*: must be a path whose names are at most"):
        Store(name, mode="write")
    assert list(tmp_path.iterdir()) == []


_DERIVE_ON_A_FULL_DISK = """
import resource, signal, sys
from depthscale.derivations.cli.app import main

signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails (EFBIG) as on a full disk
resource.setrlimit(resource.RLIMIT_FSIZE, (2000, 2000))
sys.exit(main(["derive", "linear", "--out", sys.argv[1]]))
"""


@pytest.mark.timeout(300)
def test_derive_on_a_full_disk_leaves_the_previous_output_whole(tmp_path):
    previous = "the previous derivation\n" * 400  # 9,600 bytes: more than the disk takes now
    (tmp_path / "d.md").write_text(previous)
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(_DERIVE_ON_A_FULL_DISK), "d.md"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
    assert (tmp_path / "d.md").read_text() == previous
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d.md"]  # no temporary file left

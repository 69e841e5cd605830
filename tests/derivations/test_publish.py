"""A report folder appears whole or not at all: a process killed at every step of a publication
leaves the complete old folder or the complete new one, and the next publication cleans up."""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from depthscale.derivations.report import publish as pub

OLD = {
    "report.md": b"old md",
    "report.html": b"old html",
    "report.tex": b"old tex",
    "figures/a.png": b"old a",
    "figures/b.png": b"old b",  # drawn by the old report only
}
NEW = {
    "report.md": b"new md",
    "report.html": b"new html",
    "report.tex": b"new tex",
    "figures/a.png": b"new a",
    "claims.json": b"[]",
}
OWNED = {"figures/b.png"}  # the report's own name, not drawn by the new one
FOREIGN = {"store.sqlite": b"the runs", "notes/todo.txt": b"mine", "figures/mine.png": b"my figure"}
REPORT_NAMES = set(OLD) | set(NEW)


def tree(root: Path) -> dict:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def leftovers(out: Path) -> list:
    return sorted(p.name for p in out.parent.iterdir() if p.name.startswith(f".{out.name}.depthscale-"))


def setup(base: Path, existing: bool) -> Path:
    out = base / "report"
    if existing:
        for rel, data in {**OLD, **FOREIGN}.items():
            (out / rel).parent.mkdir(parents=True, exist_ok=True)
            (out / rel).write_bytes(data)
    return out


def report_part(files: dict) -> dict:
    return {k: v for k, v in files.items() if k in REPORT_NAMES}


def check_whole(out: Path, existing: bool) -> str:
    """'old' or 'new': the folder holds exactly one complete report and every foreign file."""
    files = tree(out)
    if existing:
        assert {k: files.get(k) for k in FOREIGN} == FOREIGN
    part = report_part(files)
    if part == report_part(NEW):
        return "new"
    assert existing and part == report_part(OLD), f"a mixed report: {sorted(part)}"
    return "old"


def steps(tmp_path: Path, existing: bool, exchange: bool, monkeypatch) -> list:
    """The names of the steps of one publication (recorded in this process)."""
    seen = []
    monkeypatch.setattr(pub, "_step", seen.append)
    if not exchange:
        monkeypatch.setattr(pub, "_exchange", lambda a, b: False)
    out = setup(tmp_path / "dry", existing)
    out.parent.mkdir(exist_ok=True)
    pub.publish(out, NEW, OWNED)
    assert check_whole(out, existing) == "new" and leftovers(out) == []
    monkeypatch.undo()
    return seen


KILLED = textwrap.dedent(
    """
    import os, sys
    from depthscale.derivations.report import publish as pub
    out, at, exchange = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "1"
    calls = []

    def die(name):
        calls.append(name)
        if len(calls) == at:
            os._exit(9)  # as a kill -9: no cleanup, no finally blocks

    pub._step = die
    if not exchange:
        pub._exchange = lambda a, b: False
    NEW = {new!r}
    pub.publish(out, NEW, {owned!r})
    """
)


@pytest.mark.parametrize("exchange", [True, False], ids=["exchange", "rename-aside"])
@pytest.mark.parametrize("existing", [True, False], ids=["existing-folder", "fresh-folder"])
def test_a_kill_at_any_step_leaves_the_old_or_the_new_report(tmp_path, monkeypatch, existing, exchange):
    if exchange and not pub._exchange(*_two_dirs(tmp_path)):
        pytest.skip("this file system cannot exchange two folders (renameat2)")
    names = steps(tmp_path, existing, exchange, monkeypatch)
    assert any(n.startswith("wrote") for n in names) and names[-1] in ("removed the old folder", "renamed in")
    script = tmp_path / "killed.py"
    script.write_text(KILLED.format(new=NEW, owned=OWNED))
    flip = names.index("exchanged" if existing and exchange else "renamed in")  # the step that shows the new one
    outcomes = []
    for at in range(1, len(names) + 1):
        base = tmp_path / f"kill{at}"
        base.mkdir()
        out = setup(base, existing)
        proc = subprocess.run([sys.executable, str(script), str(out), str(at), str(int(exchange))], capture_output=True)
        assert proc.returncode == 9, proc.stderr.decode()
        if names[at - 1] == "renamed aside":
            # killed between the two renames: no folder, the complete old one aside until the next run
            assert not out.exists()
            (aside,) = [base / n for n in leftovers(out) if ".depthscale-old-" in n]
            assert report_part(tree(aside)) == report_part(OLD)
        elif existing or out.exists():
            state = check_whole(out, existing)
            assert state == ("new" if at > flip else "old")
        else:
            assert at <= flip  # a fresh folder not yet in place: nothing there
        pub.recover(out, set(NEW) | OWNED)  # what the next publication does first
        assert leftovers(out) == []
        if out.exists() or existing:
            outcomes.append(check_whole(out, existing))
        pub.publish(out, NEW, OWNED)  # and then the next publication succeeds
        assert check_whole(out, existing) == "new" and leftovers(out) == []
    assert "new" in outcomes and ("old" in outcomes) == existing


def _two_dirs(tmp_path: Path):
    a, b = tmp_path / "probe-a", tmp_path / "probe-b"
    a.mkdir()
    b.mkdir()
    return a, b


def test_a_file_created_in_the_old_folder_during_the_build_is_kept(tmp_path, monkeypatch):
    # a sweep running on OUT/store.sqlite may create its -wal after the new folder linked the store
    out = setup(tmp_path, existing=True)

    def late(name):
        if name == "built":
            (out / "store.sqlite-wal").write_bytes(b"frames")

    monkeypatch.setattr(pub, "_step", late)
    pub.publish(out, NEW, OWNED)
    files = tree(out)
    assert files["store.sqlite-wal"] == b"frames" and check_whole(out, True) == "new"
    assert "figures/b.png" not in files and files["figures/mine.png"] == b"my figure"
    assert leftovers(out) == []


def test_foreign_files_are_the_same_files_not_copies(tmp_path):
    out = setup(tmp_path, existing=True)
    inode = (out / "store.sqlite").stat().st_ino
    pub.publish(out, NEW, OWNED)
    assert (out / "store.sqlite").stat().st_ino == inode


def test_a_publication_in_progress_is_not_cleaned_up_by_another(tmp_path):
    out = setup(tmp_path, existing=True)
    busy = tmp_path / f".report.depthscale-new-{os.getppid()}-x"  # a living process's build
    busy.mkdir()
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    stale = tmp_path / f".report.depthscale-new-{int(dead.stdout)}-y"
    stale.mkdir()
    pub.recover(out)
    assert busy.is_dir() and not stale.exists()


def test_the_current_directory_is_refused(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for out in (".", str(tmp_path), str(tmp_path.parent)):
        with pytest.raises(ValueError, match="must not be the current directory"):
            pub.check_target("out", out)
    pub.check_target("out", "report")  # a folder inside it is fine


# -- through the report writer, whatever its mechanism: kill it at every file system call ----------
REBUILD = textwrap.dedent(
    """
    import os, sys
    from depthscale.derivations.report.entries import DrawnFigure
    from depthscale.derivations.report.render import ReportContext, write_report

    out, title, png, at = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    with open(png, "rb") as fh:
        png = fh.read()
    figures = [DrawnFigure(n, n, png) for n in ("overview", "floors", "modes")]
    ctx = ReportContext(title=title, figures=figures, created="fixed")
    if at:  # die at the at-th write barrier or rename, as a kill -9 between two system calls would
        calls = []
        def dying(real):
            def call(*args, **kwargs):
                calls.append(1)
                if len(calls) == at:
                    os._exit(9)
                return real(*args, **kwargs)
            return call
        for name in ("fsync", "replace", "rename", "link"):
            setattr(os, name, dying(getattr(os, name)))
    write_report(ctx, out)
    """
)


def _report_files(out: Path) -> dict:
    return {k: v for k, v in tree(out).items() if k.startswith(("report.", "figures/"))}


@pytest.mark.slow  # a kill at every one of the writer's calls: tens of seconds
def test_report_writer_killed_at_any_call_leaves_a_whole_report(tmp_path):
    import io
    import shutil

    from matplotlib.figure import Figure

    script = tmp_path / "rebuild.py"
    script.write_text(REBUILD)
    for colour in ("red", "blue"):
        fig = Figure(figsize=(2, 1))
        fig.add_subplot().plot([0, 1], [0, 1], color=colour)
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=20)
        (tmp_path / f"{colour}.png").write_bytes(buf.getvalue())

    def build(out, title, colour, at=0):
        png = str(tmp_path / f"{colour}.png")
        return subprocess.run([sys.executable, str(script), str(out), title, png, str(at)], capture_output=True)

    first, second = tmp_path / "first" / "report", tmp_path / "second" / "report"
    assert build(first, "First", "red").returncode == 0
    (first / "store.sqlite").write_bytes(b"runs")  # not the report's: kept in every case
    assert build(second, "Second", "blue").returncode == 0
    old, new = _report_files(first), _report_files(second)
    assert len(old) == 6 and set(old) == set(new) and old != new
    at, states = 0, []
    while True:  # kill at the 1st, 2nd, ... call until the rebuild gets through
        at += 1
        out = tmp_path / f"rebuild{at}" / "report"
        shutil.copytree(first, out)
        proc = build(out, "Second", "blue", at)
        if proc.returncode == 0:
            break
        assert proc.returncode == 9, proc.stderr.decode()
        files = _report_files(out)
        assert files in (old, new), f"a mixed report after call {at}: {sorted(files)}"
        assert (out / "store.sqlite").read_bytes() == b"runs"
        states.append("old" if files == old else "new")
        fresh = tmp_path / f"fresh{at}" / "report"  # into a folder that does not exist yet
        assert build(fresh, "Second", "blue", at).returncode in (0, 9)
        assert not fresh.exists() or _report_files(fresh) == new, f"a partial report after call {at}"
    assert at > 6 and "old" in states  # the kill came at every file's write and rename

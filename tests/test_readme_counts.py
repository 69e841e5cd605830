"""The counts the README states, checked against the tree (issue 42): fast, nothing run.

Checked: the studies (the table's rows against the ``depthscale.studies`` entry points, the folders
under ``studies/`` and the study pages, and the presets each row names), the notebooks (01-04 in the
default suite and 05 opt-in, against ``notebooks/`` and the slow mark in tests/test_notebooks.py),
the CI's "two commands" (the Quick start's blocks, verbatim in ``.ci/run``), and the totals behind
the study answers that a preset's grid fixes: the protocols study's five protocols and 15 curves, the
nonlinearities study's 20 curves, 8 sparse-map pairs and 16 paired comparisons.

Not checked here: the numbers of tests and of slow checks need pytest to collect the
whole suite, which imports every module (``python -m pytest --collect-only -q``, with and without
``-m slow``; the lead recounts them with each release); the verdict counts ("5 of 20", "15 of 15")
come from the committed reports, not from the tree.

The README's times are CPU-seconds that benchmarks/readme_times.sh last recorded in
benchmarks/readme_times.txt: the README must state what the record says (to its rounding), never a
time measured here (no timing is asserted).
"""

from __future__ import annotations

import dataclasses
import re
import tomllib
from pathlib import Path

import pytest

from depthscale.sims.attention_registry import get_attention
from depthscale.sims.config import run_key
from depthscale.sims.grid import load_grid

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10}


def _number(text: str) -> int:
    return WORDS[text] if text in WORDS else int(text.replace(",", ""))


def _find(pattern: str, text: str, what: str, wrapped: bool = True) -> re.Match:
    m = re.search(pattern.replace(" ", r"\s+") if wrapped else pattern, text)  # the README wraps lines anywhere
    if m is None:
        raise AssertionError(f"the README no longer states {what} ({pattern!r}): update tests/test_readme_counts.py")
    return m


def _section(text: str, title: str) -> str:
    m = _find(rf"(?ms)^## {re.escape(title)}\n(.*?)(?=^## |\Z)", text, f"a section {title!r}", wrapped=False)
    return m.group(1)


def _study_rows(text: str) -> dict:
    """The Studies table: study name -> (presets named in its first cell, page link, the row's text)."""
    rows = {}
    for line in _section(text, "Studies").splitlines():
        m = re.match(r"\| `([\w-]+)`(?: \(presets? ([^)]*)\))? \|.*\]\(([^)]+)\) \|$", line)
        if m:
            rows[m.group(1)] = (re.findall(r"`([\w-]+)`", m.group(2) or ""), m.group(3), line)
    return rows


def readme_counts(text: str) -> dict:
    """Every count the README states that the tree fixes, parsed from ``text`` (the README's words)."""
    rows = _study_rows(text)
    protocols = rows.get("protocols", ((), "", ""))[2]
    nonlin = rows.get("nonlinearities", ((), "", ""))[2]
    first, last = _find(r"notebooks (\d\d)-(\d\d);", text, "the notebooks of the default suite").groups()
    slow_nb = _find(r"(?:,|;) notebook (\d\d) and", text, "the opt-in notebook").group(1)
    ci = _find(r"CI \(`\.ci/run`\) runs these (\w+) commands", text, "what CI runs").group(1)
    return {
        "studies": len(rows),
        "notebooks in the default suite": [f"{n:02d}" for n in range(int(first), int(last) + 1)],
        "notebooks opt-in": [slow_nb],
        "commands CI runs": _number(ci),
        "protocols": _number(_find(r"None of (\w+)", protocols, "the number of protocols").group(1)),
        "protocol curves": int(_find(r"in \d+ of (\d+) curves", protocols, "the protocol curves").group(1)),
        "nonlinearity curves": int(_find(r"on \d+ of (\d+) curves", nonlin, "the nonlinearity curves").group(1)),
        "sparse-map pairs": int(_find(r"\(\d+ of (\d+) pairs decided", nonlin, "the sparse-map pairs").group(1)),
        "paired comparisons": int(_find(r"in \d+ of (\d+) paired comparisons", nonlin, "the comparisons").group(1)),
        "protocol preset's estimate": _find(
            r"The `protocol` preset needs about ([\d.]+) hours on 2 cores by the cost model; `--budget (\d+)h` runs the "
            r"(\d+) of its (\d+) runs",
            text,
            "the protocol preset's cost",
        ).groups(),
    }


def _curves(runs) -> set:
    """A curve: one task, model (but its depth) and training protocol; its points are the depths and seeds."""
    return {(c.task, dataclasses.replace(c.model, depth=1), c.train) for c, _ in runs}


def tree_counts() -> dict:
    """The same counts, computed from the tree."""
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    studies = pyproject["project"]["entry-points"]["depthscale.studies"]
    notebooks = sorted(p.name[:2] for p in (ROOT / "notebooks").glob("[0-9][0-9]_*.py"))
    slow = re.findall(
        r'startswith\("(\d\d)_"\) else pytest\.param\(n, marks=pytest\.mark\.slow\)', _text("tests/test_notebooks.py")
    )
    protocol = load_grid(ROOT / "studies" / "protocols" / "presets" / "protocol.toml")
    nonlin = _curves(load_grid(ROOT / "studies" / "nonlinearities" / "presets" / "nonlinearities.toml"))
    maps = {m.attention for _, m, _ in nonlin}
    per_map = {a: sum(m.attention == a for _, m, _ in nonlin) for a in maps}
    settings = per_map["softmax"]  # each map is trained in the settings softmax is, one curve each
    assert set(per_map.values()) == {settings}, per_map
    sparse = [a for a in maps if a != "softmax" and get_attention(a).normalised]
    return {
        "studies": len(studies),
        "notebooks in the default suite": [n for n in notebooks if n not in slow],
        "notebooks opt-in": slow,
        "commands CI runs": len(_quick_start_commands(README)),
        "protocols": len({(m, t) for _, m, t in _curves(protocol)}),
        "protocol curves": len(_curves(protocol)),
        "nonlinearity curves": len(nonlin),
        "sparse-map pairs": len(sparse) * settings,
        "paired comparisons": (len(maps) - 1) * settings,
        "protocol preset's estimate": _protocol_forecast(
            protocol, _find(r"`--budget (\d+)h` runs", README, "the protocol budget").group(1)
        ),
    }


def _protocol_forecast(runs, hours: str) -> tuple:
    """(total hours, budget hours, runs that fit, runs) of a fresh store's cost model on 2 workers."""
    from depthscale.sims.sweeps import _jobs, forecast

    jobs = _jobs([(run_key(c, seed), c, seed) for c, seed in runs], lockstep=True)
    whole = re.search(r"about ([\d.]+) h", forecast(jobs, 1e12, {}, 2)).group(1)
    fit = re.search(r"(\d+) of (\d+) runs", forecast(jobs, int(hours) * 3600.0, {}, 2)).groups()
    return (whole, hours, *fit)


def _text(path: str) -> str:
    return (ROOT / path).read_text(encoding="utf-8")


def _quick_start_commands(text: str) -> list:
    return re.findall(r"```bash\n(.*?)\n```", _section(text, "Quick start"), re.S)


def mismatches(text: str) -> dict:
    """The counts where ``text`` (a README) and the tree disagree: ``{name: (stated, tree)}``."""
    stated, tree = readme_counts(text), tree_counts()
    return {k: (stated[k], tree[k]) for k in tree if stated[k] != tree[k]}


def test_the_readmes_counts_are_the_trees():
    assert mismatches(README) == {}


def test_the_studies_table_is_the_study_folders_with_their_pages_and_presets():
    rows = _study_rows(README)
    pyproject = tomllib.loads(_text("pyproject.toml"))
    entry = pyproject["project"]["entry-points"]["depthscale.studies"]
    assert sorted(rows) == sorted(entry)
    folders = sorted(
        p.parent.name for p in (ROOT / "studies").glob("*/__init__.py") if not p.parent.name.startswith("_")
    )
    assert folders == sorted(v.split(":")[0].rsplit(".", 1)[1] for v in entry.values())
    for name, (presets, page, _) in rows.items():
        assert (ROOT / page).is_file(), (name, page)
        folder = ROOT / "studies" / entry[name].split(":")[0].rsplit(".", 1)[1] / "presets"
        for preset in presets:
            assert (folder / f"{preset}.toml").is_file(), (name, preset)


def test_ci_runs_the_quick_starts_commands_verbatim_and_in_order():
    run = _text(".ci/run")
    commands = _quick_start_commands(README)
    assert commands and all(c in run.splitlines() for c in commands)
    assert [run.index(c) for c in commands] == sorted(run.index(c) for c in commands)
    assert "python -m mypy" in run and "mkdocs build --strict" in run  # "then python -m mypy and mkdocs build --strict"


_ROW = next(line for line in README.splitlines() if line.startswith("| `linear-start` |"))
EDITS = [  # (what, old, new): one count changed in a copy of the README
    ("studies", _ROW, _ROW + "\n" + _ROW.replace("`linear-start`", "`linear-start-again`")),
    ("notebooks in the default suite", "notebooks 01-04;", "notebooks 01-03;"),
    ("notebooks opt-in", "notebook 05 and", "notebook 06 and"),
    ("commands CI runs", "runs these two commands", "runs these three commands"),
    ("protocols", "None of five", "None of six"),
    ("protocol curves", "in 15 of 15 curves", "in 15 of 16 curves"),
    ("nonlinearity curves", "on 20 of 20 curves", "on 20 of 24 curves"),
    ("sparse-map pairs", "(0 of 8 pairs decided", "(0 of 10 pairs decided"),
    ("paired comparisons", "in 0 of 16 paired comparisons", "in 0 of 12 paired comparisons"),
    ("protocol preset's estimate", "about 3.4 hours", "about 2.3 hours"),
    ("protocol preset's estimate", "runs the 132", "runs the 140"),
]


@pytest.mark.parametrize("what,old,new", EDITS, ids=[e[0] for e in EDITS])
def test_an_edited_count_is_caught(what, old, new):
    pattern = r"\s+".join(map(re.escape, old.split(" ")))  # across the README's line breaks
    edited, n = re.subn(pattern, lambda _: new, README)
    assert n == 1, f"the README's words changed: update EDITS ({old!r})"
    assert list(mismatches(edited)) == [what]


# ------------------------------------------------------------------------------------------ times
RECORD = ROOT / "benchmarks" / "readme_times.txt"


def recorded_cpu() -> dict:
    """``{label: CPU-seconds}`` of the last benchmarks/readme_times.sh run."""
    lines = re.findall(r"^(\S.*?)\s+wall\s+[\d.]+ s\s+cpu\s+([\d.]+) s", RECORD.read_text(encoding="utf-8"), re.M)
    return {label: float(cpu) for label, cpu in lines}


def readme_times(text: str) -> dict:
    """The CPU-seconds the README states: the main job warm, what an empty cache adds, the test command."""
    warm, cold = _find(
        r"(?s)(\d[\d,]*) CPU-seconds with a warm numba cache.*?an empty cache adds about (\d[\d,]*)",
        text,
        "the main job's time",
    ).groups()
    tests = _find(r"the tests took about (\d[\d,]*) CPU-seconds", text, "the test command's time").group(1)
    return {"main job": _number(warm), "empty cache adds": _number(cold), "test command": _number(tests)}


def _close(stated: float, recorded: float) -> bool:
    return abs(stated - recorded) <= max(5.0, 0.05 * recorded)  # the README rounds


def _recorded_for_readme() -> dict:
    rec = recorded_cpu()
    return {
        "main job": rec["main job, warm cache"],
        "empty cache adds": rec["main job, empty cache"] - rec["main job, warm cache"],
        "test command": rec["test command (pytest -q)"],
    }


def time_mismatches(text: str) -> dict:
    """The times where ``text`` (a README) and the record disagree beyond the README's rounding."""
    recorded = _recorded_for_readme()
    return {k: (v, recorded[k]) for k, v in readme_times(text).items() if not _close(v, recorded[k])}


def test_the_readmes_times_are_the_last_recorded():
    assert time_mismatches(README) == {}
    assert "benchmarks/readme_times.txt" in " ".join(README.split())


@pytest.mark.parametrize("what", ["main job", "empty cache adds", "test command"])
def test_a_time_off_the_record_is_caught(what):
    stated = readme_times(README)[what]
    pattern = {
        "main job": r"\d[\d,]* (CPU-seconds\s+with\s+a\s+warm)",
        "empty cache adds": r"(an\s+empty\s+cache\s+adds\s+about) \d[\d,]*",
        "test command": r"(the\s+tests\s+took\s+about) \d[\d,]*",
    }[what]
    wrong = str(round(stated * 1.5) + 10)
    edited = re.sub(
        pattern, lambda m: f"{wrong} {m.group(1)}" if what == "main job" else f"{m.group(1)} {wrong}", README
    )
    assert list(time_mismatches(edited)) == [what]

"""Every command of the README's command-line section runs as written, in the order given, from the
folder of the main job (with a small store standing in for the main job's, and the one long command
given a budget too short to start a run)."""

import re
import shlex
from pathlib import Path

import pytest

from depthscale.derivations.cli.app import main

ROOT = Path(__file__).resolve().parents[1]
# the long command, with the tiny setting it runs under here: the budget says what it will not finish
TINY = {"--budget 3h": "--budget 1s"}
TINY_GRID = """seeds = [0, 1]
[task]
task = "topk"
k = 2
d = 4
P = 8
[model]
model = "softmax"
depth = [1, 2]
[train]
steps = 20
batch = 16
eval_contexts = 64
"""


def readme_commands() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## Command line", 1)[1].split("\n## ", 1)[0]
    (block,) = re.findall(r"```bash\n(.*?)```", section, flags=re.S)
    return [line.strip() for line in block.splitlines() if line.strip()]


def test_the_readme_shows_commands_of_this_cli():
    commands = readme_commands()
    assert len(commands) >= 5 and all(c.startswith("depthscale ") for c in commands)
    assert all(t in " ".join(commands) for t in TINY), "a long command changed: update TINY"


@pytest.mark.slow  # every command once, a report and a derivation included: about a minute
def test_every_readme_command_runs_as_written_in_order(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    grid = tmp_path / "tiny.toml"
    grid.write_text(TINY_GRID)
    (tmp_path / "report").mkdir()
    assert main(["sweep", str(grid), "--store", "report/store.sqlite", "--executor", "serial", "--quiet"]) == 0
    for command in readme_commands():
        for long, tiny in TINY.items():
            command = command.replace(long, tiny)
        code = main(shlex.split(command)[1:])
        out, err = capsys.readouterr()
        if "--budget 1s" in command:  # too short to start a run: said so, nothing lost
            assert code == 1 and "too short to start any" in err, (command, err)
        else:
            assert code == 0, (command, err)
    assert (tmp_path / "report-again" / "report.md").exists()

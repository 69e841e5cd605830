"""``depthscale derive``: writes the rendered derivation, refuses bad input with exit 2 and writes nothing."""

import json
import os
import xml.etree.ElementTree as ET

import pytest
import sympy as sp

from depthscale.derivations.cli.app import main
from depthscale.theory import derivation as dv


def test_directory_out_is_created_and_json_summary(tmp_path, capsys):
    out = tmp_path / "new" / "dir"
    assert main(["derive", "clt", "--format", "html", "--out", str(out), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    path = out / "derivation-clt.html"
    assert summary["path"] == str(path) and summary["name"] == "clt" and summary["all_passed"] is True
    assert len(summary["steps"]) == len(dv.build_derivation("clt").steps)
    assert all(set(s) == {"title", "method", "passed", "error"} for s in summary["steps"])
    page = path.read_text(encoding="utf-8")
    ET.fromstring(page.split("\n", 1)[1])
    assert "<math" in page and "<script" not in page


@pytest.fixture
def toy_registry(monkeypatch):
    x = sp.Symbol("x", positive=True)

    def good():
        return dv.Derivation("Toy", "t", [], [dv.Step("double", 2 * x, x + x, "Add.", transforms=("expand",))])

    def bad():
        return dv.Derivation(
            "Bad",
            "t",
            [],
            [
                dv.Step("fine", 2 * x, x + x, "Add.", transforms=("expand",)),
                dv.Step("off by one", x**2, x**3, "Wrong.", assumptions={x: (2, 3)}, transforms=()),
            ],
        )

    monkeypatch.setitem(dv.DERIVATIONS, "linear", good)
    monkeypatch.setitem(dv.DERIVATIONS, "free", bad)


@pytest.mark.parametrize("fmt,marker", [("md", "$$"), ("html", "<math"), ("tex", "\\begin{document}")])
def test_file_out_each_format(tmp_path, capsys, toy_registry, fmt, marker):
    path = tmp_path / f"toy.{fmt}"
    assert main(["derive", "linear", "--format", fmt, "--out", str(path)]) == 0
    assert marker in path.read_text(encoding="utf-8")
    assert str(path) in capsys.readouterr().out


def test_failed_check_exits_1_and_names_step(tmp_path, capsys, toy_registry):
    assert main(["derive", "free", "--out", str(tmp_path), "--json"]) == 1
    cap = capsys.readouterr()
    summary = json.loads(cap.out)
    assert summary["all_passed"] is False
    assert [s["passed"] for s in summary["steps"]] == [True, False]
    assert "off by one" in cap.err
    assert (tmp_path / "derivation-free.md").exists()  # the report is written, with the failure shown
    assert "FAILED" in (tmp_path / "derivation-free.md").read_text()


@pytest.mark.parametrize(
    "argv",
    [
        ["derive", "nope", "--format", "md"],
        ["derive", "linear", "--format", "pdf"],
        ["derive", "linear", "--format", "HTML"],
    ],
)
def test_bad_input_exit_2_nothing_written(tmp_path, capsys, toy_registry, argv):
    out = tmp_path / "out"
    assert main(argv + ["--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("depthscale: error:") and err.count("\n") == 1
    assert not out.exists() and os.listdir(tmp_path) == []


def test_missing_parent_directory_refused(tmp_path, capsys, toy_registry):
    target = tmp_path / "missing" / "file.md"
    assert main(["derive", "linear", "--out", str(target)]) == 2
    assert "out=" in capsys.readouterr().err
    assert os.listdir(tmp_path) == []


def test_missing_out_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["derive", "linear"])
    assert exc.value.code == 2

"""The example notebooks (notebooks/*.py, jupytext percent format) run top to bottom in a real kernel.

They are executed as notebooks (nbclient and an IPython kernel), not as scripts: what is checked is
what a reader runs, including what each cell displays (tables, figures, rendered Markdown).
"""

import hashlib
import time
from pathlib import Path

import pytest

jupytext = pytest.importorskip("jupytext")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
# the outputs each notebook must show: (mime type, how many at least)
EXPECTED = {
    "01_linear_laws.py": {"image/png": 2, "text/html": 4, "text/markdown": 1},
    "02_softmax_clt.py": {"image/png": 2, "text/html": 3},
    "03_stores.py": {"image/png": 3, "text/html": 9},
    "04_check_your_prediction.py": {"image/png": 1, "text/html": 2},
    "05_your_own_attention_map.py": {"image/png": 1, "text/html": 1},
}
# a notebook runs from the repository root and from notebooks/ alike (the root: -m slow)
WHERE = {"notebooks": NOTEBOOKS, "root": ROOT}


def _digests() -> dict:
    # every file but a sweep's snapshots (a sweep running beside the tests rewrites them)
    return {
        p.relative_to(ROOT).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in (ROOT / "results").rglob("*")
        if p.is_file() and not p.parent.name.endswith(".snapshots")
    }


def _outputs(nb) -> dict:
    counts: dict = {}
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            assert out.get("output_type") != "error", "".join(out.get("traceback", []))
            for mime in out.get("data", {}):
                counts[mime] = counts.get(mime, 0) + 1
    return counts


def test_every_notebook_is_listed():
    assert sorted(p.name for p in NOTEBOOKS.glob("*.py")) == sorted(EXPECTED)


# from notebooks/ in the default suite; the same run from the root is a slow check (each notebook twice
# would cost the suite minutes: notebook 05 trains fifteen JAX models)
@pytest.mark.parametrize("where", ["notebooks", pytest.param("root", marks=pytest.mark.slow)])
@pytest.mark.parametrize(
    "name",
    # notebook 05 trains fifteen JAX models (about 70 s): with -m slow; tests/sims/test_map_parameters.py
    # checks its machinery in the default suite
    [n if not n.startswith("05_") else pytest.param(n, marks=pytest.mark.slow) for n in sorted(EXPECTED)],
)
def test_notebook_runs_and_shows_its_results(name, where):
    nb = jupytext.read(NOTEBOOKS / name)
    client = nbclient.NotebookClient(
        nb, timeout=900, kernel_name="python3", resources={"metadata": {"path": str(WHERE[where])}}
    )
    before = _digests()
    t0 = time.perf_counter()
    client.execute()  # raises CellExecutionError, with the cell and its traceback, on any error
    print(f"{name}: {time.perf_counter() - t0:.1f} s")
    assert _digests() == before  # the committed stores are read, never changed (no file added either)
    counts = _outputs(nb)
    for mime, n in EXPECTED[name].items():
        assert counts.get(mime, 0) >= n, (mime, counts)


def test_the_notebook_extra_brings_widgets_and_jupytext():
    import tomllib

    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    names = {req.split(">")[0].split("=")[0].split("[")[0] for req in extras["notebook"]}
    assert {"ipywidgets", "jupytext"} <= names  # without ipywidgets tqdm.auto warns "IProgress not found"
    assert any(req.startswith("xarray") for req in extras["xarray"])

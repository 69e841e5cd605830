"""The layout the architecture promises (docs/architecture.md): modules cut by topic (no module
reaches into another's private names), imports one way (theory <- sims <- derivations <- studies),
a library that names no study, and claims that format numbers without the report machinery."""

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LIBRARY = ("theory", "sims", "derivations")
PACKAGES = (*LIBRARY, "studies")


def _sources(folders=PACKAGES):
    return [p for f in folders for p in sorted((ROOT / f).rglob("*.py"))]


def _private_names(text: str) -> set:
    """The underscore names the module source ``text`` imports from another module of the packages
    (dunder names and the project's private infrastructure modules ``theory/_*.py`` excepted)."""
    found = set()
    for node in ast.walk(ast.parse(text)):
        if not isinstance(node, ast.ImportFrom) or not (node.level or (node.module or "").startswith("depthscale")):
            continue
        if (node.module or "").rsplit(".", 1)[-1].startswith("_"):  # a private module: infrastructure
            continue
        found.update(a.name for a in node.names if a.name.startswith("_") and not a.name.startswith("__"))
    return found


def _private_imports() -> set:
    """``(file, name)`` for every underscore name imported from another module of the packages."""
    return {(p.relative_to(ROOT).as_posix(), n) for p in _sources() for n in _private_names(p.read_text("utf-8"))}


def test_no_module_imports_the_private_names_of_another():
    assert sorted(_private_imports()) == []


def test_the_check_finds_a_private_import():
    text = "def f():\n    from .fits import _vector, as_vector\nfrom ..theory._validate import check_int, _x\n"
    assert _private_names(text) == {"_vector"}


def _module_name(path: Path) -> str:
    """``depthscale.derivations.analysis.fits`` for derivations/analysis/fits.py (a package: its folder)."""
    parts = ["depthscale", *path.relative_to(ROOT).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _import_graph() -> dict:
    """``{module: modules it imports}`` over the packages' modules (their ``__init__`` files, which only
    re-export lazily, left out), every import counted: module level, in a function, in a method."""
    modules = {_module_name(p): p for p in _sources() if p.name != "__init__.py"}
    graph = {}
    for name, path in modules.items():
        targets = set()
        for m in _imports(path):
            while m and m not in modules and "." in m:  # ``from .fits import fit_gap``: the module fits
                m = m.rsplit(".", 1)[0]
            if m in modules and m != name:
                targets.add(m)
        graph[name] = targets
    return graph


def _cycles(graph: dict) -> list:
    """The strongly connected components of more than one module (each a set of modules that import
    each other, directly or around a ring), by Tarjan's algorithm."""
    index: dict = {}
    low: dict = {}
    stack: list = []
    found = []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = set()
            while True:
                w = stack.pop()
                component.add(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(frozenset(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_no_import_cycles_inside_the_packages():
    # a cycle, even through a function-level import, makes two modules one: neither reads, tests or
    # moves without the other
    assert sorted(map(sorted, _cycles(_import_graph()))) == []


def test_the_cycle_check_finds_a_cycle_through_a_function_level_import():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _cycles(graph) == [frozenset({"a", "b", "c"})]
    fits = ROOT / "derivations" / "analysis" / "fits.py"
    assert "depthscale.derivations.analysis.display" in _import_graph()[_module_name(fits)]  # a method's import


def _loaded_after(module: str) -> set:
    """Top-level names of the modules a fresh interpreter holds after importing ``module``."""
    code = f"import sys, {module}; print(' '.join(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    return set(out.split())


@pytest.mark.parametrize(
    "module",
    [
        "depthscale.derivations.claims.registry",
        "depthscale.derivations.claims.verdicts",
        "depthscale.derivations.study",
    ],
)
def test_claims_format_numbers_without_jinja_or_sympy(module):
    loaded = _loaded_after(module)
    assert {"jinja2", "markupsafe", "sympy", "depthscale.derivations.report.render"} & loaded == set()


def test_the_number_formatting_module_needs_only_the_standard_library():
    loaded = _loaded_after("depthscale.derivations.formatting")
    assert {"numpy", "scipy", "jinja2", "sympy"} & loaded == set()
    assert not any(m.startswith(("depthscale.sims", "depthscale.derivations.report")) for m in loaded)


def _package_of(path: Path) -> list:
    """``["depthscale", "derivations", "report"]`` for derivations/report/figures.py (or its __init__)."""
    return ["depthscale", *path.relative_to(ROOT).parent.parts]


def _imports(path: Path, absolute_only: bool = False) -> set:
    """Absolute names of the modules ``path`` imports (relative imports resolved against its package)."""
    import ast

    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module)
        elif isinstance(node, ast.ImportFrom) and not absolute_only:
            package = _package_of(path)
            base = package[: len(package) - node.level + 1]
            if node.module:
                names.add(".".join([*base, node.module]))
            else:  # from . import fits: the submodules named
                names.update(".".join([*base, a.name]) for a in node.names)
    return names


def test_package_modules_import_each_other_relatively():
    # a reader (or a tool reading imports as text) follows ``from ..sims.store import Store`` to
    # sims/store.py; ``depthscale.sims`` names no folder. The packages' __init__.py files are the
    # exception: pytest imports each of them under its folder name (``derivations.claims``) to look
    # for package-level set-up, and a relative import past that folder fails there
    absolute = {
        str(p.relative_to(ROOT)): sorted(m for m in _imports(p, absolute_only=True) if m.startswith("depthscale"))
        for folder in LIBRARY
        for p in sorted((ROOT / folder).rglob("*.py"))
        if p.name != "__init__.py"
    }
    assert {k: v for k, v in absolute.items() if v} == {}


def test_resolved_imports_name_real_modules():
    # the one-way check below reads these names: each must be a module that exists
    import importlib.util

    names = {m for f in PACKAGES for p in (ROOT / f).rglob("*.py") for m in _imports(p)}
    ours = sorted(m for m in names if m.startswith("depthscale."))
    assert "depthscale.sims.store" in ours and len(ours) > 50
    assert [m for m in ours if importlib.util.find_spec(m) is None] == []


@pytest.mark.parametrize(
    "folder, forbidden",
    [
        ("theory", ("depthscale.sims", "depthscale.derivations", "depthscale.studies")),
        ("sims", ("depthscale.derivations", "depthscale.studies")),
        ("derivations", ("depthscale.studies",)),
        ("derivations/analysis", ("depthscale.derivations.cli", "depthscale.derivations.report")),
        ("derivations/claims", ("depthscale.derivations.cli", "depthscale.derivations.report")),
        ("derivations/report", ("depthscale.derivations.cli",)),
    ],
)
def test_imports_go_one_way_and_library_code_never_imports_the_cli(folder, forbidden):
    wrong = {
        str(p.relative_to(ROOT)): sorted(m for m in _imports(p) if m.startswith(forbidden))
        for p in sorted((ROOT / folder).rglob("*.py"))
    }
    assert {k: v for k, v in wrong.items() if v} == {}


AUTHORING_API = "depthscale.derivations.study"


def _study_imports() -> tuple:
    """``(imports of another study, imports of depthscale past the authoring API)`` of the studies'
    modules, each a set of ``(file, module)``. A study may import its own package, the root
    ``depthscale.studies``, the authoring API and the public (no ``_`` part) theory and sims modules."""
    other, past = set(), set()
    for p in _sources(("studies",)):
        rel = p.relative_to(ROOT)
        own = ".".join(["depthscale", *rel.parts[:2]]) if len(rel.parts) > 2 else "depthscale.studies"
        for m in _imports(p):
            if not m.startswith("depthscale") or m in ("depthscale.studies", AUTHORING_API):
                continue
            if m == own or m.startswith(own + "."):
                continue
            if m.startswith("depthscale.studies."):
                other.add((rel.as_posix(), m))
            elif not (m.startswith(("depthscale.theory.", "depthscale.sims.")) and "._" not in m):
                past.add((rel.as_posix(), m))
    return other, past


def test_studies_import_the_library_only_through_the_authoring_api():
    assert sorted(_study_imports()[1]) == []


def test_studies_do_not_import_each_other():
    # what two studies share lives in the library under a name (the authoring API exports it)
    assert sorted(_study_imports()[0]) == []


def test_the_authoring_api_names_what_it_exports():
    import depthscale.derivations.study as api

    missing = [n for n in api.__all__ if not hasattr(api, n)]
    assert missing == [] and {"claim", "Claim", "in_range", "select_curves", "to_png", "brief"} <= set(api.__all__)


def _study_names():
    """What names a study: its name, its hyphenated preset names, its package and its folder."""
    from depthscale.derivations.study import studies

    found = studies()
    assert {"core", "protocols", "paper-curves", "linear-start"} <= set(found)  # the test has names to look for
    names = set(found) | {p for s in found.values() for p in s.presets if "-" in p}
    packages = {s.package for s in found.values()}
    return names, packages


def _naming(text: str) -> list:
    """Where the module source ``text`` names a study: an import of a study, or a string (docstrings
    included) that is a study's name, holds a hyphenated study or preset name as a word, or its
    package or folder."""
    names, packages = _study_names()
    words = re.compile(r"(?<![\w-])(" + "|".join(re.escape(n) for n in names if "-" in n) + r")(?![\w-])")
    paths = {f"studies/{p.rsplit('.', 1)[-1]}" for p in packages}
    named = []
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            mods = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            named += [m for m in mods if "studies" in m.split(".")]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            v = node.value
            named += [v] if v in names else []
            named += words.findall(v) + [x for x in sorted(packages | paths) if x in v]
    return named


def test_the_library_names_no_study():
    named = {p.relative_to(ROOT).as_posix(): n for p in _sources(LIBRARY) if (n := _naming(p.read_text("utf-8")))}
    assert named == {}


def _study_figures() -> set:
    """The names of the figures the studies' sections make (for no runs: each names its figures all
    the same), less the library's own figure kinds a study may ask for by name."""
    from depthscale.derivations.claims.evidence import Evidence
    from depthscale.derivations.report.figures import FIGURES
    from depthscale.derivations.study import studies

    made = {f.name for s in studies().values() if s.sections for f in s.sections(Evidence([], {})).figures}
    assert {"exponents_vs_zeta", "room_for_depth", "nonlinearities_loss"} <= made  # names to look for
    return made - set(FIGURES)


def test_the_report_builder_names_no_figure_of_a_study():
    # the report layer assembles what the studies' sections give it: a study's figure named there
    # (to draw it, to place it beside a finding) is that study living in the library
    figures = _study_figures()
    named = {}
    for p in _sources(("derivations/report",)):
        found = {
            node.value
            for node in ast.walk(ast.parse(p.read_text("utf-8")))
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in figures
        }
        if found:
            named[p.relative_to(ROOT).as_posix()] = sorted(found)
    assert named == {}


def test_the_check_finds_a_study_named_in_each_way():
    text = (
        "import depthscale.studies.core\n"
        "from depthscale.studies import protocols\n"
        'X = "core"\n'
        'def f():\n    """As the paper-curves study does (studies/linear_start/)."""\n'
        'Z = "depthscale.studies.protocols"\n'
    )
    assert sorted(_naming(text)) == [
        "core",
        "depthscale.studies",
        "depthscale.studies.core",
        "depthscale.studies.protocols",
        "paper-curves",
        "studies/linear_start",
    ]
    assert _naming('"""The core of the method: protocols, curves and a linear start."""') == []

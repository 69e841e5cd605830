"""The :class:`Study` record and the registry of studies.

A study asks one question of the simulations and the theory, and answers it with claims. The
library (``depthscale.theory``, ``.sims``, ``.derivations``) names no study: the studies live in
their own packages and declare themselves, and the command line and the reports find them here.

How a study declares itself
---------------------------
A study is one Python package. In this distribution it is a folder ``studies/<folder>/``
(installed as ``depthscale.studies.<folder>``); a user's own distribution can hold one as well.

1. Its ``__init__.py`` exports ``STUDY``, a :class:`Study`::

       from depthscale.derivations.study import Study

       STUDY = Study(
           name="my-study",                      # lower case, digits and hyphens
           question="Does X make the loss fall as 1/L?",
           package=__name__,                      # where the preset TOMLs are found
           presets=("my-study",),                 # presets/my-study.toml beside __init__.py
           claims=CLAIMS,                         # its Claim records, in report order
           theory=theory_numbers,                 # optional: the theory numbers it needs
           sections=sections,                     # optional: its tables and figures
           story=story,                           # optional: the answer and its findings
       )

2. Its preset TOMLs (the grids ``depthscale sweep`` reads) sit in ``presets/<name>.toml`` in
   the package, and any files it reads in ``data/``. In this distribution setup.py finds the
   package and pyproject.toml ships every package's ``presets/*.toml`` and ``data/*``; a user's
   own distribution declares them as package data.

3. One line registers it, in the ``[project.entry-points."depthscale.studies"]`` table of the
   pyproject.toml of the distribution that holds it::

       my-study = "depthscale.studies.my_study:STUDY"

   The entry point's name must equal ``STUDY.name``. After ``pip install`` (``-e`` too),
   ``depthscale reproduce --preset my-study`` runs it, and :func:`studies` lists it.

4. Its modules import depthscale only through this module (the authoring API: :data:`AUTHORING`
   lists what it re-exports, from ``Study`` and ``claim`` to ``in_range``, ``select_curves``,
   the ``FigureEntry`` and ``Table`` records, ``to_png`` and the formatting functions), the public ``depthscale.theory`` and
   ``depthscale.sims`` modules and ``depthscale.studies``; never another study (a rule two studies
   share moves into the library under a name). tests/test_layout.py holds them to it.

Examples
--------
>>> s = Study(name="demo", question="Is anything measured?", package=__name__)
>>> s.name, s.presets, s.claims
('demo', (), ())
>>> Study(name="Demo", question="Why?", package=__name__)
Traceback (most recent call last):
...
ValueError: name='Demo': must be lower case letters, digits and hyphens, starting with a letter
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from importlib import metadata, resources
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..theory._exports import lazy_reexports
from ..theory._validate import bad_argument

if TYPE_CHECKING:  # what type checkers see; at run time each is loaded on first use (below)
    from .analysis.curve import EASY_TASKS as EASY_TASKS
    from .analysis.curve import Curve as Curve
    from .analysis.curve import curves as curves
    from .analysis.curve import pool_independent as pool_independent
    from .analysis.curve import pool_paired as pool_paired
    from .analysis.curve import variant_name as variant_name
    from .analysis.estimate import Estimate as Estimate
    from .analysis.fits import FitResult as FitResult
    from .analysis.fits import fit_gap as fit_gap
    from .analysis.fits import fit_offset_power as fit_offset_power
    from .analysis.fits import fit_power_law as fit_power_law
    from .analysis.goodness_of_fit import LOF_LEVEL as LOF_LEVEL
    from .analysis.goodness_of_fit import LackOfFit as LackOfFit
    from .analysis.goodness_of_fit import lack_of_fit as lack_of_fit
    from .analysis.goodness_of_fit import law_rejected as law_rejected
    from .analysis.goodness_of_fit import least_rejected_law as least_rejected_law
    from .analysis.reference_values import LINEAR_EASY_EXPONENTS as LINEAR_EASY_EXPONENTS
    from .analysis.reference_values import REFERENCE_D as REFERENCE_D
    from .analysis.reference_values import REFERENCE_P as REFERENCE_P
    from .analysis.theory_numbers import clt_table as clt_table
    from .analysis.theory_numbers import derivation_checks as derivation_checks
    from .analysis.theory_numbers import floor_reference as floor_reference
    from .analysis.theory_numbers import floors as floors
    from .analysis.theory_numbers import linear_table as linear_table
    from .analysis.theory_numbers import slopes as slopes
    from .analysis.trend import Trend as Trend
    from .analysis.trend import TrendPoint as TrendPoint
    from .analysis.trend import comparable_groups as comparable_groups
    from .analysis.trend import fit_trend as fit_trend
    from .analysis.trend import trend_points as trend_points
    from .claims.calibration import CalibrationRates as CalibrationRates
    from .claims.calibration import NoiseModel as NoiseModel
    from .claims.calibration import SeedPlan as SeedPlan
    from .claims.calibration import backing_curve as backing_curve
    from .claims.calibration import calibrate as calibrate
    from .claims.calibration import noise_model as noise_model
    from .claims.calibration import plan as plan
    from .claims.calibration import synthetic_curve as synthetic_curve
    from .claims.claim import Claim as Claim
    from .claims.claim import claim as claim
    from .claims.claim import evaluated_with as evaluated_with
    from .claims.evidence import Evidence as Evidence
    from .claims.evidence import select_curves as select_curves
    from .claims.generic import DISAGREEMENT_TOO_FEW as DISAGREEMENT_TOO_FEW
    from .claims.generic import FLOOR_RTOL as FLOOR_RTOL
    from .claims.generic import IDENTITY_TOL as IDENTITY_TOL
    from .claims.generic import INVERSE_DEPTH as INVERSE_DEPTH
    from .claims.generic import LawVerdict as LawVerdict
    from .claims.generic import disagreement_fit as disagreement_fit
    from .claims.generic import floor_agreement as floor_agreement
    from .claims.generic import identity_residuals as identity_residuals
    from .claims.generic import identity_result as identity_result
    from .claims.generic import inverse_depth_verdict as inverse_depth_verdict
    from .claims.linear_optimum import OPTIMUM_RTOL as OPTIMUM_RTOL
    from .claims.linear_optimum import OptimumKey as OptimumKey
    from .claims.linear_optimum import OptimumNumbers as OptimumNumbers
    from .claims.linear_optimum import near_optimum as near_optimum
    from .claims.linear_optimum import optimum_exponent as optimum_exponent
    from .claims.linear_optimum import optimum_limit_note as optimum_limit_note
    from .claims.linear_optimum import optimum_numbers_of as optimum_numbers_of
    from .claims.linear_optimum import optimum_of as optimum_of
    from .claims.protocol_rows import ProtocolFloors as ProtocolFloors
    from .claims.protocol_rows import ProtocolRow as ProtocolRow
    from .claims.protocol_rows import budget_decided as budget_decided
    from .claims.protocol_rows import budget_note as budget_note
    from .claims.protocol_rows import gather_protocol_floors as gather_protocol_floors
    from .claims.protocol_rows import protocol_curves as protocol_curves
    from .claims.protocol_rows import protocol_floors as protocol_floors
    from .claims.protocol_rows import protocol_of as protocol_of
    from .claims.protocol_rows import protocol_rows as protocol_rows
    from .claims.protocol_rows import row_label as row_label
    from .claims.protocol_rows import task_label as task_label
    from .claims.verdicts import MIN_EVAL as MIN_EVAL
    from .claims.verdicts import MIN_SEEDS as MIN_SEEDS
    from .claims.verdicts import ClaimResult as ClaimResult
    from .claims.verdicts import Condition as Condition
    from .claims.verdicts import below_zero as below_zero
    from .claims.verdicts import decision as decision
    from .claims.verdicts import decision_p as decision_p
    from .claims.verdicts import in_range as in_range
    from .claims.verdicts import log_ratio as log_ratio
    from .claims.verdicts import unidentified as unidentified
    from .claims.verdicts import within as within
    from .formatting import format_estimate as format_estimate
    from .formatting import format_interval as format_interval
    from .formatting import format_percent as format_percent
    from .formatting import format_value as format_value
    from .formatting import growth_text as growth_text
    from .report.answers import answer_word as answer_word
    from .report.answers import estimate_text as estimate_text
    from .report.answers import in_these_settings as in_these_settings
    from .report.answers import joint_answer as joint_answer
    from .report.answers import number_word as number_word
    from .report.answers import quote as quote
    from .report.answers import settings_by as settings_by
    from .report.answers import short_label as short_label
    from .report.answers import short_tally as short_tally
    from .report.answers import strength as strength
    from .report.answers import strongest as strongest
    from .report.answers import verdict_phrase as verdict_phrase
    from .report.entries import FigureEntry as FigureEntry
    from .report.entries import NoFigure as NoFigure
    from .report.entries import Table as Table
    from .report.figure_drawings import as_list as as_list
    from .report.figure_drawings import depth_axis as depth_axis
    from .report.figure_drawings import draw_decomposition as draw_decomposition
    from .report.figure_drawings import draw_mode_curves as draw_mode_curves
    from .report.figure_drawings import draw_overview as draw_overview
    from .report.figure_drawings import error_bars as error_bars
    from .report.figure_drawings import finite_or_nan as finite_or_nan
    from .report.figure_drawings import mappings as mappings
    from .report.figure_drawings import new_figure as new_figure
    from .report.figure_drawings import palette as palette
    from .report.figure_drawings import panel_grid as panel_grid
    from .report.figures import figure_entry as figure_entry
    from .report.findings import brief as brief
    from .report.findings import results_of as results_of
    from .report.findings import tally as tally
    from .report.plots import inverse_depth_guide as inverse_depth_guide
    from .report.plots import legend_below as legend_below
    from .report.plots import plain_log_ticks as plain_log_ticks
    from .report.plots import plot_trend as plot_trend
    from .report.png import to_png as to_png
    from .report.tables import calibration_table as calibration_table
    from .report.tables import fits_table as fits_table
    from .report.tables import plan_table as plan_table
    from .report.tables import runs_table as runs_table

ENTRY_POINT_GROUP = "depthscale.studies"
DEFAULT_CONTEXTS = (3000, 3000)  # (floor contexts, reference contexts) of a preset's report
_NAME = re.compile(r"^[a-z][a-z0-9]*(-[a-z0-9]+)*$")


@dataclass(frozen=True)
class TheoryInputs:
    """What a study's ``theory`` callable may use: the curves of the sweep, the Monte Carlo sizes of
    the report, and the runs' stored arrays (``Store.load_arrays``; None when not available)."""

    curves: Sequence[Any]
    floor_contexts: int = DEFAULT_CONTEXTS[0]
    reference_contexts: int = DEFAULT_CONTEXTS[1]
    load_arrays: Callable[[str], dict | None] | None = None


@dataclass(frozen=True)
class Finding:
    """One finding of a study's story: a title, the sentence that states it (with its number), the
    figure drawn beside it (the name of a figure entry of its sections, or "" for none) and the
    claim ids it rests on."""

    title: str
    sentence: str
    figure: str = ""
    claim_ids: tuple[str, ...] = ()


@dataclass(frozen=True)
class Story:
    """A study's report, in words: the answer (three to five sentences, each with its number), then
    one :class:`Finding` per section."""

    answer: tuple[str, ...] = ()
    findings: tuple[Finding, ...] = ()


@dataclass(frozen=True)
class Sections:
    """A study's report pieces beyond its claims, each list in report order: ``tables`` (its theory
    numbers) and ``results`` (its simulation results), :class:`~.report.entries.Table` records;
    ``figures``, :class:`~.report.entries.FigureEntry` records (the report draws each once); and
    ``derivations``, :class:`~depthscale.theory.derivation.Derivation` objects the report typesets.

    Anything else in ``tables``, ``results`` or ``figures`` is refused, naming the field and the item.
    """

    tables: tuple[Any, ...] = ()
    figures: tuple[Any, ...] = ()
    results: tuple[Any, ...] = ()
    derivations: tuple[Any, ...] = ()

    def __post_init__(self) -> None:
        from .report.entries import FigureEntry, Table

        for name in ("tables", "figures", "results", "derivations"):
            value = getattr(self, name)
            if isinstance(value, str | bytes | Mapping) or not isinstance(value, Iterable):
                bad_argument(name, value, "a tuple (or list)")
            object.__setattr__(self, name, tuple(value))
        for name, kind in (("tables", Table), ("results", Table), ("figures", FigureEntry)):
            for i, item in enumerate(getattr(self, name)):
                if not isinstance(item, kind):
                    bad_argument(f"{name}[{i}]", item, f"a {kind.__name__} record (depthscale.derivations.study)")


MAX_PRIMARY = 5  # a study decides a few things; the rest of its claims are exploratory


@dataclass(frozen=True)
class Study:
    """One study: its question, its presets, its claims, the theory numbers it needs and its story.

    Attributes
    ----------
    name : str
        Lower case letters, digits and hyphens (``my-study``); the registry line's name.
    question : str
        The question it answers, one sentence.
    package : str
        The import name of the package that holds it; its presets are ``presets/<preset>.toml`` there.
    presets : tuple of str
        Its preset names (``depthscale reproduce --preset NAME``), the first the default.
    claims : tuple of Claim
        Its claims, in report order (ids unique across all studies).
    theory : callable or None
        ``theory(inputs: TheoryInputs) -> object``: the theory numbers its claims and sections read,
        computed once per report and kept in ``TheoryNumbers.studies[name]``. None: it needs none.
    sections : callable or None
        ``sections(ev: Evidence) -> Sections``: its tables, figures and derivations; the report shows
        those of each of its ``report_studies`` in that order, and nothing else beyond the claims.
    story : callable or None
        ``story(results: list[ClaimResult], ev: Evidence) -> Story``: the answer sentences and the
        findings, from the decided claims. None: the report states each claim's results in turn.
    report_studies : tuple of str
        The studies whose claims, theory numbers and sections a report of this study's presets
        holds, in report order (this one included); empty: this one alone.
    contexts : mapping
        ``{preset: (floor contexts, reference contexts)}`` of the theory Monte Carlo in a report of
        that preset; a preset not named gets :data:`DEFAULT_CONTEXTS`.
    primary : tuple of str
        The ids of its primary claims (at most :data:`MAX_PRIMARY`, each one of ``claims``): what the
        study was run to decide. Its reports list them first; every other claim there is exploratory
        and says so.
    """

    name: str
    question: str
    package: str
    presets: tuple[str, ...] = ()
    claims: tuple[Claim, ...] = ()
    theory: Callable[[TheoryInputs], object] | None = None
    sections: Callable[[Any], Sections] | None = None
    story: Callable[[list, Any], Story] | None = None
    report_studies: tuple[str, ...] = ()
    contexts: Mapping[str, tuple[int, int]] = field(default_factory=dict)
    primary: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        for name in ("presets", "claims", "report_studies", "primary"):  # sequences, kept as tuples (a str is refused)
            value = getattr(self, name)
            if isinstance(value, str | bytes) or not isinstance(value, Iterable):
                bad_argument(name, value, "a tuple (or list)")
            object.__setattr__(self, name, tuple(value))
        if not isinstance(self.contexts, Mapping):
            bad_argument("contexts", self.contexts, "a mapping {preset: (floor contexts, reference contexts)}")
        for field_name in ("theory", "sections", "story"):
            if getattr(self, field_name) is not None and not callable(getattr(self, field_name)):
                bad_argument(field_name, getattr(self, field_name), "None or a function")
        if not isinstance(self.package, str) or not self.package.strip():
            bad_argument("package", self.package, "the import name of the study's package, such as __name__")
        if not isinstance(self.name, str) or not _NAME.match(self.name):
            bad_argument("name", self.name, "lower case letters, digits and hyphens, starting with a letter")
        if not isinstance(self.question, str) or not self.question.strip():
            bad_argument("question", self.question, "one sentence")
        from .claims.claim import Claim

        for i, c in enumerate(self.claims):
            if not isinstance(c, Claim):
                bad_argument(f"claims[{i}]", c, "a Claim record")
        ids = [c.id for c in self.claims]
        repeated = sorted({i for i in ids if ids.count(i) > 1})
        if repeated:  # a report would decide and show such a claim twice
            bad_argument("claims", repeated, "claims with distinct ids (these ids repeat)")
        for p in self.presets:
            if not isinstance(p, str) or not _NAME.match(p):
                bad_argument("presets", p, "names of lower case letters, digits and hyphens")
        if len(set(self.presets)) != len(self.presets):
            bad_argument("presets", self.presets, "distinct names")
        for r in self.report_studies:
            if not isinstance(r, str) or not _NAME.match(r):
                bad_argument("report_studies", r, "study names")
        for preset, sizes in self.contexts.items():
            if not (isinstance(sizes, tuple | list) and len(sizes) == 2 and all(isinstance(n, int) for n in sizes)):
                bad_argument(f"contexts[{preset!r}]", sizes, "a pair of integers (floor contexts, reference contexts)")
        unknown = sorted(set(self.contexts) - set(self.presets))
        if unknown:
            bad_argument("contexts", unknown, f"presets of the study ({', '.join(self.presets) or 'none'})")
        if len(self.primary) > MAX_PRIMARY or not set(self.primary) <= set(ids):
            bad_argument("primary", self.primary, f"at most {MAX_PRIMARY} ids of the study's own claims")

    def preset_path(self, preset: str) -> Traversable:
        """The TOML file of one of its presets (package data of the study's package)."""
        if preset not in self.presets:
            bad_argument("preset", preset, f"one of the presets of study {self.name!r}: {', '.join(self.presets)}")
        return resources.files(self.package).joinpath("presets", f"{preset}.toml")

    @property
    def preset_paths(self) -> dict[str, Traversable]:
        """``{preset: path}`` of its preset TOMLs."""
        return {p: self.preset_path(p) for p in self.presets}

    def preset_description(self, preset: str) -> str:
        """The top-level ``description`` of a preset's TOML (what it decides, and what it leaves to
        which other preset), or ``""``; a report of the preset ends its answer with it."""
        import tomllib

        data = tomllib.loads(self.preset_path(preset).read_text(encoding="utf-8"))
        return " ".join(str(data.get("description", "")).split())

    def contexts_of(self, preset: str) -> tuple[int, int]:
        """``(floor contexts, reference contexts)`` of a report of ``preset``."""
        return tuple(self.contexts.get(preset, DEFAULT_CONTEXTS))  # type: ignore[return-value]


# ------------------------------------------------------------------------------------------------ registry
def _entry_points() -> Iterable[metadata.EntryPoint]:
    return metadata.entry_points(group=ENTRY_POINT_GROUP)


def studies() -> dict[str, Study]:
    """Every registered study that loads, ``{name: Study}``, sorted by name (entry-point group
    ``depthscale.studies``): a new dict each call, so a caller's change does not reach the registry.

    A registry line that cannot be used (its module fails to import, it lacks its attribute, its
    object is not a :class:`Study` or is named otherwise, or its study repeats a preset, a claim id
    or names an unknown study in ``report_studies``) costs one warning line on stderr naming the
    entry point and the reason, and is left out: the other studies work as before, and only a
    request for that study (:func:`study`, :func:`find_preset`) fails, naming it.
    """
    return dict(_registry()[0])


def broken_studies() -> dict[str, str]:
    """``{entry point name: reason}`` of the registry lines left out (see :func:`studies`)."""
    return dict(_registry()[1])


def reload_studies() -> None:
    """Read the entry points again (a study installed while the process runs; tests)."""
    _registry.cache_clear()


def _study_of(ep: metadata.EntryPoint, obj: Any, found: Mapping[str, Study]) -> Study:
    """The Study of one registry line (``obj``: what it names) beside the studies accepted so far;
    raises ``ValueError`` saying why it cannot be used."""
    if not isinstance(obj, Study):
        raise ValueError(f"names a {type(obj).__name__}, not a Study record")
    if obj.name != ep.name:
        raise ValueError(f"names the study {obj.name!r}; the entry point must have that name")
    _check_unique({**found, ep.name: obj}, new=ep.name)
    return obj


def _builtin_first(ep: metadata.EntryPoint) -> tuple[bool, str]:
    # this distribution's studies are accepted first: a plugin that collides with them is the one left out
    dist = getattr(ep, "dist", None)
    return (getattr(dist, "name", None) != "depthscale", ep.name)


@cache
def _registry() -> tuple[dict[str, Study], dict[str, str]]:
    """The registry and the lines left out, read once (:func:`reload_studies` reads it again)."""
    from ..sims.plugins import read_plugins, warn_left_out

    lines = read_plugins(sorted(_entry_points(), key=_builtin_first), _study_of)
    found: dict[str, Study] = lines.loaded
    broken = lines.broken
    changed = True
    while changed:  # report_studies may name a study that did not load (or was left out just now)
        changed = False
        for name in sorted(found):
            missing = [r for r in found[name].report_studies if r not in found]
            if missing:
                broken[name] = f"report_studies names {missing[0]!r}, which is not a registered study that loads"
                del found[name]
                changed = True
    warn_left_out("study plugin", ENTRY_POINT_GROUP, lines)
    return dict(sorted(found.items())), broken


def _check_unique(found: Mapping[str, Study], new: str) -> None:
    """Raise ``ValueError`` if the study ``new`` repeats a preset or claim id of the others in ``found``."""
    s = found[new]
    presets = {p: o.name for o in found.values() if o.name != new for p in o.presets}
    ids = {c.id: o.name for o in found.values() if o.name != new for c in o.claims}
    for p in s.presets:
        if p in presets or (p in found and p != new):
            raise ValueError(f"preset {p!r} of study {new!r}: already a preset or study name ({presets.get(p, p)})")
    for p in presets:
        if p == new:
            raise ValueError(f"study name {new!r}: already a preset of study {presets[p]!r}")
    for c in s.claims:
        if c.id in ids:
            raise ValueError(f"claim {c.id!r} of study {new!r}: already a claim of study {ids[c.id]!r}")


def study(name: str) -> Study:
    """The registered study called ``name``."""
    got = studies()
    if name not in got:
        _refuse_broken("study", name)
        bad_argument("study", name, "a registered study: " + (", ".join(got) or "none registered"))
    return got[name]


def _refuse_broken(parameter: str, name: str) -> None:
    """Refuse ``name`` if it is a registry line that was left out, saying why."""
    broken = broken_studies()
    if name in broken:
        bad_argument(parameter, name, f"a study that loads; its study plugin was left out: {broken[name]}")


def preset_names() -> list[str]:
    """Every preset of every registered study, study by study."""
    return [p for s in studies().values() for p in s.presets]


def quick_names() -> set[str] | None:
    """Every registered study's name and the names of the TOML files in its ``presets/`` folder,
    found without importing a study (each imports SciPy and Matplotlib), so that an unknown name is
    refused at once; None where a study's package cannot be located without importing it."""
    from importlib.util import find_spec

    names = set()
    for ep in _entry_points():
        names.add(ep.name)  # a line that will not load passes here, to be refused naming its reason
        try:
            spec = find_spec(ep.module)  # imports the parent packages only
        except (Exception, SystemExit):  # a third party's parent package failed: that line is broken
            continue
        if spec is None:  # no such module: that line is broken, the others' names still hold
            continue
        if not spec.submodule_search_locations:
            return None
        for folder in spec.submodule_search_locations:
            names.update(p.stem for p in Path(folder, "presets").glob("*.toml"))
    return names


def check_preset_name(name: str) -> str:
    """Refuse, without importing a study, a name that is no registered study or preset file."""
    if not isinstance(name, str):
        raise TypeError(f"preset={name!r}: must be a str, the name of a registered study or preset")
    quick = quick_names()  # a superset of the names find_preset accepts (each preset is a file there)
    if quick is not None and name not in quick:
        bad_argument("preset", name, "a registered study or preset: " + ", ".join(sorted(quick)))
    return name


def find_preset(name: str) -> tuple[Study, str]:
    """``(study, preset)`` for a preset name, or for a study name (its first preset)."""
    check_preset_name(name)
    got = studies()
    for s in got.values():
        if name in s.presets:
            return s, name
    if name in got and got[name].presets:
        return got[name], got[name].presets[0]
    _refuse_broken("preset", name)
    choices = sorted(set(preset_names()) | {n for n, s in got.items() if s.presets})
    left_out = broken_studies()
    note = f" (left out, as warned: {', '.join(sorted(left_out))})" if left_out else ""
    bad_argument("preset", name, "a registered study or preset: " + ", ".join(choices) + note)


def report_studies(s: Study) -> list[Study]:
    """The studies a report of ``s``'s presets holds, in report order."""
    if not isinstance(s, Study):
        raise TypeError(f"s={s!r}: must be a Study (depthscale.derivations.study.study(name) gives one)")
    return [study(n) for n in s.report_studies] if s.report_studies else [s]


def all_claims(of: Iterable[Study] | None = None) -> tuple[Claim, ...]:
    """The claims of these studies (every registered one by default), in study order."""
    chosen = list(studies().values()) if of is None else of
    if isinstance(chosen, str | Study) or not isinstance(chosen, Iterable):
        raise TypeError(f"of={of!r}: must be None or an iterable of Study")
    chosen = list(chosen)
    for i, s in enumerate(chosen):
        if not isinstance(s, Study):
            raise TypeError(f"of[{i}]={s!r}: must be a Study")
    return tuple(c for s in chosen for c in s.claims)


def study_of_claim(claim_id: str) -> Study:
    """The registered study that holds the claim ``claim_id``."""
    for s in studies().values():
        if any(c.id == claim_id for c in s.claims):
            return s
    bad_argument("claim_id", claim_id, "the id of a claim of a registered study")


# ------------------------------------------------------------------------------- the authoring API
# what a study imports from the library, by module under depthscale.derivations: loaded on first
# use, since the report layer imports this module and claims must load without Jinja or SymPy
AUTHORING = {
    "analysis.curve": "EASY_TASKS Curve curves pool_independent pool_paired variant_name",
    "analysis.estimate": "Estimate",
    "analysis.fits": "FitResult fit_gap fit_offset_power fit_power_law",
    "analysis.goodness_of_fit": "LOF_LEVEL LackOfFit lack_of_fit law_rejected least_rejected_law",
    "analysis.reference_values": "LINEAR_EASY_EXPONENTS REFERENCE_D REFERENCE_P",
    "analysis.theory_numbers": "clt_table derivation_checks floor_reference floors linear_table slopes",
    "analysis.trend": "Trend TrendPoint comparable_groups fit_trend trend_points",
    "claims.calibration": "CalibrationRates NoiseModel SeedPlan backing_curve calibrate noise_model plan synthetic_curve",
    "claims.claim": "Claim claim evaluated_with",
    "claims.evidence": "Evidence select_curves",
    "claims.generic": "DISAGREEMENT_TOO_FEW FLOOR_RTOL IDENTITY_TOL INVERSE_DEPTH disagreement_fit "
    "floor_agreement identity_residuals identity_result LawVerdict inverse_depth_verdict",
    "claims.linear_optimum": "OPTIMUM_RTOL OptimumKey OptimumNumbers near_optimum optimum_exponent optimum_limit_note "
    "optimum_numbers_of optimum_of",
    "claims.protocol_rows": "ProtocolFloors ProtocolRow budget_decided budget_note gather_protocol_floors "
    "protocol_curves protocol_floors protocol_of protocol_rows row_label task_label",
    "claims.verdicts": "MIN_EVAL MIN_SEEDS ClaimResult Condition below_zero decision decision_p in_range log_ratio "
    "unidentified within",
    "formatting": "format_estimate format_interval format_percent format_value growth_text",
    "report.answers": "answer_word estimate_text in_these_settings joint_answer number_word quote settings_by short_label "
    "short_tally strength strongest verdict_phrase",
    "report.entries": "FigureEntry NoFigure Table",
    "report.findings": "brief results_of tally",
    "report.figures": "figure_entry",
    "report.figure_drawings": "as_list depth_axis draw_decomposition draw_mode_curves draw_overview error_bars "
    "finite_or_nan mappings new_figure palette panel_grid",
    "report.plots": "inverse_depth_guide legend_below plain_log_ticks plot_trend",
    "report.png": "to_png",
    "report.tables": "calibration_table fits_table plan_table runs_table",
}
_AUTHORED, __getattr__ = lazy_reexports(__name__.rpartition(".")[0], AUTHORING)


__all__ = [
    "ENTRY_POINT_GROUP",
    "DEFAULT_CONTEXTS",
    "MAX_PRIMARY",
    "Study",
    "Story",
    "Finding",
    "Sections",
    "TheoryInputs",
    "studies",
    "broken_studies",
    "study",
    "preset_names",
    "find_preset",
    "report_studies",
    "all_claims",
    "study_of_claim",
    "AUTHORING",
    *_AUTHORED,
]

"""Theory numbers a report needs, computed from the theory package for the conditions of a sweep, and
the record that carries each study's (:class:`TheoryNumbers`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np

from ...theory._validate import bad_argument
from .reference_values import LINEAR_TOP2_FLOORS_THEORY, REFERENCE_D, REFERENCE_P

DEPTHS = (1, 2, 4, 8, 16, 32, 64, 128, 256)


@dataclass(frozen=True)
class TheoryNumbers:
    """The theory numbers claims are tested on (``Evidence.theory``): what each reported study's
    ``theory`` callable computed for a report, in the study's own typed record.

    Attributes
    ----------
    studies : ``{study name: its numbers}`` (:class:`~depthscale.derivations.study.Study`); a study
        absent here computes them when its claims ask (``Evidence.study_numbers``), or its claims say
        the numbers were not computed.

    The functions of this module compute the theory numbers studies share (derivation checks, the
    equal-step slopes, the linear floors, the paper's floors recomputed, the linear-law and
    aggregation tables) from the theory package.

    Examples
    --------
    >>> th = TheoryNumbers(studies={"demo": (1.0, 0.1)})
    >>> th.studies["demo"]
    (1.0, 0.1)
    >>> TheoryNumbers.from_mapping({"studies": {}}) == TheoryNumbers()
    True
    >>> TheoryNumbers.from_mapping({"floor_contxt": {}})
    Traceback (most recent call last):
    ...
    ValueError: theory=['floor_contxt']: must be keys among studies
    """

    studies: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_mapping(cls, numbers: Mapping) -> TheoryNumbers:
        """The theory numbers of a mapping keyed by field name (the form ``Evidence.theory`` had
        before it was typed); a key that names no field is refused, not ignored."""
        names = [f.name for f in fields(cls)]
        unknown = sorted(str(k) for k in numbers if k not in names)
        if unknown:
            bad_argument("theory", unknown, "keys among " + ", ".join(names))
        return cls(**numbers)


def derivation_checks() -> tuple[list, dict]:
    """Build and machine-check every derivation: (objects, {name: [(step title, passed)]})."""
    from ...theory.derivation import DERIVATIONS

    objs, checks = [], {}
    for name, build in DERIVATIONS.items():
        d = build()
        d.name = name  # a report links the derivation's theory page by it
        results = d.check()
        objs.append(d)
        checks[name] = [(r.title, bool(r.passed)) for r in results.steps]
    return objs, checks


def slopes(spectra, d: int = 10**6) -> dict:
    """Local log-log slope of the equal-step law over L in [16, 256] for each (a, b) with a + b > 1."""
    from ...theory.equal_step import r_con
    from ...theory.spectra import PowerLawSpectrum

    out = {}
    for a, b in spectra:
        if a <= 0 or a + b <= 1:
            continue
        spec = PowerLawSpectrum(a=a, b=b, d=d)
        r = r_con(spec, np.array([16.0, 256.0]))
        out[(a, b)] = (float(np.log(r[1] / r[0]) / np.log(16.0)), spec.zeta)
    return out


def linear_table(spectra, d: int, depths=DEPTHS) -> list:
    """The ``predict linear`` numbers for each spectrum (a table per spectrum)."""
    from ...theory.linear_laws import linear_law_columns
    from ...theory.spectra import PowerLawSpectrum

    L = np.array(depths, dtype=np.int64)
    order = ("constrained", "constrained_opt", "free_discrete", "beta_form", "gamma_asymptote", "free_continuum")
    tables = []
    for a, b in spectra:
        spec = PowerLawSpectrum(a=a, b=b, d=d)
        laws = linear_law_columns(spec, L)
        cols = {k: laws[k] for k in order if k in laws}
        names = list(cols)
        rows = [[int(l)] + [float(cols[n][i]) for n in names] for i, l in enumerate(L)]
        z = f"{spec.zeta:.4g}" if a > 0 and a + b > 1 else "n/a"
        tables.append(
            {
                "title": f"Linear-attention depth laws, (a,b)=({a:g},{b:g}), d={d}, zeta={z}",
                "columns": ["L"] + names,
                "rows": rows,
            }
        )
    return tables


def floors(conditions, contexts: int, seed: int = 0, covariance: str = "population") -> dict:
    """``T - h^T G^+ h`` for each (a, b, k, d, P): {key: (floor, stderr)} (``covariance``: see ``linear_floor``)."""
    from ...theory.floor import linear_floor

    out = {}
    for a, b, k, d, P in sorted(set(conditions)):
        r = linear_floor(a, b, k, d, P, contexts, seed, covariance=covariance)
        out[(a, b, k, d, P)] = (float(r.floor), float(r.stderr))
    return out


def floor_reference(contexts: int, seed: int = 0) -> dict:
    """The five top-2 floors of the paper recomputed: {(a, b): (value, stderr, reference)}."""
    D, P = REFERENCE_D, REFERENCE_P
    got = floors([(a, b, 2, D, P) for a, b in LINEAR_TOP2_FLOORS_THEORY], contexts, seed)
    return {(a, b): (*got[(a, b, 2, D, P)], ref) for (a, b), ref in LINEAR_TOP2_FLOORS_THEORY.items()}


def clt_table(sigma2: float = 1.0, shared: float = 0.5, depths=DEPTHS) -> dict:
    """Exact finite-L losses of the aggregation models M1, M2, M4 (AR(1), power law)."""
    from ...theory.clt import clt_loss

    L = list(depths)
    cols = {
        "iid": clt_loss("iid", L, sigma2, shared),
        "equicorrelated rho=0.2": clt_loss("equicorrelated", L, sigma2, shared, rho=0.2),
        "AR(1) r=0.5": clt_loss("ar1", L, sigma2, shared, r=0.5),
        "power law g=0.8": clt_loss("powerlaw", L, sigma2, shared, g=0.8),
    }
    rows = [[l] + [float(c[i]) for c in cols.values()] for i, l in enumerate(L)]
    return {
        "title": f"Aggregation models: R_L with E s^2 = {shared:g}, sigma^2 = {sigma2:g}",
        "columns": ["L"] + list(cols),
        "rows": rows,
    }

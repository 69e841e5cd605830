"""The linear-start study's theory numbers: the best depth-L linear-attention predictor at finite (d, P).

The optimum at the runs' own scale is computed when the report is built (``contexts`` = the
report's floor contexts). The one at d = 128, P = 1024 costs about 2 CPU-minutes per spectrum
at 2,000 contexts, too slow for a report, so it is read from ``data/linear_optimum_d128_P1024.csv``
(package data of this study), written by :func:`write_reference`
(``python -m depthscale.studies.linear_start.theory OUT.csv``); the file records the contexts and
the seed, and ``tests/derivations/test_linear_optimum_claims.py`` recomputes a part of it.
:func:`theory_numbers` gathers both into an :class:`~depthscale.derivations.study.OptimumNumbers`
record (the library's, which the core study's linear-exponent row reads too).
"""

from __future__ import annotations

import csv
import io
from importlib import resources

import numpy as np

from depthscale.derivations.study import (
    EASY_TASKS,
    LINEAR_EASY_EXPONENTS,
    REFERENCE_D,
    REFERENCE_P,
    OptimumNumbers,
    TheoryInputs,
    optimum_exponent,
)
from depthscale.theory.linear_optimum import DEPTH_LIMIT

NAME = "linear-start"  # the study's name: its numbers are TheoryNumbers.studies[NAME]
REFERENCE_DEPTHS = (1, 2, 4, 8, 16, 32, 64)  # the paper's grid (1..256) up to the deepest the optimum takes
REFERENCE_FILE = "linear_optimum_d128_P1024.csv"
_COLUMNS = ("a", "b", "L", "loss", "se", "in_sample", "contexts", "seed")


def theory_numbers(inputs: TheoryInputs) -> OptimumNumbers:
    """The study's numbers for a report (``inputs``: a :class:`~depthscale.derivations.study.TheoryInputs`):
    the optimum at every linear easy-task curve's scale (as many contexts as the floors) and, unless
    the report skips the reference (0 reference contexts), the cached exponents at d = 128, P = 1024."""
    return OptimumNumbers(
        at_runs=optimum_numbers(inputs.curves, inputs.floor_contexts),
        reference=reference_exponents() if inputs.reference_contexts else {},
        contexts=inputs.floor_contexts,
    )


def optimum_at(a, b, d, P, depths, contexts, seed=0, task="easy-fresh") -> dict:
    """``{L: (loss, se, in_sample, equal_step, equal_step_se)}`` of the optimum (and of the best
    equal-step predictor) at the depths ``<= DEPTH_LIMIT`` (64; one BLAS thread).

    >>> out = optimum_at(2.0, 1.0, 8, 32, [1, 2], contexts=100)
    >>> sorted(out), all(v[1] > 0 for v in out.values())
    ([1, 2], True)
    """
    from depthscale.sims.threads import one_blas_thread
    from depthscale.theory.linear_optimum import linear_optimum

    Ls = sorted(int(L) for L in depths if int(L) <= DEPTH_LIMIT)
    if not Ls:
        return {}
    with one_blas_thread():
        r = linear_optimum(a, b, d, P, Ls, contexts, seed, task=task)
    cols = zip(r.depths, r.loss, r.se, r.in_sample, r.equal_step, r.equal_step_se)
    return {int(L): (float(v), float(s), float(i), float(e), float(es)) for L, v, s, i, e, es in cols}


def optimum_numbers(cs, contexts: int, seed: int = 0) -> dict:
    """The optimum for every linear easy-task curve: ``{(a, b, d, P, task): {L: (loss, se, in_sample)}}``."""
    keys = sorted({(c.a, c.b, c.d, c.P, c.task) for c in cs if c.model == "linear" and c.task in EASY_TASKS})
    out = {}
    for a, b, d, P, task in keys:
        depths = sorted({int(L) for c in cs if (c.a, c.b, c.d, c.P, c.task) == (a, b, d, P, task) for L in c.depths})
        out[(a, b, d, P, task)] = optimum_at(a, b, d, P, depths, contexts, seed, task)
    return out


def write_reference(path, contexts: int = 2000, seed: int = 22, spectra=None) -> None:
    """Compute the optimum at d = 128, P = 1024 over :data:`REFERENCE_DEPTHS` and write the CSV cache."""
    rows = []
    for a, b in spectra or LINEAR_EASY_EXPONENTS:
        got = optimum_at(a, b, REFERENCE_D, REFERENCE_P, REFERENCE_DEPTHS, contexts, seed)
        rows += [(a, b, L, *got[L][:3], contexts, seed) for L in REFERENCE_DEPTHS]
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(_COLUMNS)
        for r in rows:
            w.writerow([f"{v:g}" if isinstance(v, float) and v == int(v) else repr(v) for v in r])


def load_reference(text: str | None = None) -> dict:
    """The cached optimum at d = 128, P = 1024: ``{(a, b): {"L", "loss", "se", "in_sample" arrays, "contexts", "seed"}}``.

    >>> ref = load_reference()
    >>> sorted(ref) == sorted(LINEAR_EASY_EXPONENTS) and ref[(2.0, 1.0)]["L"].tolist()[:3]
    [1, 2, 4]
    """
    if text is None:
        text = resources.files(__package__).joinpath("data", REFERENCE_FILE).read_text()
    rows = list(csv.DictReader(io.StringIO(text)))
    out: dict = {}
    for r in rows:
        key = (float(r["a"]), float(r["b"]))
        e = out.setdefault(key, {"L": [], "loss": [], "se": [], "in_sample": [], "contexts": 0, "seed": 0})
        for name in ("L", "loss", "se", "in_sample"):
            e[name].append(float(r[name]))
        e["contexts"], e["seed"] = int(r["contexts"]), int(r["seed"])
    for e in out.values():
        for name in ("loss", "se", "in_sample"):
            e[name] = np.array(e[name])
        e["L"] = np.array(e["L"], dtype=int)
    return out


def reference_exponents(ref: dict | None = None) -> dict:
    """``{(a, b): (alpha, se, alpha_in_sample, paper, contexts)}`` from the cache (the paper's spectra only)."""
    ref = load_reference() if ref is None else ref
    out = {}
    for (a, b), paper in LINEAR_EASY_EXPONENTS.items():
        e = ref.get((a, b))
        if e is None:
            continue
        alpha, se = optimum_exponent(e["L"], e["loss"], e["se"])
        alpha_in = optimum_exponent(e["L"], e["in_sample"], e["se"])[0]
        out[(a, b)] = (alpha, se, alpha_in, paper, e["contexts"])
    return out


__all__ = [
    "NAME",
    "theory_numbers",
    "optimum_at",
    "optimum_numbers",
    "write_reference",
    "load_reference",
    "reference_exponents",
    "REFERENCE_DEPTHS",
    "REFERENCE_FILE",
]

if __name__ == "__main__":  # regenerate the cache: python -m depthscale.studies.linear_start.theory OUT.csv
    import sys

    write_reference(sys.argv[1], contexts=int(sys.argv[2]) if len(sys.argv) > 2 else 2000)

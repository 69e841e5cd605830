"""Machine-checked derivations: steps of equations with justifications and their checks.

A :class:`Derivation` is an ordered list of :class:`Step` objects. Each step states an equation
``lhs = rhs`` (or an asymptotic equivalence ``lhs ~ rhs`` as a variable tends to infinity) with a
one-sentence justification and the parameter ranges in which it holds. :meth:`Step.check` verifies
the step by machine:

1. symbolically, by reducing ``lhs - rhs`` to zero with targeted sympy transformations (each attempt
   under a time limit), optionally at several fixed sizes (e.g. an ``L x L`` matrix for L = 2..5);
2. where that fails, numerically with mpmath at random parameter points inside the stated ranges,
   requiring a relative agreement of ``1e-25`` at 40 digits;
3. for asymptotic steps, by the ratio ``lhs / rhs`` at growing values of the limit variable, which
   must approach 1 monotonically and end within a stated tolerance (or by ``sympy.limit``).

This module is mathematics; rendering a derivation to Markdown, HTML (MathML) or LaTeX is the job
of :mod:`depthscale.theory.render_derivation`, which :meth:`Derivation.to_markdown`,
:meth:`Derivation.to_html`, :meth:`Derivation.to_latex` and the notebook displays call. The texts of a derivation (title,
introduction, justifications, notes, parameter descriptions) are prose with inline formulas
between dollar signs, LaTeX inside (``"Insert $\\lambda_k = c_\\lambda k^{-a}$."``), the markup
described in :mod:`depthscale.theory.typeset`.

Examples
--------
>>> import sympy as sp

from depthscale.theory.derivation_index import BUILDERS
>>> x = sp.Symbol("x", positive=True)
>>> step = Step("Square of a sum", (x + 1) ** 2, x**2 + 2 * x + 1, "Expand the square.",
...             assumptions={x: (0.1, 3)}, transforms=("expand",))
>>> step.check().passed
True
"""

from __future__ import annotations

import importlib
import signal
import threading
import time
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass, field

import mpmath
import numpy as np
import sympy as sp

from ._validate import check_bool, check_choice
from .derivation_index import BUILDERS

__all__ = ["Step", "StepResult", "Result", "Derivation", "DerivationResult", "DERIVATIONS", "build_derivation"]

RELATIONS = ("=", "~")


# --------------------------------------------------------------------------------------------
# results
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class StepResult:
    """Outcome of one step's machine check.

    ``method`` names how the step was verified (e.g. ``"symbolic (gammasimp)"``, ``"numeric"``,
    ``"ratio"``); ``error`` is 0 for a symbolic proof, the largest relative discrepancy for a
    numeric check, and the final ``|ratio - 1|`` for an asymptotic one.
    """

    title: str
    method: str
    passed: bool
    error: float
    detail: str = ""

    def to_dict(self) -> dict:
        """Return a JSON-able dict.

        >>> StepResult("s", "numeric", True, 0.0).to_dict()["passed"]
        True
        """
        return {
            "title": self.title,
            "method": self.method,
            "passed": bool(self.passed),
            "error": float(self.error),
            "detail": self.detail,
        }


@dataclass(frozen=True)
class DerivationResult:
    """Per-step results of :meth:`Derivation.check` and whether all of them passed."""

    steps: tuple
    all_passed: bool

    def failed(self) -> list:
        """Titles of the steps whose check failed.

        >>> DerivationResult((StepResult("s", "numeric", False, 1.0),), False).failed()
        ['s']
        """
        return [r.title for r in self.steps if not r.passed]


# --------------------------------------------------------------------------------------------
# time limit for one symbolic attempt (sympy can run for minutes on a hard expression)
# --------------------------------------------------------------------------------------------
class _TimeUp(Exception):
    pass


@contextmanager
def _time_limit(seconds: float):
    # SIGALRM only works in the main thread; elsewhere the attempt simply runs unbounded.
    if seconds is None or threading.current_thread() is not threading.main_thread() or not hasattr(signal, "setitimer"):
        yield
        return

    def _raise(signum, frame):
        raise _TimeUp()

    # an outer alarm (e.g. a test-runner timeout) is suspended and re-armed with its remaining time
    outer = signal.getitimer(signal.ITIMER_REAL)[0]
    start = time.monotonic()
    old = signal.signal(signal.SIGALRM, _raise)
    signal.setitimer(signal.ITIMER_REAL, seconds if not outer else min(seconds, outer))
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
        if outer:
            signal.setitimer(signal.ITIMER_REAL, max(outer - (time.monotonic() - start), 1e-3))


def _generic_branch(expr):
    """Replace each Piecewise by its 'otherwise' branch (special points such as r = 1 lie outside the domain)."""
    return expr.replace(
        lambda e: isinstance(e, sp.Piecewise), lambda e: e.args[-1].expr if e.args[-1].cond is sp.true else e
    )


_TRANSFORMS: dict[str, Callable] = {
    "expand": lambda e: sp.expand(e),
    "subs": lambda e: sp.expand(
        e.replace(lambda x: isinstance(x, sp.Subs), lambda x: x.expr.subs(dict(zip(x.variables, x.point))))
    ),
    "powsimp": lambda e: sp.expand(sp.powsimp(sp.powdenest(e, force=True), force=True)),
    "together": lambda e: sp.cancel(sp.together(e)),
    "gammasimp": lambda e: sp.gammasimp(e),
    "combsimp": lambda e: sp.combsimp(e),
    "expand_func": lambda e: sp.gammasimp(sp.expand_func(e)),
    "simplify": lambda e: sp.simplify(e),
    "doit": lambda e: sp.simplify(sp.expand(e.doit())),
    "doit-generic": lambda e: sp.simplify(_generic_branch(sp.piecewise_fold(e.doit()))),
}


def _evaluable(expr):
    """Prepare an expression for mpmath: carry out derivatives and Subs, put integrals on a log scale."""
    expr = expr.replace(lambda x: isinstance(x, (sp.Derivative, sp.Subs)), lambda x: x.doit())
    return expr.replace(lambda x: isinstance(x, sp.Integral), _log_scale)


_LOG_PIECES = (0, 1, 4, 16, 64, 256, 1000)  # t-breakpoints; exp(1000) ~ 1e434


def _log_scale(integral):
    # Quadrature nodes stop near the working epsilon, which loses the mass of an integrable
    # singularity x^(s-1) at 0 (or of a slow algebraic tail at oo) to ~eps^s. On the scale
    # x = hi*exp(-t) (resp. lo*exp(t)) both spread over t in (0, 1000), which quadrature resolves
    # piece by piece; the remaining sliver (below hi*e^-1000, resp. above lo*e^1000) is integrated in x
    # itself, where the truncation loss is now far below any tolerance. t stays finite so that
    # integrands such as exp(-x) never meet astronomically large arguments.
    if len(integral.limits) != 1 or len(integral.limits[0]) != 3:
        return integral
    x, lo, hi = integral.limits[0]
    f = integral.function
    if lo == 0 and hi is sp.oo:
        return _log_scale(sp.Integral(f, (x, 0, 1))) + _log_scale(sp.Integral(f, (x, 1, sp.oo)))
    t = sp.Dummy("t", positive=True)
    if lo == 0 and hi.is_finite and hi.is_positive:
        g = hi * sp.exp(-t)
        rest = sp.Integral(f, (x, 0, hi * sp.exp(-_LOG_PIECES[-1])))
    elif hi is sp.oo and lo.is_positive and lo.is_finite:
        g = lo * sp.exp(t)
        rest = sp.Integral(f, (x, lo * sp.exp(_LOG_PIECES[-1]), sp.oo))
    else:
        return integral
    h = f.subs(x, g) * g
    return rest + sp.Add(*(sp.Integral(h, (t, u, v)) for u, v in zip(_LOG_PIECES[:-1], _LOG_PIECES[1:])))


def _is_zero(e) -> bool:
    return e == 0 or e.is_zero is True


# --------------------------------------------------------------------------------------------
# steps
# --------------------------------------------------------------------------------------------
@dataclass
class Step:
    """One machine-checked step ``lhs = rhs`` (``relation="="``) or ``lhs ~ rhs`` (``relation="~"``).

    Parameters
    ----------
    title : str
        Short name of the step (prose).
    lhs, rhs : sympy expressions
        The two sides as displayed. They may contain unevaluated ``Sum``/``Integral`` objects.
    justification : str
        One sentence saying why the step holds (prose with inline formulas in ``$...$``).
    assumptions : dict
        ``{symbol: (lo, hi)}`` ranges in which the step holds; numeric checks sample inside them
        (integers for symbols declared ``integer=True``). Symbols should also carry sympy
        assumptions (e.g. ``positive=True``) so that simplification may use them.
    relation : {"=", "~"}
        Equality or asymptotic equivalence.
    limit : sympy.Symbol, optional
        For ``"~"``: the variable that tends to infinity.
    limit_points : tuple of float
        For ``"~"``: values of ``limit`` at which the ratio ``lhs/rhs`` is evaluated.
    tolerance : float
        For ``"~"``: the largest allowed ``|ratio - 1|`` at the last limit point.
    transforms : tuple
        Names of symbolic attempts, tried in order on ``lhs - rhs`` (``"expand"``, ``"powsimp"``,
        ``"together"``, ``"subs"`` (evaluate ``Subs`` objects only), ``"gammasimp"``, ``"combsimp"``,
        ``"expand_func"``, ``"simplify"``,
        ``"doit"``, ``"doit-generic"``) or callables. Empty: go straight to numbers.
    instances : list of dict, optional
        Fixed substitutions (e.g. ``[{L: 2}, ..., {L: 5}]``); the symbolic check must succeed at
        every one of them, and numeric points are drawn at each of them.
    definitions : dict, optional
        Substitutions applied before checking (e.g. ``{zeta: (a + b - 1)/a}``).
    numeric : callable, optional
        ``numeric(values) -> (lhs_value, rhs_value)`` with mpmath numbers (``values`` maps each
        symbol to an mpmath number, integers to ints), for sides that cannot be evaluated from their
        expression (a minimum over polynomials, a very long sum). Return ``None`` for a side that
        should be evaluated from its expression as usual, so that what is displayed is what is checked.
    symbolic_limit : bool
        For ``"~"``: first try ``sympy.limit(lhs/rhs)``.
    abs_scale : float, optional
        For ``"="`` steps whose sides may vanish (e.g. an orthogonality relation): the error is
        ``|lhs - rhs| / max(|lhs|, |rhs|, abs_scale)``, i.e. absolute below ``abs_scale``.
    ratio_floor : float
        For ``"~"``: deviations ``|ratio - 1|`` below this count as rounding when judging monotonicity.
    note : str
        Extra text shown after the equation (prose, e.g. ``"as $k \\to \\infty$"``).

    Examples
    --------
    >>> L = sp.Symbol("L", positive=True)
    >>> s = Step("Leading order", L + 1, L, "The constant is negligible.", assumptions={},
    ...          relation="~", limit=L)
    >>> s.check().method
    'ratio'
    """

    title: str
    lhs: object
    rhs: object
    justification: str
    assumptions: dict = field(default_factory=dict)
    relation: str = "="
    limit: object = None
    limit_points: tuple = (1e3, 1e5, 1e7)
    tolerance: float = 1e-2
    transforms: tuple = ("simplify",)
    instances: list | None = None
    definitions: dict | None = None
    numeric: Callable | None = None
    symbolic_limit: bool = False
    note: str = ""
    n_points: int = 4
    digits: int = 40
    rel_tol: float = 1e-25
    time_limit: float = 10.0
    ratio_floor: float = 1e-12
    abs_scale: float | None = None

    def __post_init__(self):
        if self.relation not in RELATIONS:
            check_choice("relation", self.relation, RELATIONS)
        if self.relation == "~" and self.limit is None:
            raise ValueError("limit=None: an asymptotic step needs the symbol that tends to infinity")
        for sym, rng in self.assumptions.items():
            lo, hi = rng
            if not lo <= hi:
                raise ValueError(f"assumptions[{sym}]={rng!r}: must be a range (lo, hi) with lo <= hi")

    # ---- helpers --------------------------------------------------------------------------
    def _prepared(self, expr):
        expr = sp.sympify(expr)
        if self.definitions:
            # xreplace, not subs: it also reaches indexed terms such as lambda[k] inside a Sum
            expr = expr.xreplace(self.definitions)
        return expr

    def _sample(self, rng) -> dict:
        vals = {}
        for sym, (lo, hi) in self.assumptions.items():
            if getattr(sym, "is_integer", False):
                vals[sym] = sp.Integer(int(rng.integers(int(lo), int(hi) + 1)))
            else:
                # exact rationals with 6 decimals: both sides are evaluated at exactly the same point
                vals[sym] = sp.Rational(round(float(rng.uniform(lo, hi)) * 10**6), 10**6)
        return vals

    def _evaluate(self, vals: dict, dps: int, exact_ints: bool = True):
        """Both sides as mpmath numbers at ``dps`` digits (integer symbols passed as Python ints)."""
        args = {
            s: (int(v) if getattr(s, "is_integer", False) else mpmath.mpf(sp.Float(v, dps))) for s, v in vals.items()
        }
        out = []
        with mpmath.workdps(dps):
            custom = self.numeric(args) if self.numeric is not None else (None, None)
            # small integers go in exactly first (jacobi(3, ...) becomes an explicit polynomial);
            # large ones stay numeric so that e.g. gamma(2*10**7) is not expanded exactly
            exact = {
                s: v for s, v in vals.items() if exact_ints and getattr(s, "is_integer", False) and abs(int(v)) <= 100
            }
            for side, given in zip((self.lhs, self.rhs), custom):
                if given is not None:
                    out.append(mpmath.mpmathify(given))
                    continue
                expr = _evaluable(self._prepared(side).subs(exact))
                syms = sorted(expr.free_symbols, key=str)
                missing = [s for s in syms if s not in args]
                if missing:
                    raise ValueError(f"step {self.title!r}: no value for {', '.join(map(str, missing))}")
                fn = sp.lambdify(syms, expr, modules="mpmath")
                out.append(mpmath.mpmathify(fn(*(args[s] for s in syms))))
            return out[0], out[1]

    # ---- the check ------------------------------------------------------------------------
    def _repr_markdown_(self) -> str:
        from .display import step_markdown

        return step_markdown(self)

    def check(self, seed: int = 0) -> StepResult:
        """Machine-check the step; see the class docstring for the methods used.

        Parameters
        ----------
        seed : int
            Seed of the random parameter points of the numeric checks.

        Returns
        -------
        StepResult

        Examples
        --------
        >>> x = sp.Symbol("x", positive=True)
        >>> Step("wrong", x**2, x**3, "Deliberately false.", assumptions={x: (2, 3)},
        ...      transforms=()).check().passed
        False
        """
        if self.relation == "=":
            return self._check_equal(seed)
        return self._check_asymptotic(seed)

    def _check_equal(self, seed: int) -> StepResult:
        diff = self._prepared(self.lhs) - self._prepared(self.rhs)
        instances = self.instances or [{}]
        where = _describe_instances(self.instances)
        tried = []
        for t in self.transforms:
            fn = _TRANSFORMS[t] if isinstance(t, str) else t
            name = t if isinstance(t, str) else getattr(t, "__name__", "custom")
            ok = True
            try:
                with _time_limit(self.time_limit):
                    for inst in instances:
                        if not _is_zero(fn(diff.subs(inst))):
                            ok = False
                            break
            except _TimeUp:
                ok = False
                name += " (timed out)"
            except Exception as exc:  # a transformation that cannot handle the expression
                ok = False
                name += f" (error: {type(exc).__name__})"
            if ok:
                return StepResult(self.title, f"symbolic ({name}){where}", True, 0.0, "lhs - rhs reduces to 0")
            tried.append(name)
        # numeric fallback
        rng = np.random.default_rng(seed)
        worst = 0.0
        npts = 0
        for inst in instances:
            for _ in range(self.n_points):
                vals = self._sample(rng)
                vals.update({k: sp.sympify(v) for k, v in inst.items()})
                try:
                    lv, rv = self._evaluate(vals, self.digits + 10)
                except (ValueError, TypeError, ZeroDivisionError) as exc:
                    return StepResult(self.title, "numeric", False, float("inf"), f"evaluation failed: {exc}")
                with mpmath.workdps(self.digits + 10):
                    scale = max(abs(lv), abs(rv), mpmath.mpf(self.abs_scale or 0))
                    if scale == 0:  # both sides exactly zero
                        scale = mpmath.mpf(1)
                    err = float(abs(lv - rv) / scale)
                worst = max(worst, err)
                npts += 1
        passed = worst <= self.rel_tol
        detail = f"{npts} random points, {self.digits} digits, max relative error {worst:.2g}" + (
            f"; symbolic attempts failed: {', '.join(tried)}" if tried else ""
        )
        return StepResult(self.title, f"numeric{where}", passed, worst, detail)

    def _check_asymptotic(self, seed: int) -> StepResult:
        if self.symbolic_limit:
            try:
                with _time_limit(self.time_limit):
                    ratio = self._prepared(self.lhs) / self._prepared(self.rhs)
                    lim = sp.limit(ratio, self.limit, sp.oo)
                    if _is_zero(sp.simplify(lim - 1)):
                        return StepResult(self.title, "sympy limit", True, 0.0, "lim lhs/rhs = 1")
            except _TimeUp:
                pass
            except Exception:  # noqa: BLE001 - fall back to numbers whatever sympy's problem was
                pass
        rng = np.random.default_rng(seed)
        worst = 0.0
        monotone = True
        first: list[float] | None = None
        floor = self.ratio_floor  # deviations below this are rounding, not a trend
        for _ in range(max(1, self.n_points if self.assumptions else 1)):
            vals = self._sample(rng)
            devs = []
            for Lv in self.limit_points:
                v = dict(vals)
                v[self.limit] = sp.Integer(int(Lv)) if float(Lv).is_integer() else sp.Float(Lv)
                try:
                    lv, rv = self._evaluate(v, 30, exact_ints=False)
                except (ValueError, TypeError, ZeroDivisionError) as exc:
                    return StepResult(self.title, "ratio", False, float("inf"), f"evaluation failed: {exc}")
                with mpmath.workdps(30):
                    devs.append(float(abs(lv / rv - 1)))
            eff = [max(d, floor) for d in devs]
            if any(eff[i + 1] > eff[i] for i in range(len(eff) - 1)):
                monotone = False
            worst = max(worst, devs[-1])
            if first is None:
                first = devs
        passed = monotone and worst <= self.tolerance
        pts = ", ".join(f"{p:.0e}" for p in self.limit_points)
        detail = (
            f"|ratio - 1| at {self.limit} = {pts}: "
            + ", ".join(f"{d:.2g}" for d in first or [])
            + f" (first point); {'monotone' if monotone else 'NOT monotone'}; "
            f"final max {worst:.2g} vs tolerance {self.tolerance:g}"
        )
        return StepResult(self.title, "ratio", passed, worst, detail)


@dataclass(frozen=True)
class Result:
    """One displayed equation of a derivation's result, as a paper states it (``to_latex(style="paper")``).

    ``lhs relation rhs`` with ``relation`` one of ``"="``, ``"~"`` (asymptotic) or ``"≈"`` (approximate);
    ``condition`` is prose saying where it holds (e.g. ``"for $1 \\ll L \\ll d^a$"``) and ``steps`` the
    numbers of the checked steps it rests on.

    >>> x = sp.Symbol("x")
    >>> Result(x, x, condition="always", steps=(1,)).relation
    '='
    """

    lhs: object
    rhs: object
    relation: str = "="
    condition: str = ""
    steps: tuple = ()


def _describe_instances(instances) -> str:
    if not instances:
        return ""
    keys = sorted({str(k) for inst in instances for k in inst})
    if len(keys) == 1:
        vals = [inst[k] for inst in instances for k in inst]
        return f" at {keys[0]} = {', '.join(str(v) for v in vals)}"
    return f" at {len(instances)} fixed instances"


# --------------------------------------------------------------------------------------------
# derivations
# --------------------------------------------------------------------------------------------
@dataclass
class Derivation:
    """A titled, ordered sequence of checked steps with an introduction and a conclusion.

    Parameters
    ----------
    title, introduction, conclusion : str
        Prose with inline formulas in ``$...$`` (see the module docstring).
    parameters : list of (sympy.Symbol, str, str)
        Each parameter with a description and its domain (prose), e.g.
        ``(a, "spectral decay", "$a > 0$")``.
    steps : list of Step
    results : list of Result, optional
        The result as a paper displays it (``style="paper"``); default: the equation of the last
        asymptotic step and of the last step.

    Examples
    --------
    >>> x = sp.Symbol("x", positive=True)
    >>> d = Derivation("Toy", "A toy.", [(x, "a number", "x > 0")],
    ...                [Step("s", 2 * x, x + x, "Add.", transforms=("expand",))], "Done.")
    >>> d.check().all_passed
    True
    """

    title: str
    introduction: str
    parameters: list
    steps: list
    conclusion: str = ""
    name: str = ""
    results: list = field(default_factory=list)
    _result: DerivationResult | None = field(default=None, repr=False, compare=False)

    def paper_results(self) -> list:
        """The result equations as a paper displays them (``style="paper"``): :attr:`results`, or by
        default the equation of the last asymptotic step and of the last step (as :class:`Result`)."""
        from .typeset import math_latex  # the typesetting module: sympy's printer, only when rendering

        if self.results:
            return list(self.results)
        out = []
        asym = [i for i, s in enumerate(self.steps) if s.relation == "~"]
        for i in ([asym[-1]] if asym else []) + [len(self.steps) - 1]:
            step = self.steps[i]
            cond = f"as ${math_latex(step.limit)} \\to \\infty$" if step.relation == "~" else ""
            out.append(Result(step.lhs, step.rhs, step.relation, cond, (i + 1,)))
        return out

    def check(self, seed: int = 0, force: bool = False) -> DerivationResult:
        """Check every step (cached after the first call unless ``force``).

        Returns
        -------
        DerivationResult
            ``steps`` (one :class:`StepResult` each) and ``all_passed``.
        """
        if self._result is None or force:
            results = tuple(s.check(seed=seed + i) for i, s in enumerate(self.steps))
            self._result = DerivationResult(results, all(r.passed for r in results))
        return self._result

    # ---- rendering: one renderer (depthscale.theory.render_derivation) for every format -------
    def to_markdown(self, level: int = 1, checked: bool | None = None) -> str:
        """The derivation as Markdown: equations in ``$$ ... $$``, inline formulas in ``$ ... $``.

        Parameters
        ----------
        level : int
            Heading level of the title (1 to 6); the steps are one level below.
        checked : bool, optional
            Show the machine checks: True runs them (cached), False leaves them out; None (default)
            shows them when :meth:`check` has already run.
        """
        from .render_derivation import render_derivation

        return render_derivation(self, "md", fragment=True, level=level, checked=self._checked(checked))

    def to_html(self, fragment: bool = False, level: int = 1, checked: bool | None = None) -> str:
        """The derivation as HTML with MathML equations: a self-contained page, or with ``fragment``
        a ``<section>`` to embed (``level``, ``checked`` as in :meth:`to_markdown`)."""
        from .render_derivation import render_derivation

        return render_derivation(self, "html", fragment=fragment, level=level, checked=self._checked(checked))

    def to_latex(self, fragment: bool = False, level: int = 1, checked: bool | None = None, style: str = "full") -> str:
        r"""The derivation as LaTeX: a complete ``article`` (amsmath), or with ``fragment`` a section to
        ``\input`` (``level``, ``checked`` as in :meth:`to_markdown`).

        ``style="full"`` (default) is the whole checked chain, one equation per step; ``style="paper"``
        the result as a few displayed equations with their conditions, exponents simplified, and the
        chain with its checks as an appendix.

        Examples
        --------
        >>> zeta, L = sp.symbols("zeta L", positive=True)
        >>> d = Derivation("Beta", "A Beta function.", [],
        ...                [Step("Same", sp.beta(zeta, 2 * L + 1), sp.beta(zeta, 2 * L + 1), "Nothing.")])
        >>> print(d.to_latex(fragment=True).splitlines()[6])
        \mathrm{B}\left(\zeta, 2 L + 1\right) = \mathrm{B}\left(\zeta, 2 L + 1\right)
        """
        from .render_derivation import render_derivation

        fragment = check_bool("fragment", fragment)
        return render_derivation(
            self, "tex", fragment=fragment, level=level, checked=self._checked(checked), style=style
        )

    def _checked(self, checked: bool | None) -> bool:
        if checked is None:
            return self._result is not None
        if not isinstance(checked, bool):
            raise TypeError(f"checked={checked!r}: must be True, False or None")
        return checked

    def _repr_markdown_(self) -> str:
        return self.to_markdown(level=3)

    def _repr_latex_(self) -> str:
        return self.to_latex(fragment=True, level=3)


# --------------------------------------------------------------------------------------------
# registry (lazy: the builders import this module)
# --------------------------------------------------------------------------------------------
def _lazy(module: str, func: str):
    def build() -> Derivation:
        return getattr(importlib.import_module(f"depthscale.theory.{module}"), func)()

    build.__name__ = func
    build.__doc__ = f"Build the derivation of depthscale.theory.{module}.{func}."
    return build


DERIVATIONS = {name: _lazy(*where) for name, where in BUILDERS.items()}


def build_derivation(name: str) -> Derivation:
    """Build the registered derivation ``name`` (one of ``DERIVATIONS``).

    >>> build_derivation("modes").name
    'modes'
    """
    from ._validate import check_choice

    check_choice("name", name, tuple(DERIVATIONS))
    d = DERIVATIONS[name]()
    d.name = name
    return d

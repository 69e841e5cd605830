"""Machine-checked derivations: steps of equations with justifications, checks and renderers.

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

The same object renders to Markdown, a self-contained HTML page with presentation MathML, and a
LaTeX article. Everything here returns strings; nothing is written to disk.

Examples
--------
>>> import sympy as sp
>>> x = sp.Symbol("x", positive=True)
>>> step = Step("Square of a sum", (x + 1) ** 2, x**2 + 2 * x + 1, "Expand the square.",
...             assumptions={x: (0.1, 3)}, transforms=("expand",))
>>> step.check().passed
True
"""

from __future__ import annotations

import html
import html.entities
import importlib
import re
import signal
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Callable

import mpmath
import numpy as np
import sympy as sp
from sympy.core.function import AppliedUndef
from sympy.printing.mathml import MathMLPresentationPrinter

__all__ = [
    "Step",
    "StepResult",
    "Derivation",
    "DerivationResult",
    "DERIVATIONS",
    "build_derivation",
    "to_mathml",
]

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
        return {"title": self.title, "method": self.method, "passed": bool(self.passed),
                "error": float(self.error), "detail": self.detail}


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
    return expr.replace(lambda e: isinstance(e, sp.Piecewise),
                        lambda e: e.args[-1].expr if e.args[-1].cond is sp.true else e)


_TRANSFORMS: dict[str, Callable] = {
    "expand": lambda e: sp.expand(e),
    "subs": lambda e: sp.expand(e.replace(lambda x: isinstance(x, sp.Subs),
                                          lambda x: x.expr.subs(dict(zip(x.variables, x.point))))),
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
        Short name of the step.
    lhs, rhs : sympy expressions
        The two sides as displayed. They may contain unevaluated ``Sum``/``Integral`` objects.
    justification : str
        One sentence saying why the step holds (plain text; escaped by every renderer).
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
        ``"together"``, ``"subs"`` (evaluate ``Subs`` objects only), ``"gammasimp"``, ``"combsimp"``, ``"expand_func"``, ``"simplify"``,
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
        Extra text shown after the equation (e.g. "as L -> oo at fixed L/tau_k").

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
            raise ValueError(f"relation={self.relation!r}: must be one of {', '.join(RELATIONS)}")
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
        args = {s: (int(v) if getattr(s, "is_integer", False) else
                    mpmath.mpf(sp.Float(v, dps))) for s, v in vals.items()}
        out = []
        with mpmath.workdps(dps):
            custom = self.numeric(args) if self.numeric is not None else (None, None)
            # small integers go in exactly first (jacobi(3, ...) becomes an explicit polynomial);
            # large ones stay numeric so that e.g. gamma(2*10**7) is not expanded exactly
            exact = {s: v for s, v in vals.items()
                     if exact_ints and getattr(s, "is_integer", False) and abs(int(v)) <= 100}
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
                return StepResult(self.title, f"symbolic ({name}){where}", True, 0.0,
                                  "lhs - rhs reduces to 0")
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
        detail = (f"{npts} random points, {self.digits} digits, max relative error {worst:.2g}"
                  + (f"; symbolic attempts failed: {', '.join(tried)}" if tried else ""))
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
        first = None
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
        detail = (f"|ratio - 1| at {self.limit} = {pts}: " + ", ".join(f"{d:.2g}" for d in first)
                  + f" (first point); {'monotone' if monotone else 'NOT monotone'}; "
                  f"final max {worst:.2g} vs tolerance {self.tolerance:g}")
        return StepResult(self.title, "ratio", passed, worst, detail)

    # ---- display --------------------------------------------------------------------------
    def latex(self) -> str:
        """LaTeX of the relation (without math delimiters).

        >>> x = sp.Symbol("x")
        >>> Step("t", x, x, "j.").latex()
        'x = x'
        """
        op = "=" if self.relation == "=" else r"\sim"
        s = f"{sp.latex(self.lhs)} {op} {sp.latex(self.rhs)}"
        if self.relation == "~":
            s += rf" \quad \left({sp.latex(self.limit)} \to \infty\right)"
        return s

    def mathml(self) -> str:
        """Presentation MathML of the relation wrapped in a block ``<math>`` element.

        >>> x = sp.Symbol("x")
        >>> Step("t", x, x, "j.").mathml().startswith("<math")
        True
        """
        op = "=" if self.relation == "=" else "&#x223C;"
        inner = f"{_mathml_inner(self.lhs)}<mo>{op}</mo>{_mathml_inner(self.rhs)}"
        if self.relation == "~":
            inner += (f"<mspace width=\"1em\"/><mrow><mo>(</mo>{_mathml_inner(self.limit)}"
                      "<mo>&#x2192;</mo><mi>&#x221E;</mi><mo>)</mo></mrow>")
        return _wrap_math(f"<mrow>{inner}</mrow>")


def _describe_instances(instances) -> str:
    if not instances:
        return ""
    keys = sorted({str(k) for inst in instances for k in inst})
    if len(keys) == 1:
        vals = [inst[k] for inst in instances for k in inst]
        return f" at {keys[0]} = {', '.join(str(v) for v in vals)}"
    return f" at {len(instances)} fixed instances"


# --------------------------------------------------------------------------------------------
# MathML printing
# --------------------------------------------------------------------------------------------
class _Printer(MathMLPresentationPrinter):
    """Presentation printer: user functions named like symbols (``p_j`` -> p with subscript j), beta as B."""

    def _print_Function(self, e):
        if isinstance(e, AppliedUndef):
            head = self._print_Symbol(sp.Symbol(type(e).__name__))
        elif isinstance(e, sp.beta):
            head = self.dom.createElement("mi")
            head.appendChild(self.dom.createTextNode("B"))
        else:
            return super()._print_Function(e)
        mrow = self.dom.createElement("mrow")
        mrow.appendChild(head)
        mrow.appendChild(self._paren_comma_separated(*e.args))
        return mrow

    _print_beta = _print_Function


_ENTITY = re.compile(r"&([A-Za-z][A-Za-z0-9]*);")


def _numeric_entities(text: str) -> str:
    # Named entities (e.g. &InvisibleTimes;) are not XML; write them as character references.
    def repl(m):
        name = m.group(1)
        if name in ("amp", "lt", "gt", "quot", "apos"):
            return m.group(0)
        ch = html.entities.html5.get(name + ";")
        if ch is None:
            return "&amp;" + name + ";"
        return "".join(f"&#x{ord(c):X};" for c in ch)

    return _ENTITY.sub(repl, text)


def _mathml_inner(expr) -> str:
    return _numeric_entities(_Printer({}).doprint(sp.sympify(expr)))


def _wrap_math(inner: str) -> str:
    return f'<math display="block" xmlns="http://www.w3.org/1998/Math/MathML">{inner}</math>'


def to_mathml(expr) -> str:
    """Presentation MathML of a sympy expression as a block ``<math>`` element.

    >>> "<mi>&#955;</mi>" in to_mathml(sp.Symbol("lambda"))
    True
    """
    return _wrap_math(_mathml_inner(expr))


# --------------------------------------------------------------------------------------------
# text escaping
# --------------------------------------------------------------------------------------------
_MD_SPECIAL = re.compile(r"([\\`*_\[\]<>#$|])")


def _md_text(s: str) -> str:
    return _MD_SPECIAL.sub(r"\\\1", s)


_LATEX_SPECIAL = {
    "\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
    "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
    "<": r"\textless{}", ">": r"\textgreater{}",
}
# Unicode that pdflatex cannot typeset in text mode: rendered as inline math.
_LATEX_UNICODE = {
    "λ": r"\lambda", "ω": r"\omega", "ζ": r"\zeta", "γ": r"\gamma", "τ": r"\tau", "ρ": r"\rho",
    "σ": r"\sigma", "η": r"\eta", "α": r"\alpha", "β": r"\beta", "ε": r"\varepsilon", "Γ": r"\Gamma",
    "Σ": r"\Sigma", "ξ": r"\xi", "κ": r"\kappa", "≤": r"\le", "≥": r"\ge", "→": r"\to", "∞": r"\infty",
    "×": r"\times", "−": "-", "·": r"\cdot", "≈": r"\approx", "∼": r"\sim", "≠": r"\neq", "∑": r"\sum",
    "∫": r"\int", "²": "^{2}", "√": r"\surd", "ℓ": r"\ell", "δ": r"\delta", "π": r"\pi",
}


def _latex_text(s: str) -> str:
    out = []
    for ch in s:
        if ch in _LATEX_SPECIAL:
            out.append(_LATEX_SPECIAL[ch])
        elif ch in _LATEX_UNICODE:
            out.append(f"${_LATEX_UNICODE[ch]}$")
        elif ord(ch) < 128:
            out.append(ch)
        else:
            out.append("?")  # keep the document compilable
    return "".join(out)


def _h(s: str) -> str:
    return html.escape(s, quote=True)


def _result_text(r: StepResult | None) -> str:
    if r is None:
        return "not checked"
    verdict = "passed" if r.passed else "FAILED"
    return f"{r.method}: {verdict}" + (f"; {r.detail}" if r.detail else "")


# --------------------------------------------------------------------------------------------
# derivations
# --------------------------------------------------------------------------------------------
@dataclass
class Derivation:
    """A titled, ordered sequence of checked steps with an introduction and a conclusion.

    Parameters
    ----------
    title, introduction, conclusion : str
        Plain text (escaped by the renderers).
    parameters : list of (sympy.Symbol, str, str)
        Each parameter with a description and its domain, e.g. ``(a, "spectral decay", "a > 0")``.
    steps : list of Step

    Examples
    --------
    >>> x = sp.Symbol("x", positive=True)
    >>> d = Derivation("Toy", "A toy.", [(x, "a number", "x > 0")],
    ...                [Step("s", 2 * x, x + x, "Add.", transforms=("expand",))], "Done.")
    >>> d.check().all_passed
    True
    >>> "<math" in d.to_html()
    True
    """

    title: str
    introduction: str
    parameters: list
    steps: list
    conclusion: str = ""
    name: str = ""
    _result: DerivationResult | None = field(default=None, repr=False, compare=False)

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

    def _results(self, checked: bool):
        if checked:
            return self.check().steps
        return (None,) * len(self.steps)

    # ---- Markdown ---------------------------------------------------------------------------
    def to_markdown_fragment(self, level: int = 2, checked: bool = True) -> str:
        """Markdown section (heading at ``level``) with LaTeX equations in ``$$...$$``.

        >>> x = sp.Symbol("x")
        >>> Derivation("T", "i", [], [Step("s", x, x, "j")]).to_markdown_fragment().startswith("## T")
        True
        """
        hd = "#" * level
        lines = [f"{hd} {_md_text(self.title)}", "", _md_text(self.introduction), ""]
        if self.parameters:
            lines += ["| parameter | meaning | domain |", "|---|---|---|"]
            for sym, desc, dom in self.parameters:
                lines.append(f"| ${sp.latex(sym)}$ | {_md_text(desc)} | {_md_text(dom)} |")
            lines.append("")
        for i, (step, res) in enumerate(zip(self.steps, self._results(checked)), 1):
            lines += [f"{hd}# Step {i}. {_md_text(step.title)}", "", "$$", step.latex(), "$$", ""]
            if step.note:
                lines += [f"*{_md_text(step.note)}*", ""]
            lines += [_md_text(step.justification), "", f"**Check:** {_md_text(_result_text(res))}", ""]
        if self.conclusion:
            lines += [f"{hd}# Conclusion", "", _md_text(self.conclusion), ""]
        if checked:
            lines += [f"**All steps machine-checked:** {'yes' if self.check().all_passed else 'NO'}", ""]
        return "\n".join(lines)

    def to_markdown(self, checked: bool = True) -> str:
        """A complete Markdown document.

        >>> x = sp.Symbol("x")
        >>> Derivation("T", "i", [], [Step("s", x, x, "j")]).to_markdown().startswith("# T")
        True
        """
        return self.to_markdown_fragment(level=1, checked=checked)

    # ---- HTML -------------------------------------------------------------------------------
    def to_html_fragment(self, level: int = 2, checked: bool = True) -> str:
        """An HTML ``<section>`` with MathML equations, for embedding in a larger page.

        >>> x = sp.Symbol("x")
        >>> Derivation("T", "i", [], [Step("s", x, x, "j")]).to_html_fragment().startswith("<section")
        True
        """
        h, h2 = f"h{min(level, 6)}", f"h{min(level + 1, 6)}"
        out = [f'<section class="derivation">', f"<{h}>{_h(self.title)}</{h}>", f"<p>{_h(self.introduction)}</p>"]
        if self.parameters:
            out.append("<table><thead><tr><th>parameter</th><th>meaning</th><th>domain</th></tr></thead><tbody>")
            for sym, desc, dom in self.parameters:
                out.append(f"<tr><td>{_mathml_inline(sym)}</td><td>{_h(desc)}</td><td>{_h(dom)}</td></tr>")
            out.append("</tbody></table>")
        for i, (step, res) in enumerate(zip(self.steps, self._results(checked)), 1):
            cls = "check" if res is None else ("check pass" if res.passed else "check fail")
            out.append(f'<div class="step"><{h2}>Step {i}. {_h(step.title)}</{h2}>')
            out.append(step.mathml())
            if step.note:
                out.append(f'<p class="note"><em>{_h(step.note)}</em></p>')
            out.append(f"<p>{_h(step.justification)}</p>")
            out.append(f'<p class="{cls}"><strong>Check:</strong> {_h(_result_text(res))}</p></div>')
        if self.conclusion:
            out.append(f"<{h2}>Conclusion</{h2}><p>{_h(self.conclusion)}</p>")
        if checked:
            ok = self.check().all_passed
            out.append(f'<p class="{"check pass" if ok else "check fail"}"><strong>All steps machine-checked:</strong> '
                       f"{'yes' if ok else 'NO'}</p>")
        out.append("</section>")
        return "\n".join(out)

    def to_html(self, checked: bool = True) -> str:
        """A self-contained HTML page (inline CSS, MathML, no scripts).

        >>> x = sp.Symbol("x")
        >>> page = Derivation("T", "i", [], [Step("s", x, x, "j")]).to_html()
        >>> page.startswith("<!DOCTYPE html>") and "<script" not in page
        True
        """
        return (
            "<!DOCTYPE html>\n"
            '<html xmlns="http://www.w3.org/1999/xhtml" lang="en">\n<head>\n<meta charset="utf-8"/>\n'
            f"<title>{_h(self.title)}</title>\n<style>{_CSS}</style>\n</head>\n<body>\n"
            + self.to_html_fragment(level=1, checked=checked)
            + "\n</body>\n</html>\n"
        )

    # ---- LaTeX ------------------------------------------------------------------------------
    def to_latex_fragment(self, checked: bool = True) -> str:
        r"""A ``\section`` with one ``equation*`` per step (needs amsmath).

        >>> x = sp.Symbol("x")
        >>> Derivation("T", "i", [], [Step("s", x, x, "j")]).to_latex_fragment().startswith(r"\section")
        True
        """
        out = [rf"\section{{{_latex_text(self.title)}}}", "", _latex_text(self.introduction), ""]
        if self.parameters:
            out.append(r"\begin{tabular}{lll}")
            out.append(r"parameter & meaning & domain \\ \hline")
            for sym, desc, dom in self.parameters:
                out.append(rf"${sp.latex(sym)}$ & {_latex_text(desc)} & {_latex_text(dom)} \\")
            out.append(r"\end{tabular}")
            out.append("")
        for i, (step, res) in enumerate(zip(self.steps, self._results(checked)), 1):
            out += [rf"\subsection*{{Step {i}. {_latex_text(step.title)}}}", r"\begin{equation*}", step.latex(),
                    r"\end{equation*}"]
            if step.note:
                out.append(rf"\emph{{{_latex_text(step.note)}}}")
                out.append("")
            out += [_latex_text(step.justification), "", rf"\textbf{{Check:}} {_latex_text(_result_text(res))}", ""]
        if self.conclusion:
            out += [r"\subsection*{Conclusion}", _latex_text(self.conclusion), ""]
        if checked:
            out += [rf"\textbf{{All steps machine-checked:}} {'yes' if self.check().all_passed else 'NO'}", ""]
        return "\n".join(out)

    def to_latex(self, checked: bool = True) -> str:
        r"""A compilable ``article`` document.

        >>> x = sp.Symbol("x")
        >>> doc = Derivation("T", "i", [], [Step("s", x, x, "j")]).to_latex()
        >>> doc.count(r"\begin{document}") == doc.count(r"\end{document}") == 1
        True
        """
        return (
            "\\documentclass[11pt]{article}\n\\usepackage{amsmath,amssymb}\n\\usepackage[margin=2.5cm]{geometry}\n"
            f"\\title{{{_latex_text(self.title)}}}\n\\date{{}}\n\\begin{{document}}\n\\maketitle\n\n"
            + self.to_latex_fragment(checked=checked)
            + "\n\\end{document}\n"
        )


def _mathml_inline(expr) -> str:
    return f'<math xmlns="http://www.w3.org/1998/Math/MathML">{_mathml_inner(expr)}</math>'


_CSS = (
    "body{font-family:Georgia,serif;max-width:60em;margin:2em auto;padding:0 1em;line-height:1.45;color:#222}"
    "math[display=block]{margin:0.8em 0;overflow-x:auto}"
    ".step{border-left:3px solid #ccd;padding-left:1em;margin:1.2em 0}"
    ".check{font-size:0.9em;color:#555}.pass strong{color:#176317}.fail strong{color:#a11}"
    "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:0.2em 0.6em}"
)


# --------------------------------------------------------------------------------------------
# registry (lazy: the builders import this module)
# --------------------------------------------------------------------------------------------
def _lazy(module: str, func: str):
    def build() -> Derivation:
        return getattr(importlib.import_module(f"depthscale.theory.{module}"), func)()

    build.__name__ = func
    build.__doc__ = f"Build the derivation of depthscale.theory.{module}.{func}."
    return build


DERIVATIONS = {
    "linear": _lazy("derive_equal_step", "equal_step_derivation"),
    "free": _lazy("derive_free", "free_polynomial_derivation"),
    "modes": _lazy("derive_modes", "modes_derivation"),
    "clt": _lazy("derive_clt", "clt_derivation"),
}


def build_derivation(name: str) -> Derivation:
    """Build the registered derivation ``name`` (one of ``DERIVATIONS``).

    >>> build_derivation("modes").name
    'modes'
    """
    from depthscale.theory.validate import check_choice

    check_choice("name", name, tuple(DERIVATIONS))
    d = DERIVATIONS[name]()
    d.name = name
    return d

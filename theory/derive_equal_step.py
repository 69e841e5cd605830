"""Derivation (i): equal-step gradient descent on a power-law spectrum gives depth exponent zeta.

The residual of L equal steps ``gamma/L`` is ``R = sum_k lambda_k omega_k (1 - gamma lambda_k/L)^(2L)``.
At the reference step ``gamma = L/lambda_1`` the sum over the d modes is the sum to infinity minus
its tail beyond d; the sum to infinity becomes, for large L, an integral over the eigenvalue density
``~ lambda^(zeta-1)``, which is a Beta function and tends to ``(c_lambda c_omega/a) Gamma(zeta) (2L)^(-zeta)``.
The tail gives the finite-d correction: the finite over the infinite sum is about
``1 - (2L/d^a)^zeta / Gamma(zeta + 1)``, so the continuum law holds within ``eps`` up to
``L_max(eps) = (d^a/2) (eps Gamma(zeta + 1))^(1/zeta)``.
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import sympy as sp

from .derivation import Derivation, Result, Step
from .infinite_sums import infinite_power_sum

__all__ = ["equal_step_derivation"]

a, b, c_lambda, c_omega, gamma, lam = sp.symbols("a b c_lambda c_omega gamma lambda", positive=True)
zeta = sp.Symbol("zeta", positive=True)
L = sp.Symbol("L", positive=True, integer=True)
k = sp.Symbol("k", positive=True, integer=True)
kc = sp.Symbol("k", positive=True)  # k as a continuous variable after the continuum step
d = sp.Symbol("d", positive=True, integer=True)
eps = sp.Symbol("epsilon", positive=True)
lam_k, omega_k = sp.IndexedBase("lambda"), sp.IndexedBase("omega")
ZETA = (a + b - 1) / a

# ranges where every step holds and the numbers stay well conditioned (a + b > 1 so zeta > 0)
_SPEC = {a: (0.5, 3.0), b: (0.7, 2.5), c_lambda: (0.5, 2.0), c_omega: (0.5, 2.0)}


def _sum_vs_integral(vals):
    """The sum side of sum_{k>=1} k^-(a+b) (1-k^-a)^(2L) ~ integral, which sympy cannot evaluate at large L.

    Explicit to K = 200 L^(1/a), quadrature plus half-term beyond (:mod:`~depthscale.theory.infinite_sums`).
    Ratios are judged at the 1e-9 level, far above the float64 rounding.
    """
    av, bv, cl, co, Lv = (float(vals[s]) for s in (a, b, c_lambda, c_omega, L))
    # from k = 2: the k = 1 term is exactly 0
    total = infinite_power_sum(av + bv, lambda x, lib: 2 * Lv * lib.log1p(-(x**-av)), Lv ** (1 / av), start=2)
    return cl * co * total, None  # the integral side is evaluated from its expression


def _tail_sum(p: float, a: float, L: float, d: int) -> float:
    """``sum_{k > d} k^-p (1 - k^-a)^(2L)``: 200 terms one by one, then Euler-Maclaurin (integral, half-term,
    first-derivative term), whose remainder is ``O(d^-4)`` of the tail."""
    ks = np.arange(d + 1, d + 201, dtype=float)
    direct = math.fsum(np.exp(2 * L * np.log1p(-(ks**-a)) - p * np.log(ks)))
    with mpmath.workdps(30):

        def f(x):
            return mpmath.exp(2 * L * mpmath.log1p(-(x**-a)) - p * mpmath.log(x))

        K = mpmath.mpf(d + 201)
        rest = mpmath.quad(f, [K, 10 * K, 100 * K, mpmath.inf]) + f(K) / 2 - mpmath.diff(f, K) / 12
    return direct + float(rest)


def _tail_vs_power(vals):
    """Tail side of step "Tail for L << d^a" (a sum beyond d, which sympy cannot evaluate at large d)."""
    av, bv, cl, co, Lv, dv = (float(vals[s]) for s in (a, b, c_lambda, c_omega, L, d))
    return cl * co * _tail_sum(av + bv, av, Lv, int(dv)), None


def _tail_over_infinite(vals):
    """``T_d / R_inf`` on the path ``d = L^2`` (``L/d^a -> 0`` for ``a > 1/2``): both sums evaluated apart,
    so that a tail far below the rounding of ``R_inf`` keeps its digits."""
    av, bv, Lv = (float(vals[s]) for s in (a, b, L))
    dv = int(round(Lv)) ** 2
    total = infinite_power_sum(av + bv, lambda x, lib: 2 * Lv * lib.log1p(-(x**-av)), Lv ** (1 / av), start=2)
    return _tail_sum(av + bv, av, Lv, dv) / total, None


def equal_step_derivation() -> Derivation:
    """Equal-step residual, continuum integral, Beta function, ``Gamma(zeta) (2L)^-zeta``.

    Returns
    -------
    Derivation
        Fourteen machine-checkable steps: the infinite-d law (steps 1 to 10, the exponent of step 10
        is zeta) and the finite-d correction with its validity depth (steps 11 to 14).

    Examples
    --------
    >>> der = equal_step_derivation()
    >>> len(der.steps), der.steps[9].rhs, der.steps[-1].rhs
    (14, zeta, epsilon)
    """
    spectra = {lam_k[k]: c_lambda * k ** (-a), omega_k[k]: c_omega * k ** (-b)}
    R_def = sp.Sum(lam_k[k] * omega_k[k] * (1 - gamma * lam_k[k] / L) ** (2 * L), (k, 1, d))
    R_pow = sp.Sum(c_lambda * c_omega * k ** (-a - b) * (1 - gamma * c_lambda * k ** (-a) / L) ** (2 * L), (k, 1, d))
    summand_ref = c_lambda * c_omega * k ** (-a - b) * (1 - k ** (-a)) ** (2 * L)
    R_ref = sp.Sum(summand_ref, (k, 1, d))
    R_inf = sp.Sum(summand_ref, (k, 1, sp.oo))
    T_d = sp.Sum(summand_ref, (k, d + 1, sp.oo))
    I_k = sp.Integral(summand_ref.subs(k, kc), (kc, 1, sp.oo))
    k_of_lam = (lam / c_lambda) ** (-1 / a)
    jac_lhs = summand_ref.subs(k, k_of_lam) * (-sp.Derivative(k_of_lam, lam))
    density = c_omega / a * c_lambda ** (1 - zeta) * lam ** (zeta - 1) * (1 - lam / c_lambda) ** (2 * L)
    I_lam = sp.Integral(density, (lam, 0, c_lambda))
    pref = c_lambda * c_omega / a
    beta_form = pref * sp.beta(zeta, 2 * L + 1)
    gamma_form = pref * sp.gamma(zeta) * sp.gamma(2 * L + 1) / sp.gamma(2 * L + zeta + 1)
    asym = pref * sp.gamma(zeta) * (2 * L) ** (-zeta)
    tail_asym = c_lambda * c_omega * d ** (1 - a - b) / (a + b - 1)
    x_d = 2 * L / d**a  # depth in units of the depth where the finite spectrum runs out
    correction = x_d**zeta / sp.gamma(zeta + 1)
    L_max = d**a / 2 * (eps * sp.gamma(zeta + 1)) ** (1 / zeta)

    small_L = {**_SPEC, L: (1, 6)}
    steps = [
        Step(
            "Power-law spectra",
            R_def,
            R_pow,
            r"Insert $\lambda_k = c_\lambda k^{-a}$ and $\omega_k = c_\omega k^{-b}$ term by term.",
            assumptions={**_SPEC, gamma: (0.1, 1.0), L: (1, 5), d: (1, 8)},
            definitions=spectra,
            transforms=("expand",),
        ),
        Step(
            "Reference step size",
            sp.Subs(R_pow, gamma, L / c_lambda),
            R_ref,
            r"At the reference step $\gamma = L/\lambda_1 = L/c_\lambda$ every factor becomes $1 - k^{-a}$.",
            assumptions={**_SPEC, L: (1, 5), d: (1, 8)},
            transforms=("subs",),
        ),
        Step(
            "Finite spectrum: sum to infinity minus its tail",
            R_ref,
            R_inf - T_d,
            r"The $d$ modes are the sum to infinity less the tail $T_d$ of the modes $k > d$; the tail is "
            r"followed below (steps 11 to 14), the sum to infinity first.",
            assumptions={**_SPEC, L: (1, 5), d: (1, 8)},
            transforms=("simplify",),
        ),
        Step(
            "Sum to integral",
            R_inf,
            I_k,
            r"The summand varies on the scale $k \sim L^{1/a} \gg 1$ and vanishes with all its derivatives "
            "at $k = 1$, so the sum approaches its integral.",
            assumptions={a: (1.5, 3.0), b: (0.7, 2.5), c_lambda: (0.5, 2.0), c_omega: (0.5, 2.0)},
            relation="~",
            limit=L,
            limit_points=(1e2, 1e3, 1e4),
            tolerance=1e-6,
            numeric=_sum_vs_integral,
            n_points=3,
            ratio_floor=1e-9,
        ),
        Step(
            "Change of variables: density",
            jac_lhs,
            density,
            r"With $\lambda = c_\lambda k^{-a}$, i.e. $k = (\lambda/c_\lambda)^{-1/a}$, the integrand times "
            r"$|dk/d\lambda|$ is proportional to $\lambda^{\zeta - 1}$ with $\zeta = (a + b - 1)/a$.",
            assumptions={**_SPEC, lam: (0.05, 0.5), L: (1, 6)},
            definitions={zeta: ZETA},
            transforms=("powsimp", "doit"),
        ),
        Step(
            "Change of variables: integral",
            I_k,
            I_lam,
            r"$k$ from 1 to $\infty$ maps to $\lambda$ from $c_\lambda$ down to 0; the orientation flip absorbs "
            r"the sign of $dk/d\lambda$.",
            assumptions=small_L,
            definitions={zeta: ZETA},
            transforms=(),
            n_points=3,
        ),
        Step(
            "Beta function",
            I_lam,
            beta_form,
            r"Substitute $u = \lambda/c_\lambda$: the integral of $u^{\zeta - 1} (1 - u)^{2L}$ over $(0, 1)$ is "
            r"$\mathrm{B}(\zeta, 2L + 1)$.",
            assumptions={**small_L, zeta: (0.2, 3.0)},
            transforms=(),
            n_points=3,
        ),
        Step(
            "Gamma functions",
            beta_form,
            gamma_form,
            r"$\mathrm{B}(x, y) = \Gamma(x) \Gamma(y) / \Gamma(x + y)$.",
            assumptions={**small_L, zeta: (0.2, 3.0)},
            transforms=("expand_func", "gammasimp"),
        ),
        Step(
            "Large-depth asymptote",
            gamma_form,
            asym,
            r"$\Gamma(n + 1)/\Gamma(n + 1 + \zeta) \sim n^{-\zeta}$ as $n = 2L \to \infty$ (Stirling).",
            assumptions={c_lambda: (0.5, 2.0), c_omega: (0.5, 2.0), a: (0.5, 3.0), zeta: (0.2, 3.0)},
            relation="~",
            limit=L,
            tolerance=1e-5,
            n_points=3,
        ),
        Step(
            "Depth exponent",
            -L * sp.Derivative(sp.log(asym), L),
            zeta,
            r"The logarithmic slope of the asymptote in $L$ is $-\zeta$.",
            assumptions={**small_L, zeta: (0.2, 3.0)},
            transforms=("doit",),
        ),
        Step(
            r"Tail for $L \ll d^a$",
            T_d,
            tail_asym,
            r"Beyond $k = d$ every factor $(1 - k^{-a})^{2L} \ge 1 - 2L d^{-a}$ tends to 1 and the sum of "
            r"$k^{-a-b}$ to its integral from $d$: the tail is $c_\lambda c_\omega d^{1-a-b}/(a+b-1)$ up to "
            r"relative corrections of order $L/d^a$ and $1/d$.",
            assumptions={**_SPEC, a: (1.0, 3.0), L: (1, 6)},
            relation="~",
            limit=d,
            limit_points=(1e2, 1e3, 1e4),
            tolerance=1e-2,
            numeric=_tail_vs_power,
            n_points=3,
        ),
        Step(
            "Tail over the infinite sum",
            tail_asym / asym,
            correction,
            r"The tail of step 11 over the asymptote of step 9; with $a \zeta = a + b - 1$ and "
            r"$\zeta \Gamma(\zeta) = \Gamma(\zeta + 1)$ it depends on $L$ and $d$ only through $2L/d^a$.",
            assumptions={**_SPEC, L: (1, 50), d: (1, 1000)},
            definitions={zeta: ZETA},
            transforms=("powsimp", "gammasimp", "simplify"),
        ),
        Step(
            "Finite over infinite sum",
            T_d / R_inf,
            correction,
            r"Steps 3, 11 and 12: the finite sum is the infinite one times "
            r"$1 - (2L/d^a)^{\zeta}/\Gamma(\zeta + 1)$, for $1 \ll L \ll d^a$; checked on the path $d = L^2$ "
            r"(relative corrections of order $1/L$, $L/d^a$ and $1/d$).",
            assumptions={a: (1.0, 3.0), b: (0.7, 2.5)},
            relation="~",
            limit=L,
            limit_points=(1e2, 1e3, 1e4),
            tolerance=1e-3,
            definitions={d: L**2, zeta: ZETA},
            numeric=_tail_over_infinite,
            n_points=3,
            note=r"so that $R_d/R_\infty \simeq 1 - (2L/d^a)^{\zeta}/\Gamma(\zeta + 1)$",
        ),
        Step(
            "Validity depth",
            sp.Subs(correction, L, L_max),
            eps,
            r"The deviation $(2L/d^a)^{\zeta}/\Gamma(\zeta + 1)$ grows with $L$ and reaches $\epsilon$ at "
            r"$L_{\max}(\epsilon) = (d^a/2)(\epsilon\,\Gamma(\zeta + 1))^{1/\zeta}$: below it the continuum law "
            r"holds within the relative tolerance $\epsilon$ (for $(a, b) = (1.5, 0.5)$ and $\epsilon = 0.1$, "
            r"$L_{\max} \approx 0.0136\, d^a$).",
            assumptions={**_SPEC, eps: (0.01, 0.5), d: (1, 1000), zeta: (0.2, 3.0)},
            transforms=("subs", "powsimp", "simplify"),
        ),
    ]
    R_d, R_oo, L_max_f = sp.Function("R_d")(L), sp.Function(r"R_\infty")(L), sp.Function(r"L_\max")(eps)
    results = [
        Result(R_d, R_ref, "=", r"at the reference step $\gamma = L/\lambda_1$", (1, 2)),
        Result(R_oo, beta_form, "≈", r"the same sum to $k = \infty$, for $L \gg 1$", (3, 4, 5, 6, 7)),
        Result(R_oo, asym, "~", r"as $L \to \infty$, with $\zeta = (a + b - 1)/a$ the depth exponent", (8, 9, 10)),
        Result(R_d / R_oo, 1 - correction, "≈", r"for $1 \ll L \ll d^a$", (3, 11, 12, 13)),
        Result(
            L_max_f,
            L_max,
            "=",
            r"the depth up to which $R_d$ is within the relative tolerance $\epsilon$ of $R_\infty$",
            (14,),
        ),
    ]
    return Derivation(
        results=results,
        title=r"Equal-step linear attention: depth exponent $\zeta$",
        introduction=(
            r"Linear attention with $L$ equal layers acts on the population covariance like $L$ equal gradient "
            r"steps of size $\gamma/L$. Mode $k$ of the spectrum $\lambda_k = c_\lambda k^{-a}$, with target "
            r"power $\omega_k = c_\omega k^{-b}$, keeps the fraction $(1 - \gamma \lambda_k/L)^{2L}$ of its loss. "
            r"We follow the residual at the reference step $\gamma = L/\lambda_1$ from the sum to its "
            "large-depth power law."
        ),
        parameters=[
            (a, r"eigenvalue decay, $\lambda_k = c_\lambda k^{-a}$", "$a > 0$"),
            (b, r"target-power decay, $\omega_k = c_\omega k^{-b}$", r"$b \ge 0$, $a + b > 1$"),
            (c_lambda, r"eigenvalue scale ($\lambda_1 = c_\lambda$)", r"$c_\lambda > 0$"),
            (c_omega, "target-power scale", r"$c_\omega > 0$"),
            (L, "depth (number of layers)", r"$L = 1, 2, \ldots$"),
            (gamma, "total step size", r"$0 < \gamma < 2L/\lambda_1$"),
            (zeta, "depth exponent $(a + b - 1)/a$", r"$\zeta > 0$"),
            (d, "number of modes", r"$d = 1, 2, \ldots$"),
            (eps, "relative tolerance of the continuum law", r"$0 < \epsilon < 1$"),
        ],
        steps=steps,
        conclusion=(
            r"$R \sim (c_\lambda c_\omega/a) \Gamma(\zeta) (2L)^{-\zeta}$: equal-step linear attention improves "
            r"with depth as a power law with exponent $\zeta = (a + b - 1)/a$. With $d$ modes the loss is this law "
            r"times $1 - (2L/d^a)^{\zeta}/\Gamma(\zeta + 1)$, so it holds within a relative tolerance $\epsilon$ "
            r"for $1 \ll L \le L_{\max}(\epsilon) = (d^a/2)(\epsilon\,\Gamma(\zeta + 1))^{1/\zeta}$ "
            r"(about $0.014\, d^a$ for $\epsilon = 0.1$ at $(a, b) = (1.5, 0.5)$); past $d^a$ the finite spectrum is "
            "exhausted and the residual decays exponentially."
        ),
        name="linear",
    )

"""Derivation (i): equal-step gradient descent on a power-law spectrum gives depth exponent zeta.

The residual of L equal steps ``gamma/L`` is ``R = sum_k lambda_k omega_k (1 - gamma lambda_k/L)^(2L)``.
At the reference step ``gamma = L/lambda_1`` the sum becomes, for large L, an integral over the
eigenvalue density ``~ lambda^(zeta-1)``, which is a Beta function and tends to
``(c_lambda c_omega/a) Gamma(zeta) (2L)^(-zeta)``.
"""

from __future__ import annotations

import sympy as sp

from .derivation import Derivation, Step
from .infinite_sums import infinite_power_sum

__all__ = ["equal_step_derivation"]

a, b, c_lambda, c_omega, gamma, lam = sp.symbols("a b c_lambda c_omega gamma lambda", positive=True)
zeta = sp.Symbol("zeta", positive=True)
L = sp.Symbol("L", positive=True, integer=True)
k = sp.Symbol("k", positive=True, integer=True)
kc = sp.Symbol("k", positive=True)  # k as a continuous variable after the continuum step
d = sp.Symbol("d", positive=True, integer=True)
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


def equal_step_derivation() -> Derivation:
    """Equal-step residual, continuum integral, Beta function, ``Gamma(zeta) (2L)^-zeta``.

    Returns
    -------
    Derivation
        Nine machine-checkable steps; the exponent of the last one is zeta.

    Examples
    --------
    >>> der = equal_step_derivation()
    >>> len(der.steps), der.steps[-1].rhs
    (9, zeta)
    """
    spectra = {lam_k[k]: c_lambda * k ** (-a), omega_k[k]: c_omega * k ** (-b)}
    R_def = sp.Sum(lam_k[k] * omega_k[k] * (1 - gamma * lam_k[k] / L) ** (2 * L), (k, 1, d))
    R_pow = sp.Sum(c_lambda * c_omega * k ** (-a - b) * (1 - gamma * c_lambda * k ** (-a) / L) ** (2 * L), (k, 1, d))
    summand_ref = c_lambda * c_omega * k ** (-a - b) * (1 - k ** (-a)) ** (2 * L)
    R_ref = sp.Sum(summand_ref, (k, 1, d))
    R_inf = sp.Sum(summand_ref, (k, 1, sp.oo))
    I_k = sp.Integral(summand_ref.subs(k, kc), (kc, 1, sp.oo))
    k_of_lam = (lam / c_lambda) ** (-1 / a)
    jac_lhs = summand_ref.subs(k, k_of_lam) * (-sp.Derivative(k_of_lam, lam))
    density = c_omega / a * c_lambda ** (1 - zeta) * lam ** (zeta - 1) * (1 - lam / c_lambda) ** (2 * L)
    I_lam = sp.Integral(density, (lam, 0, c_lambda))
    pref = c_lambda * c_omega / a
    beta_form = pref * sp.beta(zeta, 2 * L + 1)
    gamma_form = pref * sp.gamma(zeta) * sp.gamma(2 * L + 1) / sp.gamma(2 * L + zeta + 1)
    asym = pref * sp.gamma(zeta) * (2 * L) ** (-zeta)

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
            "Sum to integral",
            R_inf,
            I_k,
            r"For $d \to \infty$ (valid while $L \ll d^a$) the summand varies on the scale "
            r"$k \sim L^{1/a} \gg 1$ and vanishes with all its derivatives at $k = 1$, so the sum approaches "
            "its integral.",
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
    ]
    return Derivation(
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
        ],
        steps=steps,
        conclusion=(
            r"$R \sim (c_\lambda c_\omega/a) \Gamma(\zeta) (2L)^{-\zeta}$: equal-step linear attention improves "
            r"with depth as a power law with exponent $\zeta = (a + b - 1)/a$, valid for $1 \ll L \ll d^a$ (past "
            "$d^a$ the finite spectrum is exhausted and the residual decays exponentially)."
        ),
        name="linear",
    )

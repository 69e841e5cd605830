"""Derivation (iii): sequential learning of modes superposes to the same power law, exponent zeta.

Mode k loses its error like ``exp(-L/tau_k)`` with characteristic depth ``tau_k = k^a/2``. Each mode
is learnt at its own depth ``~ tau_k ln(1/eps)``; weighting the modes by ``lambda_k omega_k`` turns
the superposition of exponentials into a power law in L with the exponent zeta = (a+b-1)/a.
"""

from __future__ import annotations

import sympy as sp

from .derivation import Derivation, Step
from .infinite_sums import infinite_power_sum

__all__ = ["modes_derivation"]

a, b, c_lambda, c_omega, gamma, eps, u, tau = sp.symbols("a b c_lambda c_omega gamma epsilon u tau", positive=True)
L = sp.Symbol("L", positive=True)
zeta = sp.Symbol("zeta", positive=True)
k = sp.Symbol("k", positive=True, integer=True)
kc = sp.Symbol("k", positive=True)
tau_k = sp.Symbol("tau_k", positive=True)
lam_k, omega_k = sp.IndexedBase("lambda"), sp.IndexedBase("omega")
ZETA = (a + b - 1) / a
_PAR = {a: (0.5, 3.0), b: (0.7, 2.5), c_lambda: (0.5, 2.0), c_omega: (0.5, 2.0)}


def _mode_sum_vs_integral(vals):
    """sum_{k>=1} k^-(a+b) exp(-2L k^-a): explicit to K = 200 L^(1/a), quadrature + half-term beyond."""
    av, bv, cl, co, Lv = (float(vals[s]) for s in (a, b, c_lambda, c_omega, L))
    total = infinite_power_sum(av + bv, lambda x, lib: -2 * Lv * x**-av, Lv ** (1 / av))
    return cl * co * total, None  # the integral side is evaluated from its expression


def modes_derivation() -> Derivation:
    """Mode-wise exponential learning, superposition of characteristic depths, power law ``L^-zeta``.

    Returns
    -------
    Derivation
        From one mode's loss at the reference step to the superposition of characteristic depths; the
        last step's right side is the exponent zeta, as for equal steps.

    Examples
    --------
    >>> modes_derivation().steps[-1].rhs
    zeta
    """
    spectra = {lam_k[k]: c_lambda * k ** (-a), lam_k[1]: c_lambda, omega_k[k]: c_omega * k ** (-b), tau_k: k**a / 2}
    mode_loss = (1 - k ** (-a)) ** (2 * L)
    weights = c_lambda * c_omega * k ** (-a - b)
    R_exp = sp.Sum(weights * sp.exp(-2 * L * k ** (-a)), (k, 1, sp.oo))
    I_k = sp.Integral((weights * sp.exp(-2 * L * k ** (-a))).subs(k, kc), (kc, 0, sp.oo))
    pref = c_lambda * c_omega / a
    I_tau = sp.Integral(pref * 2 ** (-zeta) * tau ** (-zeta - 1) * sp.exp(-L / tau), (tau, 0, sp.oo))
    power = pref * 2 ** (-zeta) * sp.gamma(zeta) * L ** (-zeta)
    asym = pref * sp.gamma(zeta) * (2 * L) ** (-zeta)
    steps = [
        Step(
            "Normalised mode loss",
            sp.Subs((1 - gamma * lam_k[k] / L) ** (2 * L), gamma, L / lam_k[1]),
            mode_loss,
            r"At the reference step $\gamma = L/\lambda_1$ mode $k$ keeps the fraction "
            r"$(1 - \lambda_k/\lambda_1)^{2L}$ of its loss, and $\lambda_k/\lambda_1 = k^{-a}$.",
            assumptions={**_PAR, L: (1, 10), k: (1, 20)},
            definitions=spectra,
            transforms=("subs",),
        ),
        Step(
            "Exponential decay per mode",
            mode_loss,
            sp.exp(-L / tau_k),
            r"$\log(1 - x) = -x + O(x^2)$ with $x = k^{-a}$; the $O(x^2)$ term times $2L$, which is "
            r"$(L/\tau_k)\, O(x)$, vanishes for slow modes, leaving $\exp(-2L k^{-a}) = \exp(-L/\tau_k)$ with "
            r"the characteristic depth $\tau_k = k^a/2$.",
            assumptions={u: (0.1, 10.0), a: (0.5, 1.5)},
            relation="~",
            limit=k,
            limit_points=(1e3, 1e5, 1e7),
            tolerance=1e-2,
            ratio_floor=1e-15,
            definitions={tau_k: k**a / 2, L: u * k**a / 2},
            note=r"as $k \to \infty$ at fixed $u = L/\tau_k$",
        ),
        Step(
            "Sequential learning",
            sp.Subs(sp.exp(-L / tau_k), L, tau_k * sp.log(1 / eps)),
            eps,
            r"Mode $k$ falls below $\epsilon$ at the depth $L = \tau_k \ln(1/\epsilon)$: strong modes (small $k$) "
            "first, weak ones later.",
            assumptions={tau_k: (0.5, 100.0), eps: (1e-6, 0.5)},
            transforms=("subs",),
        ),
        Step(
            "Weighted superposition",
            sp.Sum(lam_k[k] * omega_k[k] * sp.exp(-L / tau_k), (k, 1, sp.oo)),
            R_exp,
            r"The residual weights each mode's decay by its initial loss "
            r"$\lambda_k \omega_k = c_\lambda c_\omega k^{-(a + b)}$.",
            assumptions={**_PAR, L: (1, 10)},
            definitions=spectra,
            transforms=("expand",),
        ),
        Step(
            "Continuum of modes",
            R_exp,
            I_k,
            r"For $L \gg 1$ the summand varies on the scale $k \sim L^{1/a}$ and is exponentially small for $k < 1$.",
            assumptions={a: (1.5, 3.0), b: (0.7, 2.5), c_lambda: (0.5, 2.0), c_omega: (0.5, 2.0)},
            relation="~",
            limit=L,
            limit_points=(1e2, 1e3, 1e4),
            tolerance=1e-6,
            ratio_floor=1e-9,
            numeric=_mode_sum_vs_integral,
            n_points=3,
        ),
        Step(
            "Superposition of characteristic depths",
            I_k,
            I_tau,
            r"Change variables from $k$ to $\tau = k^a/2$: the modes' characteristic depths have the density "
            r"$(c_\lambda c_\omega/a)\, 2^{-\zeta} \tau^{-(\zeta + 1)}$, a scale-free distribution of depths.",
            assumptions={**_PAR, L: (0.5, 20.0)},
            definitions={zeta: ZETA},
            transforms=(),
            n_points=3,
        ),
        Step(
            "Gamma integral",
            I_tau,
            power,
            r"Substitute $s = L/\tau$: $\int_0^\infty \tau^{-(\zeta + 1)} e^{-L/\tau}\, d\tau = "
            r"L^{-\zeta} \Gamma(\zeta)$.",
            assumptions={c_lambda: (0.5, 2.0), c_omega: (0.5, 2.0), a: (0.5, 3.0), zeta: (0.2, 3.0), L: (0.5, 50.0)},
            transforms=(),
            n_points=3,
        ),
        Step(
            "Same law as equal steps",
            power,
            asym,
            r"$2^{-\zeta} L^{-\zeta} = (2L)^{-\zeta}$: the equal-step asymptote of the continuum derivation.",
            assumptions={c_lambda: (0.5, 2.0), c_omega: (0.5, 2.0), a: (0.5, 3.0), zeta: (0.2, 3.0), L: (0.5, 50.0)},
            transforms=("powsimp", "simplify"),
        ),
        Step(
            "Depth exponent",
            -L * sp.Derivative(sp.log(power), L),
            zeta,
            r"The logarithmic slope in $L$ is $-\zeta$.",
            assumptions={c_lambda: (0.5, 2.0), c_omega: (0.5, 2.0), a: (0.5, 3.0), zeta: (0.2, 3.0), L: (0.5, 50.0)},
            transforms=("doit",),
        ),
    ]
    return Derivation(
        title="Mode-wise picture: a superposition of characteristic depths",
        introduction=(
            r"Linear attention learns the spectral directions one after another: mode $k$ decays exponentially "
            r"with depth on its own scale $\tau_k = k^a/2$. The power law in depth is the superposition of these "
            "exponentials, weighted by the modes' initial losses."
        ),
        parameters=[
            (a, "eigenvalue decay", "$a > 0$"),
            (b, "target-power decay", "$a + b > 1$"),
            (c_lambda, "eigenvalue scale", r"$c_\lambda > 0$"),
            (c_omega, "target-power scale", r"$c_\omega > 0$"),
            (L, "depth", "$L > 0$"),
            (tau_k, "characteristic depth of mode $k$", r"$\tau_k = k^a/2$"),
            (eps, "loss fraction at which a mode counts as learnt", r"$0 < \epsilon < 1$"),
        ],
        steps=steps,
        conclusion=(
            r"$R(L) \sim (c_\lambda c_\omega/a) \Gamma(\zeta) (2L)^{-\zeta}$: sequential learning of modes whose "
            r"characteristic depths are spread as $\tau^{-(\zeta + 1)}$ gives the power law with exponent "
            r"$\zeta = (a + b - 1)/a$."
        ),
        name="modes",
    )

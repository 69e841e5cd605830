"""Derivation (ii): the free polynomial optimum falls as L^(-2 zeta).

With untied layers the residual is any polynomial r of degree <= L with r(0) = 1. Against the
continuum measure ``w(lambda) = (c_omega/a) c_lambda^(1-zeta) lambda^(zeta-1)`` on ``(0, c_lambda)``
the minimum of ``int r^2 w`` is the Christoffel function ``1/sum_j p_j(0)^2`` of the orthonormal
polynomials, which are shifted Jacobi polynomials; their values at 0 sum in closed form to a Gamma
ratio whose large-L limit is ``(c_lambda c_omega/a) zeta Gamma(zeta)^2 L^(-2 zeta)``.
"""

from __future__ import annotations

import mpmath
import sympy as sp

from .derivation import Derivation, Step

__all__ = ["free_polynomial_derivation"]

a, c_lambda, c_omega, lam = sp.symbols("a c_lambda c_omega lambda", positive=True)
zeta = sp.Symbol("zeta", positive=True)
L = sp.Symbol("L", positive=True, integer=True)
j = sp.Symbol("j", nonnegative=True, integer=True)
i, m = sp.Symbol("i", nonnegative=True, integer=True), sp.Symbol("m", positive=True, integer=True)
R_free = sp.Symbol("R_L^free")
r_opt = sp.Symbol("r_L^*")
p = sp.Function("p_j")

C = c_lambda * c_omega / a
_PAR = {a: (0.5, 3.0), c_lambda: (0.5, 2.0), c_omega: (0.5, 2.0), zeta: (0.2, 3.0)}


def _gram(vals, n: int):
    """Moments G_mn = int_0^c lambda^(m+n) w(lambda) dlambda of the monomials (elementary integrals)."""
    z, cl, co, av = vals[zeta], vals[c_lambda], vals[c_omega], vals[a]
    K = co / av * cl ** (1 - z)
    return mpmath.matrix([[K * cl ** (r + s + z) / (r + s + z) for s in range(n)] for r in range(n)])


def _min_by_elimination(vals):
    """min over r(0) = 1 of r^T G r: fix r_0 = 1 and solve the normal equations for r_1..r_L."""
    n = int(vals[L]) + 1
    G = _gram(vals, n)
    if n == 1:
        return G[0, 0], mpmath.matrix([1])
    G11 = G[1:, 1:]
    g10 = G[1:, 0]
    rest = mpmath.lu_solve(G11, -g10)
    value = G[0, 0] + sum(g10[t] * rest[t] for t in range(n - 1))
    coeffs = mpmath.matrix([1] + [rest[t] for t in range(n - 1)])
    return value, coeffs


def _christoffel(vals):
    """1/sum_j p_j(0)^2 with p_j orthonormalised monomials (Cholesky of the Gram matrix)."""
    n = int(vals[L]) + 1
    lower = mpmath.cholesky(_gram(vals, n))
    inv = mpmath.inverse(lower)  # row j: coefficients of p_j in the monomials
    return 1 / sum(inv[t, 0] ** 2 for t in range(n))


def _step_christoffel(vals):
    return _min_by_elimination(vals)[0], _christoffel(vals)


def _step_closed_form(vals):
    return _min_by_elimination(vals)[0], None  # the closed form is evaluated from the displayed expression


def _step_endpoint(vals):
    z, jv = vals[zeta], int(vals[j])  # mpmath's hypergeometric Jacobi, independent of the closed form
    return mpmath.jacobi(jv, 0, z - 1, -1), None


def _step_residual(vals):
    Lv, x = int(vals[L]), vals[lam]
    _, coeffs = _min_by_elimination(vals)
    r = sum(coeffs[t] * x**t for t in range(Lv + 1))
    return r, None


def _T(n):
    return sp.gamma(n + zeta + 1) ** 2 / (sp.gamma(zeta) * sp.gamma(zeta + 1) * sp.factorial(n) ** 2)


def _summand(n):
    return (2 * n + zeta) * sp.gamma(n + zeta) ** 2 / (sp.gamma(zeta) ** 2 * sp.factorial(n) ** 2)


def free_polynomial_derivation() -> Derivation:
    """Christoffel function, shifted Jacobi polynomials, Gamma ratio, ``L^(-2 zeta)``.

    Returns
    -------
    Derivation
        From the Christoffel function of the continuum measure to its closed form, the optimal residual
        and the depth exponent 2 zeta (the last step's right side).

    Examples
    --------
    >>> der = free_polynomial_derivation()
    >>> der.steps[-1].rhs
    2*zeta
    """
    x = 2 * lam / c_lambda - 1  # maps (0, c_lambda) onto (-1, 1)
    w = c_omega / a * c_lambda ** (1 - zeta) * lam ** (zeta - 1)
    closed = C * sp.gamma(zeta) * sp.gamma(zeta + 1) * sp.factorial(L) ** 2 / sp.gamma(L + zeta + 1) ** 2
    asym = C * zeta * sp.gamma(zeta) ** 2 * L ** (-2 * zeta)
    small = {**_PAR, L: (1, 5)}
    steps = [
        Step(
            "Optimum is a Christoffel function",
            R_free,
            1 / sp.Sum(p(0) ** 2, (j, 0, L)),
            r"Writing $r$ in the orthonormal basis $p_0, \ldots, p_L$ of the measure $w$, "
            r"$\int r^2 w = \sum_j r_j^2$ while $r(0) = \sum_j r_j p_j(0) = 1$; by Cauchy-Schwarz the minimum "
            r"is $1/\sum_j p_j(0)^2$ (checked against the direct minimisation over the monomial coefficients).",
            assumptions=small,
            transforms=(),
            numeric=_step_christoffel,
        ),
        Step(
            "Orthogonal basis: shifted Jacobi",
            sp.Integral(w * sp.jacobi(i, 0, zeta - 1, x) * sp.jacobi(i + m, 0, zeta - 1, x), (lam, 0, c_lambda)),
            sp.Integer(0),
            r"With $x = 2 \lambda/c_\lambda - 1$ the weight $\lambda^{\zeta - 1}$ becomes $(1 + x)^{\zeta - 1}$: "
            r"the Jacobi polynomials $P_j^{(0, \zeta - 1)}(x)$ are orthogonal for it.",
            assumptions={**_PAR, i: (0, 3), m: (1, 2)},
            transforms=(),
            abs_scale=1.0,
            n_points=2,
        ),
        Step(
            "Jacobi norms",
            sp.Integral(w * sp.jacobi(j, 0, zeta - 1, x) ** 2, (lam, 0, c_lambda)),
            C / (2 * j + zeta),
            r"The Jacobi norm $2^\zeta/(2j + \zeta)$ in $x$, times the Jacobian $(c_\lambda/2)^\zeta$, gives "
            r"$C/(2j + \zeta)$ with $C = c_\lambda c_\omega/a$, so "
            r"$p_j = \sqrt{(2j + \zeta)/C}\, P_j^{(0, \zeta - 1)}(x)$.",
            assumptions={**_PAR, j: (0, 5)},
            transforms=(),
            n_points=3,
        ),
        Step(
            "Value at the zero eigenvalue",
            sp.Subs(sp.jacobi(j, 0, zeta - 1, sp.Symbol("x")), sp.Symbol("x"), -1),
            (-1) ** j * sp.gamma(j + zeta) / (sp.gamma(zeta) * sp.factorial(j)),
            r"$\lambda = 0$ is $x = -1$, where $P_j^{(\alpha, \beta)}(-1) = (-1)^j \binom{j + \beta}{j}$.",
            assumptions={zeta: (0.2, 3.0), j: (0, 12)},
            transforms=(),
            numeric=_step_endpoint,
        ),
        Step(
            "Christoffel sum",
            sp.Sum(p(0) ** 2, (j, 0, L)),
            sp.Sum(_summand(j), (j, 0, L)) / C,
            r"Square the endpoint value and multiply by the normalisation $(2j + \zeta)/C$.",
            assumptions=small,
            transforms=(),
            numeric=lambda v: (1 / _christoffel(v), None),
        ),
        Step(
            "Telescoping",
            _T(L) - _T(L - 1),
            _summand(L),
            r"$T_L = \Gamma(L + \zeta + 1)^2/(\Gamma(\zeta) \Gamma(\zeta + 1) (L!)^2)$ satisfies "
            r"$T_L - T_{L-1}$ equal to the summand at $j = L$, since $(L + \zeta)^2 - L^2 = \zeta (2L + \zeta)$.",
            assumptions={zeta: (0.2, 3.0), L: (1, 20)},
            transforms=("gammasimp", "combsimp"),
        ),
        Step(
            "Base case",
            _summand(sp.Integer(0)),
            _T(sp.Integer(0)),
            r"At $L = 0$ both sides equal $\zeta$.",
            assumptions={zeta: (0.2, 3.0)},
            transforms=("gammasimp",),
        ),
        Step(
            "Closed-form sum",
            sp.Sum(_summand(j), (j, 0, L)),
            _T(L),
            "By induction from the two previous steps.",
            assumptions={zeta: (0.2, 3.0), L: (0, 30)},
            transforms=(),
            n_points=5,
        ),
        Step(
            "Free-polynomial optimum",
            R_free,
            closed,
            r"Invert the Christoffel sum: $R_L^{\mathrm{free}} = C/T_L$ (checked against the direct minimisation).",
            assumptions=small,
            transforms=(),
            numeric=_step_closed_form,
        ),
        Step(
            "Optimal residual",
            r_opt,
            sp.jacobi(L, zeta, 0, 1 - 2 * lam / c_lambda) / sp.jacobi(L, zeta, 0, 1),
            r"The minimiser is proportional to the Christoffel-Darboux kernel $\sum_j p_j(0) p_j(\lambda)$, the "
            r"normalised Jacobi polynomial $P_L^{(\zeta, 0)}(1 - 2 \lambda/\lambda_1)$; its roots $\rho_l$ give "
            r"per-layer step sizes $\gamma_l = L/\rho_l$ (checked against the minimiser over monomial coefficients).",
            assumptions={**small, lam: (0.0, 0.5)},
            transforms=(),
            numeric=_step_residual,
        ),
        Step(
            "Large-depth asymptote",
            closed,
            asym,
            r"$\Gamma(L + 1)/\Gamma(L + \zeta + 1) \sim L^{-\zeta}$ and $\Gamma(\zeta + 1) = \zeta \Gamma(\zeta)$.",
            assumptions=_PAR,
            relation="~",
            limit=L,
            tolerance=1e-5,
            n_points=3,
        ),
        Step(
            "Depth exponent",
            -L * sp.Derivative(sp.log(asym), L),
            2 * zeta,
            r"The logarithmic slope of the asymptote in $L$ is $-2\zeta$: twice the equal-step exponent.",
            assumptions=small,
            transforms=("doit",),
        ),
    ]
    return Derivation(
        title=r"Free polynomial (untied layers): depth exponent $2\zeta$",
        introduction=(
            r"Untied linear-attention layers realise any residual polynomial $r$ of degree at most $L$ with "
            r"$r(0) = 1$. On the continuum spectrum the loss is $\int r(\lambda)^2 w(\lambda)\, d\lambda$ with the "
            r"density $w = (c_\omega/a) c_\lambda^{1 - \zeta} \lambda^{\zeta - 1}$ on $(0, \lambda_1)$, "
            r"$\lambda_1 = c_\lambda$, found in the equal-step derivation. We minimise it exactly."
        ),
        parameters=[
            (zeta, "spectral exponent $(a + b - 1)/a$", r"$\zeta > 0$"),
            (a, "eigenvalue decay", "$a > 0$"),
            (c_lambda, r"top eigenvalue $\lambda_1$", r"$c_\lambda > 0$"),
            (c_omega, "target-power scale", r"$c_\omega > 0$"),
            (L, "depth = maximal degree of the residual polynomial", r"$L = 1, 2, \ldots$"),
        ],
        steps=steps,
        conclusion=(
            r"$R_L^{\mathrm{free}} = (c_\lambda c_\omega/a) \Gamma(\zeta) \Gamma(\zeta + 1) (L!)^2 / "
            r"\Gamma(L + \zeta + 1)^2 \sim (c_\lambda c_\omega/a) \zeta \Gamma(\zeta)^2 L^{-2\zeta}$: twice the "
            "equal-step exponent. This is the continuum law; on a discrete spectrum the exact optimum falls faster "
            "because roots can sit on the top eigenvalues."
        ),
        name="free",
    )

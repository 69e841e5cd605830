"""Derivation (iv): the central-limit aggregation identity and its models M0-M4.

A depth-L model that averages its layers' predictors, ``yhat = (1/L) sum_l f_l``, has the exact loss
``R_L = 1^T M 1 / L^2 = C_L + (A_L - C_L)/L`` with ``M_lm = E[e_l e_m]``, ``e_l = f_l - y*``: a shared
error C_L plus layer disagreement averaged away like in the central limit theorem. Models of M give
the depth dependence: 1/L for independent or equicorrelated noise, faster for shrinking noise,
exact geometric sums for AR(1) correlation, and the slower L^-g for power-law correlation.
"""

from __future__ import annotations

import mpmath
import numpy as np
import sympy as sp

from .derivation import Derivation, Step

__all__ = ["clt_derivation"]

L = sp.Symbol("L", positive=True, integer=True)
l, m, n, kk = (sp.Symbol(s, positive=True, integer=True) for s in ("l", "m", "n", "k"))
S, sigma2, rho, r, eta, g = sp.symbols("S sigma^2 rho r eta g", positive=True)
M, f, e, sig = sp.IndexedBase("M"), sp.IndexedBase("f"), sp.IndexedBase("e"), sp.IndexedBase("sigma")
w = sp.IndexedBase("w")
yhat, ystar = sp.Symbol("yhat"), sp.Symbol("y^*")
E = sp.Function("E")
R_L, A_L, C_L = sp.Symbol("R_L"), sp.Symbol("A_L"), sp.Symbol("C_L")

SIZES = [{L: v} for v in (2, 3, 4, 5)]


def _dsum(expr):
    return sp.Sum(sp.Sum(expr, (m, 1, L)), (l, 1, L))


A_def = sp.Sum(M[l, l], (l, 1, L)) / L
C_def = _dsum((1 - sp.KroneckerDelta(l, m)) * M[l, m]) / (L * (L - 1))


def _symmetric(expr):
    """M is a covariance: write every M[i, j] with i > j as M[j, i]."""
    return expr.replace(
        lambda x: isinstance(x, sp.Indexed) and x.base == M and x.indices[0] > x.indices[1],
        lambda x: M[x.indices[1], x.indices[0]],
    )


def _expectation(arg):
    """E of a quadratic polynomial in the layer errors e_l: E[e_i e_j] = M_ij (linearity)."""
    poly = sp.expand(arg)
    out = 0
    for term in sp.Add.make_args(poly):
        coeff, factors = sp.S.One, []
        for fac in sp.Mul.make_args(term):
            base, power = fac.as_base_exp()
            if isinstance(base, sp.Indexed) and base.base == e:
                factors += [base.indices[0]] * int(power)
            else:
                coeff *= fac
        if len(factors) != 2:
            raise ValueError(f"expected a quadratic form in e, got {term}")
        out += coeff * M[min(factors), max(factors)]
    return out


def _take_expectations(diff):
    """Concrete L: carry out the sums, write f_l = y* + e_l, take expectations term by term."""
    x = diff.doit()
    x = x.replace(lambda t: isinstance(t, sp.Indexed) and t.base == f, lambda t: ystar + e[t.indices[0]])
    x = x.replace(lambda t: isinstance(t, sp.Function) and t.func == E, lambda t: _expectation(t.args[0]))
    return sp.expand(_symmetric(sp.expand(x)))


_take_expectations.__name__ = "expectation by linearity"


def _sum_in_range(expr):
    """Carry out sums over l, m in 1..L, resolving conditions such as l <= L that hold inside the range."""
    x = expr.doit()
    x = x.replace(
        lambda t: isinstance(t, sp.Piecewise),
        lambda t: next(
            (p.expr for p in t.args if p.cond in (sp.Ge(L, l), sp.Le(l, L), sp.Ge(L, m), sp.Le(m, L), sp.true)), t
        ),
    )
    return sp.simplify(x.doit())


_sum_in_range.__name__ = "summation over 1 ≤ l, m ≤ L"


def _doit_simplify(expr):
    return sp.simplify(expr.doit())


_doit_simplify.__name__ = "simplify at fixed L"


def _doit_expand(expr):
    return sp.expand(_symmetric(sp.expand(expr.doit())))


_doit_expand.__name__ = "expand at fixed L"


def _powerlaw_pair(vals):
    """(sigma^2/L^2)[L + 2 sum_{k=1}^{L-1} (L-k)(1+k)^-g] summed term by term (float64, pairwise
    summation: relative error ~1e-13, far below the L^(g-1) effect being checked)."""
    Lv, gv, s2 = int(vals[L]), float(vals[g]), float(vals[sigma2])
    k = np.arange(1, Lv, dtype=float)
    lag_sum = Lv + 2 * float(np.sum((Lv - k) * (1 + k) ** (-gv)))
    return mpmath.mpf(s2 / Lv**2 * lag_sum), None  # the asymptote is evaluated from its expression


def clt_derivation() -> Derivation:
    """The identity R_L = C_L + (A_L - C_L)/L and the aggregation models M1-M4.

    Returns
    -------
    Derivation
        The exact decomposition (M0) and the layer disagreement first, then the loss under each
        aggregation model M1-M4.

    Examples
    --------
    >>> clt_derivation().steps[0].title
    'Exact decomposition (M0)'
    """
    R_def = _dsum(M[l, m]) / L**2
    yhat_def = sp.Sum(f[n], (n, 1, L)) / L
    disagreement = sp.Sum(E((f[l] - yhat) ** 2), (l, 1, L)) / (L - 1)
    ar_sum = L + 2 * sp.Sum((L - kk) * r**kk, (kk, 1, L - 1))
    ar_closed = L * (1 + r) / (1 - r) - 2 * r * (1 - r**L) / (1 - r) ** 2
    pl_sum = sigma2 / L**2 * (L + 2 * sp.Sum((L - kk) * (1 + kk) ** (-g), (kk, 1, L - 1)))
    inv_var = sp.Sum(sig[n] ** -2, (n, 1, L))
    ranges_M: dict = {}
    steps = [
        Step(
            "Exact decomposition (M0)",
            R_def,
            C_def + (A_def - C_def) / L,
            r"Split the $L^2$ entries of $M$ into the $L$ diagonal ones (mean $A_L$) and the $L(L - 1)$ "
            r"off-diagonal ones (mean $C_L$): $\mathbf{1}^\top M \mathbf{1} = L A_L + L(L - 1) C_L$.",
            assumptions=ranges_M,
            instances=SIZES,
            transforms=(_doit_expand,),
        ),
        Step(
            "Layer disagreement",
            A_def - C_def,
            disagreement.subs(yhat, yhat_def),
            r"With $\hat{y} = (1/L) \sum_l f_l$ and $e_l = f_l - y^\ast$, $E(f_l - \hat{y})^2 = M_{ll} - (2/L) "
            r"\sum_m M_{lm} + \mathbf{1}^\top M \mathbf{1}/L^2$; summing over $l$ gives "
            r"$(L - 1)(A_L - C_L) \ge 0$.",
            assumptions=ranges_M,
            instances=SIZES,
            transforms=(_take_expectations,),
        ),
        Step(
            "Shared error plus independent noise (M1)",
            _dsum(S + sigma2 * sp.KroneckerDelta(l, m)) / L**2,
            S + sigma2 / L,
            r"$e_l = s + \xi_l$ with independent layer noise of variance $\sigma^2$: "
            r"$M_{lm} = E s^2 + \sigma^2 \delta_{lm}$ ($S = E s^2$), so only the noise is averaged away.",
            assumptions={S: (0.1, 2.0), sigma2: (0.1, 2.0), L: (2, 30)},
            transforms=(_sum_in_range,),
        ),
        Step(
            "Equicorrelated noise (M2)",
            _dsum(S + sigma2 * (rho + (1 - rho) * sp.KroneckerDelta(l, m))) / L**2,
            S + rho * sigma2 + (1 - rho) * sigma2 / L,
            r"Noise correlation $\rho$ between every pair of layers adds $\rho \sigma^2$ to the floor; the rest "
            "still falls with exponent exactly 1.",
            assumptions={S: (0.1, 2.0), sigma2: (0.1, 2.0), rho: (0.0, 1.0), L: (2, 30)},
            transforms=(_sum_in_range,),
        ),
        Step(
            "Unequal variances (M3)",
            _dsum(S + sig[l] ** 2 * sp.KroneckerDelta(l, m)) / L**2,
            S + sp.Sum(sig[l] ** 2, (l, 1, L)) / L**2,
            r"Independent noise of layer-dependent variance $\sigma_l^2$ enters through the diagonal only.",
            instances=[{L: v} for v in (2, 3, 4, 5, 6)],
            transforms=(_doit_expand,),
        ),
        Step(
            "Inverse-variance weights (M3)",
            S + sp.Sum((sig[l] ** -2 / inv_var) ** 2 * sig[l] ** 2, (l, 1, L)),
            S + 1 / inv_var,
            r"Weights $w_l$ summing to 1 give $E s^2 + \sum_l w_l^2 \sigma_l^2$, minimised (Lagrange) by "
            r"$w_l \propto \sigma_l^{-2}$.",
            instances=[{L: v} for v in (2, 3, 4, 5)],
            transforms=(_doit_simplify,),
        ),
        Step(
            "Noise shrinking with depth (M3)",
            S + sp.Sum(sigma2 * L ** (-eta), (l, 1, L)) / L**2,
            S + sigma2 * L ** (-1 - eta),
            r"If every layer's noise variance scales as $\sigma^2 L^{-\eta}$, the excess loss falls with exponent "
            r"$1 + \eta$.",
            assumptions={S: (0.1, 2.0), sigma2: (0.1, 2.0), eta: (0.0, 2.0), L: (1, 30)},
            transforms=("doit", "powsimp"),
        ),
        Step(
            "AR(1) correlation: lag sums (M4)",
            _dsum(r ** sp.Abs(l - m)),
            ar_sum,
            r"Group the pairs $(l, m)$ by their lag $|l - m| = k$: $L$ pairs at lag 0 and $2(L - k)$ at lag "
            r"$k \ge 1$.",
            assumptions={r: (0.05, 0.95)},
            instances=[{L: v} for v in (2, 3, 4, 5, 6)],
            transforms=(_doit_expand,),
        ),
        Step(
            "AR(1) correlation: geometric sums (M4)",
            sigma2 / L**2 * ar_sum,
            sigma2 / L**2 * ar_closed,
            r"Sum the arithmetic-geometric series for general $L$ ($r \neq 1$, the case excluded by $0 < r < 1$).",
            assumptions={sigma2: (0.1, 2.0), r: (0.05, 0.95), L: (1, 40)},
            transforms=("doit-generic",),
        ),
        Step(
            "Power-law correlation (M4)",
            pl_sum,
            2 * sigma2 * L ** (-g) / ((1 - g) * (2 - g)),
            r"For $\rho(k) = (1 + k)^{-g}$ with $0 < g < 1$ the lag sum grows like $2 L^{2-g}/((1 - g)(2 - g))$: "
            r"sub-inverse scaling $L^{-g}$, approached slowly (relative corrections of order $L^{g-1}$).",
            assumptions={sigma2: (0.1, 2.0), g: (0.2, 0.6)},
            relation="~",
            limit=L,
            tolerance=0.01,
            numeric=_powerlaw_pair,
            n_points=3,
        ),
    ]
    return Derivation(
        title="Central-limit aggregation of layers",
        introduction=(
            r"A model whose prediction is the mean of $L$ layer predictors $f_l$ has layer errors "
            r"$e_l = f_l - y^\ast$ with second moments $M_{lm} = E[e_l e_m]$. $A_L$ is the mean diagonal entry (the "
            r"layers' own losses), $C_L$ the mean off-diagonal entry (the shared error). The identity below is "
            r"exact for any predictors; the models M1-M4 specify $M$ and give the depth dependence."
        ),
        parameters=[
            (L, "depth = number of averaged layer predictors", r"$L = 2, 3, \ldots$"),
            (S, "shared error $E s^2$", r"$S \ge 0$"),
            (sigma2, "layer noise variance", r"$\sigma^2 > 0$"),
            (rho, "equicorrelation of layer noise", r"$0 \le \rho \le 1$"),
            (r, "AR(1) lag-one correlation", "$0 < r < 1$"),
            (g, "power-law correlation exponent", "$0 < g < 1$"),
            (eta, "decay of layer noise with depth", r"$\eta \ge 0$"),
        ],
        steps=steps,
        conclusion=(
            r"$R_L = C_L + (A_L - C_L)/L$ holds exactly, with $A_L - C_L \ge 0$ the layers' disagreement. "
            r"Independent or equicorrelated layer noise gives exponent exactly 1, noise shrinking as $L^{-\eta}$ "
            r"gives $1 + \eta$, summable (AR(1)) correlation keeps $1/L$ with an effective number of independent "
            r"layers, and power-law correlation $(1 + k)^{-g}$ gives the slower $L^{-g}$."
        ),
        name="clt",
    )

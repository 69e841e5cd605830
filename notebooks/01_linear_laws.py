# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Linear attention: the depth laws, the linear floor and a derivation
#
# Linear attention with $L$ layers acts on the population covariance like $L$ gradient steps. On a
# power-law spectrum ($\lambda_k = k^{-a}$, target power $\omega_k = k^{-b}$) its loss falls with
# depth as $L^{-\zeta}$, $\zeta = (a + b - 1)/a$, with equal (tied) steps, and as $L^{-2\zeta}$ when
# every layer takes its own step. On the top-$k$ task it cannot go below a floor, the best
# polynomial in $\Sigma$: $R_{irr} = T - h^\top G^+ h$. Everything here is `depthscale.theory`:
# no simulation, seconds in all.

# %%
import matplotlib.pyplot as plt
import pandas as pd
from IPython.display import display

from depthscale import PowerLawSpectrum, build_derivation, linear_floor, linear_laws_frame, plot_linear_laws

# %% [markdown]
# ## The depth laws of one spectrum
# Every law at once, as a table: the equal-step loss at the reference step (`constrained`), at the
# best equal step (`constrained_opt`, with that step `gamma_opt`), its continuum forms
# (`beta_form`, `gamma_asymptote`), and the free (untied) optimum (`free_continuum`,
# `free_discrete`).

# %%
spec = PowerLawSpectrum(a=2.0, b=1.0, d=10_000)
depths = [1, 2, 4, 8, 16, 32, 64]
laws = linear_laws_frame(spec, depths)  # a DataFrame indexed by L, one column per law
print(f"zeta = (a + b - 1) / a = {spec.zeta:g}")
display(laws.style.format("{:.4g}"))

# %% [markdown]
# On log-log axes the continuum laws are lines of slope $-\zeta$ (equal steps) or $-2\zeta$ (free
# steps) once $L$ is large; the dotted lines have exactly those slopes. `free_discrete` is the free
# optimum on the finite spectrum ($d = 10^4$ modes). `plot_linear_laws` draws on the Axes it is
# given and returns it.

# %%
fig, ax = plt.subplots(figsize=(6.5, 4.5))
plot_linear_laws(spec, depths, ax=ax)  # the laws of depthscale.theory, with slope guides -zeta and -2 zeta
plt.show()

# %% [markdown]
# ## The linear floor of the top-2 task
# Monte Carlo estimate of $T - h^\top G^+ h$ with its jackknife standard error, against the context
# length $P$ at $d = 16$, for two spectra. The floor is what no depth can beat: it is set by the
# task, not by the model's depth.

# %%
rows = []
for a, b in ((0.0, 0.0), (0.5, 0.5)):
    for P in (16, 32, 64, 128):
        r = linear_floor(a, b, k=2, d=16, P=P, contexts=300, seed=0)
        rows.append({"(a, b)": f"({a:g}, {b:g})", "P": P, "floor": r.floor, "stderr": r.stderr})
floors = pd.DataFrame(rows)
display(r)  # the last estimate, as a FloorResult shows itself
display(floors.pivot(index="P", columns="(a, b)", values=["floor", "stderr"]).style.format("{:.4f}"))
fig, ax = plt.subplots(figsize=(6.5, 4))
for spectrum, group in floors.groupby("(a, b)"):
    ax.errorbar(group["P"], group["floor"], yerr=2 * group["stderr"], marker="o", capsize=3, label=spectrum)
ax.set(xscale="log", xlabel="context length P", ylabel=r"floor $T - h^\top G^+ h$ (± 2 s.e.)")
ax.set_title("linear floor, top-2 task, d = 16")
ax.legend(title="(a, b)")
plt.show()

# %% [markdown]
# ## The derivation of the depth exponent
# The equal-step law as a chain of sympy steps, each checked by machine (symbolically where sympy
# can, otherwise numerically at 40 digits or as a ratio at growing depth).

# %%
derivation = build_derivation("linear")
result = derivation.check()
checks = pd.DataFrame([s.to_dict() for s in result.steps])[["title", "method", "passed", "error"]]
print(f"all {len(checks)} steps passed: {result.all_passed}")
display(checks)

# %% [markdown]
# The derivation itself (a `Derivation` displays as Markdown with its equations in LaTeX, each step
# with the result of its check):

# %%
display(derivation)

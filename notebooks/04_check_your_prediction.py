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
# # Check your own prediction: a law against a small simulation sweep
#
# You have a prediction for how the loss of a trained attention model falls with depth $L$. This
# notebook puts it against simulations in four steps: a small sweep into a results store, the
# curve and its fit, a claim with a verdict, and a figure. It runs in about a minute on two
# cores; change the prediction, the spectrum or the depths and run it again.
#
# **The prediction here.** Linear attention on the easy task with a power-law spectrum
# $\lambda_k \propto k^{-a}$, $\omega_k \propto k^{-b}$ (eigenvalues and target power): the loss
# falls as a pure power law $R_L = c\,L^{-\alpha}$ with $\zeta \le \alpha \le 2\zeta$,
# $\zeta = (a + b - 1)/a$. Equal steps give $\zeta$, the free optimum $2\zeta$ (the derivations of
# notebook 01); a trained model lies in between.

# %%
import tempfile
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
from IPython.display import display

from depthscale import (
    ClaimResult,
    ClaimTable,
    ModelConfig,
    PowerLawSpectrum,
    RunConfig,
    Store,
    TaskConfig,
    TrainConfig,
    curves,
    plot_curve,
    sweep,
)

a, b, d, P = 1.5, 0.5, 16, 64
zeta = PowerLawSpectrum(a, b, d).zeta
predicted = (zeta, 2 * zeta)  # the prediction: alpha in this interval
print(f"zeta = {zeta:.4g}: predicted alpha in [{predicted[0]:.4g}, {predicted[1]:.4g}]")

# %% [markdown]
# ## 1. The sweep
# Four depths, three seeds, a small training budget (`TrainConfig()`'s defaults are the paper's
# scale). The store lives in a temporary folder; `sweep` skips runs already in a store, so a
# store kept on disk makes a second run of this cell instant.

# %%
train = TrainConfig(steps=400, batch=32, lr=2e-2, eval_contexts=512, window=50)
task = TaskConfig(task="easy-fresh", a=a, b=b, d=d, P=P)  # the easy task with a fresh query, as everywhere
runs = [
    (RunConfig(task, ModelConfig(model="linear", depth=L), train), seed) for seed in (0, 1, 2) for L in (1, 2, 4, 8)
]
with tempfile.TemporaryDirectory() as folder:
    with Store(Path(folder) / "prediction.sqlite", mode="write") as store:
        result = sweep(runs, store, executor="serial", quiet=True)
        display(store)
        records = list(store.records())
print(result)

# %% [markdown]
# ## 2. The curve and its fit
# `curves` groups the runs into one curve per condition; `fit("power")` fits $c L^{-\alpha}$ to
# the seed means (with fewer depths than a free law needs it fits every run's loss instead).
# `fit_report()` prints the parameters with their standard errors, 95 % intervals, correlations
# and whether the fit is identified.

# %%
(curve,) = curves(records)
print(curve)
fit = curve.fit("power", n_boot=200)
print(fit.fit_report())

# %% [markdown]
# ## 3. The claim
# The prediction passes when the fitted exponent lies in the predicted interval within two
# standard errors, and fails when it is outside by more. The project's rules ask for more before
# a claim is decided (at least 5 depths spanning a factor 32, docs/choices.md), so on this sweep
# the verdict is `indicative`, with the verdict the measurement points to.

# %%
alpha, se = fit.params["alpha"], fit.se["alpha"]
lo, hi = predicted
inside = lo - 2 * se <= alpha <= hi + 2 * se
points_to = "pass" if inside else "fail"
decisive = len(curve.depths) >= 5 and curve.depths.max() / curve.depths.min() >= 32 and fit.identified
claim = ClaimResult(
    "my-linear-exponent",
    "linear attention, easy task: R_L = c L^-alpha with zeta <= alpha <= 2 zeta",
    predicted,
    alpha,
    se,
    "2 s.e.",
    points_to if decisive else "indicative",
    f"alpha = {alpha:.3f} ± {se:.3f} on {len(curve.depths)} depths x {len(curve.seeds)} seeds",
    would_be=None if decisive else points_to,
)
display(ClaimTable([claim]))
print(claim)

# %% [markdown]
# ## 4. The figure
# The runs (seed mean ± one standard error), the fitted law, and the two ends of the prediction
# drawn through the seed mean at $L = 1$.

# %%
fig, ax = plt.subplots(figsize=(6, 4))
plot_curve(curve, ax=ax, kind="power")
grid = np.geomspace(1, curve.depths.max(), 50)
for power, style in ((lo, ":"), (hi, "-.")):
    ax.plot(grid, curve.mean[0] * grid**-power, style, color="0.4", label=f"prediction end: alpha = {power:.3g}")
ax.legend(fontsize=8)
plt.show()

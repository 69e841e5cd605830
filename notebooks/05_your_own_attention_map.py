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
# # Your own attention map: register it, train it with the JAX engine, fit its depth curve
#
# An attention map takes one layer's scores $z_i$ (the test token against the $P$ context tokens)
# to weights $p_i$. depthscale ships five (softmax, sparsemax, 1.5-entmax, sigmoid, relu); any
# other is a JAX function from scores `(..., P)` to weights `(..., P)`, registered by name with
# `depthscale.register_attention` and run by the JAX engine (`ModelConfig(engine="jax")`, autograd:
# no backward pass to derive). A map may carry **learnable parameters**, one per layer, declared with
# their initial values (`params={"log_temp": 0.0}`): the engine appends them to the model's
# parameters and trains them with the rest, and calls the map as `fn(z, log_temp=t)` with `t`
# shaped to broadcast against that layer's scores.
#
# Three maps the package does not ship:
#
# - **softmax-plus-one** $p_i = e^{z_i} / (1 + \sum_j e^{z_j})$: the weights may sum to less than
#   one (attention may "look nowhere"), so it is not normalised and has only the single-head floor;
# - **a learned per-layer temperature** $p = \mathrm{softmax}(e^{\theta_l} z)$, $\theta_l$ learned;
# - **$\alpha$-entmax with a learned $\alpha_l$** (Peters et al. 2019):
#   $p_i = [(\alpha - 1) z_i - \tau]_+^{1/(\alpha - 1)}$ with $\tau$ such that $\sum_i p_i = 1$;
#   $\alpha \to 1$ is softmax, $\alpha = 2$ sparsemax. Here $\alpha = 1.05 + 0.9\,\sigma(a_l)$ stays in
#   $(1.05, 1.95)$, where the powers are safe.
#
# Each is trained on the top-2 task at a tiny size ($d = 8$, $P = 32$) at $L = 1, 2, 4, 8, 16$ with
# two seeds, and its depth curve $R_L$ fitted with $L_0 + c L^{-\alpha}$ and shown with its
# reference floors (the best single temperature head of the map, and for a normalised map the
# convex and signed (`mixture`) mixtures of its heads; a map's heads take its parameters at their initial
# values). The training budget is a demonstration's (a few hundred steps), not the paper's.

# %%
import tempfile
import time
from pathlib import Path

import jax
import jax.numpy as jnp
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from IPython.display import display

import depthscale
from depthscale import ModelConfig, RunConfig, Store, TaskConfig, TrainConfig, curves, sweep
from depthscale.derivations.report.plots import plot_curve
from depthscale.sims.jax_engine import entmax15  # the built-in 1.5-entmax, by sorting

start = time.perf_counter()

# %% [markdown]
# ## 1. The three maps, in JAX
# $\alpha$-entmax finds its threshold by bisection: $\tau$ lies between $\max_i u_i - 1$ (where the
# largest weight alone is 1) and $\max_i u_i - P^{1 - \alpha}$ (where every weight is at most $1/P$),
# $u = (\alpha - 1) z$. A few bisection steps bracket it, Newton steps from the bracket's left end
# converge (the mass $\sum_i [u_i - \tau]_+^{1/(\alpha-1)}$ is convex and falling in $\tau$), all
# without gradients; one last Newton step then carries the gradient of $\tau$ (the implicit-function derivative
# $\partial\tau/\partial u_i = w_i / \sum_j w_j$, $w_i = \partial p_i / \partial u_i$), so autograd
# differentiates the map exactly, in $z$ and in $\alpha$. Powers of zero are kept out of the
# backward pass.


# %%
def softmax1(z):
    """softmax plus one: exp(z_i) / (1 + sum_j exp(z_j)), computed without overflow."""
    m = jnp.maximum(jnp.max(z, axis=-1, keepdims=True), 0.0)
    e = jnp.exp(z - m)
    return e / (jnp.exp(-m) + e.sum(axis=-1, keepdims=True))


def learned_temperature(z, log_temp):
    """softmax(exp(log_temp) z): a per-layer temperature, learned."""
    return jax.nn.softmax(jnp.exp(log_temp) * z, axis=-1)


def _safe_power(x, beta):
    """[x]_+^beta with no 0 * log 0 in the backward pass (beta > 1 here)."""
    pos = x > 0
    return jnp.where(pos, jnp.where(pos, x, 1.0) ** beta, 0.0)


def alpha_entmax(z, a, iters=12, newton=3):
    """alpha-entmax with alpha = 1.05 + 0.9 sigmoid(a): bisection on the threshold tau, then Newton."""
    alpha = 1.05 + 0.9 * jax.nn.sigmoid(a)
    beta = 1.0 / (alpha - 1.0)
    u = (alpha - 1.0) * z
    top = jnp.max(u, axis=-1, keepdims=True)
    us, bs = jax.lax.stop_gradient(u), jax.lax.stop_gradient(beta)
    lo = jax.lax.stop_gradient(top) - 1.0  # sum of weights >= 1 here
    hi = jax.lax.stop_gradient(top) - z.shape[-1] ** (-1.0 / bs)  # <= 1 here

    def mass(u, tau, beta):
        return _safe_power(u - tau, beta).sum(axis=-1, keepdims=True)

    def newton_step(u, tau, beta):
        slope = (beta * _safe_power(u - tau, beta - 1.0)).sum(axis=-1, keepdims=True)
        return tau + (mass(u, tau, beta) - 1.0) / slope

    def halve(_, bounds):
        lo, hi = bounds
        mid = 0.5 * (lo + hi)
        big = mass(us, mid, bs) >= 1.0
        return jnp.where(big, mid, lo), jnp.where(big, hi, mid)

    lo, hi = jax.lax.fori_loop(0, iters, halve, (lo, hi))
    # the mass is convex and falling in tau: Newton from the left end (mass >= 1) climbs to the root
    tau0 = jax.lax.fori_loop(0, newton, lambda _, t: newton_step(us, t, bs), lo)
    # one more Newton step, differentiated: it carries d tau (the implicit-function derivative)
    return _safe_power(u - newton_step(u, tau0, beta), beta)


depthscale.register_attention("softmax1", softmax1)
depthscale.register_attention("learned-temp", learned_temperature, normalised=True, params={"log_temp": 0.0})
depthscale.register_attention("alpha-entmax", alpha_entmax, normalised=True, params={"a": 0.0})
MAPS = ("softmax1", "learned-temp", "alpha-entmax")

# %% [markdown]
# Checks against what is known, before training: at $\alpha = 1.5$ $\alpha$-entmax is the built-in
# 1.5-entmax (sorting, exact); its weights sum to one; and its autograd derivative in $a$ is the
# central difference of the map.

# %%
z = jax.random.normal(jax.random.PRNGKey(0), (4, 32)) * 3.0
a15 = float(np.log((1.5 - 1.05) / (1.95 - 1.5)))  # alpha(a15) = 1.5
gap = float(jnp.max(jnp.abs(alpha_entmax(z, a15) - entmax15(z))))
total = float(jnp.max(jnp.abs(alpha_entmax(z, 0.7).sum(axis=-1) - 1.0)))
probe = jnp.arange(32.0) / 32.0


def _fn(a):
    return alpha_entmax(z, a) @ probe


grad = float(jax.grad(lambda a: _fn(a).sum())(0.7))
h = 1e-5
fd = float((_fn(0.7 + h).sum() - _fn(0.7 - h).sum()) / (2 * h))
print(f"alpha-entmax at alpha = 1.5 vs the built-in 1.5-entmax: max |difference| {gap:.1e}")
print(f"weights sum to one within {total:.1e}; d/da: autograd {grad:.8f}, central difference {fd:.8f}")

# %% [markdown]
# ## 2. Train each map at L = 1 ... 16 (JAX engine), into one store
# A map registered from Python exists only in this process: the sweep runs serially here. (From a
# package, an entry point of the group `depthscale.attention` makes the map a name in every process
# and on the command line.)

# %%
task = TaskConfig(task="topk", k=2, d=8, P=32)
train = TrainConfig(steps=200, batch=32, lr=1e-2, eval_contexts=512, window=25, schedule="constant")
depths = (1, 2, 4, 8, 16)
runs = [
    (RunConfig(task, ModelConfig(depth=L, attention=name, engine="jax"), train), seed)
    for name in MAPS
    for L in depths
    for seed in (0, 1)
]
with tempfile.TemporaryDirectory() as folder:
    with Store(Path(folder) / "own_maps.sqlite", mode="write") as store:
        sweep(runs, store, executor="serial", quiet=True)
        records = list(store.records())
print(
    f"{len(records)} runs, {sum(r['status'] == 'ok' for r in records)} ok, {time.perf_counter() - start:.0f} s so far"
)

# %% [markdown]
# ## 3. The depth curves, their fits and floors
# One curve per map (seed means ± one standard error), the law $L_0 + c L^{-\alpha}$ fitted to it,
# and the reference floors of the deepest model (paired on the same evaluation contexts).

# %%
fitted = curves(records)
table = []
fig, axes = plt.subplots(1, len(fitted), figsize=(4.2 * len(fitted), 3.6), squeeze=False)
for ax, curve in zip(axes[0], fitted):
    plot_curve(curve, ax=ax, kind="offset")
    recs = curve.records_at(max(depths))
    fit = curve.fit("offset", n_boot=0)
    row = {"curve": curve.label, "alpha": fit.params.get("alpha"), "alpha se": fit.se.get("alpha")}
    row["L0"] = fit.params.get("L0")
    row["R_L at L=16"] = float(np.mean([r["final_loss"] for r in recs]))
    for name in ("single", "convex", "mixture"):
        vals = [r["floors"][name]["loss"] for r in recs if name in (r.get("floors") or {})]
        if vals:
            row[f"floor {name}"] = float(np.mean(vals))
            ax.axhline(
                row[f"floor {name}"], ls=":", lw=1, color={"single": "C2", "convex": "C3", "mixture": "C4"}[name]
            )
    table.append(row)
fig.tight_layout()
plt.show()
display(pd.DataFrame(table).set_index("curve").round(4))
print(f"notebook: {time.perf_counter() - start:.0f} s")

# %%
for name in MAPS:
    depthscale.sims.attention_registry.unregister_attention(name)  # this process's maps, removed again

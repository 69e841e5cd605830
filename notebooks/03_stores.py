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
# # The committed results stores as tables: a claim re-decided, a report figure rebuilt
#
# `results/cpu.sqlite` (the `cpu` preset, 178 runs) and `results/protocol.sqlite` (the protocol
# study, 180 runs) hold every run record the reports in `docs/` were built from. `to_frame` reads
# a store read-only (SQLite `mode=ro`, immutable while no sweep writes to it): nothing here changes
# a byte of either file. It needs pandas (`pip install "depthscale[pandas]"`).

# %%
import json
from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd
from IPython.display import display

from depthscale import ClaimTable, Evidence, Store, curves, plot_curve, to_frame
from depthscale.derivations import REGISTRY
from depthscale.derivations.report import figures

# the repository's root, whether the notebook runs from it or from notebooks/
ROOT = next(p for p in (Path.cwd(), *Path.cwd().parents) if (p / "results" / "cpu.sqlite").is_file())
RESULTS = ROOT / "results"
CPU, PROTOCOL = RESULTS / "cpu.sqlite", RESULTS / "protocol.sqlite"

# %% [markdown]
# ## One row per run
# The configuration as `config.*` columns, then the measurements; list fields are left out (they
# have their own long tables).

# %%
runs = to_frame(CPU)
print(f"{len(runs)} runs, {runs.shape[1]} columns")
shown = ["config.model.model", "config.model.qk", "config.task.task", "config.task.k", "config.task.a", "config.task.b"]
shown += ["config.model.depth", "seed", "converged", "final_loss", "A_L", "C_L"]
display(runs[shown].head(8))

# %% [markdown]
# Softmax attention on the top-2 task with a flat spectrum, untied query-key maps: the loss
# against depth for each seed, and the two terms of $R_L = C_L + (A_L - C_L)/L$.

# %%
top2 = runs[
    (runs["config.model.model"] == "softmax")
    & (runs["config.model.qk"] == "factorised")
    & (runs["config.task.task"] == "topk")
    & (runs["config.task.k"] == 2)
    & (runs["config.task.a"] == 0.0)
    & (runs["config.task.b"] == 0.0)
]
display(
    top2.pivot_table(index="config.model.depth", columns="seed", values=["final_loss", "A_L", "C_L"])
    .rename_axis(index="L")
    .style.format("{:.4f}")
)

# %% [markdown]
# ## Long tables: the training curves of that condition
# `to_frame(store, "train_curve")` has one row per (run, step); joined to the runs on `key`.

# %%
train = to_frame(CPU, "train_curve").merge(top2[["key", "config.model.depth", "seed"]], on=["key", "seed"])
fig, ax = plt.subplots(figsize=(6.5, 4))
for depth, group in train[train["seed"] == 0].groupby("config.model.depth"):
    ax.plot(group["step"], group["loss"], label=f"L = {depth}")
ax.set(xlabel="training step", ylabel="smoothed training loss", yscale="log")
ax.set_title("softmax, top-2 (a, b) = (0, 0), d = 16, P = 128, seed 0")
ax.legend(ncol=2, fontsize=8)
plt.show()

# %% [markdown]
# ## The protocol study: the depth-32 loss under each training protocol
# A protocol is the training settings the study varies (schedule, learning rate, batch, steps,
# initial scale); mean over the two seeds.

# %%
study = to_frame(PROTOCOL)
settings = ["config.train.schedule", "config.train.lr", "config.train.batch", "config.train.steps"]
study["protocol"] = study[settings + ["config.model.init_scale"]].astype(str).agg(" / ".join, axis=1)
study["task"] = study.apply(
    lambda r: f"top-{r['config.task.k']} ({r['config.task.a']:g}, {r['config.task.b']:g})", axis=1
)
deep = study[study["config.model.depth"] == study["config.model.depth"].max()]
print("protocol = schedule / lr / batch / steps / init scale")
display(deep.pivot_table(index="protocol", columns="task", values="final_loss").style.format("{:.4f}"))

# %% [markdown]
# ## A claim re-decided from the store
# The softmax exponent claim: on top-2 the loss should fall as $L_0 + c L^{-\alpha}$ with
# $\alpha \approx 1$. The records go through the same path as the report (curves, fits, the
# claim's rule), and the verdicts are set beside those of the committed report
# (`docs/cpu-report/claims.json`).

# %%
with Store(CPU, mode="read") as store:
    records = list(store.records())
softmax_exponent = next(claim for claim in REGISTRY if claim.id == "softmax-top2-exponent")
decided = softmax_exponent(Evidence(curves(records)))
reported = {c["id"]: c for c in json.loads((ROOT / "docs" / "cpu-report" / "claims.json").read_text())}
display(
    pd.DataFrame(
        [
            {
                "claim": r.id,
                "alpha": r.measured,
                "s.e.": r.error,
                "verdict": r.verdict,
                "report: alpha": reported[r.id]["measured"],
                "report: verdict": reported[r.id]["verdict"],
            }
            for r in decided
        ]
    )
)
print(decided[0].reason)
display(ClaimTable(decided))  # the claim results as the report's table, with their verdict counts

# %% [markdown]
# ## The store, a run, a curve and its fit as a notebook shows them
# A store shows its counts (by status, model and task), a run record its numbers, a curve its
# losses by depth with its fit, a fit its parameters with 95 % intervals (clipped to each
# parameter's range), the bootstrap over seeds (or why there is none) and whether it is identified.

# %%
with Store(CPU) as store:
    display(store)
    display(store.record(top2["key"].iloc[0]))
soft = next(c for c in curves(records) if (c.model, c.variant, c.task, c.k, c.a) == ("softmax", "base", "topk", 2, 0.0))
display(soft)
display(soft.fit("offset", n_boot=200))
print(soft.fit("offset", n_boot=200).fit_report())  # the same fit as text, with the correlations
fig, ax = plt.subplots(figsize=(6, 4))
plot_curve(soft, ax=ax)
plt.show()

# %% [markdown]
# ## A report figure rebuilt
# The decomposition figure of the report ($R_L$, $A_L$ and $C_L$ against depth), drawn from the
# same records as a matplotlib figure.

# %%
figure, why = figures.build("decomposition", records)
display(figure if figure is not None else why)

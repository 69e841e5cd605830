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
# # One softmax simulation and its central-limit decomposition
#
# A softmax-attention model of depth $L$ predicts the mean of its layers' predictors,
# $\hat y = \frac1L \sum_l f_l$. Its loss splits exactly into the layers' mean loss
# $A_L = \frac1L \sum_l E[e_l^2]$ and their mean cross-layer error product
# $C_L = \frac{1}{L(L-1)} \sum_{l \ne m} E[e_l e_m]$, with $e_l = f_l - y^*$:
#
# $$R_L = C_L + \frac{A_L - C_L}{L}.$$
#
# Depth averages away the disagreement $A_L - C_L$, not the shared error $C_L$. Here one small
# model is trained (seconds once numba's kernels are compiled; the first run after installing
# compiles them), and the identity is checked on its own evaluation contexts.

# %%
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from IPython.display import display

from depthscale import ModelConfig, RunConfig, TaskConfig, TrainConfig, decompose, run
from depthscale.sims import RecordView, eval_batches, make_model

# %% [markdown]
# ## Train and measure one model
# Top-2 task (the target is the mean label of the two context tokens most similar to the query),
# $d = 8$, $P = 32$, a 4-layer softmax model, 300 Adam steps.
#
# `TrainConfig()`'s defaults are the paper's scale (8,000 steps, batch 1,024, 10,240 evaluation
# contexts); a notebook run sets its own. `window` matters for the training curve: the curve is an
# exponential moving average of the step losses with time constant `window / 4` steps (and
# `window` is also the stopping rule's comparison window). With the default 1,000 the average
# would still carry the first steps' losses after 300 steps and end near 2.9 while the evaluation
# loss is about 1.5; `window=40` averages over about 10 steps.

# %%
config = RunConfig(
    TaskConfig(task="topk", k=2, a=0.0, b=0.0, d=8, P=32),
    ModelConfig(model="softmax", depth=4),
    TrainConfig(steps=300, batch=256, eval_contexts=2048, window=40),
)
record = run(config, seed=0)
fields = ["status", "steps", "converged", "final_loss", "final_loss_se", "A_L", "C_L", "gap", "identity_residual"]
display(pd.Series({k: record[k] for k in fields}, name="run record").to_frame())
display(RecordView(record))  # the whole record as a table (lists by their length)

# %%
curve = np.asarray(record["train_curve"])
fig, ax = plt.subplots(figsize=(6, 3.5))
ax.plot(curve[:, 0], curve[:, 1])
ax.axhline(record["final_loss"], color="k", ls=":", label=f"evaluation loss {record['final_loss']:.3f}")
ax.set(xlabel="training step", ylabel="smoothed training loss", yscale="log", title="training")
ax.legend()
plt.show()

# %% [markdown]
# ## The decomposition, recomputed from the trained parameters
# The layers' predictors $f_l$ on the same 2,048 evaluation contexts, then
# `depthscale.theory.decompose`: the second-moment matrix $M_{lm} = E[e_l e_m]$ of the layer
# errors gives $A_L$ (its diagonal) and $C_L$ (off the diagonal).

# %%
L = config.model.depth
model = make_model(config.model, config.task.d)
theta = record["arrays"]["theta"]
f, target = [], []
for batch in eval_batches(config.task, config.train.eval_contexts, seed=0):
    f.append(model.layer_outputs(theta, batch))
    target.append(batch.target)
dec = decompose(np.concatenate(f), np.concatenate(target))
table = pd.DataFrame(
    {
        "from the record": [record["final_loss"], record["A_L"], record["C_L"]],
        "recomputed": [dec.R_L, dec.A_L, dec.C_L],
        "C_L + (A_L - C_L)/L": [dec.C_L + (dec.A_L - dec.C_L) / L, np.nan, np.nan],
    },
    index=["R_L", "A_L", "C_L"],
)
display(table)
print(f"identity: |R_L - (C_L + (A_L - C_L)/L)| / R_L = {dec.identity_residual:.1e}")

# %% [markdown]
# Left: the error moments $M_{lm}$ (diagonal: each layer's own loss). Right: each layer alone
# against what the ensemble reaches; the gap between $A_L$ and $R_L$ is what averaging the layers
# buys, $(A_L - C_L)(1 - 1/L)$.

# %%
fig, (left, right) = plt.subplots(1, 2, figsize=(10, 3.8))
image = left.imshow(dec.M, cmap="viridis")
left.set(title=r"$M_{lm} = E[e_l e_m]$", xlabel="layer m", ylabel="layer l")
left.set_xticks(range(L), range(1, L + 1))
left.set_yticks(range(L), range(1, L + 1))
fig.colorbar(image, ax=left)
right.bar(range(1, L + 1), dec.layer_losses, color="0.75", label=r"layer loss $M_{ll}$")
for value, style, label in ((dec.A_L, "--", "$A_L$"), (dec.C_L, "-.", "$C_L$"), (dec.R_L, "-", "$R_L$")):
    right.axhline(value, ls=style, color="k", lw=1.2)
    right.annotate(label, (L + 0.45, value), va="bottom")
right.set(xlabel="layer l", ylabel="loss", title=f"depth L = {L}", xlim=(0.4, L + 0.9))
right.legend(loc="upper left")
plt.show()

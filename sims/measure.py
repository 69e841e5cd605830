"""Measurement of a trained model on fresh evaluation contexts (no plotting, no files).

Works with any model obeying the engine contract (``layer_outputs``, ``label_weights``,
``attention``, ``qk_norms``). Evaluation contexts come from
``depthscale.sims.tasks.eval_batches(task, n, seed)``: they depend only on the task and the seed,
so models of different depth and the reference floors are compared context by context (paired).

Definitions (per evaluation context, then averaged):

- ``final_loss`` (R_L): mean of ``(yhat - y*)^2``, ``yhat = mean_l f_l``; ``final_loss_se`` its
  standard error over contexts; ``sq_err`` the per-context squared errors.
- Layer errors ``e_l = f_l - y*``, ``M_lm = E[e_l e_m]`` (``depthscale.theory.clt.decompose``):
  ``layer_losses = diag M``, ``A_L = tr(M)/L``, ``C_L`` the mean off-diagonal entry (``nan`` at
  L = 1), ``gap = A_L - C_L`` and ``identity_residual = |R_L - C_L - gap/L| / max(R_L, A_L)`` (at L = 1:
  ``|R_L - A_L| / max(R_L, A_L)``; ``depthscale.theory.clt.identity_residual``).
- ``mode_losses[k] = E[omega_k ((O^T (t - v))_k)^2]`` with ``v = X^T c``, ``c`` the label weights;
  they sum to the loss averaged over the teacher ``beta`` for fixed inputs. ``None`` when the model
  is not linear in the labels (``label_weights`` returns ``None``).
- Attention diagnostics per layer (only when the attention rows are probability vectors, i.e.
  softmax models; ``None`` for linear attention's raw scores): ``top1_mass`` (largest weight),
  ``topk_mass`` (sum of the ``k`` largest weights), ``entropy`` (nats), ``target_mass`` (weight on
  the target set ``sel``; ``None`` for easy-fresh).
- ``selection_error_pct``: per context, the selection error is ``1 - mean_l (attention mass of
  layer l on the target set sel)``, the fraction of attention the model puts outside the tokens
  that define the target; reported as its 50th, 90th and 99th percentiles over contexts
  (``None`` without softmax attention or without a target set).
- ``qk_norm``: the model's ``qk_norms(theta)``; ``target_power``: ``E[y*^2]``.
- ``qk_similarity``: mean cosine similarity between the layers' query-key maps on the inputs
  (``model.qk_maps(theta)``, pairs l < m): 1 when every layer has the same map up to scale;
  ``None`` at L = 1 or for a model without ``qk_maps``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..theory._validate import check_int
from ..theory.clt import decompose
from .config import TaskConfig
from .parameters import mean_pairwise_cosine
from .tasks import eval_batches

_ATTN_ELEMS = 1 << 22  # attention is requested in sub-batches of at most this many weights
# the loss and its decomposition over layers (defined above): the headline numbers of a run's record
LOSS_KEYS = ("final_loss", "final_loss_se", "A_L", "C_L", "gap", "identity_residual")


def _is_distribution(a: np.ndarray) -> bool:
    return bool(np.all(a >= -1e-12) and np.allclose(a.sum(axis=-1), 1.0, rtol=0, atol=1e-5))


def decomposed_loss(f: np.ndarray, target: np.ndarray) -> tuple[np.ndarray, dict]:
    """Per-context squared errors of the averaged prediction and the record's loss fields from the
    per-layer predictions ``f`` (contexts x L): the loss and its error, the target's power and the
    exact decomposition ``R_L = C_L + (A_L - C_L)/L`` (one definition for trained runs and for
    predictions made elsewhere, ``runner.from_layer_outputs``)."""
    dec = decompose(f, target)  # exact identity, from the errors
    sq_err = np.asarray(dec.sq_err, dtype=np.float64)
    return sq_err, {
        "final_loss": float(sq_err.mean()),
        "final_loss_se": float(sq_err.std(ddof=1) / np.sqrt(sq_err.size)),
        "target_power": float(np.mean(target**2)),
        "A_L": float(dec.A_L),
        "C_L": float(dec.C_L),
        "gap": float(dec.gap),
        "identity_residual": float(dec.identity_residual),
        "layer_losses": np.asarray(dec.layer_losses, dtype=np.float64).tolist(),
    }


def evaluate(
    model, theta, task: TaskConfig, n_contexts: int, seed: int, chunk: int = 1024, k: int | None = None
) -> dict:
    """Measure ``model`` at ``theta`` on ``n_contexts`` evaluation contexts of ``(task, seed)``.

    Parameters
    ----------
    model : any engine-contract model; theta : its flat parameter vector.
    task : TaskConfig; n_contexts : >= 2; seed : evaluation seed.
    chunk : contexts per model call (memory only; the numbers do not depend on it).
    k : tokens counted by ``topk_mass`` (default ``task.k``).

    Returns
    -------
    dict of plain Python values (lists for per-layer and per-mode values) plus ``sq_err``, a float64
    array of per-context squared errors. Keys: ``final_loss, final_loss_se, target_power, A_L, C_L,
    gap, identity_residual, layer_losses, mode_losses, top1_mass, topk_mass, target_mass, entropy,
    qk_norm, qk_similarity, selection_error_pct, n_contexts, sq_err`` (definitions in the module docstring).

    Examples
    --------
    >>> class Uniform:  # predicts the context's mean label, one layer
    ...     def layer_outputs(self, theta, b): return b.y.mean(axis=1)[:, None]
    ...     def label_weights(self, theta, b): return np.full(b.y.shape, 1 / b.y.shape[1])
    ...     def attention(self, theta, b): return np.full((len(b), 1, b.y.shape[1]), 1 / b.y.shape[1])
    ...     def qk_norms(self, theta): return np.zeros(1)
    >>> r = evaluate(Uniform(), None, TaskConfig(task="topk", d=4, P=8), 512, seed=0)
    >>> round(r["top1_mass"][0], 6), r["identity_residual"] < 1e-12
    (0.125, True)
    """
    if not isinstance(task, TaskConfig):
        raise ValueError(f"task={task!r}: must be a TaskConfig")
    n_contexts = check_int("n_contexts", n_contexts, lo=2)
    chunk = check_int("chunk", chunk, lo=1)
    k = task.k if k is None else check_int("k", k, lo=1, hi=task.P)
    k = min(k, task.P)

    fs, targets = [], []
    mode_sum = np.zeros(task.d)
    linear_in_labels = True
    attn_ok = True  # until a batch's weights are no distributions (linear attention's are not)
    acc: dict[str, Any] = {"top1": 0.0, "topk": 0.0, "ent": 0.0, "tmass": 0.0}  # sums: arrays once added to
    sel_err: list[np.ndarray] = []
    omega = task.omega
    for batch in eval_batches(task, n_contexts, seed, chunk=chunk):
        f = np.asarray(model.layer_outputs(theta, batch), dtype=np.float64)
        fs.append(f)
        targets.append(batch.target)
        if linear_in_labels:
            c = model.label_weights(theta, batch)
            if c is None:
                linear_in_labels = False
            else:
                v = np.einsum("bp,bpd->bd", np.asarray(c, dtype=np.float64), batch.X)
                w = np.einsum("bji,bj->bi", batch.O, batch.t - v)  # eigen-coordinates of t - v
                mode_sum += (omega * w**2).sum(axis=0)
        if attn_ok:
            attn_ok = _attention_stats(model, theta, batch, f.shape[1], k, acc, sel_err)
    sq_err, fields = decomposed_loss(np.concatenate(fs), np.concatenate(targets))
    has_sel = bool(sel_err)  # the batches named target tokens (not easy-fresh, nor a user's task without)
    # a user's model (sims/model_registry.py) may have no query-key maps: None, as for external predictions
    norms = model.qk_norms(theta)
    maps = model.qk_maps(theta) if hasattr(model, "qk_maps") else None
    out = {
        **fields,
        "mode_losses": (mode_sum / n_contexts).tolist() if linear_in_labels else None,
        "top1_mass": None,
        "topk_mass": None,
        "target_mass": None,
        "entropy": None,
        "qk_norm": None if norms is None else np.asarray(norms, dtype=np.float64).tolist(),
        "qk_similarity": None if maps is None else mean_pairwise_cosine(maps),
        "selection_error_pct": None,
        "n_contexts": n_contexts,
        "sq_err": sq_err,
    }
    if attn_ok:
        out["top1_mass"] = (acc["top1"] / n_contexts).tolist()
        out["topk_mass"] = (acc["topk"] / n_contexts).tolist()
        out["entropy"] = (acc["ent"] / n_contexts).tolist()
        if has_sel:
            out["target_mass"] = (acc["tmass"] / n_contexts).tolist()
            se = np.concatenate(sel_err)
            out["selection_error_pct"] = {str(q): float(np.percentile(se, q)) for q in (50, 90, 99)}
    return out


def _attention_stats(model, theta, batch, L, k, acc, sel_err) -> bool:
    """Accumulate per-layer attention diagnostics of one batch; False if the rows are not distributions."""
    B = len(batch)
    P = batch.X.shape[1]
    step = max(1, _ATTN_ELEMS // (L * P))  # bounded memory for (b, L, P) weights at large depth
    start = 0
    while start < B:
        sub = batch.slice(start, min(B, start + step))
        raw = model.attention(theta, sub)  # (b, L, P); None: a model without attention weights
        if raw is None:
            return False
        a = np.asarray(raw, dtype=np.float64)
        if a.shape != (len(sub), L, P) or not _is_distribution(a):
            return False
        srt = np.sort(a, axis=2)
        top1 = srt[:, :, -1].sum(axis=0)
        topk = srt[:, :, -k:].sum(axis=(0, 2))
        with np.errstate(divide="ignore", invalid="ignore"):
            ent = -np.where(a > 0, a * np.log(a), 0.0).sum(axis=2)
        acc["top1"] = acc["top1"] + top1
        acc["topk"] = acc["topk"] + topk
        acc["ent"] = acc["ent"] + ent.sum(axis=0)
        if sub.sel.shape[1] > 0:
            mass = np.take_along_axis(
                a, np.broadcast_to(sub.sel[:, None, :], (a.shape[0], L, sub.sel.shape[1])), axis=2
            ).sum(axis=2)
            acc["tmass"] = acc["tmass"] + mass.sum(axis=0)
            sel_err.append(1.0 - mass.mean(axis=1))
        start += a.shape[0]
    return True

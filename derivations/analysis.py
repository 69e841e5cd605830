"""From run records to curves: group runs by everything except depth and seed, average over seeds.

A *curve* is one experimental condition (model, variant, task, spectrum, scale) measured at several
depths and seeds. Only runs with status ``ok`` enter; whether every run converged is kept so claims
can refuse to be decided by unconverged runs.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

import numpy as np


@dataclass
class Curve:
    key: tuple
    label: str
    model: str
    task: str
    k: int
    a: float
    b: float
    d: int
    P: int
    variant: str
    depths: np.ndarray  # sorted unique depths
    seeds: list
    loss: np.ndarray  # (n_seeds, n_depths), nan where missing
    runs: dict = field(default_factory=dict)  # (depth, seed) -> record
    all_converged: bool = True
    n_unconverged: int = 0
    fits: dict = field(default_factory=dict)  # kind -> fit (claims ask for the same fit many times)

    @property
    def mean(self) -> np.ndarray:
        return np.nanmean(self.loss, axis=0)

    @property
    def se(self) -> np.ndarray:
        n = np.sum(np.isfinite(self.loss), axis=0)
        sd = np.nanstd(self.loss, axis=0, ddof=1) if self.loss.shape[0] > 1 else np.full(self.loss.shape[1], np.nan)
        return sd / np.sqrt(np.maximum(n, 1))

    def field_mean(self, name: str) -> np.ndarray:
        """Seed-average of a scalar record field at each depth."""
        out = np.full(len(self.depths), np.nan)
        for j, L in enumerate(self.depths):
            vals = [r.get(name) for (d, _), r in self.runs.items() if d == L and r.get(name) is not None]
            vals = [v for v in vals if np.isfinite(v)]
            if vals:
                out[j] = float(np.mean(vals))
        return out

    def records_at(self, depth: int) -> list:
        return [r for (d, _), r in sorted(self.runs.items()) if d == depth]


def variant_name(model_cfg: dict) -> str:
    parts = []
    if model_cfg.get("qk", "factorised") != "factorised":
        parts.append(model_cfg["qk"])
    if model_cfg.get("value", "shared") != "shared":
        parts.append("per-layer-value")
    if model_cfg.get("stream", "two") != "two":
        parts.append("single-stream")
    if model_cfg.get("context_update"):
        parts.append("context-update")
    return "+".join(parts) or "base"


def curves(records) -> list[Curve]:
    """Group ``ok`` records into curves over depth (one row per seed)."""
    groups = defaultdict(list)
    for r in records:
        if r.get("status") != "ok":
            continue
        c = r["config"]
        t, m, tr = c["task"], c["model"], c["train"]
        key = (
            m["model"], variant_name(m), t["task"], t["k"] if t["task"] == "topk" else 0, t["a"], t["b"], t["d"], t["P"],
            t["c_lambda"], t["c_omega"], m["width"], m["init_scale"], m["dtype"],
            tuple(sorted((k, v) for k, v in tr.items())),
        )
        groups[key].append(r)
    out = []
    for key, recs in sorted(groups.items(), key=lambda kv: str(kv[0])):
        depths = np.array(sorted({r["config"]["model"]["depth"] for r in recs}))
        seeds = sorted({r["seed"] for r in recs})
        loss = np.full((len(seeds), len(depths)), np.nan)
        runs = {}
        n_unconv = 0
        for r in recs:
            i, j = seeds.index(r["seed"]), int(np.searchsorted(depths, r["config"]["model"]["depth"]))
            loss[i, j] = r["final_loss"]
            runs[(int(depths[j]), r["seed"])] = r
            n_unconv += not r.get("converged", False)
        model, variant, task, k, a, b, d, P = key[:8]
        tname = f"top-{k}" if task == "topk" else task
        label = f"{model}{'' if variant == 'base' else '[' + variant + ']'} {tname} (a,b)=({a:g},{b:g}) d={d} P={P}"
        out.append(Curve(key, label, model, task, k, a, b, d, P, variant, depths, seeds, loss, runs, n_unconv == 0, n_unconv))
    return out


def fit_curve(curve: Curve, kind: str = "offset", n_boot: int = 200, seed: int = 0) -> dict | None:
    """Fit a curve's seed-mean losses; bootstrap over seeds when there are several.

    ``kind`` is ``"offset"`` (L0 + c L^-alpha) or ``"power"`` (c L^-alpha). Returns a dict with the
    parameters, their standard errors, R^2, the alpha-fixed-at-1 comparison (offset fits) and
    bootstrap percentile intervals, or None when there are too few depths to fit.
    """
    if kind not in curve.fits:
        curve.fits[kind] = _fit(curve, kind, n_boot, seed)
    return curve.fits[kind]


def _fit(curve: Curve, kind: str, n_boot: int, seed: int) -> dict | None:
    from depthscale.derivations import fits

    ok = np.isfinite(curve.mean) & (curve.mean > 0)
    need = 4 if kind == "offset" else 2
    if ok.sum() < need:
        return None
    L, R = curve.depths[ok].astype(float), curve.mean[ok]
    fn = fits.fit_offset_power if kind == "offset" else fits.fit_power_law
    try:
        res = fn(L, R)
    except (ValueError, RuntimeError, np.linalg.LinAlgError) as exc:
        return {"error": str(exc)}
    out = {"kind": kind, **res.to_dict()}
    if kind == "offset":
        try:
            out["alpha_one"] = fits.compare_alpha_one(L, R).to_dict()
        except (ValueError, RuntimeError, np.linalg.LinAlgError):
            pass
    full = curve.loss[:, ok]
    rows = full[np.all(np.isfinite(full), axis=1)]
    if rows.shape[0] >= 3 and n_boot > 0:
        try:
            out["bootstrap"] = fits.bootstrap_over_seeds(L, rows, fn, n_boot=n_boot, rng=np.random.default_rng(seed)).to_dict()
        except (ValueError, RuntimeError, np.linalg.LinAlgError) as exc:
            out["bootstrap_error"] = str(exc)
    return out

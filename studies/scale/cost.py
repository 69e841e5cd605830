"""What the scale study's presets cost by the project's cost model, rung by rung.

The cost model is :mod:`depthscale.sims.budget` (``run_units`` times a rate in seconds per unit, the
rates the median of a store's finished runs of the same model, ``d`` and ``P``, else of the same
model): :func:`rung_costs` sums, per rung ``(d, P)``, the estimate of each job a sweep would start
(one lockstep group: the depths of one seed, trained on one core), the same sums ``sweep --budget``
makes. The preset headers and docs/studies/scale.md state these numbers for the rates of
results/cpu.sqlite, and tests/studies/test_scale.py recomputes them.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources

from depthscale.derivations.study import new_figure
from depthscale.sims.budget import job_seconds
from depthscale.sims.grid import load_grid
from depthscale.sims.runner import lockstep_key


@dataclass(frozen=True)
class RungCost:
    """One rung of a preset by the cost model: its size, depths and seeds, the core-hours of all its
    jobs and of its longest job (one seed's lockstep group, on one core)."""

    d: int
    P: int
    depths: tuple[int, ...]
    seeds: int
    core_hours: float
    longest_job_hours: float

    def line(self) -> str:
        """The rung as the preset headers and the study page state it.

        >>> RungCost(16, 128, (1, 2, 4), 3, 0.2049, 0.0683).line()
        'd = 16, P = 128, L = 1, 2, 4, 3 seeds: 0.20 core-hours (longest job 0.07 h)'
        """
        depths = ", ".join(str(L) for L in self.depths)
        return (
            f"d = {self.d}, P = {self.P}, L = {depths}, {self.seeds} seeds: {self.core_hours:.2f} core-hours "
            f"(longest job {self.longest_job_hours:.2f} h)"
        )


def preset_runs(preset: str) -> list:
    """The ``(RunConfig, seed)`` runs of one of the study's presets."""
    text = resources.files(__package__).joinpath("presets", f"{preset}.toml").read_text(encoding="utf-8")
    return load_grid(tomllib.loads(text))


def rung_costs(preset: str, rates: Mapping) -> tuple[RungCost, ...]:
    """The cost model's estimate of each rung of ``preset`` (``"scale"`` or ``"scale-gpu"``) at the
    rates ``rates`` (:func:`depthscale.sims.budget.rates` of a store's records; ``{}``: the model's
    conservative defaults), smallest rung first.

    >>> [(r.d, r.P, r.depths, r.seeds) for r in rung_costs("scale", {})]
    [(8, 64, (1, 2, 4, 8, 16, 32), 3), (16, 128, (1, 2, 4, 8, 16, 32), 3), (32, 256, (1, 2, 4, 8, 16, 32), 3)]
    """
    jobs: dict = {}
    for config, seed in preset_runs(preset):
        jobs.setdefault((config.task.d, config.task.P), {}).setdefault((lockstep_key(config), seed), []).append(config)
    out = []
    for (d, P), groups in sorted(jobs.items()):
        secs = [job_seconds(configs, dict(rates)) for configs in groups.values()]
        depths = tuple(sorted({c.model.depth for configs in groups.values() for c in configs}))
        seeds = len({seed for _, seed in groups})
        out.append(RungCost(d, P, depths, seeds, sum(secs) / 3600, max(secs) / 3600))
    return tuple(out)


def cost_figure(rates: Mapping):
    """Core-hours per rung by the cost model at ``rates``, log scale: the CPU rungs (preset ``scale``)
    and the accelerator rung (``scale-gpu``) as it would cost on one CPU core, each bar labelled with its
    number (docs/studies/scale.md shows it for the rates of results/cpu.sqlite).

    >>> fig = cost_figure({})
    >>> [t.get_text().replace(chr(10), ", ") for t in fig.axes[0].get_xticklabels()][-1]
    'd = 128, P = 1,024'
    """
    rungs = [(r, "scale") for r in rung_costs("scale", rates)] + [
        (r, "scale-gpu") for r in rung_costs("scale-gpu", rates)
    ]
    fig, axes = new_figure(6.4, 3.6)
    ax = axes[0, 0]
    x = list(range(len(rungs)))
    hours = [r.core_hours for r, _ in rungs]
    colours = ["tab:blue" if p == "scale" else "0.75" for _, p in rungs]
    bars = ax.bar(x, hours, color=colours, hatch=None)
    for b, (r, p) in zip(bars, rungs):
        if p != "scale":
            b.set_hatch("//")
        ax.annotate(
            f"{r.core_hours:.3g}", (b.get_x() + b.get_width() / 2, r.core_hours), ha="center", va="bottom", fontsize=8
        )
    ax.set_yscale("log")
    ax.set_xticks(x, [f"d = {r.d}\nP = {r.P:,}" for r, _ in rungs])
    ax.set_ylabel("core-hours (cost model)")
    total = sum(r.core_hours for r, p in rungs if p == "scale")
    ax.set_title(f"preset scale (blue): {total:.1f} core-hours; scale-gpu (hatched): on one CPU core", fontsize=9)
    return fig


__all__ = ["RungCost", "preset_runs", "rung_costs", "cost_figure"]

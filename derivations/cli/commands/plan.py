"""``depthscale plan --store S --claim ID --condition LABEL --power 0.8``: how many seeds, at which
depths, it takes to decide one claim's row against named alternatives, and what the runs cost.

The claim and its evidence are those of ``depthscale calibrate`` (the store's report, ``--preset``).
For each alternative exponent (``--alternatives``) and depth list (the curve's own depths, then the
doubling lists 1..64 and 1..256 where they extend it, or ``--depths`` given once per list), the fewest
seeds at which the rule gives the right verdict (pass inside the claim's band, fail outside) with
probability ``--power`` on synthetic curves of the measured amplitude and noise
(:func:`~depthscale.derivations.claims.calibration.plan`), and the core-hours of the missing runs
by the cost model with the store's rates. ``--json``: a list of objects, one per (alternative, depth
list). The store is opened read-only.
"""

from __future__ import annotations

from ..app import emit, parse_list
from .calibrate import REPLICATES, add_claim_options, check_common, find_claim, positive_list, report_inputs


def register(sub) -> None:
    p = sub.add_parser("plan", help="seeds and depths that decide one claim's row at a power, with their core-hours")
    add_claim_options(p)
    p.add_argument("--power", type=float, default=0.8, help="probability of the right verdict, in (0, 1) (default 0.8)")
    p.add_argument(
        "--alternatives", default="0.5,1", help="comma list of true exponents to tell apart, each > 0 (default 0.5,1)"
    )
    p.add_argument("--seeds-max", type=int, default=64, help="the most seeds considered, 3..4096 (default 64)")
    p.add_argument(
        "--depths",
        action="append",
        default=None,
        metavar="LIST",
        help="a depth list to try (comma list, increasing, >= 1); repeat for more "
        "(default: the curve's own and the doubling lists 1..64, 1..256 that extend it)",
    )
    p.add_argument(
        "--replicates",
        type=int,
        default=100,
        help=f"synthetic curves per (alternative, depths, seeds), {REPLICATES[0]}..{REPLICATES[1]} (default 100)",
    )
    p.add_argument("--json", action="store_true", help="print a JSON list, one object per (alternative, depth list)")
    p.set_defaults(func=handle)


def check_depths(texts) -> list[list[int]] | None:
    """``--depths`` lists, each increasing, of at least 2 depths >= 1.

    >>> check_depths(["1,2,4", "1,4,16"]), check_depths(None)
    ([[1, 2, 4], [1, 4, 16]], None)
    """
    if texts is None:
        return None
    out = []
    for text in texts:
        L = parse_list("depths", text, int)
        if len(L) < 2 or L[0] < 1 or any(b <= a for a, b in zip(L, L[1:])):
            raise ValueError(f"depths={text!r}: must be a comma list of at least 2 increasing depths >= 1")
        out.append(L)
    return out


def handle(args) -> int:
    from ....theory._validate import check_int, check_real

    check_real("power", args.power, lo=0, hi=1, lo_open=True, hi_open=True)
    alternatives = positive_list("alternatives", args.alternatives)
    check_int("seeds-max", args.seeds_max, lo=3, hi=4096)
    check_int("replicates", args.replicates, lo=REPLICATES[0], hi=REPLICATES[1])
    depth_sets = check_depths(args.depths)
    check_common(args)
    study, preset, claim = find_claim(args)  # imports every study: after the light checks
    from ....sims.store import Store
    from ...claims.calibration import plan

    with Store(args.store, mode="read") as st:
        ev, records = report_inputs(st, study, preset, claim)
        plans = plan(
            claim,
            ev,
            args.condition,
            alternatives,
            args.power,
            args.seeds_max,
            depth_sets,
            args.replicates,
            args.seed,
            records,
        )
    out = [p.to_dict() for p in plans]
    emit(out, args.json, plan_text(claim.id, args.condition, out))
    return 0


def plan_text(claim_id: str, condition: str, rows: list[dict]) -> str:
    """The plan as a table, one line per (alternative, depth list).

    >>> print(plan_text("c", "x", [{"alternative": 0.5, "correct": "fail", "depths": [1, 2, 4], "power": 0.8,
    ...                             "seeds": None, "achieved": 0.41, "achieved_se": 0.05, "replicates": 100,
    ...                             "extra_runs": None, "core_hours": None}]))
    c x: seeds for the right verdict with probability 0.8
      alpha  verdict  depths         seeds     P(right)        extra runs  core-hours
        0.5  fail     1..4 (3)       > max     0.41 ± 0.05     -           -
    """
    power = rows[0]["power"] if rows else float("nan")
    lines = [
        f"{claim_id} {condition}: seeds for the right verdict with probability {power:g}",
        f"  {'alpha':>5}  {'verdict':<7}  {'depths':<13}  {'seeds':<8}  {'P(right)':<14}  {'extra runs':<10}  core-hours",
    ]
    for r in rows:
        L = r["depths"]
        depths = f"{L[0]}..{L[-1]} ({len(L)})"
        seeds = "> max" if r["seeds"] is None else str(r["seeds"])
        rate = f"{r['achieved']:.2f} ± {r['achieved_se']:.2f}"
        extra = "-" if r["extra_runs"] is None else str(r["extra_runs"])
        hours = "-" if r["core_hours"] is None else f"{r['core_hours']:.1f}"
        lines.append(
            f"  {r['alternative']:>5g}  {r['correct']:<7}  {depths:<13}  {seeds:<8}  {rate:<14}  {extra:<10}  {hours}"
        )
    return "\n".join(lines)

"""``depthscale infer-scale``: rank a (d, P) grid by how well its reference floors match reported floors.

The scoring is defined in ``depthscale.derivations.analysis.scale_match``; the reference floors come from
``depthscale.sims.reference_floors`` with the options shared with ``predict softmax-floor``. Whether
the ranking is resolved (ties within the Monte Carlo error, ``--resolve``) is decided by
``depthscale.derivations.analysis.scale_resolution``.
"""

from __future__ import annotations

import time
from pathlib import Path

from ....theory._validate import check_int
from ...analysis.scale_match import infer_scale
from ..app import emit, parse_list
from .softmax_floor import add_floor_options, floor_options

DEFAULT_CONTEXTS = 4096


def register(subparsers) -> None:
    """Add ``infer-scale``."""
    p = subparsers.add_parser(
        "infer-scale",
        help="rank a (d, P) grid by how well its reference softmax floors match reported floors L0",
        description="For every (d, P) and reference (single, convex, mixture) the ratios L0 / reference over "
        "the CSV rows give median m and spread s = max |ln(r / m)|; candidates are ranked by "
        "score = |ln m| + s, best first. Candidates whose score is within 2 standard errors of the "
        "difference of the best one's are named as tied, with the contexts that would separate them.",
    )
    p.add_argument(
        "--floors",
        required=True,
        help="CSV with columns task,k,a,b,L0 (reported floors; '#' lines are comments, k empty for easy tasks); "
        "'example' uses the example shipped with depthscale",
    )
    p.add_argument(
        "--d", required=True, help="comma-separated input dimensions, e.g. 8,16,32 (at most 400 (d, P) pairs with --P)"
    )
    p.add_argument(
        "--P",
        required=True,
        help="comma-separated context lengths, e.g. 64,128,256 (at most 400 (d, P) pairs with --d)",
    )
    add_floor_options(p, contexts_default=DEFAULT_CONTEXTS)
    p.add_argument(
        "--resolve",
        type=int,
        default=None,
        metavar="CAP",
        help="if the best candidates are tied, re-evaluate the tied scales with more evaluation contexts "
        "(towards the count that would separate them, at least doubling each round) up to CAP "
        "(> --contexts, <= 10000000, refused if the floors would not fit in memory); default: only report ties",
    )
    p.set_defaults(func=handle_infer_scale)


def example_floors_text() -> str:
    """Text of the example floors CSV shipped with the package (see its header comment)."""
    from importlib.resources import files

    return files("depthscale.derivations").joinpath("data/example_top2_floors.csv").read_text()


def _read(path: str) -> str:
    if path == "example":
        return example_floors_text()
    p = Path(path)
    if p.is_dir():
        raise ValueError(f"floors={path!r}: must be a CSV file, not a directory")
    if not p.exists():
        raise ValueError(f"floors={path!r}: no such file")
    if not p.is_file():  # a pipe or device: reading it could block or never end
        raise ValueError(f"floors={path!r}: must be a regular CSV file, not a pipe, socket or device")
    try:
        return p.read_text()
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"floors={path!r}: cannot be read ({exc.__class__.__name__})") from None


def handle_infer_scale(args) -> int:
    ds = [check_int("d", v, lo=1, hi=100_000) for v in parse_list("d", args.d, int)]
    Ps = [check_int("P", v, lo=1, hi=1_000_000) for v in parse_list("P", args.P, int)]
    from ...analysis.scale_match import check_scale_count, read_floors

    check_scale_count(ds, Ps)  # before the floors file is read or anything imported

    rows = read_floors(_read(args.floors))  # the file first: a missing one is refused before any import
    kw = floor_options(args, ds, Ps)
    fit_follows = args.fit_contexts is None
    from ...analysis import scale_resolution as sr

    cap = None if args.resolve is None else sr.check_resolve(args.resolve, kw, ds, Ps, fit_follows)
    t0 = time.perf_counter()
    out = infer_scale(rows, list(dict.fromkeys(ds)), list(dict.fromkeys(Ps)), kw, args.c_lambda, args.c_omega)
    if cap is not None:
        out["resolve"] = {
            "cap": cap,
            "rounds": sr.resolve(out, rows, kw, cap, fit_follows, args.c_lambda, args.c_omega),
        }
    out["resolution"] = sr.resolution(out["ranking"], out["covariances"])
    out = sr.public(out)
    out["rows"] = rows
    out["contexts"] = {"fit": kw["n_fit"], "eval": kw["n_eval"], "seed": kw["seed"]}
    out["seconds"] = time.perf_counter() - t0
    emit(out, args.json, _text(out))
    return 0


def _name(c) -> str:
    return f"(d={c['d']}, P={c['P']}, {c['reference']})"


def _text(out) -> str:
    lines = [
        f"{'d':>5} {'P':>6}  {'reference':<8} {'median_ratio':>12} {'spread':>8} {'score':>8} {'+-':>7} {'contexts':>9}"
    ]
    for c in out["ranking"]:
        lines.append(
            f"{c['d']:>5} {c['P']:>6}  {c['reference']:<8} {c['median_ratio']:>12.4g} {c['spread']:>8.3g} "
            f"{c['score']:>8.3g} {c['score_se']:>7.2g} {c['contexts']:>9}"
        )
    for r in out.get("resolve", {}).get("rounds", []):
        scales = ", ".join(f"(d={d}, P={P})" for d, P in r["scales"])
        lines.append(f"resolve: re-evaluated {scales} on {r['contexts']} contexts ({r['seconds']:.0f} s)")
    res = out["resolution"]
    best = _name(res["best"])
    if res["resolved"]:
        ru = res["runner_up"]
        lines.append(
            f"ranking resolved: {best} is ahead of every other candidate by more than 2 s.e. of the difference"
            + (f" (next scale: {_name(ru)}, {ru['difference']:.3g} +- {ru['difference_se']:.2g})" if ru else "")
        )
        return "\n".join(lines)
    if res["scale_resolved"]:
        ru = res["runner_up"]
        lines.append(
            f"scale resolved: d={res['best']['d']}, P={res['best']['P']} is ahead of every candidate of another scale "
            "by more than 2 s.e. of the difference"
            + (f" (next: {_name(ru)}, {ru['difference']:.3g} +- {ru['difference_se']:.2g})" if ru else "")
        )
    what = "reference" if res["scale_resolved"] else "ranking"
    lines.append(f"{what} NOT resolved: {len(res['tied'])} candidate(s) tied with {best} ({res['rule']}):")
    for t in res["tied"]:
        need = t["contexts_to_separate"]
        lines.append(
            f"  {_name(t)}: difference {t['difference']:.3g} +- {t['difference_se']:.2g}; "
            + (f"about {need} contexts would separate it" if need else "equal scores: no count separates them")
        )
    need = [t["contexts_to_separate"] for t in res["tied"] if t["contexts_to_separate"]]
    cap = out.get("resolve", {}).get("cap")
    if cap is not None:
        lines.append(f"still tied after --resolve {cap} (evaluation contexts raised up to {cap})")
    elif need:
        lines.append(f"rerun with --resolve {max(need)} (or more) to raise the count of the tied scales")
    return "\n".join(lines)

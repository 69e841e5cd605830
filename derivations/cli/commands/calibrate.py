"""``depthscale calibrate --store S --claim ID --condition LABEL``: how often one claim's verdict is
right at the measured effect size.

The claim is evaluated as a report of the store evaluates it (``--preset``: the claims of that
preset's report; without it, every registered study's), on the evidence the report builds
(:func:`~depthscale.derivations.claims.registry.report_evidence`; of the theory numbers only the
claim's own study's are computed). The curve its row on ``--condition`` is decided on is then
replaced by synthetic curves with the measured amplitude, seed offsets and pure error at each true
exponent of ``--alphas`` (:func:`~depthscale.derivations.claims.calibration.calibrate`), and the
rates of pass, fail and indicative are printed: a table, or with ``--json`` a list of objects
``{"alpha", "n", "pass", "fail", "indicative", "other", "pass_se", "fail_se", "indicative_se"}``.
The store is opened read-only.
"""

from __future__ import annotations

from ..app import emit, parse_list

REPLICATES = (10, 100_000)  # calibration.REPLICATES, without importing NumPy for --help


def add_claim_options(p) -> None:
    """``--store``, ``--claim``, ``--condition``, ``--preset`` and ``--seed``: the row a command is about."""
    from .report import preset_choices

    p.add_argument("--store", required=True, help="an existing results store (opened read-only)")
    p.add_argument("--claim", required=True, help="the id of a claim the store's report evaluates")
    p.add_argument(
        "--condition",
        required=True,
        help="the condition label of the claim's row (the claims table's id after the claim id)",
    )
    p.add_argument(
        "--preset",
        default=None,
        help="the preset (or study) the store holds: the claims of its report (default: every registered study's): "
        f"{preset_choices()}",
    )
    p.add_argument("--seed", type=int, default=0, help="seed of the synthetic curves, >= 0 (default 0)")


def register(sub) -> None:
    p = sub.add_parser(
        "calibrate",
        help="rates of pass, fail and indicative of one claim's row on synthetic curves of its measured noise",
    )
    add_claim_options(p)
    p.add_argument(
        "--alphas", default="0.5,0.75,1,1.5,2", help="comma list of true exponents, each > 0 (default 0.5,0.75,1,1.5,2)"
    )
    p.add_argument(
        "--replicates",
        type=int,
        default=200,
        help=f"synthetic curves per exponent, {REPLICATES[0]}..{REPLICATES[1]} (default 200)",
    )
    p.add_argument("--json", action="store_true", help="print a JSON list, one object per exponent")
    p.set_defaults(func=handle)


def check_common(args) -> None:
    """The checks every such command makes before anything heavy is imported."""
    from ....theory._validate import check_int
    from ..app import check_in_store

    check_int("seed", args.seed, lo=0)
    check_in_store("store", args.store)


def positive_list(name: str, text: str) -> list[float]:
    """A comma list of positive numbers (``--alphas``, ``--alternatives``).

    >>> positive_list("alphas", "0.5,1")
    [0.5, 1.0]
    >>> positive_list("alphas", "1,-2")
    Traceback (most recent call last):
    ...
    ValueError: alphas='1,-2': must be positive numbers (true exponents), not -2.0
    """
    import math

    values = parse_list(name, text, float)
    for v in values:
        if not (math.isfinite(v) and v > 0):
            raise ValueError(f"{name}={text!r}: must be positive numbers (true exponents), not {v!r}")
    return values


def find_claim(args):
    """``(study, preset, claim)``: the preset's study and the claim ``--claim`` among the claims its report
    evaluates (every registered study's without ``--preset``); an unknown id is refused naming them."""
    from ...claims.registry import registered_claims, study_order
    from ...study import find_preset, report_studies

    study, preset = find_preset(args.preset) if args.preset is not None else (None, "")
    asked = registered_claims(study_order() if study is None else report_studies(study))
    found = [c for c in asked if c.id == args.claim]
    if not found:
        where = f"the report of preset {preset!r}" if preset else "a report"
        raise ValueError(
            f"claim={args.claim!r}: must be the id of a claim {where} evaluates: {', '.join(c.id for c in asked)}"
        )
    return study, preset, found[0]


def report_inputs(store, study, preset: str, claim):
    """``(evidence, records)`` of an open store: the evidence a report of ``preset`` decides on, with the
    theory numbers of ``claim``'s own study alone (a report's Monte Carlo floors take minutes)."""
    from ...claims.registry import report_evidence
    from ...study import DEFAULT_CONTEXTS, study_of_claim

    fc, rc = study.contexts_of(preset) if study is not None else DEFAULT_CONTEXTS
    records = list(store.records())
    rep = report_evidence(
        records,
        study,
        floor_contexts=fc,
        reference_contexts=rc,
        load_arrays=store.load_arrays,
        theory=[study_of_claim(claim.id).name],
    )
    return rep.evidence, records


def handle(args) -> int:
    from ....theory._validate import check_int

    alphas = positive_list("alphas", args.alphas)
    check_int("replicates", args.replicates, lo=REPLICATES[0], hi=REPLICATES[1])
    check_common(args)
    study, preset, claim = find_claim(args)  # imports every study: after the light checks
    from ....sims.store import Store
    from ...claims.calibration import calibrate

    with Store(args.store, mode="read") as st:
        ev, _ = report_inputs(st, study, preset, claim)
        rates = calibrate(claim, ev, args.condition, alphas, args.replicates, args.seed)
        noise = noise_text(claim, ev, args.condition) if not args.json else ""
    out = [r.to_dict() for r in rates]
    emit(out, args.json, rates_text(claim.id, args.condition, out) + noise)
    return 0


def noise_text(claim, ev, condition: str) -> str:
    """The measured effect and noise the synthetic curves were drawn with, as lines of text."""
    from ...claims.calibration import backing_curve, noise_model

    m = noise_model(backing_curve(claim, ev, condition))
    return (
        f"\n  drawn at the measured R_{m.depths[0]} = {m.r1:.4g}, gain R_{m.depths[0]} - R_{m.depths[-1]} = {m.gain:.3g}"
        f" ({m.gain / m.r1:.2%} of R_{m.depths[0]}), seed offsets sd {m.seed_sd:.3g}, pure error sd {m.pure_sd:.3g};"
        f"\n  depths {', '.join(map(str, m.depths))}; {len(m.seeds)} seeds"
    )


def rates_text(claim_id: str, condition: str, rows: list[dict]) -> str:
    """The rates as a table, one line per true exponent.

    >>> print(rates_text("c", "x", [{"alpha": 1.0, "n": 10, "pass": 0.9, "fail": 0.0, "indicative": 0.1,
    ...                              "other": 0.0, "pass_se": 0.095, "fail_se": 0.0, "indicative_se": 0.095}]))
    c x: verdicts on synthetic curves of its measured noise
      alpha      n   pass           fail           indicative     other
          1     10   0.900 ± 0.095  0.000 ± 0.000  0.100 ± 0.095  0.000
    """
    lines = [
        f"{claim_id} {condition}: verdicts on synthetic curves of its measured noise",
        f"  {'alpha':>5}  {'n':>5}   {'pass':<13}  {'fail':<13}  {'indicative':<13}  other",
    ]
    for r in rows:
        cells = "  ".join(f"{r[k]:.3f} ± {r[k + '_se']:.3f}" for k in ("pass", "fail", "indicative"))
        lines.append(f"  {r['alpha']:>5g}  {r['n']:>5}   {cells}  {r['other']:.3f}")
    return "\n".join(lines)

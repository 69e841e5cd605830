"""The core study's story: the answer from its decided claims, and one finding per figure."""

from __future__ import annotations

from depthscale.derivations.study import Finding, Story, brief, results_of, tally

FINDINGS = (
    Finding(
        "Depth exponents against zeta",
        "Fitted exponents of every curve against zeta = (a+b-1)/a: linear attention between zeta and 2 zeta, "
        "softmax near 1 whatever the spectrum if the paper is right.",
        "exponents_vs_zeta",
        ("linear-exponent", "softmax-top2-exponent", "exponent-spread", "topk-slower"),
    ),
    Finding(
        "Shared error and disagreement",
        "C_L and A_L - C_L against depth: R_L = C_L + (A_L - C_L)/L holds exactly on evaluation data.",
        "decomposition",
        ("clt-identity", "clt-convergence"),
    ),
    Finding(
        "Room for depth",
        "The fitted floor against the best single temperature head and the best two-temperature mixture.",
        "room_for_depth",
        ("depth-beats-single", "depth-beats-pair", "softmax-below-linear"),
    ),
    Finding(
        "Modes learned with depth",
        "Per-mode losses against depth: linear attention learns the modes one after another, softmax in parallel.",
        "mode_curves",
        ("linear-sequential-modes", "softmax-parallel-modes"),
    ),
    Finding(
        "Floors",
        "Trained linear floors against the theory (context covariance), and the paper's top-2 floors recomputed.",
        "floors",
        ("linear-floor", "linear-saturation", "floor-reference"),
    ),
)


def story(results, ev) -> Story:
    """Three to five sentences: the softmax exponent, the linear exponent, the exact identity and the
    controls, and whether depth beats the temperature-only heads, each with its numbers."""
    answer = []
    if soft := results_of(results, "softmax-top2-exponent"):
        answer.append(
            "Softmax attention on top-2 (alpha near 1 claimed): " + "; ".join(brief(r) for r in soft[:3]) + "."
        )
    if lin := results_of(results, "linear-exponent"):
        answer.append(
            f"Linear attention on the easy task, alpha between zeta and 2 zeta: {tally(lin)} "
            f"({'; '.join(brief(r) for r in lin[:3])})."
        )
    ident = results_of(results, "clt-identity")
    ctrl = results_of(results, "controls-no-depth-gain")
    if ident or ctrl:
        parts = [f"the identity R_L = C_L + (A_L - C_L)/L holds to a relative {brief(ident[0])}"] if ident else []
        parts += [f"controls without layer diversity gain nothing from depth: {tally(ctrl)}"] if ctrl else []
        answer.append("Measurement checks: " + "; ".join(parts) + ".")
    single, pair = results_of(results, "depth-beats-single"), results_of(results, "depth-beats-pair")
    if single or pair:
        answer.append(
            f"The deepest model beats the best single temperature head: {tally(single)}; "
            f"the best two-temperature mixture: {tally(pair)} (paired on the same contexts)."
        )
    if not answer:
        return Story(answer=("No run of the core presets is in this report.",))
    return Story(answer=tuple(answer[:5]), findings=FINDINGS)

"""The words of a study's answer: a yes or no from the tally of a claim's verdicts, the settings the
answer holds in, and the few results that carry it, each with its estimate and test.

A study's ``story`` (:class:`~depthscale.derivations.study.Story`) opens its report with a short
answer to the study's question; these helpers keep the answers of the studies alike: the first
sentence answers with the tally behind it (:func:`answer_word`, :func:`verdict_phrase`), names its
settings (:func:`settings_text`), and quotes the strongest pass and fail (:func:`strongest`,
:func:`quote`), never every comparison (the claims table lists them). Only
:class:`~depthscale.derivations.claims.verdicts.ClaimResult` fields and the curves' configurations
are read, so the words follow whatever the claims decide.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable

from ..formatting import format_estimate, format_value

_T = re.compile(r"t\((inf|[0-9.]+)\)")
_SIZES = re.compile(r" d=\d+ P=\d+")
_NUMBER_WORDS = ("no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")


def estimate_text(value, se) -> str:
    """``value ± se`` with the error to two significant digits and the value to the same decimal
    place (the digits the error leaves meaningful); a value without a usable error as it is.

    Examples
    --------
    >>> estimate_text(0.10994, 0.0596), estimate_text(-0.47148, 0.00386), estimate_text(1.0, None)
    ('0.110 ± 0.060', '-0.4715 ± 0.0039', '1')
    >>> estimate_text(123.44, 12.7), estimate_text(-0.0517157, 9.49e-05), estimate_text(3.1e-6, 2.2e-7)
    ('123 ± 13', '-0.051716 ± 0.000095', '3.1e-06 ± 2.2e-07')
    """
    if se is None or not math.isfinite(float(se)) or float(se) <= 0 or value is None:
        return format_value(value)
    value, se = float(value), float(se)
    decimals = 1 - math.floor(math.log10(se))  # the error's second significant digit
    if decimals > 6 or decimals < -6 or (value != 0 and abs(value) < 1e-4):  # too small or large for decimals
        return format_estimate(value, se)
    decimals = max(decimals, 0)
    return f"{value:.{decimals}f} ± {se:.{decimals}f}"


def t_of(result) -> str:
    """The t quantile's degrees of freedom the result was decided at, ``"t(4)"`` (``""`` if none).

    >>> from depthscale.derivations.claims.verdicts import ClaimResult
    >>> t_of(ClaimResult("x", "c", None, 0.1, 0.06, "", "fail", "", test="fit n=7, t(4) = 2.78"))
    't(4)'
    """
    m = _T.search(getattr(result, "test", "") or "")
    return f"t({m.group(1)})" if m else ""


def verdict_of(result) -> str:
    """The verdict as the answer says it: ``"fail"``, ``"indicative, would be pass"``."""
    return result.verdict + (f", would be {result.would_be}" if result.would_be else "")


def short_label(result) -> str:
    """The result's condition without the sizes the answer's settings name (``" d=16 P=128"``).

    >>> from depthscale.derivations.claims.verdicts import ClaimResult, Condition
    >>> c = Condition("cosine top-2 (a,b)=(0,0) d=16 P=128", d=16, P=128)
    >>> short_label(ClaimResult("x", "c", None, None, None, "", "fail", "", condition=c))
    'cosine top-2 (a,b)=(0,0)'
    """
    return _SIZES.sub("", result.condition.label)


def quote(result, name: str = "", label: str | None = None, against: bool = False) -> str:
    """One result in the answer: ``"<label>: <name> = <estimate> (<verdict>, <test>)"``.

    ``label`` defaults to the result's condition (:func:`short_label`); ``name`` is the quantity's symbol (left out when
    empty); ``against``: the expected number follows (``"against 0.0735"``). A result without an
    estimate reads ``"no estimate"``.

    >>> from depthscale.derivations.claims.verdicts import ClaimResult
    >>> r = ClaimResult("x", "c", (0.8, 1.2), 0.10994, 0.0596, "", "fail", "", condition="softmax top-2",
    ...                 test="fit n=7, t(4) = 2.78")
    >>> quote(r, "alpha")
    'softmax top-2: alpha = 0.110 ± 0.060 (fail, t(4))'
    """
    where = short_label(result) if label is None else label
    value = "no estimate" if result.measured is None else estimate_text(result.measured, result.error)
    what = f"{name} = {value}" if name and result.measured is not None else value
    if against and isinstance(result.expected, int | float):
        what += f" against {format_value(result.expected)}"
    how = ", ".join(p for p in (verdict_of(result), t_of(result)) if p)
    return f"{where}: {what} ({how})" if where else f"{what} ({how})"


def _signed(result) -> float:
    """How far inside what was expected the estimate lies, in standard errors (negative: outside);
    NaN without an estimate and its error. The boundary is the nearer end of an interval
    ``(lo, hi)``, zero for a sign condition (``"< 0"``, ``"> 0"``) and the expected value itself for
    a number (where only the distance counts)."""
    m, se, exp = result.measured, result.error, result.expected
    if m is None or se is None or not math.isfinite(se) or se <= 0:
        return math.nan
    if isinstance(exp, tuple):
        lo, hi = exp
        gap = min(m - lo, hi - m)
    elif isinstance(exp, str) and exp.strip().startswith("<"):
        gap = -m
    elif isinstance(exp, str) and exp.strip().startswith(">"):
        gap = m
    elif isinstance(exp, int | float):
        gap = -abs(m - exp)
    else:
        gap = abs(m)
    return round(gap / se, 10)


def strength(result) -> float:
    """How clearly a result's estimate decides it: its distance from the boundary of what was
    expected (:func:`_signed`), in standard errors; NaN without an estimate and its error.

    >>> from depthscale.derivations.claims.verdicts import ClaimResult
    >>> strength(ClaimResult("x", "c", (0.8, 1.2), 0.2, 0.1, "", "fail", ""))
    6.0
    >>> strength(ClaimResult("x", "c", "< 0", -0.47, 0.005, "", "pass", ""))
    94.0
    """
    return abs(_signed(result))


def _clearness(result) -> float:
    """Larger for a result its estimate decides more clearly the way it went (its would-be verdict for
    an indicative one; the way of a pass for one without): inside what was expected for a pass,
    outside for a fail; against an expected number (a claim within a relative tolerance of it), the
    relative distance, small for a pass and large for a fail."""
    exp, m = result.expected, result.measured
    passing = result.verdict == "pass" or (result.verdict == "indicative" and result.would_be != "fail")
    if isinstance(exp, int | float) and not isinstance(exp, bool) and exp and m is not None:
        rel = abs(m / exp - 1)
        return -rel if passing else rel
    s = _signed(result)
    return s if passing else -s


def strongest(results, verdict: str, would_be: str | None = None):
    """The result of ``verdict`` (and ``would_be``) that its estimate decides most clearly
    (:func:`strength`; against an expected number, the pass nearest to it and the fail farthest
    from it), or None when none of them has an estimate.

    >>> from depthscale.derivations.claims.verdicts import ClaimResult
    >>> rs = [ClaimResult("x", "c", 1.0, m, 0.01, "", "indicative", "", would_be=w)
    ...       for m, w in ((1.02, "pass"), (1.05, "pass"), (1.3, "fail"), (1.9, "fail"))]
    >>> strongest(rs, "indicative", "pass").measured, strongest(rs, "indicative", "fail").measured
    (1.02, 1.9)
    """
    rs = [r for r in results if r.verdict == verdict and (would_be is None or r.would_be == would_be)]
    rs = [r for r in rs if math.isfinite(_clearness(r))]
    return max(rs, key=_clearness) if rs else None


def counts(results) -> Counter:
    """The verdicts of ``results`` counted, with the indicative ones' would-be verdicts as
    ``"would be pass"`` and ``"would be fail"``."""
    c = Counter(r.verdict for r in results)
    c.update(f"would be {r.would_be}" for r in results if r.verdict == "indicative" and r.would_be)
    return c


def verdict_phrase(results, noun: str) -> str:
    """``"fails on 5 of 20 curves and is indicative on 15 (1 would be fail)"``: how the verdicts of
    ``results`` fell, each count once, the total with the first.

    >>> from depthscale.derivations.claims.verdicts import ClaimResult
    >>> rs = [ClaimResult("x", "c", None, None, None, "", v, "", would_be=w)
    ...       for v, w in (("fail", None), ("indicative", "fail"), ("indicative", None), ("pass", None))]
    >>> verdict_phrase(rs, "curves")
    'passes on 1 of 4 curves, fails on 1 and is indicative on 2 (1 would be fail)'
    """
    c = counts(results)
    n = sum(c[v] for v in ("pass", "fail", "indicative"))
    parts = [
        f"{verb} on {c[v]}" for v, verb in (("pass", "passes"), ("fail", "fails"), ("indicative", "is indicative"))
    ]
    parts = [p for p, v in zip(parts, ("pass", "fail", "indicative")) if c[v]]
    if not parts:
        return f"is decided on none of 0 {noun}"
    parts[0] += f" of {n} {noun}"
    text = parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]
    wb = [f"{c[f'would be {v}']} would be {v}" for v in ("pass", "fail") if c[f"would be {v}"]]
    return text + (f" ({', '.join(wb)})" if wb else "")


def short_tally(results) -> str:
    """``"5 of 8 pass, 3 indicative (3 would be pass)"``: the verdicts counted, the total with the first.

    >>> from depthscale.derivations.claims.verdicts import ClaimResult
    >>> rs = [ClaimResult("x", "c", None, None, None, "", v, "", would_be=w)
    ...       for v, w in (("fail", None), ("indicative", "fail"), ("indicative", None), ("pass", None))]
    >>> short_tally(rs)
    '1 of 4 pass, 1 fail, 2 indicative (1 would be fail)'
    """
    c = counts(results)
    n = sum(c[v] for v in ("pass", "fail", "indicative"))
    parts = [f"{c[v]} {v}" for v in ("pass", "fail", "indicative") if c[v]]
    if not parts:
        return "none decided"
    parts[0] = parts[0].replace(" ", f" of {n} ", 1)
    wb = [f"{c[f'would be {v}']} would be {v}" for v in ("pass", "fail") if c[f"would be {v}"]]
    return ", ".join(parts) + (f" ({', '.join(wb)})" if wb else "")


def answer_word(results) -> str:
    """``"Yes"``, ``"No"``, ``"Partly"`` or ``"Not decided"`` from the verdicts of one claim whose
    pass means yes: yes where it passes and fails nowhere, partly where it does both, no where it
    fails and passes nowhere; undecided where every verdict is indicative."""
    c = counts(results)
    if c["pass"] and c["fail"]:
        return "Partly"
    if c["pass"]:
        return "Yes"
    if c["fail"]:
        return "No"
    return "Not decided"


def joint_answer(*words: str | None) -> str:
    """One answer to a question in parts, from each part's :func:`answer_word` (None: the part was
    not tested): the same word when they agree, no when a part is no and none is yes, partly when
    some part is yes or partly and another is not, else not decided.

    >>> joint_answer("Yes", None), joint_answer("No", "Not decided"), joint_answer("Yes", "No")
    ('Yes', 'No', 'Partly')
    """
    got = [w for w in words if w is not None]
    if not got:
        return "Not decided"
    if len(set(got)) == 1:
        return got[0]
    if any(w in ("Yes", "Partly") for w in got):
        return "Partly"
    return "No" if "No" in got else "Not decided"


def number_word(n: int) -> str:
    """``"two"`` for 2 (up to ten), else the digits.

    >>> number_word(2), number_word(12)
    ('two', '12')
    """
    return _NUMBER_WORDS[n] if 0 <= n < len(_NUMBER_WORDS) else str(n)


def _span(values: Iterable, unit: str = "") -> str:
    vs = sorted(set(values))
    if not vs:
        return ""
    return f"{vs[0]:,}{unit}" if len(vs) == 1 else f"{vs[0]:,}-{vs[-1]:,}{unit}"


def _training(train: dict, lr: bool = True) -> str:
    """``"cosine lr 0.003 over 4,000 steps"``, ``"constant up to 3,000 steps"`` (a constant-rate run stops
    when its loss stops falling, so its steps are a cap)."""
    schedule, steps = train.get("schedule", "cosine"), train.get("steps")
    rate = f" lr {train['lr']:g}" if lr and train.get("lr") is not None else ""
    if not steps:
        return f"{schedule}{rate}"
    return (
        f"{schedule}{rate} over {steps:,} steps" if schedule == "cosine" else f"{schedule}{rate} up to {steps:,} steps"
    )


def settings_text(curves, training: bool = True) -> str:
    """The settings that ``curves`` share and span, for the answer's "in these settings (...)":
    ``"d = 16, P = 128, N = d, L = 1..64, lr 0.003, cosine over 4,000 steps, two seeds"`` (each
    training protocol once; ``training=False`` leaves them out, for a study whose protocols are
    many and named elsewhere). Empty when there are no curves.
    """
    cs = list(curves)
    if not cs:
        return ""
    parts = []
    for sym in ("d", "P"):
        parts.append(f"{sym} = {_span(getattr(c.key, sym) for c in cs)}")
    widths = {c.key.width or 0 for c in cs}
    parts.append("N = d" if widths == {0} else "N = " + ", ".join("d" if w == 0 else str(w) for w in sorted(widths)))
    lo, hi = min(int(c.depths[0]) for c in cs), max(int(c.depths[-1]) for c in cs)
    parts.append(f"L = {lo}..{hi}")
    if training:
        rates = {dict(c.key.train).get("lr") for c in cs}
        one_rate = len(rates) == 1 and None not in rates
        protocols = " or ".join(dict.fromkeys(_training(dict(c.key.train), not one_rate) for c in cs))
        parts.append(f"lr {next(iter(rates)):g}, {protocols}" if one_rate else protocols)
    seeds = sorted({len(c.seeds) for c in cs})
    word = number_word(seeds[0]) if len(seeds) == 1 else f"{seeds[0]}-{seeds[-1]}"
    parts.append(f"{word} seed{'s' if seeds[-1] != 1 else ''}")
    return ", ".join(parts)


def condition_settings(results) -> str:
    """``"d = 16, P = 128"``: the sizes the results' conditions name, for an answer told from claim
    results alone (a report's ``claims.json``, no curves); empty when they name none."""
    parts = []
    for sym in ("d", "P"):
        vals = [v for r in results if isinstance(v := getattr(r.condition, sym, None), int)]
        # a condition known by its label alone ("... d=16 P=128") names its sizes there
        vals += [int(m.group(1)) for r in results if (m := re.search(rf"\b{sym}=(\d+)\b", r.condition.label))]
        if vals:
            parts.append(f"{sym} = {_span(vals)}")
    return ", ".join(parts)


def settings_by(groups: dict, results=(), training: bool = True) -> str:
    """``"in these settings (linear: d = 32, ...; softmax: d = 16, ...)"``: the settings of each
    named group of curves (:func:`settings_text`); from the results' conditions when no group has
    curves."""
    texts = [f"{name}: {text}" for name, cs in groups.items() if (text := settings_text(cs, training))]
    return f"in these settings ({'; '.join(texts)})" if texts else in_these_settings((), results)


def in_these_settings(curves, results, training: bool = True, more: str = "") -> str:
    """``"in these settings (d = 16, ...)"`` from the curves (:func:`settings_text`), else from the
    results' conditions (:func:`condition_settings`), ``more`` last (the protocols, say); ``"in
    these settings"`` alone without any."""
    text = ", ".join(t for t in (settings_text(curves, training) or condition_settings(results), more) if t)
    return f"in these settings ({text})" if text else "in these settings"


__all__ = [
    "answer_word",
    "condition_settings",
    "in_these_settings",
    "joint_answer",
    "counts",
    "estimate_text",
    "number_word",
    "quote",
    "settings_by",
    "settings_text",
    "short_label",
    "short_tally",
    "strength",
    "strongest",
    "t_of",
    "verdict_of",
    "verdict_phrase",
]

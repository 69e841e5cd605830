"""Text of numbers: the one place a number becomes text (values, estimates with errors, percentages, intervals).

Standard library only, so claims format their numbers without importing the report machinery.
"""

from __future__ import annotations

import math
import numbers

_DASH = MISSING = "\u2014"  # the one spelling of a missing or non-finite number


def format_value(x) -> str:
    """Text of a table cell: 4 significant digits for floats, an em dash for None and nan.

    Examples
    --------
    >>> [format_value(v) for v in (1.23456, 64, float("nan"), None, 1e-7, "top-2", True, (0.5, 2.0))]
    ['1.235', '64', '—', '—', '1e-07', 'top-2', 'yes', '0.5, 2']
    """
    if x is None:
        return _DASH
    if isinstance(x, bool):
        return "yes" if x else "no"
    if isinstance(x, str):
        return x
    if isinstance(x, numbers.Integral):
        return str(int(x))
    if isinstance(x, numbers.Real):
        v = float(x)
        if math.isnan(v):
            return _DASH
        if math.isinf(v):
            return "\u221e" if v > 0 else "-\u221e"
        return f"{v:.4g}"
    if isinstance(x, (list, tuple)):
        return ", ".join(format_value(v) for v in x)
    if hasattr(x, "item") and getattr(x, "ndim", None) == 0:  # numpy scalars and 0-d arrays
        return format_value(x.item())
    return str(x)


def format_estimate(x, se=None) -> str:
    """A measured value with its standard error: ``x ± se`` (4 and 2 significant digits).

    The error is left out when it is None or not finite; a missing value reads as an em dash.

    Examples
    --------
    >>> format_estimate(0.97123, 0.0123), format_estimate(2.5), format_estimate(None, 0.1)
    ('0.9712 ± 0.012', '2.5', '—')
    """
    text = format_value(x)
    if text == _DASH or se is None or isinstance(se, str):
        return text
    se = float(se)
    return text if not math.isfinite(se) else f"{text} ± {se:.2g}"


def format_percent(x) -> str:
    """A signed relative difference as a percentage (``+1.23%``); the missing spelling for None/nan.

    Examples
    --------
    >>> format_percent(0.0123), format_percent(-0.5), format_percent(float("nan"))
    ('+1.23%', '-50.00%', '—')
    """
    if x is None or not math.isfinite(float(x)):
        return _DASH
    return f"{float(x):+.2%}"


def format_interval(lo, hi) -> str:
    """An interval ``[lo, hi]`` with the one number format.

    Examples
    --------
    >>> format_interval(0.8312, 1.2)
    '[0.8312, 1.2]'
    """
    return f"[{format_value(lo)}, {format_value(hi)}]"


def growth_text(quantity: str, exponent, ok: bool | None, band: str) -> str:
    """How ``quantity`` changes with depth, worded from the verdict and the measured sign, so that a
    pass never reads "grows" and a fail never reads "flat".

    ``exponent`` is the measured power of depth, ``quantity ~ L^g`` (an
    :class:`~depthscale.derivations.analysis.estimate.Estimate`: its value, standard error and 95 %
    margin); ``ok`` the verdict on ``quantity`` being flat: True when the test puts ``g`` inside the
    band of flat (``band`` says which), False when wholly outside, None when undecided.

    Examples
    --------
    >>> from depthscale.derivations.analysis.estimate import Estimate
    >>> g = Estimate(0.13, 0.066, 3, "fit", 5)
    >>> growth_text("A_L - C_L", g, True, "alpha in [0.8, 1.2]")
    'A_L - C_L flat within the band (alpha in [0.8, 1.2]), rising slightly as L^0.13 ± 0.066'
    >>> growth_text("A_L - C_L", Estimate(-0.5, 0.05, 3, "fit", 5), False, "alpha in [0.8, 1.2]")
    'A_L - C_L shrinks as L^-0.50 ± 0.05, outside the band of flat (alpha in [0.8, 1.2])'
    >>> growth_text("A_L - C_L", Estimate(0.1, 0.3, 3, "fit", 5), None, "alpha in [0.8, 1.2]")
    'A_L - C_L changes as L^0.10 ± 0.3 (rising or falling: not resolved); flat (alpha in [0.8, 1.2]) undecided'
    """
    g, se = float(exponent.value), float(exponent.se)
    margin = float(getattr(exponent, "margin", math.inf))
    power = f"L^{g:.2f}" + (f" ± {se:.2g}" if math.isfinite(se) else "")
    if ok is True:
        slope = "steady" if g == 0 else ("rising slightly" if g > 0 else "falling slightly")
        return f"{quantity} flat within the band ({band}), {slope} as {power}"
    resolved = math.isfinite(margin) and abs(g) > margin  # the 95 % interval of g excludes 0
    if resolved or ok is False:
        way = "grows" if g > 0 else "shrinks"
        if ok is False:
            return f"{quantity} {way} as {power}, outside the band of flat ({band})"
        return f"{quantity} {way} as {power}; flat ({band}) undecided"
    return f"{quantity} changes as {power} (rising or falling: not resolved); flat ({band}) undecided"


__all__ = ["MISSING", "format_value", "format_estimate", "format_percent", "format_interval", "growth_text"]

"""Argument checks shared by every layer: one ``ValueError`` naming the parameter and what is allowed."""

from __future__ import annotations

import math


def _fail(name: str, value, allowed: str):
    raise ValueError(f"{name}={value!r}: must be {allowed}")


def check_real(name: str, value, *, lo=None, hi=None, lo_open=False, hi_open=False) -> float:
    """Return ``float(value)`` if it is a finite real inside the stated bounds, else raise ``ValueError``.

    >>> check_real("a", 2, lo=0)
    2.0
    """
    if isinstance(value, bool):
        _fail(name, value, "a real number")
    try:
        v = float(value)
    except (TypeError, ValueError):
        _fail(name, value, "a real number")
    if not math.isfinite(v):
        _fail(name, value, "finite")
    if lo is not None and (v < lo or (lo_open and v == lo)):
        _fail(name, value, _bounds(lo, hi, lo_open, hi_open))
    if hi is not None and (v > hi or (hi_open and v == hi)):
        _fail(name, value, _bounds(lo, hi, lo_open, hi_open))
    return v


def check_int(name: str, value, *, lo=None, hi=None) -> int:
    """Return ``int(value)`` if it is an integer inside ``[lo, hi]``, else raise ``ValueError``.

    >>> check_int("d", 16, lo=1)
    16
    """
    if isinstance(value, bool) or not isinstance(value, (int,)) and not (
        isinstance(value, float) and value.is_integer()
    ):
        try:
            import numpy as np

            if isinstance(value, np.integer):
                value = int(value)
            else:
                raise TypeError
        except TypeError:
            _fail(name, value, "an integer" + (" " + _bounds(lo, hi) if lo is not None or hi is not None else ""))
    v = int(value)
    if (lo is not None and v < lo) or (hi is not None and v > hi):
        _fail(name, value, "an integer " + _bounds(lo, hi))
    return v


def check_choice(name: str, value, choices) -> str:
    """Return ``value`` if it is one of ``choices``, else raise ``ValueError``.

    >>> check_choice("model", "linear", ("linear", "softmax"))
    'linear'
    """
    if value not in choices:
        _fail(name, value, "one of " + ", ".join(map(str, choices)))
    return value


def _bounds(lo, hi, lo_open=False, hi_open=False) -> str:
    if lo is not None and hi is not None:
        return f"in {'(' if lo_open else '['}{lo}, {hi}{')' if hi_open else ']'}"
    if lo is not None:
        return f"{'>' if lo_open else '>='} {lo}"
    return f"{'<' if hi_open else '<='} {hi}"

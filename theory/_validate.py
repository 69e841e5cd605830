"""Argument checks shared by every layer: one ``ValueError`` naming the parameter and what is allowed.

Project infrastructure, not theory (also the size limits and byte formatting): private to the project,
imported by every layer, exported by none.
"""

from __future__ import annotations

import math
from typing import NoReturn


def bad_argument(name: str, value, allowed: str) -> NoReturn:
    """Raise the one argument error of the project: ``name=value: must be <allowed>`` (a long value cut).

    >>> bad_argument("k", 0, ">= 1")
    Traceback (most recent call last):
    ...
    ValueError: k=0: must be >= 1
    """
    text = repr(value)
    if len(text) > 80:
        text = text[:77] + "..."
    raise ValueError(f"{name}={text}: must be {allowed}")


_fail = bad_argument


def check_real(name: str, value, *, lo=None, hi=None, lo_open=False, hi_open=False) -> float:
    """Return ``float(value)`` if it is a finite real inside the stated bounds, else raise ``ValueError``.

    >>> check_real("a", 2, lo=0)
    2.0
    >>> check_real("a", "2")
    Traceback (most recent call last):
    ...
    ValueError: a='2': must be a real number
    """
    # float() also takes text ('2') and NumPy's booleans: neither is a number here
    if isinstance(value, (bool, str, bytes)) or getattr(getattr(value, "dtype", None), "kind", "") == "b":
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
    if (
        isinstance(value, bool)
        or not isinstance(value, (int,))
        and not (isinstance(value, float) and value.is_integer())
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


def check_bool(name: str, value) -> bool:
    """Return ``bool(value)`` if it is True or False (NumPy's too), else raise ``TypeError``: a string
    such as ``"no"`` is truthy, so a flag takes no stand-ins.

    >>> check_bool("arrays", False)
    False
    >>> import numpy as np
    >>> check_bool("arrays", np.False_)
    False
    """
    # NumPy's boolean scalar is numpy.bool_ in NumPy 1 and numpy.bool in NumPy 2 (np.bool_ an alias);
    # it is told by its module and name, so this light module does not import NumPy
    kind = type(value)
    if not isinstance(value, bool) and not (kind.__module__ == "numpy" and kind.__name__ in ("bool", "bool_")):
        raise TypeError(f"{name}={value!r}: must be True or False")
    return bool(value)


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


# One set of limits for the parameters every layer shares (the task's d and P, a model's depth, the
# number of modes of a theory spectrum). Memory is checked separately (``check_memory``), so these
# are bounds on meaning and on index sizes, not on what fits into this machine.
D_MAX = 100_000  # input dimension d of a task: simulations and the Monte Carlo floor
P_MAX = 1_000_000  # context length P
DEPTH_MAX = 4096  # layers L of a model or of the depth-indexed linear-attention laws
OPTIMUM_DEPTH_MAX = (
    64  # deepest best depth-L linear predictor (theory/linear_optimum.py; the basis is stable well beyond)
)
MODES_MAX = 10_000_000  # modes d of a theory spectrum (no contexts are drawn, so it can be larger)
SEED_MAX = 2**63 - 1  # random seeds: stores keep them as signed 64-bit SQLite integers


def physical_memory() -> int | None:
    """Bytes of physical memory of this machine, or None where the OS does not say."""
    import os

    try:
        return int(os.sysconf("SC_PAGE_SIZE")) * int(os.sysconf("SC_PHYS_PAGES"))
    except (AttributeError, ValueError, OSError):
        return None


def check_memory(what: str, nbytes: float, limit: float | None = None) -> float:
    """Refuse work whose arrays need more than ``limit`` bytes (default: this machine's physical memory).

    Parameters
    ----------
    what : str
        The parameters that set the size, e.g. ``"d=100000, P=1000000"``; named in the message.
    nbytes : float
        The estimate (a lower bound: the largest arrays the computation holds at once).
    limit : float, optional
        Bytes allowed; the default is the physical memory reported by the OS (no check if unknown).

    Examples
    --------
    >>> check_memory("d=4", 1024.0, limit=2**30)
    1024.0
    >>> check_memory("d=100000", 2.0**45, limit=2**34)
    Traceback (most recent call last):
    ...
    ValueError: d=100000: needs at least 32 TiB of memory; this machine has 16 GiB
    """
    limit = physical_memory() if limit is None else limit
    if limit is not None and nbytes > limit:
        raise ValueError(
            f"{what}: needs at least {format_bytes(nbytes)} of memory; this machine has {format_bytes(limit)}"
        )
    return nbytes


def format_bytes(n: float) -> str:
    """``1536 -> '1.5 KiB'`` (binary units, three significant digits).

    >>> format_bytes(3 * 2**40), format_bytes(512)
    ('3 TiB', '512 B')
    """
    units = ("B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB")
    i = 0
    while n >= 1024 and i < len(units) - 1:
        n /= 1024
        i += 1
    return f"{n:.3g} {units[i]}"

"""The one JSON-safe conversion of the project: NumPy values to plain Python, NaN to null on request.

Project infrastructure, like :mod:`depthscale.theory._validate`: private, imported by every layer,
exported by none. It imports nothing heavy (NumPy values are recognised by their ``tolist``).

>>> import numpy as np
>>> json_safe({"a": np.float64(1.5), 2: np.array([1.0, np.nan])})
{'a': 1.5, '2': [1.0, nan]}
>>> json_safe([np.inf, 3, None], finite=True), finite_number(np.nan), finite_number(2)
([None, 3, None], None, 2.0)
"""

from __future__ import annotations

import math


def json_safe(x, *, finite: bool = False):
    """``x`` with NumPy scalars and arrays made Python numbers and lists, tuples made lists and dict keys
    strings, recursively; with ``finite=True`` every NaN or infinity becomes None (strict JSON has no NaN)."""
    if hasattr(x, "tolist") and not isinstance(x, (str, bytes)):
        x = x.tolist()  # a NumPy array or scalar
    if isinstance(x, dict):
        return {str(k): json_safe(v, finite=finite) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [json_safe(v, finite=finite) for v in x]
    if finite and isinstance(x, float) and not math.isfinite(x):
        return None
    return x


def finite_number(x) -> float | None:
    """``float(x)``, or None for None, NaN and infinities: a number as strict JSON stores it."""
    return None if x is None else json_safe(float(x), finite=True)


__all__ = ["json_safe", "finite_number"]

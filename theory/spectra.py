"""Power-law spectra of the in-context regression task (docs/sources.md, Data).

``lambda_k = c_lambda k^-a`` (input covariance) and ``omega_k = c_omega k^-b`` (teacher
covariance), k = 1..d. The depth exponent of linear attention is ``zeta = (a + b - 1) / a``.
"""

from __future__ import annotations

import math
from collections.abc import Sized
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from ._validate import MODES_MAX, check_int, check_real


@dataclass(frozen=True)
class PowerLawSpectrum:
    """Input and teacher spectra ``lambda_k = c_lambda k^-a``, ``omega_k = c_omega k^-b``.

    Parameters
    ----------
    a, b : float
        Decay exponents, ``>= 0``.
    d : int
        Number of modes, ``1 <= d <= 10^7``.
    c_lambda, c_omega : float
        Positive scales (``lambda_1 = c_lambda``).

    Examples
    --------
    >>> s = PowerLawSpectrum(2.0, 1.0, 4)
    >>> s.lam.tolist()
    [1.0, 0.25, 0.1111111111111111, 0.0625]
    >>> s.zeta
    1.0
    """

    a: float
    b: float
    d: int
    c_lambda: float = 1.0
    c_omega: float = 1.0

    def __post_init__(self):
        # normalise types once so that every law sees plain floats / ints
        object.__setattr__(self, "a", check_real("a", self.a, lo=0))
        object.__setattr__(self, "b", check_real("b", self.b, lo=0))
        object.__setattr__(self, "d", check_int("d", self.d, lo=1, hi=MODES_MAX))  # 80 MB per float64 array
        object.__setattr__(self, "c_lambda", check_real("c_lambda", self.c_lambda, lo=0, lo_open=True))
        object.__setattr__(self, "c_omega", check_real("c_omega", self.c_omega, lo=0, lo_open=True))

    @cached_property
    def lam(self) -> np.ndarray:
        """Input eigenvalues ``lambda_k``, k = 1..d (decreasing)."""
        return self.c_lambda * np.arange(1, self.d + 1, dtype=np.float64) ** (-self.a)

    @cached_property
    def omega(self) -> np.ndarray:
        """Teacher variances ``omega_k``, k = 1..d."""
        return self.c_omega * np.arange(1, self.d + 1, dtype=np.float64) ** (-self.b)

    @cached_property
    def weights(self) -> np.ndarray:
        """Loss weights ``lambda_k omega_k`` (the measure every linear law integrates against)."""
        return self.c_lambda * self.c_omega * np.arange(1, self.d + 1, dtype=np.float64) ** (-(self.a + self.b))

    @property
    def lam1(self) -> float:
        """Largest eigenvalue ``lambda_1 = c_lambda``."""
        return self.c_lambda

    @property
    def prefactor(self) -> float:
        """``c_lambda c_omega / a`` of the continuum laws (``nan`` when ``a = 0``)."""
        return self.c_lambda * self.c_omega / self.a if self.a > 0 else math.nan

    @property
    def zeta(self) -> float:
        """Depth exponent ``(a + b - 1) / a``; ``nan`` when ``a = 0`` (undefined)."""
        return (self.a + self.b - 1.0) / self.a if self.a > 0 else math.nan

    @property
    def asymptotic(self) -> bool:
        """True when the continuum laws apply (``a > 0`` and ``a + b > 1``)."""
        return self.a > 0 and self.a + self.b > 1

    def require_asymptotic(self) -> None:
        """Raise ``ValueError`` unless ``a > 0`` and ``a + b > 1``.

        >>> PowerLawSpectrum(0.5, 0.25, 8).require_asymptotic()
        Traceback (most recent call last):
        ...
        ValueError: (a, b)=(0.5, 0.25): the asymptotic laws need a > 0 and a + b > 1
        """
        if not self.asymptotic:
            raise ValueError(f"(a, b)=({self.a!r}, {self.b!r}): the asymptotic laws need a > 0 and a + b > 1")


MAX_DEPTHS = 10_000  # depths in one call of a law (about 3 s at d = 100)


def as_depths(L, name: str = "L") -> tuple[np.ndarray, bool]:
    """Validate depths: return ``(int64 array of depths >= 1, was_scalar)``.

    >>> as_depths([8, 32])
    (array([ 8, 32]), False)
    """
    if isinstance(L, Sized) and not isinstance(L, str | bytes) and len(L) > MAX_DEPTHS:  # before it is built
        raise ValueError(
            f"{name}: {len(L)} depths; at most {MAX_DEPTHS:,} in one call (each is a pass over the spectrum)"
        )
    scalar = np.ndim(L) == 0
    arr = np.atleast_1d(np.asarray(L))
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"{name}={L!r}: must be a positive integer or a non-empty 1-d list of them")
    if arr.size > MAX_DEPTHS:
        raise ValueError(
            f"{name}: {arr.size} depths; at most {MAX_DEPTHS:,} in one call (each is a pass over the spectrum)"
        )
    out = np.array(
        [check_int(name, v.item() if hasattr(v, "item") else v, lo=1, hi=10**7) for v in arr], dtype=np.int64
    )
    return out, scalar

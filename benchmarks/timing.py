"""Clocks and FLOP counts shared by the benchmarks (a helper, not part of the installed package).

The clock is the process CPU time unless a caller asks for wall time: with every thread pool at
one thread this is the single-core cost of a call, and, unlike wall time, it does not count the
time the process waits while other work occupies the shared cores.
"""

from __future__ import annotations

import statistics
import time

import numpy as np


def median_seconds(fn, repeats: int, warmup: int = 2, min_sample: float = 0.05, wall: bool = False) -> float:
    """Median over ``repeats`` samples of the time of one call.

    The clock is the process CPU time (``time.process_time``) unless ``wall``: with every pool at
    one thread this is the single-core time of the call, and, unlike wall time, it does not count
    the time the process waits while other work occupies the shared cores. Each sample averages
    enough calls to last at least ``min_sample`` seconds.
    """
    clock = time.perf_counter if wall else time.process_time
    for _ in range(warmup):
        fn()
    t0 = clock()
    fn()
    one = clock() - t0
    inner = max(1, int(min_sample / max(one, 1e-6)))
    samples = []
    for _ in range(repeats):
        t0 = clock()
        for _ in range(inner):
            fn()
        samples.append((clock() - t0) / inner)
    return statistics.median(samples)


def paired_seconds(fn_a, fn_b, repeats: int, warmup: int = 2, min_sample: float = 0.05, wall: bool = False):
    """Medians of the per-call time of two functions, their samples interleaved (a, b, a, b, ...)
    so that both see the same conditions on a shared machine. Clock as in ``median_seconds``."""
    clock = time.perf_counter if wall else time.process_time
    inner = []
    for fn in (fn_a, fn_b):
        for _ in range(warmup):
            fn()
        t0 = clock()
        fn()
        inner.append(max(1, int(min_sample / max(clock() - t0, 1e-6))))
    samples = ([], [])
    for _ in range(repeats):
        for j, fn in enumerate((fn_a, fn_b)):
            t0 = clock()
            for _ in range(inner[j]):
                fn()
            samples[j].append((clock() - t0) / inner[j])
    return statistics.median(samples[0]), statistics.median(samples[1])


def gemm_rate(dtype, n: int = 512, repeats: int = 7) -> float:
    """Single-thread NumPy matmul rate of n x n matrices, in FLOP/s (2 n^3 FLOPs per product)."""
    rng = np.random.default_rng(0)
    a = rng.standard_normal((n, n)).astype(dtype)
    b = rng.standard_normal((n, n)).astype(dtype)
    out = np.empty((n, n), dtype)
    t = median_seconds(lambda: np.matmul(a, b, out=out), repeats, warmup=3, min_sample=0.2)
    return 2.0 * n**3 / t


def step_flops(model: str, B: int, P: int, d: int, N: int, L: int, context_update: bool = False) -> float:
    """Matrix-product FLOPs of one step of the numba algorithm (forward + backward), analytically.

    Linear (per context; ``u = X^T y / P`` costs 2 P d, ``Sxx = X^T X / P`` 2 P d^2 but is formed
    only when L > 1 (only the context updates read it), each of the L - 1 context updates costs
    3 products forward (C Et, (C Et) Sxx, W_v T2) and 5 backward (W_v^T G, G T2^T, dT2 Sxx,
    C^T dT1, dT1 Et^T))::

        B [2 P d + 2 P d^2 [L > 1] + (L - 1)(10 N d^2 + 6 N^2 d) + L (2 d^2 + 4 N d)]

    Softmax core (per context; X W_x^T and its backward 4 P d N, scores / dU / dX 6 L P N, the
    query-key maps applied to the test token and their backward 6 L N^2)::

        B [4 P d N + 6 L P N + 6 L N^2 + 2 L P]

    Softmax with ``context_update`` (``ctx_pass``): the core, except that each layer's test token
    reads and backs through its values V_l (p . V_l and V_l dh, 4 L P N, not p . y); the values
    V_l = H W_v^T with dW_v and dH W_v, 6 L P N^2 (every layer: the last one's test token reads
    them too); and per moving layer (every one but the last) the context attention, forward
    G = Xhat M_l, G Xhat^T, A V_l and backward A^T dH, dH V^T, dA Xhat, dA^T G, Xhat^T dG, dG M_l^T,
    12 P^2 N + 6 P N^2::

        B [4 P d N + 6 L P N + 6 L N^2 + 4 L P N + 6 L P N^2 + (L - 1)(12 P^2 N + 6 P N^2)]

    Exponentials, RMS norms and the Adam update (O(params)) are not counted.

    >>> step_flops("linear", 1, 1, 1, 1, 1), step_flops("linear", 1, 1, 1, 1, 2)
    (8.0, 32.0)
    >>> step_flops("softmax", 1, 1, 1, 1, 1, context_update=True), step_flops("softmax", 1, 1, 1, 1, 2, context_update=True)
    (26.0, 66.0)
    """
    if model == "linear":
        return float(
            B
            * (
                2 * P * d
                + 2 * P * d * d * (L > 1)
                + (L - 1) * (10 * N * d * d + 6 * N * N * d)
                + L * (2 * d * d + 4 * N * d)
            )
        )
    core = 4 * P * d * N + 6 * L * P * N + 6 * L * N * N
    if context_update:
        return float(B * (core + 4 * L * P * N + 6 * L * P * N * N + (L - 1) * (12 * P * P * N + 6 * P * N * N)))
    return float(B * (core + 2 * L * P))

"""Contexts of the in-context regression tasks (SCIENCE.md section 2), generated fast and reproducibly.

One context: a fresh Haar rotation ``O`` (QR of a Gaussian matrix, the columns of Q multiplied by
``sign(diag R)``), ``Sigma = O diag(lam) O^T``, ``Omega = O diag(omega) O^T``,
``beta ~ N(0, Omega)``, ``x_1..x_P, x_test ~ N(0, Sigma)`` and labels ``y_i = beta . x_i``. Targets:

- ``easy-exact``: ``x_test := x_j`` for a uniform ``j``, ``y* = y_j``, ``sel = [[j]]``;
- ``easy-fresh``: ``y* = beta . x_test``, ``sel`` empty ``(n, 0)``;
- ``topk``: ``S_k`` = the ``k`` context tokens of largest cosine similarity to ``x_test`` (``sel``, in
  decreasing similarity; exact ties, possible only at d = 1, go to the lower index), ``y*`` and
  ``t`` the means of ``y`` and ``x`` over ``S_k``.

Speed. Gaussian sampling dominates (``n P d`` numbers per batch), so normals are made by a
ziggurat (256 layers, Marsaglia and Tsang) in numba from the raw 64-bit output of the caller's
``numpy`` generator, about twice as fast as ``Generator.standard_normal``. The rare
samples outside the ziggurat's rectangles are finished serially from a second block of raw bits, so
the result depends only on the generator's state, never on the thread count. Inputs are then
``X = Z diag(sqrt(lam)) O^T`` per context (one small GEMM).
"""

from __future__ import annotations

import math

import numba
import numpy as np
from numba import njit, prange

from depthscale.sims.batch import Batch
from depthscale.sims.config import TaskConfig, rng_for
from depthscale.theory.validate import check_choice, check_int

EVAL_BLOCK = 256  # evaluation contexts are made in fixed blocks, so they do not depend on the chunk size
_TASK_CODE = {"easy-exact": 0, "easy-fresh": 1, "topk": 2}

# ---------------------------------------------------------------------------------------------
# Ziggurat tables for the standard normal, unnormalised density f(x) = exp(-x^2 / 2), 256 layers.
_ZIG_R = 3.6541528853610088  # right edge of the base layer (Marsaglia & Tsang 2000)


def _ziggurat_tables():
    r = _ZIG_R
    f = lambda x: math.exp(-0.5 * x * x)  # noqa: E731
    # every layer (the base including the tail) has area v
    v = r * f(r) + math.sqrt(math.pi / 2) * math.erfc(r / math.sqrt(2))
    x = np.empty(257)
    x[0] = v / f(r)
    x[1] = r
    for i in range(1, 256):
        arg = v / x[i] + f(x[i])
        x[i + 1] = math.sqrt(-2.0 * math.log(arg)) if arg < 1.0 else 0.0
    x[256] = 0.0
    fx = np.exp(-0.5 * x * x)
    return x, fx


_ZX, _ZF = _ziggurat_tables()


@njit(cache=True, parallel=True, nogil=True)
def _zig_fast(raw, out, idx, cnt, zx):
    # Fast path: one 64-bit word -> layer (8 bits), sign (1 bit), uniform (53 bits). Words outside
    # their layer's rectangle are listed, chunk by chunk, in idx[lo : lo + cnt[c]].
    n = raw.size
    nch = cnt.size
    chunk = (n + nch - 1) // nch
    for c in prange(nch):
        lo = c * chunk
        hi = min(n, lo + chunk)
        nc = 0
        for m in range(lo, hi):
            w = raw[m]
            i = np.int64(w & np.uint64(255))
            s = 1.0 - 2.0 * np.float64(np.int64((w >> np.uint64(8)) & np.uint64(1)))
            x = np.float64(np.int64(w >> np.uint64(11))) * 1.1102230246251565e-16 * zx[i]
            out[m] = s * x
            if x >= zx[i + 1]:
                idx[lo + nc] = m
                nc += 1
        cnt[c] = nc


@njit(cache=True, nogil=True)
def _zig_fixup(raw, out, idx, cnt, pool, zx, zf):
    # The ~1.5 % of words outside a rectangle: finish them (wedge or tail test, restarts) with fresh
    # words from `pool`, consumed in order. Returns the words used, or -1 if the pool ran out.
    p = 0
    npool = pool.size
    nch = cnt.size
    chunk = (raw.size + nch - 1) // nch
    for c in range(nch):
        for e in range(cnt[c]):
            m = idx[c * chunk + e]
            w = raw[m]
            while True:
                i = np.int64(w & np.uint64(255))
                s = 1.0 - 2.0 * np.float64(np.int64((w >> np.uint64(8)) & np.uint64(1)))
                x = np.float64(np.int64(w >> np.uint64(11))) * 1.1102230246251565e-16 * zx[i]
                if x < zx[i + 1]:
                    out[m] = s * x
                    break
                if i == 0:
                    # tail beyond r (Marsaglia): x = r + a, a ~ Exp(rate r) thinned by exp(-a^2/2)
                    while True:
                        if p + 2 > npool:
                            return -1
                        u1 = 1.0 - np.float64(np.int64(pool[p] >> np.uint64(11))) * 1.1102230246251565e-16
                        u2 = 1.0 - np.float64(np.int64(pool[p + 1] >> np.uint64(11))) * 1.1102230246251565e-16
                        p += 2
                        a = -math.log(u1) / zx[1]
                        b = -math.log(u2)
                        if 2.0 * b > a * a:
                            out[m] = s * (zx[1] + a)
                            break
                    break
                if p + 2 > npool:
                    return -1
                u2 = np.float64(np.int64(pool[p] >> np.uint64(11))) * 1.1102230246251565e-16
                p += 1
                if zf[i] + u2 * (zf[i + 1] - zf[i]) < math.exp(-0.5 * x * x):
                    out[m] = s * x
                    break
                w = pool[p]  # rejected in the wedge: start again with a fresh word
                p += 1
    return p


def standard_normal(rng: np.random.Generator, n: int, threads: int = 1) -> np.ndarray:
    """``n`` standard normal float64 numbers from the raw bits of ``rng`` (ziggurat, numba).

    Deterministic in the state of ``rng`` and independent of ``threads``.

    Examples
    --------
    >>> z = standard_normal(np.random.default_rng(0), 100_000)
    >>> bool(abs(z.mean()) < 0.02 and abs(z.var() - 1) < 0.02)
    True
    """
    n = check_int("n", n, lo=0)
    threads = _threads(threads)
    raw = rng.bit_generator.random_raw(n)
    out = np.empty(n)
    idx = np.empty(n, dtype=np.int64)
    cnt = np.zeros(max(1, threads), dtype=np.int64)
    _run_parallel(_zig_fast, threads, raw, out, idx, cnt, _ZX)
    pool = rng.bit_generator.random_raw(max(1024, n // 16))
    while _zig_fixup(raw, out, idx, cnt, pool, _ZX, _ZF) < 0:  # astronomically rare: extend the pool
        pool = np.concatenate([pool, rng.bit_generator.random_raw(pool.size)])
    return out


def _threads(threads) -> int:
    threads = check_int("threads", threads, lo=1)
    return min(threads, numba.config.NUMBA_NUM_THREADS)


def _run_parallel(kernel, threads, *args):
    old = numba.get_num_threads()
    numba.set_num_threads(threads)
    try:
        return kernel(*args)
    finally:
        numba.set_num_threads(old)


# ---------------------------------------------------------------------------------------------
@njit(cache=True, parallel=True, nogil=True)
def _contexts(Zall, jidx, sl, so, code, k, X, y, xt_out, target, t, beta, O, sel):
    # Zall[b] holds, in order: the d x d Gaussian matrix G,
    # beta's d normals, the P x d context normals, the query's d normals.
    n, P, d = X.shape
    for b in prange(n):
        zb = Zall[b]
        # QR of the Gaussian matrix G = zb[:d*d] (LAPACK); Qt rows = columns of Q times sign(diag R).
        Q, R = np.linalg.qr(zb[: d * d].reshape((d, d)))
        Qt = np.empty((d, d))
        for j in range(d):
            sg = 1.0 if R[j, j] >= 0 else -1.0
            for q in range(d):
                Qt[j, q] = sg * Q[q, j]
        off = d * d
        # beta = O (sqrt(omega) * g) = sum_k sqrt(omega_k) g_k O[:, k]
        bt = np.zeros(d)
        for kk in range(d):
            c = so[kk] * zb[off + kk]
            for q in range(d):
                bt[q] += c * Qt[kk, q]
        off += d
        # X = Z diag(sqrt(lam)) O^T: fold the scale into the d x d factor, then one GEMM per context
        W = np.empty((d, d))
        for kk in range(d):
            for q in range(d):
                W[kk, q] = sl[kk] * Qt[kk, q]
        Xb = np.dot(zb[off : off + P * d].reshape((P, d)), W)
        off += P * d
        yb = np.dot(Xb, bt)
        X[b] = Xb
        y[b] = yb
        for q in range(d):
            beta[b, q] = bt[q]
            for r_ in range(d):
                O[b, q, r_] = Qt[r_, q]
        if code == 0:  # easy-exact
            j = jidx[b]
            for q in range(d):
                xt_out[b, q] = Xb[j, q]
                t[b, q] = Xb[j, q]
            target[b] = yb[j]
            sel[b, 0] = j
            continue
        xq = np.zeros(d)
        for kk in range(d):
            c = sl[kk] * zb[off + kk]
            for q in range(d):
                xq[q] += c * Qt[kk, q]
        for q in range(d):
            xt_out[b, q] = xq[q]
        if code == 1:  # easy-fresh
            s = 0.0
            for q in range(d):
                s += bt[q] * xq[q]
                t[b, q] = xq[q]
            target[b] = s
            continue
        # top-k by cosine similarity (the query norm is common to all tokens, so it is dropped)
        cs = np.empty(P)
        for i in range(P):
            dot = 0.0
            nn = 0.0
            for q in range(d):
                dot += Xb[i, q] * xq[q]
                nn += Xb[i, q] * Xb[i, q]
            cs[i] = -dot / math.sqrt(nn) if nn > 0 else 0.0
        if k <= 8:  # partial selection: k scans beat a full sort for small k (ties: lower index)
            order = np.empty(k, dtype=np.int64)
            for r_ in range(k):
                best = -1
                for i in range(P):
                    if best < 0 or cs[i] < cs[best]:
                        best = i
                order[r_] = best
                cs[best] = np.inf
        else:
            order = np.argsort(cs, kind="mergesort")  # stable: exact ties go to the lower index
        s = 0.0
        tv = np.zeros(d)
        for r_ in range(k):
            i = order[r_]
            sel[b, r_] = i
            s += yb[i]
            for q in range(d):
                tv[q] += Xb[i, q]
        target[b] = s / k
        for q in range(d):
            t[b, q] = tv[q] / k


def make_batch(task: TaskConfig, n: int, rng: np.random.Generator, dtype=np.float64, threads: int = 1) -> Batch:
    """Draw ``n`` independent contexts of ``task`` (see the module docstring).

    Parameters
    ----------
    task : TaskConfig
    n : int, number of contexts (>= 1).
    rng : numpy.random.Generator; the batch is a deterministic function of its state.
    dtype : numpy.float64 (default) or numpy.float32 for ``X, y, x_test, target, t, beta, O``.
    threads : numba threads used (the numbers do not depend on it).

    Returns
    -------
    Batch with ``X (n,P,d)``, ``y (n,P)``, ``x_test (n,d)``, ``target (n,)``, ``t (n,d)``,
    ``beta (n,d)``, ``O (n,d,d)``, ``sel (n,k)`` (``(n,1)`` easy-exact, ``(n,0)`` easy-fresh).

    Examples
    --------
    >>> b = make_batch(TaskConfig(task="topk", k=2, d=4, P=8), 3, np.random.default_rng(0))
    >>> b.X.shape, b.sel.shape
    ((3, 8, 4), (3, 2))
    >>> bool(np.allclose(b.target, (b.beta * b.t).sum(axis=1)))
    True
    """
    if not isinstance(task, TaskConfig):
        raise ValueError(f"task={task!r}: must be a TaskConfig")
    n = check_int("n", n, lo=1)
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"rng={rng!r}: must be a numpy.random.Generator")
    dt = np.dtype(dtype)
    check_choice("dtype", dt.name, ("float64", "float32"))
    threads = _threads(threads)
    d, P = task.d, task.P
    code = _TASK_CODE[task.task]
    k = task.k if code == 2 else (1 if code == 0 else 0)
    m = d * d + d + P * d + d
    Z = standard_normal(rng, n * m, threads).reshape(n, m)
    jidx = rng.integers(0, P, size=n) if code == 0 else np.zeros(n, dtype=np.int64)
    X = np.empty((n, P, d), dtype=dt)
    y = np.empty((n, P), dtype=dt)
    xt = np.empty((n, d), dtype=dt)
    target = np.empty(n, dtype=dt)
    t = np.empty((n, d), dtype=dt)
    beta = np.empty((n, d), dtype=dt)
    O = np.empty((n, d, d), dtype=dt)
    sel = np.zeros((n, k), dtype=np.int64)
    _run_parallel(
        _contexts, threads, Z, jidx.astype(np.int64), np.sqrt(task.lam), np.sqrt(task.omega), code, k,
        X, y, xt, target, t, beta, O, sel,
    )
    return Batch(X, y, xt, target, t, beta, O, sel)


def batches(task: TaskConfig, n: int, rng: np.random.Generator, chunk: int = 1024, dtype=np.float64, threads: int = 1):
    """Yield ``n`` contexts of ``task`` in ``Batch`` chunks of at most ``chunk``, independent of ``chunk``.

    Contexts are made in blocks of ``EVAL_BLOCK`` from successive children of ``rng`` (``rng.spawn``),
    so context ``i`` is the same for every ``chunk`` and every ``n > i``.

    Examples
    --------
    >>> task = TaskConfig(d=4, P=8)
    >>> a = np.concatenate([b.target for b in batches(task, 300, np.random.default_rng(1), chunk=7)])
    >>> c = np.concatenate([b.target for b in batches(task, 300, np.random.default_rng(1), chunk=512)])
    >>> bool(np.array_equal(a, c))
    True
    """
    if not isinstance(task, TaskConfig):
        raise ValueError(f"task={task!r}: must be a TaskConfig")
    n = check_int("n", n, lo=1)
    chunk = check_int("chunk", chunk, lo=1)
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"rng={rng!r}: must be a numpy.random.Generator")
    check_choice("dtype", np.dtype(dtype).name, ("float64", "float32"))
    threads = _threads(threads)
    return _batches(task, n, rng, chunk, dtype, threads)


def _batches(task, n, rng, chunk, dtype, threads):
    pending: list[Batch] = []
    have = 0
    made = 0
    while made < n:
        while have < min(chunk, n - made):
            blk = make_batch(task, EVAL_BLOCK, rng.spawn(1)[0], dtype=dtype, threads=threads)
            pending.append(blk)
            have += len(blk)
        size = min(chunk, n - made)
        joined = pending[0] if len(pending) == 1 else _concat(pending)
        yield joined.slice(0, size)
        rest = joined.slice(size, len(joined))
        pending = [rest] if len(rest) else []
        have = len(rest)
        made += size


def eval_batches(task: TaskConfig, n: int, seed: int, chunk: int = 1024, dtype=np.float64, threads: int = 1):
    """Yield the ``n`` evaluation contexts of ``(task, seed)`` in chunks of at most ``chunk``.

    They depend only on ``task`` and ``seed`` (``rng_for(task, seed, "eval")``), not on ``chunk``,
    so models of different depth, and the baselines, are measured on the same contexts.

    Examples
    --------
    >>> sum(len(b) for b in eval_batches(TaskConfig(d=4, P=8), 1000, seed=0, chunk=256))
    1000
    """
    return batches(task, n, rng_for(task, seed, "eval"), chunk=chunk, dtype=dtype, threads=threads)


def _concat(parts: list[Batch]) -> Batch:
    fields = ("X", "y", "x_test", "target", "t", "beta", "O", "sel")
    return Batch(*(np.concatenate([getattr(p, f) for p in parts]) for f in fields))

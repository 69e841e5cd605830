"""Contexts of the in-context regression tasks (docs/sources.md, Data), generated fast and reproducibly.

One context: a fresh Haar rotation ``O`` (QR of a Gaussian matrix, the columns of Q multiplied by
``sign(diag R)``), ``Sigma = O diag(lam) O^T``, ``Omega = O diag(omega) O^T``,
``beta ~ N(0, Omega)``, ``x_1..x_P, x_test ~ N(0, Sigma)`` and labels ``y_i = beta . x_i``. Targets:

- ``easy-exact``: ``x_test := x_j`` for a uniform ``j``, ``y* = y_j``, ``sel = [[j]]``;
- ``easy-fresh``: ``y* = beta . x_test``, ``sel`` empty ``(n, 0)``;
- ``topk``: ``S_k`` = the ``k`` context tokens of largest cosine similarity to ``x_test`` (``sel``, in
  decreasing similarity; exact ties, possible only at d = 1, go to the lower index), ``y*`` and
  ``t`` the means of ``y`` and ``x`` over ``S_k``.

A task a user registered (sims/task_registry.py) is drawn by its own ``make_batch``; its batch is
checked field by field and cast to the dtype asked for, so everything downstream reads one kind
of batch.

Speed and reproducibility. Context b has its own counter-based stream (SplitMix64 output at
counter j of two 64-bit keys drawn from the caller's ``numpy`` generator), turned into normals by a
256-layer ziggurat (Marsaglia and Tsang, signed form) inside the per-context loop: no batch-sized
buffer of random numbers, nothing shared between contexts, so a batch is the same for any thread
count. The Haar rotation is Gram-Schmidt (twice) on the rows of a Gaussian block, i.e. Q of the QR
factorisation with positive diag(R). Inputs are then ``X = Z diag(sqrt(lam)) O^T`` per context
(one small GEMM). ``CONTEXTS_VERSION`` (sims/config.py) names this scheme.
"""

from __future__ import annotations

import math

import numpy as np

from ..theory._validate import check_choice, check_int
from .batch import Batch
from .config import TaskConfig, rng_for
from .jit import njit, prange
from .task_registry import Task, get_task
from .threads import numba_threads, run_parallel

EVAL_BLOCK = 256  # evaluation contexts are made in fixed blocks, so they do not depend on the chunk size
_FIELDS = ("X", "y", "x_test", "target", "t", "beta", "O", "sel")

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


# Counter-based uniform words: word j of the stream with key k is SplitMix64's output
# mix(k + (j + 1) * golden). Any word can be computed on its own, so a batch is the same whatever
# the thread count and however the work is split, and no state is carried between numbers.
_GOLD = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_U53 = 1.1102230246251565e-16  # 2**-53


@njit(inline="always")
def _word(key, j):
    z = key + np.uint64(j + 1) * _GOLD
    z = (z ^ (z >> np.uint64(30))) * _M1
    z = (z ^ (z >> np.uint64(27))) * _M2
    return z ^ (z >> np.uint64(31))


_ZXS = _ZX * 2.0**-52  # layer widths scaled for a signed 53-bit integer


@njit(inline="always")
def _layer(w):
    # one word -> ziggurat layer i (low 8 bits) and a candidate x uniform on (-x_i, x_i) from the
    # top 53 bits read as a signed integer (Marsaglia and Tsang's signed form)
    i = np.int64(w & np.uint64(255))
    return i, np.float64(np.int64(w) >> np.int64(11)) * _ZXS[i]


@njit(cache=True, nogil=True)
def _normal_slow(w, key2, j):
    # The ~1.2 % of words outside their layer's rectangle: wedge or tail test, restarting with
    # words of number j's own sub-stream of key2 (so every number stays computable on its own).
    sub = _word(key2, j)
    t = 0
    while True:
        i, x = _layer(w)
        ax = abs(x)
        if ax < _ZX[i + 1]:
            return x
        if i == 0:
            # tail beyond r (Marsaglia): |x| = r + a, a ~ Exp(rate r) thinned by exp(-a^2/2)
            while True:
                u1 = 1.0 - np.float64(np.int64(_word(sub, t) >> np.uint64(11))) * _U53
                u2 = 1.0 - np.float64(np.int64(_word(sub, t + 1) >> np.uint64(11))) * _U53
                t += 2
                a = -math.log(u1) / _ZX[1]
                if -2.0 * math.log(u2) > a * a:
                    return math.copysign(_ZX[1] + a, x)
        u = np.float64(np.int64(_word(sub, t) >> np.uint64(11))) * _U53
        t += 1
        if _ZF[i] + u * (_ZF[i + 1] - _ZF[i]) < math.exp(-0.5 * ax * ax):
            return x
        w = _word(sub, t)  # rejected in the wedge: start again with a fresh word
        t += 1


@njit(inline="always")
def _normal(key1, key2, j):
    """Standard normal number j of the stream (key1, key2): ziggurat, 256 layers."""
    w = _word(key1, j)
    i, x = _layer(w)
    if abs(x) < _ZX[i + 1]:
        return x
    return _normal_slow(w, key2, j)


@njit(cache=True, parallel=True, nogil=True)
def _fill_normals(key1, key2, out):
    n = out.size
    nb = (n + 4095) // 4096
    for c in prange(nb):
        for j in range(c * 4096, min(n, c * 4096 + 4096)):
            out[j] = _normal(key1, key2, j)


def standard_normal(rng: np.random.Generator, n: int, threads: int = 1) -> np.ndarray:
    """``n`` standard normal float64 numbers: a ziggurat on a counter-based stream keyed by ``rng``.

    Two words of ``rng`` key the stream; the numbers depend only on them, never on ``threads``.

    Examples
    --------
    >>> z = standard_normal(np.random.default_rng(0), 100_000)
    >>> bool(abs(z.mean()) < 0.02 and abs(z.var() - 1) < 0.02)
    True
    """
    n = check_int("n", n, lo=0)
    threads = numba_threads(threads)
    key1, key2 = rng.bit_generator.random_raw(2)
    out = np.empty(n)
    run_parallel(_fill_normals, threads, key1, key2, out)
    return out


# ---------------------------------------------------------------------------------------------
@njit(cache=True, nogil=True, fastmath=True)
def _gram_schmidt_rows(A):
    # Orthonormalise the rows of A in place: modified Gram-Schmidt, each projection done twice
    # ("twice is enough", so orthogonality holds to rounding even for ill-conditioned A).
    d = A.shape[0]
    for j in range(d):
        for _ in range(2):
            for i in range(j):
                c = 0.0
                for q in range(d):
                    c += A[i, q] * A[j, q]
                for q in range(d):
                    A[j, q] -= c * A[i, q]
        s = 0.0
        for q in range(d):
            s += A[j, q] * A[j, q]
        s = 1.0 / math.sqrt(s)
        for q in range(d):
            A[j, q] *= s


@njit(cache=True, parallel=True, nogil=True)
def _contexts(keys, jidx, sl, so, code, k, X, y, xt_out, target, t, beta, O, sel):
    # Context b's normals come from its own stream keys[b], in order: the d x d Gaussian matrix G,
    # beta's d normals, the P x d context normals, the query's d normals.
    n, P, d = X.shape
    m = d * d + d + P * d + d
    for b in prange(n):
        zb = np.empty(m)
        for j in range(m):
            zb[j] = _normal(keys[b, 0], keys[b, 1], j)
        # Haar rotation: Gram-Schmidt on the rows of the Gaussian block gives Q of the QR
        # factorisation with positive diag(R), exactly Haar-distributed; Qt rows = columns of O.
        Qt = zb[: d * d].copy().reshape((d, d))
        _gram_schmidt_rows(Qt)
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
    threads = numba_threads(threads)
    d, P = task.d, task.P
    entry = get_task(task.task)
    if entry.code is None:
        return _users_batch(entry, task, n, rng, dt)
    code = entry.code
    k = task.k if code == 2 else (1 if code == 0 else 0)
    keys = rng.bit_generator.random_raw(2 * n).reshape(n, 2)
    jidx = rng.integers(0, P, size=n) if code == 0 else np.zeros(n, dtype=np.int64)
    X = np.empty((n, P, d), dtype=dt)
    y = np.empty((n, P), dtype=dt)
    xt = np.empty((n, d), dtype=dt)
    target = np.empty(n, dtype=dt)
    t = np.empty((n, d), dtype=dt)
    beta = np.empty((n, d), dtype=dt)
    O = np.empty((n, d, d), dtype=dt)
    sel = np.zeros((n, k), dtype=np.int64)
    run_parallel(
        _contexts,
        threads,
        keys,
        jidx.astype(np.int64),
        np.sqrt(task.lam),
        np.sqrt(task.omega),
        code,
        k,
        X,
        y,
        xt,
        target,
        t,
        beta,
        O,
        sel,
    )
    return Batch(X, y, xt, target, t, beta, O, sel)


def _users_batch(entry: Task, task: TaskConfig, n: int, rng: np.random.Generator, dt: np.dtype) -> Batch:
    """A user's task's batch, checked (one-line ``ValueError`` naming the task and the field) and cast to ``dt``."""
    assert entry.make_batch is not None  # a user's task has its own make_batch (task_registry)
    b = entry.make_batch(task, n, rng)
    where = f"task={task.task!r}: make_batch(cfg, n={n}, rng)"
    if not isinstance(b, Batch):
        raise ValueError(f"{where} must return a Batch (depthscale.sims.batch.Batch), not a {type(b).__name__}")
    d, P = task.d, task.P
    k = np.shape(b.sel)[1] if np.ndim(b.sel) == 2 else -1
    shapes = {"X": (n, P, d), "y": (n, P), "x_test": (n, d), "target": (n,), "t": (n, d), "beta": (n, d)}
    shapes.update({"O": (n, d, d), "sel": (n, k)})
    out = []
    for name in _FIELDS:
        value = np.asarray(getattr(b, name))
        if value.shape != shapes[name]:
            raise ValueError(f"{where} must give {name} of shape {shapes[name]}, not {value.shape}")
        if name == "sel":
            if value.dtype.kind not in "iu" or (value.size and (value.min() < 0 or value.max() >= P)):
                raise ValueError(f"{where} must give sel as integer indices of context tokens, 0 to P - 1 = {P - 1}")
            out.append(value.astype(np.int64))
            continue
        if not np.all(np.isfinite(value)):
            raise ValueError(f"{where} must give finite {name}")
        out.append(value.astype(dt))
    return Batch(*out)


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
    threads = numba_threads(threads)
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
    so models of different depth, and the reference floors, are measured on the same contexts.

    Examples
    --------
    >>> sum(len(b) for b in eval_batches(TaskConfig(d=4, P=8), 1000, seed=0, chunk=256))
    1000
    """
    return batches(task, n, rng_for(task, seed, "eval"), chunk=chunk, dtype=dtype, threads=threads)


def _concat(parts: list[Batch]) -> Batch:
    return Batch(*(np.concatenate([getattr(p, f) for p in parts]) for f in _FIELDS))

"""Where the softmax model's step goes: each stage of ``softmax_kernels.core_pass`` timed on its own.

Every stage of the per-context loop of ``core_pass`` (the two-stream model, context not updated)
is run alone over the whole batch in its own numba loop, with the kernel's own helpers
(``_rms_rows``, ``_softmax``, ``_rms_rows_back``), shapes and one context's scratch reused (so it
stays in cache, as in the kernel), on one thread; the whole
``core_pass`` call, the rest of ``loss_and_grad`` (NumPy around the kernel) and the Adam update
are timed too. Stages add up to about the kernel (loop overheads and cache effects differ). Times
are process CPU time, medians of interleaved rounds.

Run: ``python benchmarks/profile_softmax.py`` (science setting d = 16, P = 128, batch 1024,
L = 64, float64; ``--help`` for options).
"""

from __future__ import annotations

import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ[_v] = "1"

import argparse  # noqa: E402
import json  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
import scipy.linalg.cython_blas  # noqa: E402,F401
from numba import njit  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402

import depthscale.sims.softmax_model as sm  # noqa: E402
from depthscale.sims.config import ModelConfig, TaskConfig, TrainConfig  # noqa: E402
from depthscale.sims.models import make_model  # noqa: E402
from depthscale.sims.optimizer_registry import Adam  # noqa: E402
from depthscale.sims.softmax_kernels import RMS_EPS, _norm_scratch, _rms_rows, _rms_rows_back, _softmax  # noqa: E402
from depthscale.sims.tasks import make_batch  # noqa: E402

# Each stage loops over the batch like the kernel, with one context's scratch (Xh, Z, dX) reused,
# so its data stays in cache as in core_pass; inputs are per-context slices of the batch.


@njit
def st_embed_gemm(X, WxT, Xh):
    for b in range(X.shape[0]):
        np.dot(X[b], WxT, Xh)


@njit
def st_embed(X, WxT, Xh, r):
    _, S, ones, rowsum, _ = _norm_scratch(Xh)  # r is the caller's
    for b in range(X.shape[0]):
        np.dot(X[b], WxT, Xh)
        _rms_rows(Xh, r, RMS_EPS, S, ones, rowsum)


@njit
def st_scores(U, Xh, Z):
    for b in range(U.shape[0]):
        np.dot(U[b], Xh.T, Z)


@njit
def st_softmax(B, Z):
    L, P = Z.shape
    ib = np.empty(P, np.int64)
    for b in range(B):
        for l in range(L):
            _softmax(Z[l], ib)


@njit
def st_readout(Z, y, s_all):
    for b in range(y.shape[0]):
        np.dot(Z, y[b], s_all[b])


@njit
def st_jacobian(Z, y, s_all, g):
    L, P = Z.shape
    for b in range(y.shape[0]):
        for l in range(L):
            w = 1e-3 * g[l] / L
            s = s_all[b, l]
            for i in range(P):
                Z[l, i] = Z[l, i] * (y[b, i] - s) * w


@njit
def st_dU(Z, Xh, dU):
    for b in range(dU.shape[0]):
        np.dot(Z, Xh, dU[b])


@njit
def st_dX(Z, U, dX):
    for b in range(U.shape[0]):
        np.dot(Z.T, U[b], dX)


@njit
def st_rms_back(B, dX, Xh, r):
    _, S, ones, rowsum, _ = _norm_scratch(dX)
    for b in range(B):
        _rms_rows_back(dX, Xh, r, S, ones, rowsum)


@njit
def st_dWx(dX, X, acc):
    N = dX.shape[1]
    d = X.shape[2]
    tmp = np.empty((N, d), X.dtype)
    for b in range(X.shape[0]):
        np.dot(dX.T, X[b], tmp)
        for a in range(N):
            for k in range(d):
                acc[a, k] += tmp[a, k]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--d", type=int, default=16)
    ap.add_argument("--P", type=int, default=128)
    ap.add_argument("--batch", type=int, default=1024)
    ap.add_argument("--depth", type=int, default=64)
    ap.add_argument("--width", type=int, default=0, help="model width N (ModelConfig.width; 0 means N = d)")
    ap.add_argument("--dtype", default="float64")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--json", action="store_true", help="print one JSON object at the end")
    args = ap.parse_args(argv)
    for name in ("d", "P", "batch", "depth", "rounds"):
        if getattr(args, name) < 1:
            ap.error(f"--{name}={getattr(args, name)}: must be >= 1")
    if args.width != 0 and args.width < args.d:
        ap.error(f"--width={args.width}: must be 0 or >= d={args.d}")
    threadpool_limits(limits=1)
    dt = np.dtype(args.dtype)
    d, P, B, L = args.d, args.P, args.batch, args.depth
    task = TaskConfig(task="topk", k=2, d=d, P=P)
    batch = make_batch(task, B, np.random.default_rng(1), dtype=dt)
    model = make_model(ModelConfig(model="softmax", depth=L, dtype=args.dtype, width=args.width), d)
    N = model.N
    theta = model.init(np.random.default_rng(0))
    opt = Adam(theta.size, TrainConfig(), dt)
    rng = np.random.default_rng(3)
    X, y = batch.X, batch.y
    WxT = np.ascontiguousarray(model.unpack(theta)["W_x"].T)
    U = (0.3 * rng.standard_normal((B, L, N))).astype(dt)
    g = np.ones(L, dt)
    Xh, r = np.empty((P, N), dt), np.empty(P, dt)
    Z, s_all = np.empty((L, P), dt), np.empty((B, L), dt)
    dU, dX, acc = np.empty((B, L, N), dt), np.empty((P, N), dt), np.zeros((N, d), dt)

    # the whole kernel, through a wrapper that times each core_pass call
    kernel_time = [0.0]
    real_core = sm.core_pass

    def timed_core(*a):
        t0 = time.process_time()
        real_core(*a)
        kernel_time[0] += time.process_time() - t0

    grad_holder = {}

    def lg():
        grad_holder["g"] = model.loss_and_grad(theta, batch)[1]

    stages = {
        "X W_x^T (GEMM only)": lambda: st_embed_gemm(X, WxT, Xh),
        "X W_x^T + RMS norm": lambda: st_embed(X, WxT, Xh, r),
        "scores Z = U Xh^T": lambda: st_scores(U, Xh, Z),
        "softmax (L rows of P)": lambda: st_softmax(B, Z),
        "readout p . y (gemv)": lambda: st_readout(Z, y, s_all),
        "softmax Jacobian on y (loop)": lambda: st_jacobian(Z, y, s_all, g),
        "dU = Z Xh": lambda: st_dU(Z, Xh, dU),
        "dX = Z^T U": lambda: st_dX(Z, U, dX),
        "RMS norm backward": lambda: st_rms_back(B, dX, Xh, r),
        "dW_x += dX^T X": lambda: st_dWx(dX, X, acc),
    }
    for fn in stages.values():  # compile
        fn()
    lg()
    sm.core_pass = timed_core
    times = {
        k: []
        for k in list(stages)
        + ["loss_and_grad", "core_pass (in loss_and_grad)", "NumPy around the kernel", "Adam update"]
    }
    try:
        for _ in range(args.rounds):
            for k, fn in stages.items():
                t0 = time.process_time()
                fn()
                times[k].append(time.process_time() - t0)
            kernel_time[0] = 0.0
            t0 = time.process_time()
            lg()
            total = time.process_time() - t0
            times["loss_and_grad"].append(total)
            times["core_pass (in loss_and_grad)"].append(kernel_time[0])
            times["NumPy around the kernel"].append(total - kernel_time[0])
            t0 = time.process_time()
            opt.step(theta.copy(), grad_holder["g"], 1e-4)
            times["Adam update"].append(time.process_time() - t0)
    finally:
        sm.core_pass = real_core
    med = {k: statistics.median(v) for k, v in times.items()}
    step = med["loss_and_grad"] + med["Adam update"]
    print(
        f"softmax {args.dtype}, d = {d}, N = {N}, P = {P}, batch {B}, L = {L}; one thread; medians of {args.rounds} rounds; "
        f"load average {os.getloadavg()[0]:.2f}"
    )
    print(f"{'stage':34} {'ms':>8} {'of step':>8}")
    for k, v in med.items():
        if k == "X W_x^T (GEMM only)":
            continue
        print(f"{k:34} {1e3 * v:>8.2f} {100 * v / step:>7.1f}%")
    print(f"{'(X W_x^T GEMM alone, in the first)':34} {1e3 * med['X W_x^T (GEMM only)']:>8.2f}")
    print(f"{'sum of the kernel stages':34} {1e3 * sum(med[k] for k in stages if k != 'X W_x^T (GEMM only)'):>8.2f}")
    if args.json:
        print(json.dumps({"args": vars(args), "loadavg": os.getloadavg(), "seconds": med}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

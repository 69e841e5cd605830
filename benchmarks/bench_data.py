"""Where ``make_batch`` spends its time: one batch of the top-2 task against its three main pieces.

The generator (sims/tasks.py) draws, per context, ``d^2 + d + P d + d`` normals, turns the d x d
Gaussian block into a Haar rotation (Gram-Schmidt twice, ``_gram_schmidt_rows``) and forms
``X = Z diag(sqrt(lam)) O^T`` (one (P x d) by (d x d) GEMM). Each piece is timed alone over a batch
(the same count of normals from ``standard_normal``, the Gram-Schmidt of ``batch`` Gaussian blocks,
``batch`` GEMMs), next to the whole ``make_batch``; the rest (labels, the top-k selection, copies) is
the difference. One thread (numba and BLAS), process CPU time, the best and the median of
``--repeats`` calls after one untimed call. Written for issue 49: is the Haar rotation per context
what makes data costly at d = 64?

    python benchmarks/bench_data.py                      # d = 64, P = 512, batch 1024
    python benchmarks/bench_data.py --d 16 --P 128
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

os.environ["OPENBLAS_NUM_THREADS"] = "1"  # before NumPy loads

import numba  # noqa: E402
import numpy as np  # noqa: E402

from depthscale.sims.config import TaskConfig  # noqa: E402
from depthscale.sims.tasks import _gram_schmidt_rows, make_batch, standard_normal  # noqa: E402


def timed(fn, repeats: int) -> tuple[float, float]:
    """(best, median) process CPU seconds of ``fn`` over ``repeats`` calls, after one untimed call."""
    fn()
    out = []
    for _ in range(repeats):
        t0 = time.process_time()
        fn()
        out.append(time.process_time() - t0)
    return min(out), statistics.median(out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--d", type=int, default=64)
    ap.add_argument("--P", type=int, default=512)
    ap.add_argument("--batch", type=int, default=1024)
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args(argv)
    numba.set_num_threads(1)
    d, P, n = args.d, args.P, args.batch
    rng = np.random.default_rng(0)
    G = rng.standard_normal((n, d, d))
    Z, W = rng.standard_normal((P, d)), G[0]

    def haar():
        for b in range(n):
            _gram_schmidt_rows(G[b].copy())

    def gemm():
        for b in range(n):
            np.dot(Z, W)

    task = TaskConfig(task="topk", k=2, d=d, P=P)
    pieces = {
        "make_batch": lambda: make_batch(task, n, rng),
        "normals": lambda: standard_normal(rng, n * (d * d + 2 * d + P * d)),
        "Haar (Gram-Schmidt)": haar,
        "X GEMM": gemm,
    }
    print(f"d = {d}, P = {P}, batch {n}, top-2, one thread; ms per batch (best / median of {args.repeats})")
    res = {k: timed(fn, args.repeats) for k, fn in pieces.items()}
    total = res["make_batch"][0]
    for k, (best, med) in res.items():
        print(f"{k:20s} {1e3 * best:8.1f} / {1e3 * med:8.1f}  ({100 * best / total:5.1f} % of make_batch, best)")
    rest = total - sum(v[0] for k, v in res.items() if k != "make_batch")
    print(f"{'rest':20s} {1e3 * rest:8.1f}  ({100 * rest / total:5.1f} %)")
    print(f"load average: {os.getloadavg()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

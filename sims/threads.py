"""Thread pools of the engine: numba threads for the kernels, one BLAS thread always.

The kernels parallelise over chunks of the batch with numba's ``prange`` and call BLAS inside
those loops. A BLAS pool of more than one thread there oversubscribes the cores, and OpenBLAS's
idle threads spin after every call: measured at d = 16, P = 128, batch 1024, L = 64 with two
numba threads, 172 ms of CPU per training step instead of 136 ms. A single BLAS thread also makes
results independent of the machine's core count (no threaded reductions inside BLAS).
"""

from __future__ import annotations

import contextlib
import os
import sys

from ..theory._validate import check_int

CHUNKS = 8  # the kernels split a batch into this many chunks whatever the thread count


def batch_chunks(B: int) -> int:
    """Chunks of a batch of ``B`` contexts. Each chunk sums its own gradient and the chunks are added
    in a fixed order, so a fixed count makes every number independent of the thread count (tested).

    >>> batch_chunks(1024), batch_chunks(3)
    (8, 3)
    """
    return max(1, min(B, CHUNKS))


THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS")


def numba_threads(threads) -> int:
    """``threads`` checked (>= 1) and capped at the size of numba's pool."""
    import numba

    pool = numba.config.NUMBA_NUM_THREADS  # type: ignore[attr-defined]  # numba sets it at import, from the environment
    return min(check_int("threads", threads, lo=1), pool)


def check_threads(value, lo: int) -> int:
    """A ``--threads`` value in ``[lo, numba's pool size]``, refused beyond it (the command line's
    version of :func:`numba_threads`, which caps instead)."""
    import numba

    pool = numba.config.NUMBA_NUM_THREADS  # type: ignore[attr-defined]  # numba sets it at import, from the environment
    return check_int("threads", value, lo=lo, hi=pool)


def run_parallel(kernel, threads: int, *args):
    """Call a numba ``parallel=True`` kernel on ``threads`` threads, restoring the pool size after."""
    import numba

    old = numba.get_num_threads()
    numba.set_num_threads(threads)
    try:
        return kernel(*args)
    finally:
        numba.set_num_threads(old)


@contextlib.contextmanager
def one_blas_thread():
    """Every BLAS pool at one thread inside the block (NumPy's and the one numba's ``np.dot`` uses)."""
    import scipy.linalg.cython_blas  # noqa: F401 - load numba's BLAS so the limit reaches it
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1, user_api="blas"):
        yield


def limit_worker_threads(set_env: bool = False) -> None:
    """A sweep worker: one numba and one BLAS thread for the whole process (it runs one job at a time).

    ``set_env`` also sets the thread variables (for a fresh worker process). ``NUMBA_NUM_THREADS``
    is set to 1 only if numba has not been imported: once it has, it keeps the pool size numba read
    at import, because every compilation reloads numba's configuration from the environment and
    refuses a changed pool size once the threads run (a spawned worker imports numba with the
    package, so on a cold cache its first compilation failed). ``set_num_threads(1)`` below limits
    the work to one thread either way.
    """
    if set_env:
        for var in THREAD_VARS:
            os.environ[var] = "1"
        if "numba" in sys.modules:
            os.environ["NUMBA_NUM_THREADS"] = str(sys.modules["numba"].config.NUMBA_NUM_THREADS)
    import scipy.linalg.cython_blas  # noqa: F401
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=1)
    import numba  # after the variables: numba reads NUMBA_NUM_THREADS when it starts its threads

    numba.set_num_threads(1)

"""A repeat run of the JAX engine with and without its persistent compilation cache: the wall time of
``depthscale simulate --engine jax`` in a fresh process with the cache off (``DEPTHSCALE_JAX_CACHE=0``:
every program compiled) against one with a warm cache (the programs loaded), interleaved, one run.

    python benchmarks/jax_cache.py --rounds 3

The cache goes to a temporary folder (``XDG_CACHE_HOME``; numba's kernel cache stays where it is, so
its kernels load in every process); XLA runs on one CPU thread, as in ``jax_seeds.py``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=3, help="off / warm pairs (default 3)")
    p.add_argument("--d", type=int, default=8)
    p.add_argument("--P", type=int, default=32)
    p.add_argument("--depth", type=int, default=4)
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--steps", type=int, default=256)
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)
    if args.rounds < 1:
        p.error(f"--rounds={args.rounds}: must be >= 1")

    from depthscale.sims import jit  # noqa: F401 - sets NUMBA_CACHE_DIR, which the children inherit

    cmd = [sys.executable, "-m", "depthscale.derivations.cli.app", "simulate", "--engine", "jax"]
    cmd += ["--d", str(args.d), "--P", str(args.P), "--depth", str(args.depth), "--batch", str(args.batch)]
    # cosine to the cap (window = steps): both runs train every step
    cmd += ["--steps", str(args.steps), "--window", str(args.steps), "--threads", "1", "--quiet"]
    with tempfile.TemporaryDirectory() as tmp:
        env = {
            **os.environ,
            "XDG_CACHE_HOME": tmp,
            "XLA_FLAGS": "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1",
        }
        env.pop("JAX_COMPILATION_CACHE_DIR", None)

        def timed(switch: str) -> float:
            t0 = time.perf_counter()
            subprocess.run(cmd, env={**env, "DEPTHSCALE_JAX_CACHE": switch}, check=True, capture_output=True)
            return time.perf_counter() - t0

        cold = timed("1")  # fills the cache (and compiles, as a run without it)
        files = [f for f in Path(tmp).rglob("*") if f.is_file()]
        size = sum(f.stat().st_size for f in files)
        off, warm = [], []
        for _ in range(args.rounds):
            off.append(timed("0"))
            warm.append(timed("1"))
        after = [f for f in Path(tmp).rglob("*") if f.is_file()]
    result = {
        "command": " ".join(cmd[2:]),
        "first_run_filling_the_cache_s": round(cold, 2),
        "cache_files": len(files),
        "cache_bytes": size,
        "cache_files_after_warm_runs": len(after),
        "off_s": [round(t, 2) for t in off],
        "warm_s": [round(t, 2) for t in warm],
        "ratio_warm_over_off": round(statistics.median(warm) / statistics.median(off), 3),
        "load_average": os.getloadavg(),
    }
    for k, v in result.items():
        print(f"{k}: {v}")
    if args.json:
        print(json.dumps(result))


if __name__ == "__main__":
    main()

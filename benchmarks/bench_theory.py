"""Running time of the theory side: ``predict linear`` at full scale and the linear-floor Monte Carlo.

1. ``depthscale predict linear --a 2 --b 1 --d 1000000 --depths 1,2,...,64 --json``, timed as an
   in-process call of the command-line entry point (output captured); the first call (which also
   imports the theory modules) is reported apart from the median of the following calls.
2. Theory at full scale, numerics only: ``linear_law_columns`` (the table ``predict linear`` prints) for
   (a, b) = (2, 1) and depths 1..64 at d = 10^6 and 10^7, each law timed apart, on a fresh
   spectrum per call (the mode rules are cached across calls, as in one process). ``--large``
   adds one depth L = 4096 at d = 10^7.
3. ``depthscale.theory.floor.linear_floor`` at d = 128, P = 1024, k = 2, 3000 contexts (the
   paper's scale), spectrum (a, b) = (1, 1), default degree and queries (``--no-floor`` skips it).

Both run with one BLAS thread by default (``--threads``); wall and CPU seconds are reported.

Run: ``python benchmarks/bench_theory.py`` (``--json`` for a JSON dump).
"""

from __future__ import annotations

import os

UNSET = [v for v in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE") if os.environ.pop(v, None) is not None]

import argparse  # noqa: E402
import contextlib  # noqa: E402
import io  # noqa: E402
import json  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402

from threadpoolctl import threadpool_limits  # noqa: E402

PREDICT = [
    "predict",
    "linear",
    "--a",
    "2",
    "--b",
    "1",
    "--d",
    "1000000",
    "--depths",
    ",".join(map(str, range(1, 65))),
    "--json",
]
FULL_SCALE = (10**6, 10**7)


def timed(fn):
    """(wall seconds, CPU seconds, result) of one call."""
    w, c = time.perf_counter(), time.process_time()
    out = fn()
    return time.perf_counter() - w, time.process_time() - c, out


def run_predict():
    from depthscale.derivations.cli.app import main

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        code = main(PREDICT)
    if code != 0:
        raise RuntimeError(f"predict exited with {code}")
    return json.loads(buf.getvalue())


def full_scale(d: int, depths) -> dict:
    """Wall and CPU seconds of the whole ``linear_law_columns`` table and of each law at (a, b) = (2, 1)."""
    from depthscale.theory.equal_step import gamma_opt, r_con
    from depthscale.theory.free_poly import free_discrete
    from depthscale.theory.linear_laws import linear_law_columns
    from depthscale.theory.spectra import PowerLawSpectrum

    def spec():
        return PowerLawSpectrum(2.0, 1.0, d)

    out = {"d": d, "depths": [int(depths[0]), int(depths[-1])] if len(depths) > 1 else [int(depths[0])]}
    out["table"] = timed(lambda: linear_law_columns(spec(), depths))[:2]
    out["constrained"] = timed(lambda: r_con(spec(), depths))[:2]
    out["gamma_opt"] = timed(lambda: gamma_opt(spec(), depths))[:2]
    out["free_discrete"] = timed(lambda: free_discrete(spec(), depths))[:2]
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3, help="timed calls of predict after the first")
    ap.add_argument("--floor-repeats", type=int, default=1, help="timed calls of linear_floor")
    ap.add_argument("--contexts", type=int, default=3000)
    ap.add_argument("--threads", type=int, default=1, help="BLAS threads")
    ap.add_argument("--large", action="store_true", help="also L = 4096 at d = 10^7")
    ap.add_argument("--no-floor", dest="floor", action="store_false", help="skip the linear-floor Monte Carlo")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    import numpy  # noqa: F401 - load BLAS so the limit applies to it

    threadpool_limits(limits=args.threads)

    first = timed(run_predict)
    rest = [timed(run_predict) for _ in range(args.repeats)]
    pred = {
        "first_wall_s": first[0],
        "first_cpu_s": first[1],
        "median_wall_s": statistics.median(r[0] for r in rest) if rest else None,
        "median_cpu_s": statistics.median(r[1] for r in rest) if rest else None,
        "zeta": first[2].get("zeta"),
    }

    scale = [full_scale(d, list(range(1, 65))) for d in FULL_SCALE]
    if args.large:
        scale.append(full_scale(10**7, [4096]))

    floor = None
    if args.floor:
        from depthscale.theory.floor import linear_floor

        fl = [
            timed(lambda: linear_floor(1.0, 1.0, k=2, d=128, P=1024, contexts=args.contexts, seed=0))
            for _ in range(args.floor_repeats)
        ]
        res = fl[0][2]
        floor = {
            "median_wall_s": statistics.median(r[0] for r in fl),
            "median_cpu_s": statistics.median(r[1] for r in fl),
            "floor": res.floor,
            "stderr": res.stderr,
            "contexts": args.contexts,
            "a": 1.0,
            "b": 1.0,
        }

    print(
        f"unset: {', '.join(UNSET) if UNSET else 'none'}; BLAS threads {args.threads}; "
        f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores"
    )
    print("depthscale " + " ".join(PREDICT))
    print(f"  first call (with imports): wall {pred['first_wall_s']:.3f} s, CPU {pred['first_cpu_s']:.3f} s")
    if rest:
        print(f"  median of {len(rest)} more: wall {pred['median_wall_s']:.3f} s, CPU {pred['median_cpu_s']:.3f} s")
    print("theory at full scale, (a, b) = (2, 1), linear_law_columns (wall s / CPU s):")
    for row in scale:
        L = "-".join(map(str, row["depths"]))
        parts = "  ".join(
            f"{k} {row[k][0]:.3f}/{row[k][1]:.3f}" for k in ("table", "constrained", "gamma_opt", "free_discrete")
        )
        print(f"  d = {row['d']:.0e}, L = {L}: {parts}")
    if floor:
        print(
            f"linear_floor(a=1, b=1, k=2, d=128, P=1024, contexts={args.contexts}): wall {floor['median_wall_s']:.2f} s, "
            f"CPU {floor['median_cpu_s']:.2f} s; floor {floor['floor']:.4f} +- {floor['stderr']:.4f} (paper's theory: 0.498)"
        )
    if args.json:
        print(
            json.dumps(
                {"unset_env": UNSET, "threads": args.threads, "predict": pred, "full_scale": scale, "floor": floor}
            )
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

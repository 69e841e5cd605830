"""``depthscale warm``: compile the numba kernels now, so that the first run does not.

numba compiles each kernel on its first call and keeps it in an on-disk cache per version of
depthscale (``sims/jit.py``); with an empty cache most of a first ``simulate`` or smoke job is that
compilation (docs/benchmarks.md). This command compiles every kernel of the numba engine (float64;
``--dtypes float64,float32`` adds the float32 ones), its parts spread over ``--workers`` processes,
each part once (``sims/warm.py``). With a warm cache it only loads them, in a few seconds.
"""

from __future__ import annotations

from ....theory._validate import check_int
from ..app import emit, parse_list


def register(sub) -> None:
    p = sub.add_parser("warm", help="compile the numba kernels now (once per version), not in the first run")
    p.add_argument("--dtypes", default="float64", help="comma-separated, from float64, float32 (default: float64)")
    p.add_argument("--workers", type=int, default=None, help="processes that compile (default: all cores)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=handle)


def handle(args) -> int:
    import os
    import time

    from ....sims.warm import DTYPES, all_units

    dtypes = parse_list("dtypes", args.dtypes, str)
    for dt in dtypes:
        if dt not in DTYPES:
            raise ValueError(f"dtypes={args.dtypes!r}: must be a comma-separated list from {', '.join(DTYPES)}")
    workers = (os.cpu_count() or 1) if args.workers is None else check_int("workers", args.workers, lo=1, hi=4096)
    units = all_units(dtypes)

    from ....sims.jit import cache_usable, configure_cache
    from ....sims.sweeps import make_executor
    from ....sims.warm import warm_pool

    cache = configure_cache()
    t0 = time.perf_counter()
    ex, _, close = make_executor("process", min(workers, len(units)))
    try:
        parts = warm_pool(ex, units)
    finally:
        close()
    wall = time.perf_counter() - t0
    out = {
        "cache": cache,
        "cache_usable": cache_usable(),
        "workers": min(workers, len(units)),
        "wall_seconds": wall,
        "compiled": sum(p.get("compiled", 0) for p in parts),
        "loaded": sum(p.get("loaded", 0) for p in parts),
        "parts": parts,
    }
    lines = [
        f"{p['unit']:40} failed: {p['error']}"
        if "error" in p
        else f"{p['unit']:40} {p['cpu']:6.1f} s CPU  compiled {p['compiled']:3d}, loaded {p['loaded']:3d} from the cache"
        for p in parts
    ]
    failed = sum("error" in p for p in parts)
    lines.append(
        f"{len(parts) - failed} of {len(units)} parts on {out['workers']} processes in {wall:.1f} s: {out['compiled']} kernel "
        f"signatures compiled, {out['loaded']} loaded; cache {cache}"
        + ("" if cache_usable() else " (not writable: nothing is kept)")
    )
    emit(out, args.json, "\n".join(lines))
    return 1 if failed else 0

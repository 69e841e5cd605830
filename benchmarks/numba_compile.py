"""Which numba kernels a command compiles, for how long, in which process, and which it loads from cache.

Runs ``depthscale ARGS`` in a child with an EMPTY numba cache (``NUMBA_CACHE_DIR`` a fresh temporary
folder) unless ``--cache DIR`` is given, with a ``sitecustomize`` module on ``PYTHONPATH`` that wraps
numba's ``Dispatcher.compile`` in every process it starts (sweep workers are spawned interpreters and
inherit the environment). Each call is logged as one JSON line: process id, kernel, signature, cache
hit or miss, wall and CPU seconds, exclusive of the kernels it compiled inside it (a caller compiles
its callees first). The summary gives, per process, the compile time and the kernels compiled, and
which kernels more than one process compiled (duplicate work when the cache starts empty).

Run: ``python benchmarks/numba_compile.py -- simulate --model softmax --task topk --k 2 --d 8 --P 64
--depth 4 --steps 300`` (``--json`` to end with the numbers as one JSON object; ``--cache DIR`` to
use, and fill, a given cache folder; ``--runs 2`` to run the same command twice on one cache, cold
then warm).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

SITECUSTOMIZE = r"""
import os
if os.environ.get("DEPTHSCALE_COMPILE_LOG"):
    import json, time
    from numba.core import dispatcher as _d
    _log = os.environ["DEPTHSCALE_COMPILE_LOG"]
    _orig = _d.Dispatcher.compile
    _stack = []  # inner (callee) time to subtract from the caller's

    def compile(self, sig):
        args = tuple(_d.sigutils.normalize_signature(sig)[0])
        if args in self.overloads:  # already in memory: nothing is done
            return _orig(self, sig)
        hits = sum(self._cache_hits.values())
        _stack.append([0.0, 0.0])
        w0, c0 = time.perf_counter(), time.process_time()
        try:
            return _orig(self, sig)
        finally:
            w, c = time.perf_counter() - w0, time.process_time() - c0
            inner = _stack.pop()
            if _stack:
                _stack[-1][0] += w
                _stack[-1][1] += c
            hit = sum(self._cache_hits.values()) > hits
            rec = {"pid": os.getpid(), "name": self.py_func.__module__.rsplit(".", 1)[-1] + "." + self.py_func.__qualname__,
                   "sig": str(args), "hit": hit, "wall": w - inner[0], "cpu": c - inner[1],
                   "t": time.time()}
            with open(_log, "a") as f:
                f.write(json.dumps(rec) + "\n")

    _d.Dispatcher.compile = compile
"""


def run(args: list[str], cache: str) -> dict:
    """Run ``depthscale ARGS`` once on ``cache``; its wall, CPU (children included) and compile log."""
    with tempfile.TemporaryDirectory() as tmp:
        Path(tmp, "sitecustomize.py").write_text(SITECUSTOMIZE)
        log = Path(tmp, "compile.jsonl")
        env = dict(os.environ, NUMBA_CACHE_DIR=cache, DEPTHSCALE_COMPILE_LOG=str(log))
        env["PYTHONPATH"] = os.pathsep.join(p for p in (tmp, env.get("PYTHONPATH", "")) if p)
        env.setdefault("NUMBA_NUM_THREADS", "1")
        env.setdefault("OMP_NUM_THREADS", "1")
        code = "import sys; from depthscale.derivations.cli.app import main; sys.exit(main(sys.argv[1:]))"
        load = os.getloadavg()[0]
        r0 = os.times()
        t0 = time.perf_counter()
        with tempfile.TemporaryDirectory() as cwd:  # outputs such as --out report go nowhere lasting
            res = subprocess.run([sys.executable, "-c", code, *args], env=env, cwd=cwd, capture_output=True, text=True)
        wall = time.perf_counter() - t0
        r1 = os.times()
        if res.returncode != 0:
            sys.stderr.write(res.stderr[-2000:])
            raise SystemExit(f"depthscale {' '.join(args)} exited {res.returncode}")
        calls = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
    cpu = (r1.children_user - r0.children_user) + (r1.children_system - r0.children_system)
    return {"wall": wall, "cpu": cpu, "load_before": load, "calls": calls}


def summary(r: dict) -> dict:
    calls = r["calls"]
    procs: dict = defaultdict(
        lambda: {"compiled": 0, "loaded": 0, "compile_wall": 0.0, "compile_cpu": 0.0, "load_wall": 0.0}
    )
    kernels: dict = defaultdict(
        lambda: {"compiles": 0, "loads": 0, "wall": 0.0, "cpu": 0.0, "pids": set(), "sigs": set()}
    )
    for c in calls:
        p, k = procs[c["pid"]], kernels[c["name"]]
        k["sigs"].add(c["sig"])
        if c["hit"]:
            p["loaded"] += 1
            p["load_wall"] += c["wall"]
            k["loads"] += 1
        else:
            p["compiled"] += 1
            p["compile_wall"] += c["wall"]
            p["compile_cpu"] += c["cpu"]
            k["compiles"] += 1
            k["wall"] += c["wall"]
            k["cpu"] += c["cpu"]
            k["pids"].add(c["pid"])
    dup = {n: len(k["pids"]) for n, k in kernels.items() if len(k["pids"]) > 1}
    return {
        "wall": r["wall"],
        "cpu": r["cpu"],
        "load_before": r["load_before"],
        "processes": dict(procs),
        "kernels": {
            n: {**{a: b for a, b in k.items() if a not in ("pids", "sigs")}, "signatures": len(k["sigs"])}
            for n, k in kernels.items()
        },
        "compiled_in_several_processes": dup,
        "compile_cpu_total": sum(p["compile_cpu"] for p in procs.values()),
        "compile_cpu_duplicated": sum(
            k["cpu"] * (len(k["pids"]) - 1) / len(k["pids"]) for k in kernels.values() if len(k["pids"]) > 1
        ),
    }


def show(label: str, s: dict) -> None:
    print(
        f"\n{label}: wall {s['wall']:.1f} s, CPU {s['cpu']:.1f} s (children), load before {s['load_before']:.2f} "
        f"on {os.cpu_count()} cores; compile CPU {s['compile_cpu_total']:.1f} s, of it duplicated across "
        f"processes {s['compile_cpu_duplicated']:.1f} s"
    )
    for pid, p in s["processes"].items():
        print(
            f"  process {pid}: compiled {p['compiled']} (wall {p['compile_wall']:.1f} s, CPU {p['compile_cpu']:.1f} s), "
            f"loaded {p['loaded']} from cache ({p['load_wall']:.2f} s)"
        )
    rows = sorted(s["kernels"].items(), key=lambda kv: -kv[1]["cpu"])
    print(f"  {'kernel':40} {'sigs':>4} {'compiles':>8} {'loads':>6} {'CPU s':>7} {'wall s':>7}")
    for n, k in rows:
        print(f"  {n:40} {k['signatures']:>4} {k['compiles']:>8} {k['loads']:>6} {k['cpu']:>7.2f} {k['wall']:>7.2f}")
    if s["compiled_in_several_processes"]:
        several = s["compiled_in_several_processes"]
        print("  compiled in more than one process: " + ", ".join(f"{n} ({c})" for n, c in several.items()))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cache", help="numba cache folder to use (default: a fresh empty one)")
    ap.add_argument("--runs", type=int, default=1, help="runs on the same cache (the first cold if it starts empty)")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("command", nargs=argparse.REMAINDER, help="-- then the depthscale arguments")
    a = ap.parse_args(argv)
    cmd = a.command[1:] if a.command[:1] == ["--"] else a.command
    if not cmd:
        ap.error("give the depthscale arguments after --")
    with tempfile.TemporaryDirectory() as fresh:
        cache = a.cache or fresh
        results = []
        for i in range(a.runs):
            s = summary(run(cmd, cache))
            results.append(s)
            show(f"depthscale {' '.join(cmd)} (run {i + 1} of {a.runs})", s)
    if a.json:
        print(json.dumps(results, default=str))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

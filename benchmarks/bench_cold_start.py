"""Time of the first call of the cached numba kernels in a fresh process (target: < 1 s).

A child interpreter imports the engine, builds each model and calls ``loss_and_grad`` once on a
tiny batch, timing every stage, in two orders: ``model-first`` (the model's kernels are the first
numba calls, so they also pay for starting numba's threading layer) and ``data-first`` (a
``make_batch`` call comes first, as in training); a first child warms the on-disk kernel cache, then
``--repeats`` fresh children are timed and the median reported. Both the wall clock and the
child's CPU time are given: on a shared machine the wall clock includes waiting for a core.

With ``--cli``, the command line instead: every sub-command's ``--help`` and one bad-input or
impossible-size refusal per sub-command (a missing file, a size beyond memory), each in a fresh
process, against the target of 0.5 s (issue 32: refusals come before heavy imports and work).

Run: ``python benchmarks/bench_cold_start.py`` (``--json`` for a JSON dump; ``--cli`` for the commands).
"""

from __future__ import annotations

import os

UNSET = [v for v in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE") if os.environ.pop(v, None) is not None]

import argparse  # noqa: E402
import json  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

CHILD = r"""
import json, sys, time
data_first = sys.argv[1] == "data-first"
clocks = (time.perf_counter, time.process_time)
out = {}
def mark(name, t0):
    out[name] = [c() - s for c, s in zip(clocks, t0)]
    return [c() for c in clocks]
t = [c() for c in clocks]
import numpy as np
from depthscale.sims.config import ModelConfig, TaskConfig
from depthscale.sims.models import make_model
from depthscale.sims.tasks import make_batch
from depthscale.sims.linear_model import LinearAttention
from depthscale.sims.softmax_model import SoftmaxAttention
from depthscale.sims.batch import Batch
t = mark("import", t)
task = TaskConfig(task="topk", k=2, d=4, P=8)
if data_first:  # as in training: the first batch comes before the first model call
    batch = make_batch(task, 2, np.random.default_rng(0))
    t = mark("make_batch_first", t)
else:  # the model's kernels first (they then also start numba's threading layer)
    r = np.random.default_rng(0)
    X = r.standard_normal((2, 8, 4)); beta = r.standard_normal((2, 4)); y = np.einsum("bpd,bd->bp", X, beta)
    batch = Batch(X, y, X[:, 0], y[:, 0], X[:, 0], beta, np.tile(np.eye(4), (2, 1, 1)), np.zeros((2, 1), np.int64))
    t = [c() for c in clocks]
for name in ("linear", "softmax"):
    m = make_model(ModelConfig(model=name, depth=2), 4)
    th = m.init(np.random.default_rng(1))
    t = [c() for c in clocks]
    m.loss_and_grad(th, batch)
    t = mark(name + "_first", t)
    m.loss_and_grad(th, batch)
    t = mark(name + "_second", t)
if not data_first:
    make_batch(task, 2, np.random.default_rng(0))
    t = mark("make_batch_first", t)
print(json.dumps(out))
"""


def child(threads: int, order: str) -> dict:
    env = dict(os.environ)
    for v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
        env[v] = str(threads)
    res = subprocess.run([sys.executable, "-c", CHILD, order], env=env, capture_output=True, text=True, check=True)
    return json.loads(res.stdout.strip().splitlines()[-1])


MISSING = "no-such-file-for-the-benchmark"
# one refusal per sub-command: what a user gets wrong first (a missing file, an impossible size)
REFUSALS = {
    "predict linear": ["predict", "linear", "--a", "1", "--b", "1", "--d", "100000000", "--depths", "1"],
    "predict floor": ["predict", "floor", "--a", "0", "--b", "0", "--k", "2", "--d", "100000", "--P", "1000000"]
    + ["--contexts", "10", "--seed", "0"],
    "predict clt": ["predict", "clt", "--model", "iid", "--depths", "1,0", "--sigma2", "1", "--shared", "0"],
    "predict softmax-floor": ["predict", "softmax-floor", "--task", "topk", "--a", "0", "--b", "0", "--d", "16"]
    + ["--P", "1000", "--seed", "0", "--contexts", "1000000"],
    "predict linear-optimum": ["predict", "linear-optimum", "--a", "1", "--b", "1", "--d", "0", "--P", "8"]
    + ["--depths", "1", "--contexts", "10", "--seed", "0"],
    "derive": ["derive", "no-such-derivation", "--out", MISSING],
    "simulate": [
        "simulate",
        "--variant",
        "context-update",
        "--d",
        "8",
        "--P",
        "100000",
        "--depth",
        "2",
        "--batch",
        "1",
    ],
    "sweep": ["sweep", MISSING + ".toml", "--store", MISSING + ".sqlite"],
    "fit": ["fit", "--store", MISSING + ".sqlite"],
    "report": ["report", "--store", MISSING + ".sqlite", "--floor-contexts", "1000000000000"],
    "reproduce": ["reproduce", "--preset", "smoke", "--floor-contexts", "1000000000000"],
    "infer-scale": ["infer-scale", "--floors", MISSING + ".csv", "--d", "4", "--P", "16"],
    "store": ["store", "compact", MISSING + ".sqlite", MISSING + "-out.sqlite"],
}


def cli_time(argv: list) -> tuple[float, int, str]:
    """Wall time, exit status and last stderr line of ``depthscale ARGV`` in a fresh interpreter."""
    code = "import sys; from depthscale.derivations.cli.app import main; sys.exit(main(sys.argv[1:]))"
    t0 = time.perf_counter()
    res = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True)
    wall = time.perf_counter() - t0
    return wall, res.returncode, (res.stderr.strip().splitlines() or [""])[-1]


def cli(repeats: int, as_json: bool) -> int:
    from depthscale.derivations.cli.app import COMMANDS

    helps = {name.replace("_", "-"): [name.replace("_", "-"), "--help"] for name in COMMANDS}
    helps.update({k: [*k.split(), "--help"] for k in REFUSALS if k.startswith("predict ")})
    rows = []
    for kind, table in (("--help", helps), ("refusal", REFUSALS)):
        for name, argv in table.items():
            times = [cli_time(argv) for _ in range(repeats)]
            wall = statistics.median(t for t, _, _ in times)
            rows.append({"command": name, "kind": kind, "wall": wall, "status": times[0][1], "stderr": times[0][2]})
    print(
        f"fresh processes: {repeats} per command (median); load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores"
    )
    print(f"{'command':24} {'kind':8} {'wall s':>7} {'exit':>5}  target 0.5 s")
    for r in rows:
        verdict = "met" if r["wall"] < 0.5 else "MISSED"
        print(f"{r['command']:24} {r['kind']:8} {r['wall']:>7.3f} {r['status']:>5}  {verdict}  {r['stderr'][:70]}")
    if as_json:
        print(json.dumps(rows))
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5, help="fresh processes timed (median)")
    ap.add_argument("--threads", type=int, default=1, help="numba/BLAS threads of the child")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--cli", action="store_true", help="time every sub-command's --help and a refusal instead")
    args = ap.parse_args(argv)
    if args.cli:
        return cli(args.repeats, args.json)
    child(args.threads, "model-first")  # warm the cache: compiles only if it is missing or stale
    print(
        f"fresh processes: {args.repeats} per order, threads {args.threads}, unset: {', '.join(UNSET) if UNSET else 'none'}; "
        f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores"
    )
    result = {}
    for order in ("model-first", "data-first"):
        runs = [child(args.threads, order) for _ in range(args.repeats)]
        med = {s: [statistics.median(r[s][i] for r in runs) for i in (0, 1)] for s in runs[0]}
        result[order] = {"median": med, "runs": runs}
        print(f"\norder {order}")
        print(f"{'stage':18} {'wall s (median)':>15} {'CPU s (median)':>15}")
        for s, (w, c) in med.items():
            print(f"{s:18} {w:>15.3f} {c:>15.3f}")
        for k in ("linear", "softmax"):
            w, c = med[f"{k}_first"]
            print(
                f"{k} first loss_and_grad: wall {w:.3f} s, CPU {c:.3f} s (target < 1 s): "
                f"{'met' if w < 1.0 else 'missed on wall clock' if c < 1.0 else 'missed'}"
            )
    if args.json:
        print(json.dumps({"unset_env": UNSET, "threads": args.threads, **result}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

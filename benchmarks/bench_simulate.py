"""CPU time per training step that ``depthscale simulate`` costs, for one or more installs, interleaved.

Each install's ``depthscale`` executable runs ``simulate --d 16 --P 128 --depth 64 --steps N
--eval-contexts 64 --quiet`` as a child process for a long and a short N; the children's user +
system time (``resource.getrusage(RUSAGE_CHILDREN)``) of the long run minus that of the short run,
divided by the difference in steps, is the CPU per step of the training loop alone (start-up,
compilation-cache loading and evaluation cancel). The wall time per step is reported the same way.
The runs of the installs alternate (A long, B long, A short, B short, then the next round in the
other order), so they see the same load. The threads are those of ``simulate`` (``--threads 0``:
all cores, and then it prefetches the next batch in a thread), unless ``--threads`` is given.

Run: ``python benchmarks/bench_simulate.py --exe .venv/bin/depthscale --exe OTHER/.venv/bin/depthscale``
(``--help`` for options, ``--json`` for a JSON dump).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import time


def child_run(exe: str, steps: int, args) -> tuple[float, float]:
    """(children's user + system seconds, wall seconds) of one ``simulate`` run."""
    cmd = [
        exe,
        "simulate",
        "--d",
        str(args.d),
        "--P",
        str(args.P),
        "--depth",
        str(args.depth),
        "--batch",
        str(args.batch),
        "--steps",
        str(steps),
        "--eval-contexts",
        str(args.eval_contexts),
        "--quiet",
        "--json",
    ]
    if args.model:
        cmd += ["--model", args.model]
    if args.threads is not None:
        cmd += ["--threads", str(args.threads)]
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime), wall


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--exe", action="append", required=True, help="a depthscale executable (repeatable)")
    ap.add_argument("--label", action="append", default=[], help="a name for each --exe, in order")
    ap.add_argument("--long", type=int, default=120, help="steps of the long run")
    ap.add_argument("--short", type=int, default=20, help="steps of the short run")
    ap.add_argument("--rounds", type=int, default=3, help="long/short pairs per install (median)")
    ap.add_argument("--d", type=int, default=16)
    ap.add_argument("--P", type=int, default=128)
    ap.add_argument("--depth", type=int, default=64)
    ap.add_argument("--batch", type=int, default=1024)
    ap.add_argument("--model", default="", help="passed as --model when given")
    ap.add_argument("--eval-contexts", type=int, default=64)
    ap.add_argument("--threads", type=int, default=None, help="passed as --threads when given")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    if args.long <= args.short:
        ap.error(f"--long={args.long}: must exceed --short={args.short}")
    labels = args.label + [
        os.path.basename(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(e)))))
        for e in args.exe[len(args.label) :]
    ]
    load0 = os.getloadavg()
    for exe in args.exe:  # warm-up: numba's kernel cache of each install
        child_run(exe, 2, args)
    n = args.long - args.short
    per = {lab: {"cpu": [], "wall": []} for lab in labels}
    for rnd in range(args.rounds):
        order = list(zip(labels, args.exe))
        if rnd % 2:
            order.reverse()
        res = {}
        for steps in (args.long, args.short):
            for lab, exe in order:
                res[lab, steps] = child_run(exe, steps, args)
        for lab in labels:
            per[lab]["cpu"].append((res[lab, args.long][0] - res[lab, args.short][0]) / n)
            per[lab]["wall"].append((res[lab, args.long][1] - res[lab, args.short][1]) / n)
            print(
                f"round {rnd}: {lab}: {1e3 * per[lab]['cpu'][-1]:.1f} ms CPU, {1e3 * per[lab]['wall'][-1]:.1f} ms wall per step",
                flush=True,
            )
    load1 = os.getloadavg()
    print(f"load average before/after: {load0[0]:.2f}/{load1[0]:.2f} (on {os.cpu_count()} cores)")
    print(
        f"simulate --d {args.d} --P {args.P} --depth {args.depth} --batch {args.batch}: per step, "
        f"({args.long}-step run minus {args.short}-step run) / {n}, median of {args.rounds}"
    )
    out = {}
    for lab in labels:
        c, w = statistics.median(per[lab]["cpu"]), statistics.median(per[lab]["wall"])
        out[lab] = {"cpu_s": c, "wall_s": w, "cpu_samples": per[lab]["cpu"], "wall_samples": per[lab]["wall"]}
        print(f"{lab:>12}: {1e3 * c:8.1f} ms CPU {1e3 * w:8.1f} ms wall  CPU/wall {c / w:.2f}")
    if args.json:
        print(json.dumps({"loadavg_before": load0, "loadavg_after": load1, "args": vars(args), "per_step": out}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Seeds of one model on the JAX engine: N seeds in one vmapped program (``train_seeds``) against
a loop of N single-seed trainings (``train_lockstep``), each timed after a warm-up that compiles
it; and the device data's share of a training step. One run, ratios printed.

    XLA_FLAGS="--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1" \\
        python benchmarks/jax_seeds.py --seeds 8

(the flags keep XLA on one CPU thread; on an accelerator leave them out).
"""

from __future__ import annotations

import argparse
import time

import numpy as np


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seeds", type=int, default=8)
    p.add_argument("--d", type=int, default=8)
    p.add_argument("--P", type=int, default=32)
    p.add_argument("--depth", type=int, default=4)
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--steps", type=int, default=256)
    p.add_argument("--dtype", default="float64")
    args = p.parse_args(argv)

    import jax

    from depthscale.sims import jax_engine
    from depthscale.sims.config import ModelConfig, TaskConfig, TrainConfig
    from depthscale.sims.jax_tasks import DataSpec, data_key, step_batch

    task = TaskConfig(task="topk", k=2, d=args.d, P=args.P)
    mcfg = ModelConfig(depth=args.depth, engine="jax", dtype=args.dtype)
    # cosine to the cap: every seed runs every step (no early stop makes the loop cheaper)
    cfg = TrainConfig(steps=args.steps, batch=args.batch, lr=1e-2, window=args.steps, eval_contexts=64)
    model = jax_engine.JaxModel(mcfg, task.d)
    seeds = list(range(args.seeds))

    def loop():
        return [jax_engine.train_lockstep([(model, mcfg)], task, cfg, s)[0] for s in seeds]

    def vmapped():
        return jax_engine.train_seeds(model, mcfg, task, cfg, seeds)

    loop(), vmapped()  # compile both (one shape each)
    t0 = time.perf_counter()
    a = loop()
    t_loop = time.perf_counter() - t0
    t0 = time.perf_counter()
    b = vmapped()
    t_vmap = time.perf_counter() - t0
    same = max(float(np.max(np.abs(x.theta - y.theta))) for x, y in zip(a, b))

    # the data's share of a step: generating a batch against a whole training step
    spec, key = DataSpec.of(task), jax.numpy.asarray(data_key(task, 0))
    gen = jax.jit(lambda k, s: step_batch(spec, args.batch, k, s, np.dtype(args.dtype)))
    jax.block_until_ready(gen(key, 0))
    t0 = time.perf_counter()
    for s in range(args.steps):
        jax.block_until_ready(gen(key, s))
    t_data = (time.perf_counter() - t0) / args.steps
    t_step = t_loop / (args.seeds * args.steps)

    info = jax_engine.engine_info()
    print(f"device: {info['device']} (jax {info['jax']}); d={args.d} P={args.P} L={args.depth} batch={args.batch}")
    print(f"{args.seeds} seeds x {args.steps} steps: loop {t_loop:.2f} s, vmapped {t_vmap:.2f} s")
    print(f"vmapped / loop = {t_vmap / t_loop:.3f} (the time of {args.seeds * t_vmap / t_loop:.2f} seeds in a loop)")
    print(f"largest |theta difference| vmapped vs loop: {same:.2e}")
    print(f"one batch generated: {1e3 * t_data:.3f} ms; one training step in the loop: {1e3 * t_step:.3f} ms")


if __name__ == "__main__":
    main()

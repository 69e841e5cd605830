#!/usr/bin/env bash
# The JAX engine on a device machine (an accelerator with JAX already installed), in under 10 minutes
# (the timeouts below sum to 570 s, the install takes seconds):
# installs depthscale without dependencies over the existing JAX, runs the cross-engine tests
# (numba against JAX, float64; the device data generator against make_batch; vmapped seeds), the
# vmapped-seeds timing (benchmarks/jax_seeds.py) and the engine benchmark, and prints the numbers
# and the device.
# Needs numpy, scipy, numba, sympy, mpmath, matplotlib, tqdm, jinja2, threadpoolctl, pytest, optax
# there already (nothing is downloaded). Usage, from the repository root:
#     bash benchmarks/device_check.sh            # writes into ${OUT:-/tmp}/device_check/
set -u
out="${OUT:-/tmp}/device_check"
mkdir -p "$out"
python - <<'PY'
import importlib.util, jax
missing = [m for m in ("numba", "scipy", "sympy", "mpmath", "matplotlib", "tqdm", "jinja2", "threadpoolctl", "optax", "pytest")
           if importlib.util.find_spec(m) is None]
print("jax", jax.__version__, "devices:", jax.devices())
print("missing (install them first):", missing or "none")
PY
pip install --no-deps --no-build-isolation -e . >"$out/install.log" 2>&1 || { tail -20 "$out/install.log"; exit 1; }
echo "== cross-engine tests, device data and vmapped seeds (tests/sims/test_jax_engine.py, test_jax_tasks.py, test_model_registry.py)"
timeout 210 python -m pytest -q -p no:cacheprovider tests/sims/test_jax_engine.py tests/sims/test_jax_tasks.py \
    tests/sims/test_model_registry.py 2>&1 | tail -5 | tee "$out/tests.txt"
echo "== seeds vmapped against a loop, data generated on the device (a paper-sized batch)"
timeout 90 python benchmarks/jax_seeds.py --seeds 8 --d 16 --P 128 --depth 16 --batch 1024 --steps 64 \
    --dtype float32 | tee "$out/seeds.txt"
echo "== engine benchmark, JAX on its default device (the accelerator), numba on all cores"
timeout 180 python benchmarks/engines.py --threads 0 --seconds 0.5 | tee "$out/engines.txt"
echo "== the same with both engines on one CPU thread"
timeout 90 python benchmarks/engines.py --sizes 16x128 --seconds 0.5 | tee "$out/engines_cpu1.txt"
echo "results in $out"

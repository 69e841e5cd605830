#!/usr/bin/env bash
# The JAX engine on a device machine (an accelerator with JAX already installed), in under 10 minutes:
# installs depthscale without dependencies over the existing JAX, runs the cross-engine tests
# (numba against JAX, float64) and the engine benchmark, and prints the numbers and the device.
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
echo "== cross-engine tests (tests/sims/test_jax_engine.py)"
timeout 300 python -m pytest -q -p no:cacheprovider tests/sims/test_jax_engine.py 2>&1 | tail -5 | tee "$out/tests.txt"
echo "== engine benchmark, JAX on its default device (the accelerator), numba on all cores"
timeout 240 python benchmarks/engines.py --threads 0 --seconds 0.5 | tee "$out/engines.txt"
echo "== the same with both engines on one CPU thread"
timeout 120 python benchmarks/engines.py --sizes 16x128 --seconds 0.5 | tee "$out/engines_cpu1.txt"
echo "results in $out"

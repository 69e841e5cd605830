#!/usr/bin/env bash
# The JAX engine on a machine with an accelerator, in under 8 minutes (the two timeouts below sum to
# 450 s; the install takes seconds). From the repository root, with JAX (and its accelerator plugin),
# optax, numba, numpy, scipy, sympy, mpmath, matplotlib, jinja2, tqdm and threadpoolctl installed there
# (nothing is downloaded):
#     bash benchmarks/device_check.sh
# 1. installs depthscale without dependencies over the machine's own packages;
# 2. checks the engine on the device (benchmarks/scale_rung.py --check): float64 loss and gradient of
#    the JAX engine against the numba engine at d = 16, P = 128, L = 1, 4, 16, and 40 steps on the same
#    batches ending at the same parameters;
# 3. times the scale study's paper-scale rung (scale_rung.py --time): d = 128, P = 1,024, batch 1024,
#    float64, 200 cosine steps at L = 1, 8 and 32, one seed alone and three vmapped in one program, each
#    after a block that compiles it, and projects the scale-gpu preset's training time from them.
# What it prints goes to the terminal and, when OUT names a folder, to $OUT/device_check.txt, with every
# number in $OUT/device_check.json; docs/benchmarks.md says where the numbers are recorded.
set -u -o pipefail
log=/dev/null
json=()
if [ -n "${OUT:-}" ]; then
    mkdir -p "$OUT"
    log="$OUT/device_check.txt"
    json=(--json-file "$OUT/device_check.json")
fi
{
    python - <<'PY'
import importlib.util
need = ("jax", "optax", "numba", "numpy", "scipy", "sympy", "mpmath", "matplotlib", "jinja2", "tqdm", "threadpoolctl")
missing = [m for m in need if importlib.util.find_spec(m) is None]
import jax
print("jax", jax.__version__, "devices:", jax.devices())
print("missing (install them first):", missing or "none")
PY
    pip install -q --no-deps --no-build-isolation -e . 2>&1 | grep -v "^WARNING: Running pip as" || true
    python -c "import depthscale; print('depthscale', depthscale.__version__)" || exit 1
    echo "== the JAX engine against the numba engine on this device (float64)"
    timeout 150 python benchmarks/scale_rung.py --check
    check=$?
    echo "== the paper-scale rung: d = 128, P = 1,024, batch 1024, L = 1, 8, 32"
    timeout 300 python benchmarks/scale_rung.py --time --steps 200 --depths 1,8,32 --seeds 3 ${json[@]+"${json[@]}"}
    timed=$?
    echo "check exit status $check, timing exit status $timed (124: stopped by its timeout)"
} 2>&1 | tee "$log"

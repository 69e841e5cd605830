#!/usr/bin/env bash
# First run (numba compile): `depthscale simulate` (the README's small config) and the smoke job, each
# with an EMPTY numba cache (NUMBA_CACHE_DIR a fresh folder) and again warm, then `depthscale warm`
# on an empty cache and the same two commands after it: wall and CPU seconds (the command and every
# process it starts: /usr/bin/time counts the children it waits for) and the load average before each.
# On a shared machine compare CPU seconds and ratios; wall times wait for cores.
# Run from the repository root with the venv active (the install is not timed). An older checkout
# without `depthscale warm` skips that part. The compile per kernel and per process of one command:
# python benchmarks/numba_compile.py -- simulate ... (its --runs 2 gives cold, then warm).
set -euo pipefail
out=$(mktemp -d)
export NUMBA_NUM_THREADS=${NUMBA_NUM_THREADS:-1} OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}
load() { cut -d' ' -f1-3 /proc/loadavg; }
timed() {  # label, command...
    local label=$1; shift
    local before; before=$(load)
    /usr/bin/time -f "%e %U %S" -o "$out/t" "$@" >"$out/log" 2>&1 || { tail -5 "$out/log"; exit 1; }
    read -r wall user sys <"$out/t"
    printf '%-34s wall %7.1f s  cpu %7.1f s  load before %s\n' "$label" "$wall" "$(echo "$user + $sys" | bc)" "$before"
}
simulate=(depthscale simulate --model softmax --task topk --k 2 --d 8 --P 64 --depth 4 --steps 300 --json)
smoke=(depthscale reproduce --preset smoke)
echo "$(nproc) cores; $(python -c 'import numba; print("numba", numba.__version__)')"

cache=$(mktemp -d)
NUMBA_CACHE_DIR=$cache timed "simulate, empty cache" "${simulate[@]}"
NUMBA_CACHE_DIR=$cache timed "simulate, warm cache" "${simulate[@]}"
cache=$(mktemp -d)
NUMBA_CACHE_DIR=$cache timed "smoke job, empty cache" "${smoke[@]}" --out "$out/r1"
NUMBA_CACHE_DIR=$cache timed "smoke job, warm cache" "${smoke[@]}" --out "$out/r2"
if depthscale warm --help >/dev/null 2>&1; then
    cache=$(mktemp -d)
    NUMBA_CACHE_DIR=$cache timed "depthscale warm, empty cache" depthscale warm
    NUMBA_CACHE_DIR=$cache timed "depthscale warm, again" depthscale warm
    NUMBA_CACHE_DIR=$cache timed "simulate, after warm" "${simulate[@]}"
    NUMBA_CACHE_DIR=$cache timed "smoke job, after warm" "${smoke[@]}" --out "$out/r3"
fi

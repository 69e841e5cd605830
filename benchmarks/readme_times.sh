#!/usr/bin/env bash
# The README's times: its main job cold (an empty numba cache, as on a fresh machine) and warm, and
# its test command, each with the machine's load average before it and the CPU seconds it used.
# Run from the repository root of a fresh clone with its venv active (the install is not timed).
set -euo pipefail
out=$(mktemp -d)
load() { cut -d' ' -f1-3 /proc/loadavg; }
timed() {  # label, command...
    local label=$1; shift
    local before; before=$(load)
    /usr/bin/time -f "%e %U %S" -o "$out/t" "$@" >"$out/log" 2>&1 || { tail -5 "$out/log"; exit 1; }
    read -r wall user sys <"$out/t"
    printf '%-28s wall %7.1f s  cpu %7.1f s  load before %s\n' "$label" "$wall" "$(echo "$user + $sys" | bc)" "$before"
}
cache=$(mktemp -d)
NUMBA_CACHE_DIR=$cache timed "main job, cold cache" depthscale reproduce --preset smoke --out "$out/r1"
NUMBA_CACHE_DIR=$cache timed "main job, warm cache" depthscale reproduce --preset smoke --out "$out/r2"
timed "test command (pytest -q)" python -m pytest -q -p no:cacheprovider
grep -E "passed|failed" "$out/log" | tail -1

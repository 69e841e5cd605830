#!/usr/bin/env bash
# The README's times and the first run's compile cost: `depthscale simulate` (the README's small
# config) and the main job, each with an EMPTY numba cache (NUMBA_CACHE_DIR a fresh folder, as on a
# fresh machine) and again warm; `depthscale warm` on an empty cache and the same two commands after
# it; then the test command. Each line: wall and CPU seconds (the command and every process it
# waits for) and the load average before it. On a shared machine compare CPU seconds and ratios;
# wall times wait for cores. Run from the repository root of a fresh clone with its venv active (the
# install is not timed). The lines also go to benchmarks/readme_times.txt (replaced each run; pass
# --record FILE for another file), which tests/test_readme_counts.py holds the README's times to;
# --tests-only times the test command alone and replaces only its lines in the record. A test command
# that fails is timed and recorded all the same, with its summary line.
# The compile per kernel and per process of one command:
# python benchmarks/numba_compile.py -- simulate ... (its --runs 2 gives cold, then warm).
set -euo pipefail
record=benchmarks/readme_times.txt
tests=1
only_tests=0
while [ $# -gt 0 ]; do
    case $1 in
        --no-tests) tests=0 ;;
        --tests-only) only_tests=1 ;;
        --record) record=$2; shift ;;
        *) echo "readme_times.sh: unknown option $1 (allowed: --no-tests, --tests-only, --record FILE)" >&2; exit 2 ;;
    esac
    shift
done
out=$(mktemp -d)
load() { cut -d' ' -f1-3 /proc/loadavg; }
timed() {  # label, command... (a failing command ends the script, but for the test command)
    local label=$1; shift
    local before; before=$(load)
    /usr/bin/time -f "%e %U %S" -o "$out/t" "$@" >"$out/log" 2>&1 || [ "$label" = "$test_label" ] || {
        tail -5 "$out/log"
        exit 1
    }
    read -r wall user sys < <(tail -n 1 "$out/t")  # after "Command exited with non-zero status N"
    printf '%-34s wall %7.1f s  cpu %7.1f s  load before %s\n' "$label" "$wall" "$(echo "$user + $sys" | bc)" "$before" |
        tee -a "$out/record"
}
test_label="test command (pytest -q)"
simulate=(depthscale simulate --model softmax --task topk --k 2 --d 8 --P 64 --depth 4 --steps 300 --json)
main=(depthscale reproduce --preset smoke)
stamp="$(date -u +%Y-%m-%d) at $(git rev-parse --short HEAD 2>/dev/null || echo '?')"
if [ "$only_tests" = 1 ]; then  # the record's other lines kept, its test lines replaced
    grep -v -e "^$test_label" -e "passed" -e "failed" "$record" | tee "$out/record"
    echo "# the test command timed again, $stamp" | tee -a "$out/record"
else
    {
        echo "# benchmarks/readme_times.sh, $stamp"
        echo "$(nproc) cores; $(python -c 'import numba; print("numba", numba.__version__)')"
    } | tee "$out/record"
    cache=$(mktemp -d)
    NUMBA_CACHE_DIR=$cache timed "simulate, empty cache" "${simulate[@]}"
    NUMBA_CACHE_DIR=$cache timed "simulate, warm cache" "${simulate[@]}"
    cache=$(mktemp -d)
    NUMBA_CACHE_DIR=$cache timed "main job, empty cache" "${main[@]}" --out "$out/r1"
    NUMBA_CACHE_DIR=$cache timed "main job, warm cache" "${main[@]}" --out "$out/r2"
    cache=$(mktemp -d)
    NUMBA_CACHE_DIR=$cache timed "depthscale warm, empty cache" depthscale warm
    NUMBA_CACHE_DIR=$cache timed "depthscale warm, again" depthscale warm
    NUMBA_CACHE_DIR=$cache timed "simulate, after warm" "${simulate[@]}"
    NUMBA_CACHE_DIR=$cache timed "main job, after warm" "${main[@]}" --out "$out/r3"
fi
if [ "$tests" = 1 ]; then
    timed "$test_label" python -m pytest -q -p no:cacheprovider
    grep -E "passed|failed" "$out/log" | tail -1 | tee -a "$out/record"
fi
cp "$out/record" "$record"
echo "recorded in $record" >&2

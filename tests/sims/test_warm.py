"""Compiling ahead (sims/warm.py): the units a run needs compile every signature the run then calls, so a
sweep's workers, warmed first, compile nothing more; a progress log hears about the compilation."""

import io
import json
import os
import subprocess
import sys

from depthscale.sims.config import ModelConfig, RunConfig, TaskConfig, TrainConfig
from depthscale.sims.progress import RunLines
from depthscale.sims.warm import Unit, all_units, units_for

TINY = TrainConfig(steps=2, batch=8, eval_contexts=64, window=1)
CONFIGS = [  # the variants that select a kernel or change an argument's type
    RunConfig(TaskConfig(task="easy-fresh", d=4, P=8), ModelConfig(model="linear", depth=2), TINY),
    RunConfig(TaskConfig(task="topk", k=2, d=4, P=8), ModelConfig(model="linear", depth=1, value="per-layer"), TINY),
    RunConfig(TaskConfig(task="topk", k=2, d=4, P=8), ModelConfig(depth=1), TINY),  # a read-only gain once
    RunConfig(TaskConfig(task="topk", k=2, d=4, P=8), ModelConfig(depth=3), TINY),
    RunConfig(TaskConfig(task="easy-exact", d=4, P=8), ModelConfig(depth=2, value="per-layer"), TINY),
    RunConfig(TaskConfig(task="topk", k=2, d=4, P=8), ModelConfig(depth=2, context_update=True), TINY),
    RunConfig(TaskConfig(task="topk", k=2, d=4, P=8), ModelConfig(depth=2, stream="single"), TINY),
    RunConfig(TaskConfig(task="topk", k=2, d=4, P=8), ModelConfig(depth=2, attention="sparsemax"), TINY),
    RunConfig(TaskConfig(task="topk", k=2, d=4, P=8), ModelConfig(depth=2, dtype="float32"), TINY),
    RunConfig(TaskConfig(task="topk", k=2, d=4, P=8), ModelConfig(depth=2, ensemble=True), TINY),
]

# In a fresh interpreter (kernels in memory from other tests would hide a missing one): compile the
# units of the configs, note every kernel's signatures, run each config, note them again.
CHILD = r"""
import json, sys
from depthscale.sims.config import RunConfig
from depthscale.sims.runner import run
from depthscale.sims.warm import _kernels, compile_unit, units_for
configs = [RunConfig.from_dict(d) for d in json.loads(sys.argv[1])]
for u in units_for(configs):
    compile_unit(u)
def signatures():
    return {f"{k.py_func.__module__}.{k.__name__}": sorted(map(str, k.signatures)) for k in _kernels()}
before = signatures()
status = [run(c, 0)["status"] for c in configs]
print(json.dumps({"before": before, "after": signatures(), "status": status}))
"""


def test_a_run_after_its_units_compiles_no_new_signature():
    arg = json.dumps([c.to_dict() for c in CONFIGS])
    res = subprocess.run([sys.executable, "-c", CHILD, arg], capture_output=True, text=True, timeout=900)
    assert res.returncode == 0, res.stderr[-3000:]
    out = json.loads(res.stdout.strip().splitlines()[-1])
    assert out["status"] == ["ok"] * len(CONFIGS)
    new = {k: sorted(set(v) - set(out["before"].get(k, []))) for k, v in out["after"].items()}
    assert {k: v for k, v in new.items() if v} == {}


def test_units_for_names_each_kernel_group_once():
    units = units_for(CONFIGS)
    assert len(units) == len(set(units))
    assert set(units) == {
        Unit("data"),
        Unit("data", "float32"),
        Unit("linear"),
        Unit("softmax"),
        Unit("softmax", "float32"),
        Unit("softmax", context_update=True),
        Unit("softmax", stream="single"),
        Unit("heads"),
        Unit("heads", attention="map"),
    }
    assert set(units) <= set(all_units(("float64", "float32")))


def test_a_jax_run_needs_no_numba_model_units():
    cfg = RunConfig(TaskConfig(d=4, P=8), ModelConfig(depth=2, engine="jax"), TINY)
    assert {u.kind for u in units_for([cfg])} == {"data", "heads"}


def test_a_progress_log_notes_the_compilation_once_a_heartbeat():
    now = [0.0]
    log = io.StringIO()
    lines = RunLines(4, stream=log, heartbeat=30.0, clock=lambda: now[0])
    lines.note("compiling", due_only=False)
    now[0] = 10.0
    lines.note("compiling", due_only=True)  # within the heartbeat: nothing
    now[0] = 31.0
    lines.note("compiling", due_only=True)
    assert log.getvalue().splitlines() == [
        "depthscale: compiling (0 s elapsed)",
        "depthscale: compiling (31 s elapsed)",
    ]


def test_a_unit_is_missing_until_compiled_into_the_cache(tmp_path):
    # a fresh process on an empty cache folder; the temperature heads are the quickest unit to compile
    code = (
        "from depthscale.sims.warm import Unit, compile_unit, missing\n"
        "u = Unit('heads')\n"
        "print(len(missing([u, Unit('data')])), compile_unit(u)['compiled'] > 0, len(missing([u])))\n"
    )
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)}
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=600)
    assert res.returncode == 0, res.stderr[-3000:]
    assert res.stdout.split() == ["2", "True", "0"]

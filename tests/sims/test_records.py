"""The RunRecord type names exactly the fields a run record has, and the engine contract lists them."""

import re
from pathlib import Path

from depthscale.sims.config import ModelConfig, RunConfig, TaskConfig, TrainConfig
from depthscale.sims.records import RUN_RECORD_FIELDS, Floor, RunRecord
from depthscale.sims.runner import run

CONTRACT = Path(__file__).resolve().parents[2] / "docs" / "engine-contract.md"


def _contract_block() -> str:
    text = CONTRACT.read_text()
    section = text[text.index("## Run record") :]
    return section[section.index("```") + 3 : section.index("```", section.index("```") + 3)]


def test_a_real_record_has_only_typed_fields_and_every_required_one():
    task = TaskConfig(task="topk", k=2, d=4, P=16)
    for model in ("softmax", "linear"):
        cfg = RunConfig(task, ModelConfig(model=model, depth=2), TrainConfig(steps=20, batch=32, eval_contexts=256))
        rec = run(cfg, 0)
        assert sorted(set(rec) - RUN_RECORD_FIELDS) == []
        assert RunRecord.__required_keys__ <= set(rec)
        assert rec["status"] != "ok" or "floors" in rec
        for b in rec.get("floors", {}).values():
            assert sorted(set(b) - set(Floor.__annotations__)) == []


def test_the_engine_contract_lists_every_typed_field():
    words = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", _contract_block()))
    assert sorted(RUN_RECORD_FIELDS - words) == []

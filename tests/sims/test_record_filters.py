"""Record filters are checked before anything is read: a wrong value is an error naming it, never an empty result."""

import pytest

from depthscale.sims.store import Store


def _record(key, model, task, depth):
    return {
        "key": key,
        "seed": 0,
        "status": "ok",
        "reason": None,
        "final_loss": 0.5,
        "config": {"model": {"model": model, "depth": depth}, "task": {"task": task, "a": 0.0}},
    }


@pytest.fixture
def store(tmp_path):
    path = tmp_path / "s.sqlite"
    with Store(path, mode="write") as st:
        st.put(_record("a-0", "softmax", "topk", 2))
        st.put(_record("b-0", "linear", "easy-exact", 4))
    with Store(path) as st:
        yield st


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"model": "Softmax"}, "model='Softmax': must be one of linear, softmax"),
        ({"task": "top-k"}, "task='top-k': must be one of easy-exact, easy-fresh, topk"),
        (
            {"where": {"model.model": ["softmax", "Linear"]}},
            "where['model.model']='Linear': must be one of linear, softmax",
        ),
        (
            {"where": {"model.qk": "tide"}},
            "where['model.qk']='tide': must be one of factorised, merged, tied, temperature",
        ),
        ({"where": {"model.depths": 2}}, "where key 'model.depths': must be a config path, one of task.task, "),
        ({"where": [("model.depth", 2)]}, "where=[('model.depth', 2)]: must be a dict"),
        ({"status": "done"}, "status='done': must be one of ok, diverged, failed"),
    ],
)
def test_a_bad_filter_is_one_line_naming_it(store, kwargs, message):
    with pytest.raises(ValueError) as info:
        store.records(**kwargs)  # at the call, before iterating
    text = str(info.value)
    assert text.startswith(message) and "\n" not in text


def test_good_filters_select_by_config(store):
    assert [r["key"] for r in store.records(model="softmax")] == ["a-0"]
    assert [r["key"] for r in store.records(task="easy-exact")] == ["b-0"]
    assert [r["key"] for r in store.records(where={"model.depth": [2, 4], "task.a": 0.0})] == ["a-0", "b-0"]
    assert [r["key"] for r in store.records(where={"model.model": ("linear", "softmax")}, model="linear")] == ["b-0"]

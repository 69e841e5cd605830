"""Notebook displays of run records and stores: well-formed HTML with the record's numbers; a store as counts."""

from depthscale.sims.display import RecordView
from depthscale.sims.store import Store


def _record(key, model, task, depth, status="ok", loss=0.5):
    return {
        "key": key,
        "seed": 0,
        "status": status,
        "reason": None if status == "ok" else "boom",
        "final_loss": loss,
        "final_loss_se": 0.01,
        "layer_losses": [1.0, 0.7, loss][:depth],
        "config": {"model": {"model": model, "depth": depth}, "task": {"task": task, "k": 2, "a": 0.5, "b": 0.0}},
    }


def test_a_run_record_shows_its_numbers(tmp_path, parse_html):
    path = tmp_path / "s.sqlite"
    with Store(path, mode="write") as st:
        st.put(_record("a-0", "softmax", "topk", 2, loss=0.4321))
    with Store(path) as st:
        rec = st.record("a-0")
        assert st.record("missing") is None
    assert isinstance(rec, dict) and isinstance(rec, RecordView) and rec["final_loss"] == 0.4321
    _, texts = parse_html(rec._repr_html_())
    assert {"a-0", "ok", "softmax, depth 2", "0.4321 ± 0.01", "list of 2"} <= set(texts)
    assert any("top-2" in t and "(0.5, 0)" in t for t in texts)


def test_a_store_shows_counts_not_rows(tmp_path, parse_html):
    path = tmp_path / "s.sqlite"
    recs = [
        _record("a-0", "softmax", "topk", 2),
        _record("a-1", "softmax", "topk", 3),
        _record("b-0", "linear", "easy-exact", 1, status="failed"),
        _record("c-0", "softmax", "easy-exact", 1, status="diverged"),
    ]
    with Store(path, mode="write") as st:
        for r in recs:
            st.put(r)
    before = path.read_bytes()
    with Store(path) as st:
        tags, texts = parse_html(st._repr_html_())
    assert path.read_bytes() == before  # showing a store reads it only
    assert "a-0" not in texts  # a summary, not a dump
    # the counts, by hand from the records above: runs, ok, diverged, failed; then one row per (model, task)
    assert texts[texts.index("runs") + 1] == "4"
    assert [texts[texts.index(s) + 1] for s in ("ok", "diverged", "failed")] == ["2", "1", "1"]
    assert texts[texts.index("depths") + 1] == "1, 2, 3"
    rows = texts[texts.index("runs by model and task") + 6 :]
    assert rows == [
        "linear",
        "easy-exact",
        "0",
        "0",
        "1",
        "softmax",
        "easy-exact",
        "0",
        "1",
        "0",
        "softmax",
        "top-2",
        "2",
        "0",
        "0",
    ]
    st.close()
    assert "closed" in st._repr_html_()

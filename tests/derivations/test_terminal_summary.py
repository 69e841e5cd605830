"""A terminal that tells the truth (issue 50): `report` ends with the verdict counts, the answer and
the report's path on stderr; `reproduce` given a budget too short for its first run names that
run's estimate and a budget that holds it; a progress bar's time left is the average over the runs
completed, not the latest burst's rate."""

import io
import json
import re
from collections import Counter

import pytest
from synthetic import curve

from depthscale.derivations.analysis import theory_numbers
from depthscale.derivations.cli.app import main
from depthscale.sims.budget import parse_duration
from depthscale.sims.store import Store


@pytest.mark.slow  # a whole report: about 10 s on an idle machine
def test_report_ends_with_the_verdict_counts_the_answer_and_the_path(tmp_path, monkeypatch, capsys):
    # the derivations' sympy checks are tested in tests/theory; here they would only cost time
    monkeypatch.setattr(theory_numbers, "derivation_checks", lambda: ([], {"fake": [("a step", True)]}))
    store, out = tmp_path / "s.sqlite", tmp_path / "r"
    with Store(store, mode="write") as st:
        for rec in curve(lambda L: 0.5 + 0.4 / L):
            st.put(rec)
    argv = ["report", "--store", str(store), "--preset", "smoke", "--out", str(out)]
    assert main(argv + ["--floor-contexts", "10", "--reference-contexts", "0"]) == 0
    err = capsys.readouterr().err.splitlines()
    rows = json.loads((out / "claims.json").read_text(encoding="utf-8"))
    counts = Counter(r["verdict"] for r in rows)
    (tally,) = [ln for ln in err if ln.startswith("depthscale: verdicts: ")]
    said = dict((v, int(n)) for n, v in re.findall(r"(\d+) ([a-z ]+?)(?:,| \()", tally))
    assert said == dict(counts) and tally.endswith(f"({len(rows)} claims)"), tally
    answer = (out / "answer.md").read_text(encoding="utf-8").split("\n\n")[0]
    (said_answer,) = [ln for ln in err if ln.startswith("depthscale: answer: ")]
    assert said_answer.split(": ", 2)[2][:40] == answer[:40]  # the answer's first paragraph (plain text)
    assert f"depthscale: report: {out / 'report.md'} (also {out / 'report.html'}, {out / 'report.tex'})" in err


def test_a_budget_too_short_names_the_first_runs_estimate_and_a_budget_that_holds_it(tmp_path, capsys):
    from depthscale.derivations.cli.commands.reproduce import preset_runs
    from depthscale.sims import budget as cost
    from depthscale.sims.sweeps import startable

    out = tmp_path / "r"
    assert main(["reproduce", "--preset", "smoke", "--out", str(out), "--budget", "1s", "--quiet"]) == 1
    err = capsys.readouterr().err
    m = re.search(
        r"the first run needs about ([\d.]+) (s|min|h) by the cost model; give --budget of at least (\S+)\)", err
    )
    assert m and re.search(r"too short to start any of the \d+ missing run\(s\)", err), err
    needs = float(m.group(1)) * {"s": 1, "min": 60, "h": 3600}[m.group(2)]
    suggested = parse_duration(m.group(3))
    assert suggested >= needs and suggested > 1  # longer than the budget given
    # by the sweep's own rule, the suggested budget lets the preset's first run start
    with Store(out / "store.sqlite") as st:
        head, _ = startable(preset_runs("smoke"), st, suggested, cost.rates([]))
    assert head


def test_the_time_left_is_the_average_over_the_runs_completed():
    from tqdm import tqdm

    from depthscale.sims.progress import Progress

    t = [0.0]
    bar = Progress(20, unit="run", file=io.StringIO())
    bar.bar._time = lambda: t[0]  # tqdm reads its clock through this attribute
    bar.update(1)  # the first run: compilation included
    bar.warmed_up()
    # one run after 100 s, then a burst of five (a lockstep group) one second later
    for when, n in ((100.0, 1), (101.0, 5)):
        t[0] = when
        bar.update(n)
    shown = tqdm.format_meter(**bar.bar.format_dict)
    # 6 runs in 101 s since the warm-up: the 13 left at that average rate (tqdm's default moving
    # average of the latest updates would give about a second a run after the burst)
    left = tqdm.format_interval(13 * 101.0 / 6)
    assert f"<{left}" in shown, shown
    bar.close()

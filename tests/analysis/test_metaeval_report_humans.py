"""The report's "Which metric" ranking with its human rows: each rater and the one-rater
baseline as marked rows, each metric's distance from it, and the reason when a study has
no per-rater ratings; on real study files through `meaningbench report`."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from meaningbench.analysis.metaeval_choices import DEFAULT_GROUPING
from meaningbench.analysis.metaeval_humans import ONE_RATER_LABEL, human_baseline
from meaningbench.analysis.metaeval_significance import rank_metrics
from meaningbench.analysis.metaeval_study import metaeval_data_from_study
from meaningbench.cli import main
from meaningbench.db.study import open_study
from tests.analysis.studybuild import add_items, add_ratings, add_scores

SOURCES = [f"Source sentence number {k} says something about the weather today." for k in range(8)]


def _study(study, kind: str) -> Path:  # noqa: ANN001
    """Three raters (`kind` "named": per-rater ratings; "aggregate": labels only) and two
    metrics on 8 sources × 3 systems."""
    rng = np.random.default_rng(3)
    ids = add_items(study, [(s, f"{s} output {k}", f"sys{k}") for s in SOURCES for k in range(3)])
    truth = rng.uniform(10, 90, len(ids))
    for name in ("ann", "bob", "cat"):
        noisy = np.clip(truth + rng.normal(0, 10, len(ids)), 0, 100).round()
        add_ratings(study, name, dict(zip(ids, map(float, noisy), strict=True)), kind=kind)
    add_scores(
        study, "bleu", {i: float(t + rng.normal(0, 8)) for i, t in zip(ids, truth, strict=True)}
    )
    add_scores(study, "rouge1", {i: float(rng.uniform(0, 100)) for i in ids})
    return Path(study.path)


def _section(path: Path, out: Path) -> str:
    assert main(["report", str(path), str(out), "--no-sanity", "--boot", "50"]) == 0
    html = out.read_text(encoding="utf-8")
    return html[html.index("<h2 id='which-metric'>") : html.index("<h3>All measures</h3>")]


def _cells(section: str) -> dict[str, tuple[str, list[str]]]:
    """Ranking rows: first cell → (the row's class, the other cells)."""
    out = {}
    for cls, body in re.findall(r"<tr(?: class='(\w+)')?>(.*?)</tr>", section):
        cells = re.findall(r"<td>(.*?)</td>", body)
        if cells:
            out[cells[0]] = (cls, cells[1:])
    return out


def test_the_ranking_marks_each_rater_and_the_one_rater_row_and_gives_each_gap(
    new_study, tmp_path
) -> None:
    path = _study(new_study, "named")
    new_study.close()
    section = _section(path, tmp_path / "r.html")
    with open_study(path) as s:
        data = metaeval_data_from_study(s)
    base = human_baseline(data, "pearson", DEFAULT_GROUPING)
    rows = _cells(section)
    assert "<th>Δ one rater</th>" in section
    humans = {k: v for k, v in rows.items() if v[0] == "human"}
    assert set(humans) == {
        "human: rater ann",
        "human: rater bob",
        "human: rater cat",
        ONE_RATER_LABEL,
    }
    for h in base.rows:
        cls, cells = rows[h.label]
        assert cls == "human" and cells[0] == "human" and cells[1] == f"{h.value:.3f}"
    one_rater = base.one_rater
    assert one_rater is not None
    ranking = rank_metrics(data, "pearson", group_by=DEFAULT_GROUPING, resamples=50)
    for m in ranking.order:
        cls, cells = rows[m]
        assert cls == ""  # a metric: no mark
        assert cells[1] == f"{ranking.values[m]:.3f}"
        assert cells[-1] == f"{ranking.values[m] - one_rater:.3f}"
    # The metrics and the one-rater row by value, then each rater by value (the tab's order).
    order = list(rows)
    top = [k for k in order if k not in humans or k == ONE_RATER_LABEL]
    assert order[: len(top)] == top and len(top) == len(ranking.order) + 1
    for part in (order[: len(top)], order[len(top) :]):
        values = [float(rows[k][1][1]) for k in part]
        assert values == sorted(values, reverse=True) and values
    assert "tr.human td{font-style:italic" in (tmp_path / "r.html").read_text(encoding="utf-8")
    assert "Proietti et al., 2025" in section and "how far the metric is" in section


def test_a_study_of_aggregate_labels_says_why_it_has_no_human_row(new_study, tmp_path) -> None:
    path = _study(new_study, "aggregate")
    new_study.close()
    section = _section(path, tmp_path / "r.html")
    assert "class='human'" not in section and "Δ one rater" not in section
    assert "No human row: the study has no per-rater ratings (only aggregate labels)." in section
    rows = _cells(section)
    assert [rows[m][1][0] for m in ("bleu[refs=source]", "rouge1[refs=source]")] == ["1", "2"]

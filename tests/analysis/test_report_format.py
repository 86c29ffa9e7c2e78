"""The report's tables: counts print as counts beside floats, raters in the order a reader
expects (2 before 10), in the HTML report, the LaTeX export and rater QC."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from meaningbench.analysis.export import to_latex
from meaningbench.analysis.qc import name_order
from meaningbench.cli import main
from tests.analysis.studybuild import SOURCES, add_items, add_ratings, add_scores

RATERS = [str(k) for k in range(11)]


@pytest.fixture
def study(new_study) -> Path:  # noqa: ANN001
    rng = np.random.default_rng(5)
    rows = [(s, f"{s} output {k}", f"sys{k}") for s in SOURCES for k in range(3)]
    ids = add_items(new_study, rows)
    truth = rng.uniform(10, 90, len(ids))
    for name in RATERS:
        add_ratings(
            new_study,
            name,
            {i: float(t + rng.normal(0, 9)) for i, t in zip(ids, truth, strict=True)},
        )
    add_scores(
        new_study, "bleu", {i: float(t + rng.normal(0, 8)) for i, t in zip(ids, truth, strict=True)}
    )
    add_scores(new_study, "chrf", {i: float(rng.uniform(0, 100)) for i in ids})
    return Path(new_study.path)


def _table_after(html: str, heading: str) -> str:
    start = html.index(heading)
    return html[start : html.index("</table>", start)]


def test_counts_print_as_counts_and_raters_sort_by_number(study: Path, tmp_path: Path) -> None:
    out = tmp_path / "r.html"
    assert main(["report", str(study), str(out), "--no-sanity", "--boot", "20"]) == 0
    html = out.read_text(encoding="utf-8")
    loo = _table_after(html, "<th>annotator</th><th>r</th><th>n</th>")
    rows = re.findall(r"<tr><td>([^<]*)</td><td>([^<]*)</td><td>([^<]*)</td></tr>", loo)
    assert [name for name, _, _ in rows] == RATERS
    assert {n for _, _, n in rows} == {"24"}  # every rater rated the 24 outputs
    qc = _table_after(html, "<th>annotator</th><th>n_ratings</th>")
    assert re.findall(r"<tr><td>([^<]*)</td>", qc) == RATERS
    assert "24.000" not in html and "24.00<" not in html


def test_latex_keeps_a_count_column_whole() -> None:
    frame = pd.DataFrame({"r": [0.8333, 0.7], "n": [45, 62]}, index=["a", "b"])
    text = to_latex(frame)
    assert "a & 0.833 & 45 \\\\" in text and "b & 0.700 & 62 \\\\" in text


def test_rater_names_sort_by_their_numbers() -> None:
    names = ["rater 10", "Rater 2", "b", "rater 1", "a", "10", "9"]
    assert sorted(names, key=name_order) == ["9", "10", "a", "b", "rater 1", "Rater 2", "rater 10"]

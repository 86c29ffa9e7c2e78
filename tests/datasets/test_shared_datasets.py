"""The real public rating files beside the project import with the counts pandas finds."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from meaningbench.datasets.exporters import export_study
from meaningbench.datasets.importer import import_file
from meaningbench.db.study import create_study
from tests.datasets.helpers import count, rows


def _norm(text: str) -> str:
    return " ".join(str(text).split())


@pytest.mark.parametrize(("name", "n_rows"), [("train.tsv", 853), ("dev.tsv", 95)])
def test_csmd_splits(new_study, shared_datasets: Path, name: str, n_rows: int) -> None:
    path = shared_datasets / "csmd" / name
    oracle = pd.read_csv(path, sep="\t")  # pandas follows CSV quoting, as the card says
    assert len(oracle) == n_rows
    pairs = {
        (_norm(s), _norm(o))
        for s, o in zip(oracle["original"], oracle["simplification"], strict=True)
    }

    report = import_file(new_study, path)
    assert report.shape == "csmd"
    assert report.rows_read == n_rows
    assert report.items_created == len(pairs)
    assert report.ratings_added == n_rows  # every published label is kept, repeats included
    assert report.conflicting_ratings == n_rows - len(pairs)
    got = rows(
        new_study,
        "SELECT r.value, a.kind, d.name FROM rating r JOIN annotator a ON a.id = r.annotator_id "
        "JOIN dimension d ON d.id = r.dimension_id",
    )
    assert {(k, d) for _, k, d in got} == {("aggregate", "meaning")}
    assert sorted(v for v, _, _ in got) == pytest.approx(sorted(oracle["label"].tolist()))


def test_simpda_2022(new_study, shared_datasets: Path) -> None:
    path = shared_datasets / "simpda2022" / "simpDA_2022.csv"
    oracle = pd.read_csv(path)
    keys = ["Input.original", "Input.simplified", "Input.system"]
    n_items = oracle.groupby(keys).ngroups
    assert (len(oracle), n_items) == (1080, 360)

    report = import_file(new_study, path, dataset="simpda")
    assert report.shape == "wide"
    assert (report.rows_read, report.items_created) == (1080, 360)
    assert report.ratings_added == 3 * 1080
    assert report.duplicate_rows == 0
    assert len(report.annotators) == oracle["WorkerId"].nunique()
    assert (
        count(new_study, "SELECT COUNT(DISTINCT system) FROM item")
        == oracle["Input.system"].nunique()
    )
    raters = rows(
        new_study,
        "SELECT COUNT(DISTINCT annotator_id) FROM rating GROUP BY item_id",
    )
    assert {r for (r,) in raters} == {3}
    # Mean adequacy per item: the study's meaning ratings against pandas on the raw file.
    expected = oracle.groupby(keys)["Answer.adequacy"].mean()
    got = rows(
        new_study,
        "SELECT i.source, i.output, i.system, AVG(r.value) FROM rating r JOIN item i ON i.id = r.item_id "
        "JOIN dimension d ON d.id = r.dimension_id WHERE d.name = 'meaning' GROUP BY i.id",
    )
    assert len(got) == 360
    for source, output, system, mean in got:
        assert mean == pytest.approx(expected[(source, output, system)])


def test_simpda_round_trip(tmp_path: Path, shared_datasets: Path) -> None:
    a = create_study(tmp_path / "a.mbstudy")
    import_file(a, shared_datasets / "simpda2022" / "simpDA_2022.csv")
    export_study(a, tmp_path / "r.jsonl", ratings=True)
    b = create_study(tmp_path / "b.mbstudy")
    report = import_file(b, tmp_path / "r.jsonl")
    assert (report.items_created, report.ratings_added) == (360, 3240)
    sql = (
        "SELECT i.source, i.output, i.system, a.name, d.name, r.value FROM rating r "
        "JOIN item i ON i.id = r.item_id JOIN annotator a ON a.id = r.annotator_id "
        "JOIN dimension d ON d.id = r.dimension_id ORDER BY 1, 2, 3, 4, 5"
    )
    assert rows(a, sql) == rows(b, sql)
    a.close()
    b.close()

"""One item, one human score: export, correlate's analysis, the browser, the comparison
view and the training targets all give what `export` writes."""

from __future__ import annotations

import csv
import math
from pathlib import Path

import pytest

from meaningbench.analysis.live import StudyAnalysis
from meaningbench.datasets.exporters import export_study
from meaningbench.datasets.importer import import_file
from meaningbench.queries.browser import connect_readonly, fetch_rows
from meaningbench.queries.compare import list_sources, load_comparison
from meaningbench.training.data import load_targets
from tests.datasets.helpers import rows, write

NAMED = (
    "source,output,system,annotator,meaning\n"
    "The old bridge was closed.,The bridge closed.,a,r1,90\n"
    "The old bridge was closed.,The bridge closed.,a,r1,30\n"  # r1 again: r1 counts as 60
    "The old bridge was closed.,The bridge closed.,a,r2,80\n"
    "Rain fell all day.,It rained.,b,r2,40\n"
)
ANONYMOUS = (
    "source,output,system,aspect,rating\n"
    "The old bridge was closed.,The bridge closed.,a,meaning,10\n"
    "Rain fell all day.,It rained.,b,meaning,70\n"
    "Rain fell all day.,It rained.,b,meaning,70\n"
    "Cats sleep.,Cats nap.,c,meaning,55\n"
)
LABELS = "source,output,system,label\nDogs bark.,Dogs are loud.,d,33\nCats sleep.,Cats nap.,c,99\n"


def test_every_consumer_reads_the_exported_score(new_study, tmp_path: Path) -> None:
    import_file(new_study, write(tmp_path / "n.csv", NAMED), dataset="d")
    import_file(new_study, write(tmp_path / "a.csv", ANONYMOUS), dataset="d")
    import_file(new_study, write(tmp_path / "g.csv", LABELS), dataset="d")
    out = tmp_path / "items.csv"
    export_study(new_study, out)
    with out.open(encoding="utf-8", newline="") as fh:
        exported = {int(r["item_id"]): float(r["meaning_human"]) for r in csv.DictReader(fh)}
    by_output = {o: exported[i] for i, o in rows(new_study, "SELECT id, output FROM item")}
    # By hand: (60 + 80 + 10) / 3; (40 + 70 + 70) / 3; raters win over the label 99; the
    # label where nobody rated.
    assert by_output == pytest.approx(
        {"The bridge closed.": 50.0, "It rained.": 60.0, "Cats nap.": 55.0, "Dogs are loud.": 33.0}
    )

    analysis = StudyAnalysis.from_study(new_study)
    raw, _ = analysis.human()
    assert dict(zip(analysis.data.item_ids.tolist(), raw.tolist(), strict=True)) == exported

    conn = connect_readonly(str(new_study.path))
    try:
        dim = conn.execute("SELECT id FROM dimension WHERE name = 'meaning'").fetchone()[0]
        shown = fetch_rows(conn, list(exported), dim)
    finally:
        conn.close()
    assert {i: r.mean_rating for i, r in shown.items()} == exported

    with new_study.session() as s:
        compared = {
            row.item_id: row.mean
            for entry in list_sources(s)
            for row in load_comparison(s, entry.source_group).rows
        }
        targets = load_targets(s)
    assert compared == exported
    got = dict(zip(targets.frame["item_id"], targets.frame["target"], strict=True))
    assert got == exported and not any(math.isnan(v) for v in got.values())

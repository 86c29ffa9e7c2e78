"""One list of an item's columns (`meaningbench.db.frames.ITEM_COLUMNS`): the items frame
has them in that order, and both exports begin with them, less the two the study derives,
holding the same values the frame holds."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from meaningbench.datasets.exporters import export_study
from meaningbench.datasets.importer import import_file
from meaningbench.db.frames import ITEM_COLUMNS, items_frame
from meaningbench.db.study import create_study
from tests.datasets.helpers import write

ITEMS = (
    "id,source,output,system,reference,rating\n"
    "a1,First source.,First output.,sysA,Ref one.,40\n"
    "a2,Second source.,Second output.,sysB,,75\n"
)
DERIVED = ("source_group", "parent_id")


def test_frame_and_exports_share_the_item_columns(tmp_path: Path) -> None:
    study = create_study(tmp_path / "s.mbstudy")
    try:
        import_file(study, write(tmp_path / "items.csv", ITEMS))
        with study.session() as s:
            frame = items_frame(s, kinds=None)
            empty = items_frame(s, dataset="no such dataset")
        assert list(frame.columns) == ITEM_COLUMNS == list(empty.columns)
        exported = [c for c in ITEM_COLUMNS if c not in DERIVED]
        for ratings in (False, True):
            out = tmp_path / f"export-{ratings}.csv"
            export_study(study, out, ratings=ratings)
            with out.open(newline="", encoding="utf-8") as f:
                table = list(csv.DictReader(f))
            assert list(table[0])[: len(exported)] == exported
            for row, item in zip(table, frame.itertuples(index=False), strict=True):
                want = item._asdict()
                assert int(row["item_id"]) == want["item_id"]
                assert json.loads(row["references"]) == want["references"]
                for column in ("dataset", "external_id", "kind", "system", "source", "output"):
                    assert row[column] == want[column], column
    finally:
        study.close()

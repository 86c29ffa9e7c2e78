"""Filling a study with items quickly (one executemany), for the job tests and benchmarks."""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable, Sequence
from pathlib import Path

from app.datasets.keys import pair_key, source_group_key
from db.study import Study

ItemRow = tuple[str, str, Sequence[str], str | None]  # source, output, references, system


def add_items(
    study: Study, rows: Iterable[ItemRow], *, dataset: str = "test", kind: str = "regular"
) -> list[int]:
    """Insert items in one transaction; returns their ids in order."""
    rows = list(rows)
    with study.session() as s:
        conn = s.connection()
        conn.exec_driver_sql(
            "INSERT OR IGNORE INTO dataset (name, meta, imported_at) VALUES (?, '{}', "
            "CURRENT_TIMESTAMP)",
            (dataset,),
        )
        dataset_id = conn.exec_driver_sql(
            "SELECT id FROM dataset WHERE name = ?", (dataset,)
        ).scalar()
        first = conn.exec_driver_sql("SELECT COALESCE(MAX(id), 0) + 1 FROM item").scalar()
        conn.exec_driver_sql(
            "INSERT INTO item (id, dataset_id, source, output, refs, system, source_group, "
            "pair_key, kind, meta) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, '{}')",
            [
                (
                    first + i,
                    dataset_id,
                    src,
                    out,
                    json.dumps(list(refs)),
                    system,
                    source_group_key(src),
                    pair_key(src, out, system),
                    kind,
                )
                for i, (src, out, refs, system) in enumerate(rows)
            ],
        )
    return list(range(first, first + len(rows)))


def csmd_rows(folder: Path, split: str = "train") -> list[tuple[str, str]]:
    with (folder / "csmd" / f"{split}.tsv").open(encoding="utf-8", newline="") as fh:
        reader = csv.reader(fh, delimiter="\t")
        next(reader)
        return [(r[0], r[1]) for r in reader if len(r) >= 2]

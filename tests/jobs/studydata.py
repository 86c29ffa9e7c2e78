"""Filling a study with items quickly (one executemany), for the job tests and benchmarks."""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable, Sequence
from pathlib import Path

from meaningbench.core.keys import pair_key, source_group_key
from meaningbench.db.study import Study

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


def simpda_rows(folder: Path) -> list[tuple[str, str]]:
    """SimpDA's distinct (original, simplified) pairs (the file has one row per rater)."""
    seen: dict[tuple[str, str], None] = {}
    with (folder / "simpda2022" / "simpDA_2022.csv").open(encoding="utf-8", newline="") as fh:
        for row in csv.DictReader(fh):
            seen[(row["Input.original"], row["Input.simplified"])] = None
    return list(seen)


def _variant(output: str, system: int) -> str:
    words = output.split()
    if system == 0 or len(words) < 4:
        return output
    if system == 1:
        return " ".join(w for i, w in enumerate(words) if i % 5 != 3)
    if system == 2:
        return " ".join(words[1:] + words[:1])
    return " ".join(words[: 3 * len(words) // 4])


def benchmark_rows(n: int, folder: Path | None, systems: int = 4) -> list[ItemRow]:
    """`n` items as a simplification study has them: each source with `systems` outputs.

    Sentences are the real CSMD and SimpDA pairs when `folder` is given (else the job tests'
    sentences); a source reused in a later round gets a round marker, so texts stay
    distinct the way a study's texts are (no unrealistic cache hits across rounds).
    """
    if folder is not None:
        base = csmd_rows(folder, "train") + csmd_rows(folder, "dev") + simpda_rows(folder)
    else:
        from tests.jobs.conftest import SENTENCES, system_output

        base = [(s, system_output(s, 1)) for s in SENTENCES]
    rows: list[ItemRow] = []
    for i in range(n):
        group = i // systems
        src, out = base[group % len(base)]
        round_ = group // len(base)
        if round_:
            src = f"{src} ({round_})"
            out = f"{out} ({round_})"
        system = i % systems
        rows.append((src, _variant(out, system), [], f"system-{system}"))
    return rows

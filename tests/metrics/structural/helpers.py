"""Build small studies for the structural tests: real study files, rows written directly."""

from __future__ import annotations

from collections.abc import Sequence

from meaningbench.core.keys import pair_key, source_group_key
from meaningbench.db.models import Dataset, Item
from meaningbench.db.study import Study


def add_items(study: Study, rows: Sequence[tuple[str, str, str | None]]) -> list[int]:
    """Add (source, output, system) items to a dataset named "test"; returns their ids."""
    with study.session() as s:
        ds = Dataset(name=f"test-{len(rows)}-{id(rows)}", format="tsv")
        s.add(ds)
        s.flush()
        items = [
            Item(
                dataset_id=ds.id,
                source=src,
                output=out,
                system=system,
                source_group=source_group_key(src),
                pair_key=pair_key(src, out, system),
            )
            for src, out, system in rows
        ]
        s.add_all(items)
        s.flush()
        return [i.id for i in items]

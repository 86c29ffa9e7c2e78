"""The local executor of `shards score`: the same batches as on Ray, in this process.

For a machine without Ray, or to check a cluster's results. Each file it writes holds up to
WRITE_ROWS items of one shard, written whole (under a temporary name, then renamed), so
Ctrl+C or a kill loses at most the file being made.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from meaningbench.runtime import JobContext

from .layout import write_table
from .scoring import built_metric, score_table
from .work import Work

WRITE_ROWS = 10_000


def score_here(
    work: Work,
    ctx: JobContext,
    *,
    runtime: Mapping[str, Any] | None = None,
    rows: int | None = None,
) -> int:
    """Score every pending pair; returns the result rows written."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    folder = work.outdir / f"local-{work.run_tag}"
    written = 0
    total = work.total_pending
    ctx.progress(0, total, "Scoring", force=True)
    for group in work.groups:
        metrics = [built_metric(e, runtime) for e in group.entries]
        step = group.rows_per_batch(rows)
        for path in group.files:
            table = pq.read_table(path)
            for start in range(0, table.num_rows, WRITE_ROWS):
                part = table.slice(start, WRITE_ROWS)
                results = []
                for s in range(0, part.num_rows, step):
                    ctx.check()
                    scored = score_table(
                        part.slice(s, step),
                        group.entries,
                        metrics,
                        study_id=work.exported.study_id,
                        details=work.details,
                        skip=group.skip,
                    )
                    results.append(scored)
                    written += scored.num_rows
                    ctx.progress(written, total, group.name)
                merged = pa.concat_tables(results)
                if merged.num_rows:
                    folder.mkdir(parents=True, exist_ok=True)
                    name = f"{path.stem}-{group.name}-{start:09d}.parquet"
                    write_table(folder / name, merged)
    return written

"""The study's side of `meaningbench.metrics.study_inputs.StudyInputs`: what a metric reads
of the study besides the pairs' texts, read here so that no metric opens the study file.

Given a path, each read opens the study and closes it again, beside the scoring job's own
connection (as a worker may read while the job writes); given an open study (the compare
view), it reads through that study's sessions.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from sqlalchemy import text
from sqlalchemy.orm import Session

from meaningbench.core.keys import source_group_key
from meaningbench.db.frames import current_scores_sql
from meaningbench.db.study import Study, open_study
from meaningbench.jobs.scene_store import item_groups, load_scenes
from meaningbench.metrics.base import Pair
from meaningbench.metrics.structural.scenes import SceneSpec

# SQLite's bound-parameter limit, with room to spare.
_CHUNK = 500


class StudyFileInputs:
    """StudyInputs over one study, opened for each read (a path) or already open."""

    def __init__(self, study: Study | Path | str) -> None:
        self._study = study

    @contextmanager
    def _session(self) -> Iterator[Session]:
        if isinstance(self._study, Study):
            with self._study.session() as s:
                yield s
            return
        study = open_study(str(self._study))
        try:
            with study.session() as s:
                yield s
        finally:
            study.close()

    def references(self, item_ids: Sequence[int]) -> list[str]:
        ids = sorted(set(item_ids))
        docs: list[str] = []
        with self._session() as s:
            conn = s.connection()
            for start in range(0, len(ids), _CHUNK):
                chunk = ids[start : start + _CHUNK]
                marks = ",".join("?" * len(chunk))
                rows = conn.exec_driver_sql(
                    f"SELECT refs FROM item WHERE id IN ({marks}) ORDER BY id", tuple(chunk)
                )
                for (refs,) in rows:
                    docs.extend(r for r in json.loads(refs or "[]") if r and r.strip())
        return docs

    def scenes(self, pairs: Sequence[Pair], origin: str) -> dict[int, list[SceneSpec]]:
        with self._session() as s:
            groups = item_groups(s, (p.item_id for p in pairs))
            by_item = {
                p.item_id: groups.get(p.item_id) or source_group_key(p.source) for p in pairs
            }
            scenes = load_scenes(s, set(by_item.values()), origin=origin)
        return {item: scenes[g] for item, g in by_item.items() if g in scenes}

    def newest_scores(
        self, metric: str, config_hash: str, item_ids: Sequence[int]
    ) -> dict[int, tuple[float | None, str | None]]:
        out: dict[int, tuple[float | None, str | None]] = {}
        wanted = set(item_ids)
        with self._session() as s:
            # The score that counts, with the input hash of the row it comes from.
            current = current_scores_sql("m.metric = :m AND m.config_hash = :h")
            rows = s.execute(
                text(
                    f"SELECT c.item_id, c.value, s.input_hash FROM ({current}) c "
                    "JOIN score s ON s.run_id = c.run_id AND s.item_id = c.item_id"
                ),
                {"m": metric, "h": config_hash},
            )
            for item_id, value, digest in rows:
                if item_id in wanted:
                    out[int(item_id)] = (None if value is None else float(value), digest)
        return out

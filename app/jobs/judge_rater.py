"""The LLM judge as a rater: its scores of a study's items stored as ratings of a machine rater.

The judge scores the items through the scoring job (so its scores are cached and shown like
every metric's), then each item it scored gets one current rating by the annotator NAME of
kind `machine`, its 0–100 value mapped onto the dimension's scale. A rerun supersedes the
rater's earlier ratings. Items the judge could not score (no score in the answer, a prompt
too long) get no rating. Machine ratings never enter an item's human score
(`meaningbench.analysis.human`); `raters` and `agreement` show them beside the humans.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from meaningbench.db.current_ratings import CURRENT, is_current
from meaningbench.db.frames import current_scores_sql
from meaningbench.db.models import Annotator, Dimension, MetricRun, Rating
from meaningbench.db.study import open_study
from meaningbench.errors import UserError
from meaningbench.jobs.scoring import ScoreRequest, score_study
from meaningbench.runtime import JobContext

MACHINE = "machine"


@dataclass(frozen=True)
class JudgeRaterResult:
    rater: str
    spec: str
    status: str  # the scoring run's: done | cached | failed | unavailable | cancelled
    rated: int  # items that got a rating
    unrated: int  # items the judge gave no score
    error: str | None = None


def judge_as_rater(
    study_path: Path,
    spec: str,
    rater: str,
    ctx: JobContext,
    *,
    dimension: str = "meaning",
    device: str = "auto",
) -> JudgeRaterResult:
    rater = rater.strip()
    if not rater:
        raise UserError("--as-rater needs a name")
    _check_rater_name(study_path, rater)
    summaries = score_study(ScoreRequest(study_path, [spec], {"device": device}), ctx)
    summary = summaries[0]
    if summary.run_id is None or summary.status in ("failed", "unavailable", "cancelled"):
        return JudgeRaterResult(rater, spec, summary.status, 0, 0, summary.error)
    ctx.check()
    study = open_study(study_path)
    try:
        with study.session(write=True) as s:
            run = s.get(MetricRun, summary.run_id)
            assert run is not None
            rows = s.connection().exec_driver_sql(
                current_scores_sql("m.metric = ? AND m.config_hash = ?"),
                (run.metric, run.config_hash),
            )
            values = {int(item): float(v) for item, _m, _h, v, _raw, _run in rows if v is not None}
            dim = s.scalar(select(Dimension).where(Dimension.name == dimension))
            if dim is None:
                raise UserError(f"no dimension {dimension!r} in this study")
            annotator = _machine_annotator(s, rater, spec, run.config_hash, run.model_id)
            s.execute(
                update(Rating)
                .where(
                    Rating.annotator_id == annotator.id,
                    Rating.dimension_id == dim.id,
                    is_current(),
                )
                .values(state="superseded")
            )
            low, high = float(dim.min_value), float(dim.max_value)
            for item_id, value in sorted(values.items()):
                s.add(
                    Rating(
                        item_id=item_id,
                        annotator_id=annotator.id,
                        dimension_id=dim.id,
                        value=low + (high - low) * value / 100.0,
                        state=CURRENT,
                        origin=f"judge:{spec}",
                    )
                )
            n_items = int(s.connection().exec_driver_sql("SELECT COUNT(*) FROM item").scalar() or 0)
    finally:
        study.close()
    return JudgeRaterResult(rater, spec, summary.status, len(values), n_items - len(values))


def _check_rater_name(study_path: Path, rater: str) -> None:
    study = open_study(study_path)
    try:
        with study.session() as s:
            kind = s.scalar(select(Annotator.kind).where(Annotator.name == rater))
    finally:
        study.close()
    if kind is not None and kind != MACHINE:
        raise UserError(
            f"{rater!r} is a {kind} rater of this study; a judge's ratings need a name of their own"
        )


def _machine_annotator(
    s: Session, rater: str, spec: str, config_hash: str, model: str | None
) -> Annotator:
    annotator = s.scalar(select(Annotator).where(Annotator.name == rater))
    meta = {"judge": spec, "config_hash": config_hash, "model": model}
    if annotator is None:
        annotator = Annotator(name=rater, kind=MACHINE, meta=meta)
        s.add(annotator)
        s.flush()
    else:
        annotator.meta = meta
    return annotator

"""A returned kit's practice answers, brought into the lead's study by `collect`.

A kit carries the study's practice items and its rater's answers so far (`making`), so a
rater practises offline and the lead sees every attempt once the kit is back, whether it
holds ratings or not (a rater stopped by the pass mark sends back only their practice).
An answer is matched to the lead's practice item by its text (source and output), and
whether it fell in the expected range is judged again against the lead's own gold, never
taken from the kit. An answer already in the lead's study (an earlier kit's, which the next
kit carries again, or the same kit collected twice) is not added twice: the rater, item,
value and time together name it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from sqlalchemy import select
from sqlalchemy.orm import Session

from meaningbench.db.models import Annotator, PracticeAnswer, PracticeItem
from meaningbench.db.study import Study
from meaningbench.errors import UserError


@dataclass(frozen=True)
class KitAnswer:
    source: str
    output: str
    value: float
    submitted_at: datetime


def read_answers(src: Session, path: Path, rater: str, nothing: str) -> list[KitAnswer]:
    """The kit rater's practice answers, each checked: a number in 0–100 given to a
    practice item the kit holds; the first that is not refuses the kit."""
    rows = src.execute(
        select(
            PracticeAnswer.id,
            PracticeItem.source,
            PracticeItem.output,
            PracticeAnswer.value,
            PracticeAnswer.submitted_at,
            Annotator.name,
        )
        .outerjoin(PracticeItem, PracticeItem.id == PracticeAnswer.practice_item_id)
        .outerjoin(Annotator, Annotator.id == PracticeAnswer.annotator_id)
        .order_by(PracticeAnswer.id)
    ).all()
    out = []
    for answer_id, source, output, value, at, name in rows:
        where = f"{path}: practice answer {answer_id}"
        if source is None or output is None:
            raise UserError(f"{where} points at a practice item the kit does not hold; {nothing}")
        if name != rater:
            raise UserError(f"{where} is not the kit's rater {rater!r}'s; {nothing}")
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise UserError(f"{where} has value {value!r}, not a number; {nothing}")
        if not math.isfinite(value) or not 0 <= value <= 100:
            raise UserError(f"{where} has value {value!r}, outside 0–100; {nothing}")
        if not isinstance(at, datetime):
            raise UserError(f"{where} has a time that is not a date and time; {nothing}")
        out.append(KitAnswer(str(source), str(output), float(value), at))
    return out


def missing_items(study: Study, answers: list[KitAnswer]) -> list[str]:
    """The practice items the kit's answers name that the lead's study does not have."""
    with study.session() as s:
        known = {(a, b) for a, b in s.execute(select(PracticeItem.source, PracticeItem.output))}
    return sorted({a.output for a in answers if (a.source, a.output) not in known})


def add_answers(s: Session, rater: str, answers: list[KitAnswer]) -> int:
    """Store the answers the lead's study lacks, judged against its gold, in the open
    transaction `s` (the collect's, with the kit's ratings); returns how many."""
    if not answers:
        return 0
    annotator = s.scalar(select(Annotator).where(Annotator.name == rater))
    if annotator is None:
        return 0  # a kit's rater is always the lead's: the collect checked it
    items = {
        (p.source, p.output): p
        for p in s.scalars(select(PracticeItem))  # a few dozen at most
    }
    held = {
        (i, v, t)
        for i, v, t in s.execute(
            select(
                PracticeAnswer.practice_item_id,
                PracticeAnswer.value,
                PracticeAnswer.submitted_at,
            ).where(PracticeAnswer.annotator_id == annotator.id)
        )
    }
    added = 0
    for a in answers:
        item = items.get((a.source, a.output))
        if item is None or (item.id, a.value, a.submitted_at) in held:
            continue
        s.add(
            PracticeAnswer(
                practice_item_id=item.id,
                annotator_id=annotator.id,
                value=a.value,
                passed=item.low <= a.value <= item.high,
                submitted_at=a.submitted_at,
            )
        )
        held.add((item.id, a.value, a.submitted_at))
        added += 1
    return added

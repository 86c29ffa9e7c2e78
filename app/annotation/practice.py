"""Practice with gold: pairs a new rater scores first, with feedback against an expected range.

Practice items and answers have tables of their own (`practice_item`, `practice_answer`),
never `item` or `rating`: no analysis, export, agreement figure or metric correlation reads
those tables, so a practice answer cannot reach a result however a query is written.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import func, select

from meaningbench.annotation.queue import get_or_create_annotator
from meaningbench.core.numbers import NumberProblem, plain_number
from meaningbench.db.models import Annotator, PracticeAnswer, PracticeItem
from meaningbench.db.study import Study
from meaningbench.errors import UserError

PRACTICE_COLUMNS = ("source", "output", "low", "high", "explanation")


@dataclass(frozen=True)
class Practice:
    id: int
    source: str
    output: str
    low: float
    high: float
    explanation: str


@dataclass(frozen=True)
class Feedback:
    value: float
    passed: bool
    low: float
    high: float
    explanation: str

    def text(self) -> str:
        verdict = "within" if self.passed else ("below" if self.value < self.low else "above")
        return f"You gave {self.value:g}: {verdict} the expected {self.low:g}–{self.high:g}." + (
            f" {self.explanation}" if self.explanation else ""
        )


def read_practice_file(path: Path) -> list[tuple[str, str, float, float, str]]:
    """Rows of a practice CSV (source, output, low, high[, explanation]); all or nothing."""
    try:
        with path.open(encoding="utf-8", newline="") as f:
            reader = csv.DictReader(f)
            missing = [c for c in PRACTICE_COLUMNS[:4] if c not in (reader.fieldnames or [])]
            if missing:
                raise UserError(f"{path.name}: missing column(s) {', '.join(missing)}.")
            rows = []
            for line, row in enumerate(reader, start=2):
                where = f"{path.name}, row {line}"
                values = []
                for col in ("low", "high"):
                    try:
                        values.append(plain_number(row[col] or ""))
                    except NumberProblem as exc:
                        raise UserError(f"{where}, column {col!r}: {exc}.") from None
                low, high = values
                if not 0 <= low <= high <= 100:
                    raise UserError(
                        f"{where}, columns 'low'/'high': {low:g}–{high:g} is not a range in 0–100."
                    )
                for col in ("source", "output"):
                    if not (row[col] or "").strip():
                        raise UserError(f"{where}, column {col!r}: empty.")
                rows.append((row["source"], row["output"], low, high, row.get("explanation") or ""))
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"{path}: cannot be read ({exc}).") from exc
    return rows


def add_practice(study: Study, rows: list[tuple[str, str, float, float, str]]) -> int:
    with study.session(write=True) as s:
        start = int(s.scalar(select(func.max(PracticeItem.position))) or 0)
        s.add_all(
            PracticeItem(source=a, output=b, low=lo, high=hi, explanation=e, position=start + i + 1)
            for i, (a, b, lo, hi, e) in enumerate(rows)
        )
    return len(rows)


class PracticeSession:
    """One rater's practice block: the items not answered yet, in the study's order."""

    def __init__(self, study: Study, annotator_name: str) -> None:
        self.study = study
        with study.session(write=True) as s:
            annotator = get_or_create_annotator(s, annotator_name)
            if annotator.kind != "named":
                raise UserError(
                    f"{annotator_name!r} is an imported {annotator.kind} rating source, not a "
                    "rater; choose another annotator name."
                )
            self.annotator_id = annotator.id

    def pending(self) -> list[Practice]:
        with self.study.session() as s:
            answered = select(PracticeAnswer.practice_item_id).where(
                PracticeAnswer.annotator_id == self.annotator_id
            )
            rows = s.scalars(
                select(PracticeItem)
                .where(PracticeItem.id.not_in(answered))
                .order_by(PracticeItem.position, PracticeItem.id)
            ).all()
            return [Practice(r.id, r.source, r.output, r.low, r.high, r.explanation) for r in rows]

    def answer(self, practice: Practice, value: float) -> Feedback:
        passed = practice.low <= value <= practice.high
        with self.study.session(write=True) as s:
            s.add(
                PracticeAnswer(
                    practice_item_id=practice.id,
                    annotator_id=self.annotator_id,
                    value=float(value),
                    passed=passed,
                )
            )
        return Feedback(float(value), passed, practice.low, practice.high, practice.explanation)


@dataclass(frozen=True)
class PracticeResult:
    rater: str
    answered: int
    passed: int


def practice_results(study: Study) -> list[PracticeResult]:
    with study.session() as s:
        rows = s.execute(
            select(
                Annotator.name,
                func.count(PracticeAnswer.id),
                func.count().filter(PracticeAnswer.passed.is_(True)),
            )
            .join(Annotator, Annotator.id == PracticeAnswer.annotator_id)
            .group_by(Annotator.name)
            .order_by(Annotator.name)
        ).all()
    return [PracticeResult(name, int(n), int(ok)) for name, n, ok in rows]

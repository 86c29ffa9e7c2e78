"""Practice with gold: pairs a new rater scores first, with feedback against an expected range.

Practice items and answers have tables of their own (`practice_item`, `practice_answer`),
never `item` or `rating`: no analysis, export, agreement figure or metric correlation reads
those tables, so a practice answer cannot reach a result however a query is written.

The pass mark (the study's settings, `AnnotationSettings.practice_pass_items` and the three
after it): in one attempt, at least K practice items answered within N points of their gold.
A practice item's gold is its expected range low–high, so "within N points of gold" is a
value in low − N … high + N (`within_gold`, the one place the rule is written); N = 0 is
the range itself. An attempt is one pass through every practice item. A rater who has not
passed by their last attempt is stopped (they cannot rate) or rates flagged, as the study
says. Without a pass mark the practice is one pass, and nothing depends on it.

An answer's attempt is its rank among the rater's answers to the same practice item (first
answer: attempt 1), so nothing stores it apart from the answers themselves: a kit made by
an older version carries its attempts, and answers collected from a kit keep theirs.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from meaningbench.annotation.kit_log import record_practice
from meaningbench.annotation.queue import get_or_create_annotator
from meaningbench.annotation.settings import AFTER_FAILED_PRACTICE, load_settings
from meaningbench.core.numbers import NumberProblem, plain_number
from meaningbench.core.readers import csv_problem
from meaningbench.db.models import Annotator, PracticeAnswer, PracticeItem
from meaningbench.db.study import Study
from meaningbench.errors import UserError

PRACTICE_COLUMNS = ("source", "output", "low", "high", "explanation")


class PracticeNotPassed(UserError):
    """The rater may not rate: the study's practice pass mark is not reached (yet)."""


@dataclass(frozen=True)
class Practice:
    id: int
    source: str
    output: str
    low: float
    high: float
    explanation: str


def within_gold(value: float, low: float, high: float, points: float) -> bool:
    """Whether a practice answer is within `points` of the item's gold, its expected range
    low–high: the range widened by `points` on each side (0: the range itself)."""
    return low - points <= value <= high + points


@dataclass(frozen=True)
class PassMark:
    """At least `items` practice items within `points` of gold in one attempt, in at most
    `attempts` attempts; then `after_failed` ("stop" or "flag")."""

    items: int
    points: float
    attempts: int
    after_failed: str

    def goal(self, total: int) -> str:
        """`2 of the 3 practice items within 10 points of the expected range`."""
        near = (
            "inside the expected range"
            if not self.points
            else f"within {self.points:g} points of the expected range"
        )
        return f"{self.items} of the {total} practice items {near}"

    def text(self, total: int) -> str:
        tries = "1 attempt" if self.attempts == 1 else f"{self.attempts} attempts"
        after = AFTER_FAILED_PRACTICE.get(self.after_failed, self.after_failed)
        return f"{self.goal(total)}, in at most {tries}; after the last failed one, {after}"


def pass_mark_of(session: Session) -> PassMark | None:
    settings = load_settings(session)
    if settings.practice_pass_items is None:
        return None
    return PassMark(
        settings.practice_pass_items,
        float(settings.practice_within),
        settings.practice_attempts,
        settings.practice_after_failed,
    )


@dataclass(frozen=True)
class Feedback:
    value: float
    passed: bool
    low: float
    high: float
    explanation: str
    # Within the pass mark's points of the range, though outside it (None: no pass mark).
    counts: bool | None = None

    def text(self) -> str:
        verdict = "within" if self.passed else ("below" if self.value < self.low else "above")
        near = (
            " — close enough: it counts toward the pass mark"
            if (self.counts and not self.passed)
            else ""
        )
        return (
            f"You gave {self.value:g}: {verdict} the expected {self.low:g}–{self.high:g}{near}."
            + (f" {self.explanation}" if self.explanation else "")
        )


@dataclass(frozen=True)
class Attempt:
    """One pass through the practice items: how many answered, how many within the mark's
    points of gold, and whether it passed (None: not finished, or no pass mark)."""

    number: int
    answered: int
    within: int
    passed: bool | None


@dataclass(frozen=True)
class PracticeStanding:
    """A rater's practice: their attempts against the study's pass mark, and what follows."""

    rater: str
    items: int  # the study's practice items: an attempt's length
    mark: PassMark | None
    attempts: tuple[Attempt, ...]

    @property
    def passed(self) -> bool:
        return any(a.passed for a in self.attempts)

    @property
    def finished(self) -> int:
        """Attempts through every practice item."""
        return sum(1 for a in self.attempts if a.answered >= self.items)

    @property
    def failed(self) -> bool:
        """Every attempt used, none passed."""
        mark = self.mark
        return mark is not None and not self.passed and self.finished >= mark.attempts

    @property
    def attempts_left(self) -> int:
        if self.mark is None or self.passed:
            return 0
        return max(0, self.mark.attempts - self.finished)

    @property
    def stopped(self) -> bool:
        return self.failed and self.mark is not None and self.mark.after_failed == "stop"

    @property
    def flagged(self) -> bool:
        """Rates after failing the practice: the lead sees the flag."""
        return self.failed and self.mark is not None and self.mark.after_failed == "flag"

    @property
    def may_rate(self) -> bool:
        """No pass mark, or passed, or failed where the study lets a failed rater rate."""
        return self.mark is None or not self.items or self.passed or self.flagged

    def current(self) -> int:
        """The attempt the rater answers now (0: none left to answer)."""
        if self.mark is None or not self.items:
            return 1 if not self.attempts or self.attempts[0].answered < self.items else 0
        last = self.attempts[-1] if self.attempts else None
        if last is None or last.answered < self.items:
            return 1 if last is None else last.number
        return 0 if self.passed or self.failed else last.number + 1

    def verdict(self) -> str:
        """One word for the lead's table: passed, stopped, flagged, under way, not started
        (or, with no pass mark, done)."""
        if not self.attempts:
            return "not started" if self.items else ""
        if self.mark is None:
            return "done" if self.attempts[0].answered >= self.items else "under way"
        if self.passed:
            return "passed"
        if self.failed:
            return "flagged" if self.flagged else "stopped"
        return "under way"

    def summary(self) -> str:
        """`passed on attempt 2 (3 of 5, then 5 of 5)`, for the lead's views."""
        if not self.attempts:
            return "not started" if self.items else "no practice"
        counts = ", then ".join(f"{a.within} of {self.items}" for a in self.attempts)
        if self.mark is None:
            return f"{self.attempts[0].answered} of {self.items} answered, {counts} in range"
        if self.passed:
            first = next(a.number for a in self.attempts if a.passed)
            return f"passed on attempt {first} ({counts})"
        if self.failed:
            verdict = "failed, flagged" if self.flagged else "failed, stopped"
            return f"{verdict} after {self.finished} attempts ({counts})"
        return f"attempt {self.current()} of {self.mark.attempts} under way ({counts})"

    def refusal(self) -> str | None:
        """Why the rater cannot rate yet, and what to do (None: they can)."""
        if self.may_rate:
            return None
        assert self.mark is not None
        if self.stopped:
            return (
                f"You did not reach the practice pass mark in {self.finished} attempts: "
                f"{self.mark.goal(self.items)}, in one attempt. You cannot rate the study's "
                "items yet. "
                "Contact your study lead: they can go through the practice with you, or "
                "give you another attempt."
            )
        return (
            f"Finish the practice first: {self.mark.goal(self.items)}, in one attempt. "
            f"Attempt {self.current()} of {self.mark.attempts}."
        )


def read_practice_file(path: Path) -> list[tuple[str, str, float, float, str]]:
    """Rows of a practice CSV (source, output, low, high[, explanation]); all or nothing."""
    try:
        with path.open(encoding="utf-8", newline="") as f:
            reader = csv.DictReader(f, strict=True)  # as imports read: see csv_problem
            line = 1  # the last row read whole: a parse error is in the next
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
    except csv.Error as exc:
        raise UserError(f"{path.name}, row {line + 1}: {csv_problem(exc)}.") from None
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

    def standing(self) -> PracticeStanding:
        with self.study.session() as s:
            return _standing(s, self.annotator_id)

    def pending(self) -> list[Practice]:
        """The practice items the current attempt still asks, in the study's order."""
        with self.study.session() as s:
            attempt = _standing(s, self.annotator_id).current()
            if not attempt:
                return []
            counts = _answer_counts(s, self.annotator_id)
            rows = s.scalars(
                select(PracticeItem).order_by(PracticeItem.position, PracticeItem.id)
            ).all()
            return [
                Practice(r.id, r.source, r.output, r.low, r.high, r.explanation)
                for r in rows
                if counts.get(r.id, 0) < attempt
            ]

    def answer(self, practice: Practice, value: float) -> Feedback:
        passed = practice.low <= value <= practice.high
        with self.study.session(write=True) as s:
            mark = pass_mark_of(s)
            s.add(
                PracticeAnswer(
                    practice_item_id=practice.id,
                    annotator_id=self.annotator_id,
                    value=float(value),
                    passed=passed,
                )
            )
            # In a kit, sealed with the answer: collect refuses a kit whose answers were
            # edited, added or deleted since (a failed attempt's, say).
            record_practice(s, practice.id)
        counts = (
            None if mark is None else within_gold(value, practice.low, practice.high, mark.points)
        )
        return Feedback(
            float(value), passed, practice.low, practice.high, practice.explanation, counts
        )


def _answer_counts(s: Session, annotator_id: int) -> dict[int, int]:
    rows = s.execute(
        select(PracticeAnswer.practice_item_id, func.count())
        .where(PracticeAnswer.annotator_id == annotator_id)
        .group_by(PracticeAnswer.practice_item_id)
    ).all()
    return {int(i): int(n) for i, n in rows}


def _standing(s: Session, annotator_id: int) -> PracticeStanding:
    """The rater's attempts: the k-th answer to each practice item is of attempt k."""
    mark = pass_mark_of(s)
    gold = {
        int(i): (lo, hi)
        for i, lo, hi in s.execute(select(PracticeItem.id, PracticeItem.low, PracticeItem.high))
    }
    name = s.scalar(select(Annotator.name).where(Annotator.id == annotator_id)) or ""
    answers = s.execute(
        select(PracticeAnswer.practice_item_id, PracticeAnswer.value)
        .where(PracticeAnswer.annotator_id == annotator_id)
        .order_by(PracticeAnswer.submitted_at, PracticeAnswer.id)
    ).all()
    seen: dict[int, int] = {}
    answered: dict[int, int] = {}
    within: dict[int, int] = {}
    for item_id, value in answers:
        if item_id not in gold:
            continue
        number = seen[item_id] = seen.get(item_id, 0) + 1
        answered[number] = answered.get(number, 0) + 1
        points = mark.points if mark is not None else 0.0
        hit = within_gold(float(value), *gold[item_id], points)
        within[number] = within.get(number, 0) + int(hit)
    attempts = tuple(
        Attempt(
            n,
            answered[n],
            within[n],
            None if mark is None or answered[n] < len(gold) else within[n] >= mark.items,
        )
        for n in sorted(answered)
    )
    return PracticeStanding(str(name), len(gold), mark, attempts)


def rater_standing(study: Study, annotator_name: str) -> PracticeStanding | None:
    """A rater's practice standing (None: no such rater in the study)."""
    with study.session() as s:
        annotator_id = s.scalar(select(Annotator.id).where(Annotator.name == annotator_name))
        return None if annotator_id is None else _standing(s, int(annotator_id))


def practice_refusal(s: Session, annotator_id: int) -> str | None:
    """Why the rater may not rate yet under the study's pass mark (None: they may)."""
    if pass_mark_of(s) is None:
        return None
    return _standing(s, annotator_id).refusal()


def standings(study: Study) -> list[PracticeStanding]:
    """Every named rater's practice, by name (those with a queue or an answer)."""
    with study.session() as s:
        ids = s.scalars(
            select(Annotator.id).where(Annotator.kind == "named").order_by(Annotator.name)
        ).all()
        return [_standing(s, int(i)) for i in ids]


@dataclass(frozen=True)
class PracticeResult:
    rater: str
    answered: int
    passed: int
    # Per attempt: (answered, within the pass mark's points of gold); and the standing.
    attempts: tuple[tuple[int, int], ...] = ()
    status: str = ""
    may_rate: bool = True
    flagged: bool = False


def practice_results(study: Study) -> list[PracticeResult]:
    """Per rater who answered any practice: answers, those in the expected range, and
    their attempts against the pass mark."""
    with study.session() as s:
        rows = s.execute(
            select(
                Annotator.id,
                Annotator.name,
                func.count(PracticeAnswer.id),
                func.count().filter(PracticeAnswer.passed.is_(True)),
            )
            .join(Annotator, Annotator.id == PracticeAnswer.annotator_id)
            .group_by(Annotator.id, Annotator.name)
            .order_by(Annotator.name)
        ).all()
        out = []
        for annotator_id, name, n, ok in rows:
            standing = _standing(s, int(annotator_id))
            out.append(
                PracticeResult(
                    name,
                    int(n),
                    int(ok),
                    tuple((a.answered, a.within) for a in standing.attempts),
                    standing.summary(),
                    standing.may_rate,
                    standing.flagged,
                )
            )
    return out

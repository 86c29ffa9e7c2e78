"""Error spans (error span annotation): what a span is, how it is checked and stored.

A span is a stretch of an item's output — or, for an omission, of its source — given as
character offsets (Python string indices, end exclusive) with a severity. The text it
covers is stored beside the offsets, so an export can be checked against the item and a
changed item can never silently move a span onto other words.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.orm import Session

from meaningbench.db.models import SPAN_SEVERITIES, SPAN_SIDES, RatingSpan
from meaningbench.errors import UserError

_WORD = re.compile(r"\S+")


@dataclass(frozen=True, order=True)
class Span:
    side: str  # output | source
    start: int
    end: int
    severity: str  # minor | major
    text: str

    def to_json(self) -> dict[str, object]:
        return {
            "side": self.side,
            "start": self.start,
            "end": self.end,
            "severity": self.severity,
            "text": self.text,
        }


def words(text: str) -> list[tuple[int, int]]:
    """The (start, end) offsets of the text's words: what a span editor steps over."""
    return [(m.start(), m.end()) for m in _WORD.finditer(text)]


def make_span(side: str, text: str, start: int, end: int, severity: str) -> Span:
    return Span(side=side, start=start, end=end, severity=severity, text=text[start:end])


def check_span(span: Span, source: str, output: str, where: str = "") -> None:
    """Refuse a span that does not fit its item; `where` says where it came from."""
    at = f"{where}: " if where else ""
    if span.side not in SPAN_SIDES:
        raise UserError(f"{at}side must be one of {', '.join(SPAN_SIDES)}, not {span.side!r}.")
    if span.severity not in SPAN_SEVERITIES:
        raise UserError(
            f"{at}severity must be one of {', '.join(SPAN_SEVERITIES)}, not {span.severity!r}."
        )
    text = output if span.side == "output" else source
    if not 0 <= span.start < span.end <= len(text):
        raise UserError(
            f"{at}offsets {span.start}–{span.end} do not fit the {span.side} "
            f"({len(text)} characters)."
        )
    if text[span.start : span.end] != span.text:
        raise UserError(
            f"{at}the {span.side} has {text[span.start : span.end]!r} at "
            f"{span.start}–{span.end}, not {span.text!r}."
        )


def check_no_overlap(spans: Sequence[Span], where: str = "") -> None:
    at = f"{where}: " if where else ""
    for side in SPAN_SIDES:
        ordered = sorted(s for s in spans if s.side == side)
        for a, b in zip(ordered, ordered[1:], strict=False):
            if b.start < a.end:
                raise UserError(
                    f"{at}spans {a.start}–{a.end} and {b.start}–{b.end} of the {side} overlap."
                )


def store_spans(session: Session, rating_id: int, spans: Iterable[Span]) -> None:
    session.add_all(
        RatingSpan(
            rating_id=rating_id,
            side=s.side,
            start=s.start,
            end=s.end,
            severity=s.severity,
            text=s.text,
        )
        for s in spans
    )


def spans_of(session: Session, rating_ids: Sequence[int]) -> dict[int, tuple[Span, ...]]:
    """The spans of each rating, output first, in text order."""
    out: dict[int, list[Span]] = {}
    if not rating_ids:
        return {}
    rows = session.scalars(
        select(RatingSpan).where(RatingSpan.rating_id.in_(list(rating_ids)))
    ).all()
    for r in rows:
        out.setdefault(r.rating_id, []).append(
            Span(side=r.side, start=r.start, end=r.end, severity=r.severity, text=r.text)
        )
    return {
        rid: tuple(sorted(spans, key=lambda s: (SPAN_SIDES.index(s.side), s.start)))
        for rid, spans in out.items()
    }

"""Pre-filled error spans (ESA^AI): an LLM judge's spans proposed on the ESA screen, and
what the rater made of each.

The spans come from a stored `llm_judge` run with a span template (`template=esa`): each
score's details keep the judge's list `[{"text": ..., "severity": ...}]`. The study's setting
(`AnnotationSettings.esa_prefill`) names the run's configuration; the screen only reads what
is stored, so no model runs while a rater waits. A judge names its spans by their words, not
by offsets, so each is looked up in the output (`locate`): the first place its words stand
that no earlier proposal covers, widened to whole words; a span whose words are not in the
output is left out. A severity other than minor or major counts as minor, but `critical`
and the like count as major.

When the rater submits, each proposal gets its fate (`ProposalFate`): kept (the span as
proposed), edited (another extent or severity) or deleted (no span; the record stays).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select, text
from sqlalchemy.orm import Session

from meaningbench.annotation.spans import Span, check_span, make_span, words
from meaningbench.db.frames import current_scores_sql
from meaningbench.db.models import RatingSpan, SpanProposal
from meaningbench.errors import UserError

JUDGE = "llm_judge"
MAJOR_WORDS = ("major", "critical", "severe")


@dataclass(frozen=True)
class PrefillSource:
    """A stored judge configuration whose error spans pre-fill the ESA screen."""

    metric: str
    config_hash: str
    label: str  # the run's label, as `score` and the browser name it
    model: str
    template: str

    def to_json(self) -> dict[str, str]:
        return {
            "metric": self.metric,
            "config_hash": self.config_hash,
            "label": self.label,
            "model": self.model,
            "template": self.template,
        }

    @classmethod
    def from_json(cls, raw: Any) -> PrefillSource | None:
        keys = ("metric", "config_hash", "label", "model", "template")
        if not isinstance(raw, dict) or not all(isinstance(raw.get(k), str) for k in keys):
            return None
        return cls(**{k: raw[k] for k in keys})

    def describe(self) -> str:
        return f"{self.label} (model {self.model}, template {self.template}, config {self.config_hash[:10]})"


@dataclass(frozen=True)
class ProposedSpan:
    """A span a model proposed, and which model, configuration and template proposed it."""

    span: Span
    model: str
    config_hash: str
    template: str


@dataclass(frozen=True)
class ProposalFate:
    """A proposal and the rater's span made from it (None: deleted)."""

    proposal: ProposedSpan
    span: Span | None

    @property
    def fate(self) -> str:
        if self.span is None:
            return "deleted"
        return "kept" if self.span == self.proposal.span else "edited"


def severity_of(raw: object) -> str:
    word = str(raw or "").strip().lower()
    return "major" if word.startswith(MAJOR_WORDS) else "minor"


def _widen(text_: str, start: int, end: int) -> tuple[int, int]:
    """The offsets widened to the whole words they touch (the editor marks whole words)."""
    touched = [(a, b) for a, b in words(text_) if a < end and b > start]
    if not touched:
        return start, end
    return touched[0][0], touched[-1][1]


def locate(raw_spans: Sequence[Any], output: str) -> list[Span]:
    """The judge's spans as output spans, in the judge's order, none overlapping another."""
    placed: list[Span] = []
    # Case does not matter where lower-casing keeps every offset (it does not for "İ").
    blind = len(output.lower()) == len(output)
    haystack = output.lower() if blind else output
    for raw in raw_spans:
        if not isinstance(raw, dict):
            continue
        wanted = str(raw.get("text") or "").strip()
        wanted = wanted.lower() if blind else wanted
        if not wanted:
            continue
        found = None
        at = haystack.find(wanted)
        while at >= 0:
            start, end = _widen(output, at, at + len(wanted))
            if all(end <= s.start or start >= s.end for s in placed):
                found = (start, end)
                break
            at = haystack.find(wanted, at + 1)
        if found is not None:
            placed.append(make_span("output", output, *found, severity_of(raw.get("severity"))))
    return placed


def prefill_candidates(session: Session) -> list[PrefillSource]:
    """The stored judge configurations that give error spans, newest first."""
    rows = session.execute(
        text(
            """
            SELECT m.metric, m.config_hash, m.label, m.model_id, m.config, MAX(m.id) AS last
            FROM metric_run m
            WHERE m.metric = :judge AND EXISTS (
                SELECT 1 FROM score s WHERE s.run_id = m.id
                AND json_type(s.details, '$.spans') = 'array')
            GROUP BY m.metric, m.config_hash
            ORDER BY last DESC
            """
        ),
        {"judge": JUDGE},
    ).all()
    out = []
    for metric, config_hash, label, model_id, config, _last in rows:
        conf = config if isinstance(config, dict) else _json(config)
        template = str(conf.get("template", "")) if isinstance(conf, dict) else ""
        out.append(PrefillSource(metric, config_hash, label, str(model_id or ""), template))
    return out


def _json(raw: object) -> Any:
    import json

    try:
        return json.loads(raw) if isinstance(raw, str) else raw
    except ValueError:
        return None


SCORE_WITH_SPANS = "meaningbench score STUDY --metrics 'llm_judge[template=esa]'"


def _hash_named(name: str, config_hash: str) -> bool:
    """Whether `name` is a prefix, long enough to tell runs apart, of a configuration hash."""
    return len(name) >= 6 and config_hash.startswith(name)


def _judge_runs_named(session: Session, name: str) -> list[str]:
    """The labels of the stored llm_judge runs `name` names, with error spans or not."""
    rows = session.execute(
        text("SELECT DISTINCT label, config_hash FROM metric_run WHERE metric = :judge"),
        {"judge": JUDGE},
    ).all()
    return sorted({label for label, h in rows if label == name or _hash_named(name, h)})


def find_prefill(session: Session, name: str) -> PrefillSource:
    """The stored judge configuration a run label (or config hash prefix) names."""
    found = prefill_candidates(session)
    match = [c for c in found if c.label == name] or [
        c for c in found if _hash_named(name, c.config_hash)
    ]
    if len(match) == 1:
        return match[0]
    if len(match) > 1:
        raise UserError(f"{name!r} names more than one stored judge configuration; give its label")
    known = "; ".join(c.label for c in found)
    without = _judge_runs_named(session, name)
    if without:
        others = f"; runs with error spans: {known}" if known else ""
        raise UserError(
            f"the stored llm_judge run {without[0]!r} has no error spans to pre-fill from: "
            "none of its answers holds a list of spans (the esa template asks the judge for "
            f"them: {SCORE_WITH_SPANS}){others}"
        )
    if not found:
        raise UserError(
            f"no stored llm_judge run of this study has error spans to pre-fill from ({name!r}); "
            f"score the items first: {SCORE_WITH_SPANS}"
        )
    raise UserError(f"no stored llm_judge run with error spans is named {name!r}; known: {known}")


def proposals_for(
    session: Session, source: PrefillSource, item_id: int, output: str
) -> tuple[ProposedSpan, ...]:
    """The source's spans for one item, from the score that counts (the newest run's)."""
    sql = current_scores_sql("m.metric = :m AND m.config_hash = :h AND s.item_id = :i")
    details = session.execute(
        text(
            f"SELECT s.details FROM score s JOIN ({sql}) c "
            "ON c.run_id = s.run_id AND c.item_id = s.item_id"
        ),
        {"m": source.metric, "h": source.config_hash, "i": item_id},
    ).scalar()
    details = _json(details)
    raw = details.get("spans") if isinstance(details, dict) else None
    if not isinstance(raw, list):
        return ()
    return tuple(
        ProposedSpan(span, source.model, source.config_hash, source.template)
        for span in locate(raw, output)
    )


def check_fates(
    fates: Sequence[ProposalFate], spans: Sequence[Span], source: str, output: str, where: str
) -> None:
    """Refuse proposals that do not fit the item or point at a span the rating lacks."""
    for fate in fates:
        check_span(fate.proposal.span, source, output, f"{where}, proposal")
        if fate.span is not None and fate.span not in spans:
            raise UserError(f"{where}: a kept or edited proposal's span is not among the spans.")
    made = [f.span for f in fates if f.span is not None]
    if len(made) != len(set(made)):
        raise UserError(f"{where}: two proposals became the same span.")


def store_fates(session: Session, rating_id: int, fates: Sequence[ProposalFate]) -> None:
    """Record each proposal with the span it became (the rating's spans are stored first)."""
    if not fates:
        return
    session.flush()
    rows = session.scalars(select(RatingSpan).where(RatingSpan.rating_id == rating_id)).all()
    ids = {(r.side, r.start, r.end): r.id for r in rows}
    for f in fates:
        p = f.proposal
        session.add(
            SpanProposal(
                rating_id=rating_id,
                span_id=None if f.span is None else ids[(f.span.side, f.span.start, f.span.end)],
                side=p.span.side,
                start=p.span.start,
                end=p.span.end,
                severity=p.span.severity,
                text=p.span.text,
                model=p.model,
                config_hash=p.config_hash,
                template=p.template,
                fate=f.fate,
            )
        )


def fates_of(session: Session, rating_ids: Sequence[int]) -> dict[int, tuple[ProposalFate, ...]]:
    """The proposals of each rating with the span each became, in proposal order."""
    if not rating_ids:
        return {}
    rows = session.execute(
        select(SpanProposal, RatingSpan)
        .outerjoin(RatingSpan, RatingSpan.id == SpanProposal.span_id)
        .where(SpanProposal.rating_id.in_(list(rating_ids)))
        .order_by(SpanProposal.id)
    ).all()
    out: dict[int, list[ProposalFate]] = {}
    for p, r in rows:
        proposed = ProposedSpan(
            Span(p.side, p.start, p.end, p.severity, p.text), p.model, p.config_hash, p.template
        )
        span = None if r is None else Span(r.side, r.start, r.end, r.severity, r.text)
        out.setdefault(p.rating_id, []).append(ProposalFate(proposed, span))
    return {k: tuple(v) for k, v in out.items()}


PROPOSAL_KEYS = ("side", "start", "end", "severity", "text", "model", "config_hash", "template")


def proposal_json(fate: ProposalFate) -> dict[str, object]:
    p = fate.proposal
    return {
        **p.span.to_json(),
        "model": p.model,
        "config_hash": p.config_hash,
        "template": p.template,
        "fate": fate.fate,
    }


def spans_with_origin(
    spans: Sequence[Span], fates: Sequence[ProposalFate]
) -> list[dict[str, object]]:
    """Each span as JSON with its origin: `rater`, or `kept` / `edited` and the index of the
    proposal (in `fates`) it came from."""
    index = {f.span: i for i, f in enumerate(fates) if f.span is not None}
    out = []
    for span in spans:
        entry = span.to_json()
        i = index.get(span)
        entry["origin"] = "rater" if i is None else fates[i].fate
        if i is not None:
            entry["proposal"] = i
        out.append(entry)
    return out


def fates_from_json(
    raw: Sequence[Any], span_entries: Sequence[Any], spans: Sequence[Span], where: str
) -> list[ProposalFate]:
    """The proposals of a spans file's line (`proposals`), tied to the spans that name them
    (`proposal`: an index); each stated fate and origin must be what the offsets say."""
    proposed = [_proposal_of(p, f"{where}, field 'proposals[{i}]'") for i, p in enumerate(raw)]
    became: dict[int, Span] = {}
    for k, (entry, span) in enumerate(zip(span_entries, spans, strict=True)):
        at = f"{where}, field 'spans[{k}]'"
        index = entry.get("proposal")
        origin = entry.get("origin", "rater")
        if index is None:
            if origin != "rater":
                raise UserError(f"{at}: origin {origin!r} needs the index of its proposal.")
            continue
        if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < len(raw):
            raise UserError(f"{at}: 'proposal' must index the line's proposals, not {index!r}.")
        if index in became:
            raise UserError(f"{at}: proposal {index} became two spans.")
        became[index] = span
    fates = [ProposalFate(p, became.get(i)) for i, p in enumerate(proposed)]
    for i, fate in enumerate(fates):
        stated = raw[i].get("fate")
        if stated != fate.fate:
            raise UserError(
                f"{where}, field 'proposals[{i}]': fate {stated!r}, but the spans make it "
                f"{fate.fate!r}."
            )
    for k, entry in enumerate(span_entries):
        index = entry.get("proposal")
        if index is not None and entry.get("origin") != fates[index].fate:
            raise UserError(
                f"{where}, field 'spans[{k}]': origin {entry.get('origin')!r}, but its "
                f"proposal was {fates[index].fate}."
            )
    return fates


def _proposal_of(raw: Any, where: str) -> ProposedSpan:
    if not isinstance(raw, dict):
        raise UserError(f"{where}: a proposal must be a JSON object.")
    for key in PROPOSAL_KEYS:
        value = raw.get(key)
        kind = int if key in ("start", "end") else str
        if isinstance(value, bool) or not isinstance(value, kind):
            raise UserError(f"{where}: field {key!r} must be a {kind.__name__}, not {value!r}.")
    span = Span(raw["side"], raw["start"], raw["end"], raw["severity"], raw["text"])
    return ProposedSpan(span, raw["model"], raw["config_hash"], raw["template"])


@dataclass(frozen=True)
class PrefillSummary:
    """What raters made of the proposals, over a set of ratings."""

    sources: tuple[tuple[str, str, str], ...]  # who proposed: (model, template, config hash)
    ratings: int  # ratings with a span dimension (each a rater and an item)
    prefilled: int  # of them, ratings made with proposals shown
    proposed: int
    kept: int  # unchanged
    edited: int
    deleted: int
    rater_added: int  # spans no proposal became, over all `ratings`

    @property
    def kept_share(self) -> float:
        """Share of the model's spans that survived, unchanged or edited."""
        return (self.kept + self.edited) / self.proposed if self.proposed else math.nan

    @property
    def unchanged_share(self) -> float:
        return self.kept / self.proposed if self.proposed else math.nan

    @property
    def added_per_item(self) -> float:
        return self.rater_added / self.ratings if self.ratings else math.nan


def summarise_fates(
    ratings: Sequence[tuple[Sequence[Span], Sequence[ProposalFate]]],
) -> PrefillSummary:
    """The summary over ratings given as (spans, fates of its proposals)."""
    fates = [f for _spans, fs in ratings for f in fs]
    made = sum(1 for _spans, fs in ratings for f in fs if f.span is not None)
    sources = sorted(
        {(f.proposal.model, f.proposal.template, f.proposal.config_hash) for f in fates}
    )
    return PrefillSummary(
        sources=tuple(sources),
        ratings=len(ratings),
        prefilled=sum(1 for _spans, fs in ratings if fs),
        proposed=len(fates),
        kept=sum(f.fate == "kept" for f in fates),
        edited=sum(f.fate == "edited" for f in fates),
        deleted=sum(f.fate == "deleted" for f in fates),
        rater_added=sum(len(spans) for spans, _fs in ratings) - made,
    )

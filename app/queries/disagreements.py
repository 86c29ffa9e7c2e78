"""What the Disagreements view reads: the items whose raters differ most
(`meaningbench.analysis.disagreements`), in the background, with the view's wording.

A study where raters cannot disagree yet (no item with two human raters) gives the reason
in place of a list."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from meaningbench.analysis.disagreements import Disagreement, DisagreementReport, find_disagreements
from meaningbench.analysis.label_sets import chosen_label_set
from meaningbench.analysis.resolutions import DECISIONS, Decision, Resolution
from meaningbench.db.study import open_study
from meaningbench.errors import UserError
from meaningbench.runtime import Job, JobContext

# Named here for the view, which asks only queries.
__all__ = [
    "DECISIONS",
    "Decision",
    "Disagreement",
    "DisagreementReport",
    "DisagreementView",
    "Resolution",
    "decision_text",
    "disagreements_job",
    "ratings_text",
    "spans_html",
]

DECISION_WORDS = {"score": "adjudicated", "keep-all": "keep all", "exclude": "excluded"}


@dataclass(frozen=True)
class DisagreementView:
    report: DisagreementReport | None
    why_not: str  # why there is no list ("" when there is one)
    in_use: bool = False  # the decisions' label set is the one analyses read by default


def disagreements_job(
    study_path: Path, dimension: str = "meaning", threshold: float | None = None
) -> Job[DisagreementView]:
    """The disagreements over `threshold` (None: the study's 95th percentile)."""

    def run(_ctx: JobContext) -> DisagreementView:
        study = open_study(study_path, allow_read_only=True)
        try:
            with study.session() as session:
                report = find_disagreements(session, dimension, threshold)
                in_use = chosen_label_set(session) == report.label_set
                return DisagreementView(report, "", in_use)
        except UserError as exc:
            return DisagreementView(None, str(exc))
        finally:
            study.close()

    return run


def ratings_text(d: Disagreement) -> str:
    """Each rater's rating, lowest first: "ann 10 · cat 50 · bob 90"."""
    return " · ".join(f"{r.rater} {r.value:g}" for r in d.ratings)


def decision_text(d: Disagreement) -> str:
    r = d.resolution
    if r is None:
        return "–"
    words = DECISION_WORDS[r.decision]
    return f"{words} {r.score:g}" if r.score is not None else words


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def spans_html(d: Disagreement) -> str:
    """The raters' ratings side by side, each with the error spans marked (rich text)."""
    rows = []
    for r in d.ratings:
        spans = ", ".join(
            f"“{_escape(s.text)}” ({s.severity}{', source' if s.side == 'source' else ''})"
            for s in r.spans
        )
        many = f" (mean of {r.n_ratings})" if r.n_ratings > 1 else ""
        rows.append(
            f"<tr><td><b>{_escape(r.rater)}</b></td><td align='right'>{r.value:g}{many}</td>"
            f"<td>{spans or ('no spans' if any(x.spans for x in d.ratings) else '')}</td></tr>"
        )
    return "<table cellspacing='0' cellpadding='3'>" + "".join(rows) + "</table>"

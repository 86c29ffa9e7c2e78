"""The lead's view of a campaign: per rater, their kits and progress and quality; per item,
how many of its k ratings are in. Plain dataclasses, for `meaningbench campaign` and the
app alike; the quality figures are the rater checks of `meaningbench.analysis.rater_checks`.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from sqlalchemy import func, select

from meaningbench.analysis.rater_checks import RaterCheck, study_rater_checks
from meaningbench.annotation.practice import PracticeStanding, standings
from meaningbench.annotation.settings import load_settings
from meaningbench.db.models import Annotator, QueueEntry
from meaningbench.db.study import Study
from meaningbench.kits.coverage import ItemCoverage, item_coverage, required_k
from meaningbench.kits.record import KitRecord, kit_records


@dataclass(frozen=True)
class RaterProgress:
    rater: str
    kits_sent: int
    kits_returned: int
    last_sent: str | None
    last_return: str | None
    assigned: int  # queue entries in the lead's study, controls included
    done: int
    identical_pass: float  # NaN: no identical control rated (rater checks)
    unrelated_pass: float
    appraise_p: float
    agreement_r: float  # leave-one-out Pearson r with the other raters
    median_seconds: float
    # The practice: per attempt, the items within the pass mark's points of gold (of
    # `practice_items`); the verdict in words; flagged: rates after failing the pass mark.
    practice_attempts: tuple[int, ...] = ()
    practice_items: int = 0
    practice: str = ""
    practice_verdict: str = ""
    practice_flagged: bool = False


@dataclass(frozen=True)
class Campaign:
    k: int
    dimension: str
    raters: list[RaterProgress] = field(default_factory=list)
    items: list[ItemCoverage] = field(default_factory=list)

    @property
    def short(self) -> list[ItemCoverage]:
        return [c for c in self.items if c.ratings < self.k]

    def counts(self) -> dict[int, int]:
        """Number of items by how many ratings they hold."""
        out: dict[int, int] = {}
        for c in self.items:
            out[c.ratings] = out.get(c.ratings, 0) + 1
        return dict(sorted(out.items()))

    def to_json(self) -> dict[str, Any]:
        return {
            "k": self.k,
            "dimension": self.dimension,
            "raters": [asdict(r) for r in self.raters],
            "items_by_ratings": {str(n): c for n, c in self.counts().items()},
            "items_short": len(self.short),
            "items": [asdict(c) for c in self.items],
        }


def _nan() -> float:
    return math.nan


def campaign(study: Study, dimension: str | None = None) -> Campaign:
    """The campaign figures of `study` (on its first active dimension unless named)."""
    with study.session() as s:
        settings = load_settings(s)
        dim = dimension or next((d.name for d in settings.active_dimensions()), "meaning")
        records = list(kit_records(s).values())
        queues = {
            str(name): (int(total), int(done or 0))
            for name, total, done in s.execute(
                select(Annotator.name, func.count(), func.count().filter(QueueEntry.done.is_(True)))
                .join(Annotator, Annotator.id == QueueEntry.annotator_id)
                .group_by(Annotator.name)
            )
        }
        result = Campaign(k=required_k(s), dimension=dim, items=item_coverage(s))
    checks = {c.rater: c for c in study_rater_checks(study, dim)}
    practice = {p.rater: p for p in standings(study)}
    names = sorted({r.rater for r in records} | set(queues))
    for name in names:
        progress = _progress(
            name, [r for r in records if r.rater == name], queues, checks.get(name)
        )
        result.raters.append(_with_practice(progress, practice.get(name)))
    return result


def _with_practice(progress: RaterProgress, standing: PracticeStanding | None) -> RaterProgress:
    if standing is None:
        return progress
    return replace(
        progress,
        practice_attempts=tuple(a.within for a in standing.attempts),
        practice_items=standing.items,
        practice=standing.summary(),
        practice_verdict=standing.verdict(),
        practice_flagged=standing.flagged,
    )


def _progress(
    name: str,
    kits: list[KitRecord],
    queues: dict[str, tuple[int, int]],
    check: RaterCheck | None,
) -> RaterProgress:
    returns = sorted(t for r in kits for t in r.returns)
    assigned, done = queues.get(name, (0, 0))
    # Counted by round: a kit made again for the same round replaces the one sent before.
    return RaterProgress(
        rater=name,
        kits_sent=len({r.round_key() for r in kits}),
        kits_returned=len({r.round_key() for r in kits if r.returns}),
        last_sent=max((r.made_at for r in kits), default=None),
        last_return=returns[-1] if returns else None,
        assigned=assigned,
        done=done,
        identical_pass=check.identical_pass if check else _nan(),
        unrelated_pass=check.unrelated_pass if check else _nan(),
        appraise_p=check.appraise_p if check else _nan(),
        agreement_r=check.agreement_r if check else _nan(),
        median_seconds=check.median_seconds if check else _nan(),
    )

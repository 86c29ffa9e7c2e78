"""How the lead settles a disagreement between raters: a resolution label set.

A resolution set is an aggregate source (a label set, `meaningbench.analysis.label_sets`)
whose annotator meta holds `"resolution"`. Each of its labels settles one (item, dimension)
and says how by its origin:

- `resolution:score`: the lead's adjudicated score (the label's value) replaces the
  raters' mean;
- `resolution:keep-all`: the raters' mean stands (the value records that mean when the
  item was settled);
- `resolution:exclude`: the item is left out (the value records the raters' mean then).

The raters' own ratings are never touched. An analysis reads the decisions only when the
set is chosen (`--labels resolved`, or the study's chosen set): then `apply_resolutions`
rewrites the ratings frame before the rule of `meaningbench.analysis.human` runs. Settling
an item again supersedes the earlier decision, as an edited rating does.

z-scores: an adjudicated score is an aggregate label, so the rule standardises it among
the set's other adjudicated scores (as any label set), not by a rater's mean and SD; with
few adjudicated items its z says little, which rating.md tells the lead.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import pandas as pd
from sqlalchemy import select
from sqlalchemy.orm import Session

from meaningbench.db.current_ratings import is_current
from meaningbench.db.models import Annotator, Dimension, Item, Rating
from meaningbench.errors import UserError

Decision = Literal["score", "keep-all", "exclude"]
DECISIONS: tuple[Decision, ...] = ("score", "keep-all", "exclude")
DEFAULT_SET = "resolved"
META_KEY = "resolution"  # annotator meta key that marks a resolution set
ORIGIN_PREFIX = "resolution:"
HUMAN_KINDS = ("named", "anonymous")


@dataclass(frozen=True)
class Resolution:
    """One settled (item, dimension) of a resolution set."""

    item_id: int
    dimension: str
    decision: Decision
    score: float | None  # the adjudicated score (decision "score" only)
    raters_mean: float | None  # the raters' mean when settled (None: not kept for a score)
    n_raters: int
    note: str | None
    label_set: str

    def describe(self) -> str:
        if self.decision == "score":
            how = f"adjudicated score {self.score:g}"
            if self.raters_mean is not None:
                how += f" (raters' mean {self.raters_mean:g})"
        elif self.decision == "keep-all":
            how = f"keep all {self.n_raters} ratings (mean {self.raters_mean or 0:g})"
        else:
            how = "excluded from analyses that read this set"
        return f"item {self.item_id} ({self.dimension}): {how}; label set {self.label_set!r}"

    def to_json(self) -> dict[str, object]:
        return dict(self.__dict__)


def is_resolution_meta(meta: object) -> bool:
    return isinstance(meta, dict) and META_KEY in meta


def decision_of(origin: str) -> Decision | None:
    """The decision a label's origin records (None: not a resolution label)."""
    if not origin.startswith(ORIGIN_PREFIX):
        return None
    decision = origin[len(ORIGIN_PREFIX) :]
    return decision if decision in DECISIONS else None


def apply_resolutions(ratings: pd.DataFrame) -> pd.DataFrame:
    """A ratings frame with the decisions of the resolution labels it holds applied.

    Excluded (item, dimension) pairs lose every row; an adjudicated pair keeps only its
    resolution label (and machine ratings, which never count), so the rule's step 3 makes
    the label its score; a "keep all" label is dropped, so the raters' mean stands. A frame
    without an `origin` column carries no decisions and is returned as it is."""
    if ratings.empty or "origin" not in ratings.columns:
        return ratings
    origin = ratings["origin"].fillna("").astype(str)
    decisions = origin.map(decision_of)
    is_label = (ratings["annotator_kind"] == "aggregate") & decisions.notna()
    if not is_label.any():
        return ratings
    cols = ["item_id", "dimension"] if "dimension" in ratings.columns else ["item_id"]
    keys = pd.MultiIndex.from_frame(ratings[cols].astype({"item_id": "int64"}))
    settled = dict(zip(keys[is_label.to_numpy()], decisions[is_label], strict=True))
    excluded = {k for k, d in settled.items() if d == "exclude"}
    scored = {k for k, d in settled.items() if d == "score"}
    in_excluded = keys.isin(list(excluded)) if excluded else False
    in_scored = keys.isin(list(scored)) if scored else False
    machine = ratings["annotator_kind"] == "machine"
    drop = (
        pd.Series(in_excluded, index=ratings.index)
        | (pd.Series(in_scored, index=ratings.index) & ~is_label & ~machine)
        | (is_label & (decisions != "score"))
    )
    return ratings.loc[~drop]


def _resolution_set(session: Session, name: str) -> Annotator:
    """The resolution set `name`, made when the study has none of that name."""
    if not name.strip():
        raise UserError("a resolution set needs a name")
    found = session.scalar(select(Annotator).where(Annotator.name == name))
    if found is None:
        found = Annotator(name=name, kind="aggregate", meta={META_KEY: {"from": "disagreements"}})
        session.add(found)
        session.flush()
    elif found.kind != "aggregate" or not is_resolution_meta(found.meta):
        raise UserError(
            f"{name!r} is a rater or label set of this study, not a resolution set; "
            "choose another name"
        )
    return found


def _raters_values(session: Session, item_id: int, dimension_id: int) -> dict[str, float]:
    """Each human rater's mean current rating of the item (anonymous rows count one each)."""
    rows = session.execute(
        select(Rating.id, Annotator.name, Annotator.kind, Rating.value)
        .join(Annotator, Annotator.id == Rating.annotator_id)
        .where(
            Rating.item_id == item_id,
            Rating.dimension_id == dimension_id,
            Annotator.kind.in_(HUMAN_KINDS),
            is_current(),
        )
    ).all()
    grouped: dict[str, list[float]] = {}
    for rating_id, name, kind, value in rows:
        key = f"{name}#{rating_id}" if kind == "anonymous" else str(name)
        grouped.setdefault(key, []).append(float(value))
    return {k: sum(v) / len(v) for k, v in grouped.items()}


def _checked_item(session: Session, item_id: int) -> Item:
    item = session.get(Item, item_id)
    if item is None:
        raise UserError(f"no item {item_id} in this study")
    if item.kind != "regular":
        raise UserError(f"item {item_id} is a hidden control item; only regular items are settled")
    return item


def resolve_item(
    session: Session,
    item_id: int,
    decision: Decision,
    *,
    score: float | None = None,
    dimension: str = "meaning",
    label_set: str = DEFAULT_SET,
    note: str | None = None,
) -> Resolution:
    """Settle one item's disagreement in the resolution set `label_set` (made if new)."""
    if decision not in DECISIONS:
        raise UserError(f"unknown decision {decision!r}; one of: {', '.join(DECISIONS)}")
    if (decision == "score") != (score is not None):
        raise UserError("an adjudicated score is given with the decision 'score', and only then")
    _checked_item(session, item_id)
    dim = session.scalar(select(Dimension).where(Dimension.name == dimension))
    if dim is None:
        raise UserError(f"no dimension {dimension!r} in this study")
    if score is not None and not dim.min_value <= score <= dim.max_value:
        raise UserError(
            f"{score:g} is off the {dimension} scale ({dim.min_value:g} to {dim.max_value:g})"
        )
    values = _raters_values(session, item_id, dim.id)
    if len(values) < 2:
        raise UserError(
            f"item {item_id} has {len(values)} human rater(s) on {dimension}: there is no "
            "disagreement to settle (machine raters and label sets do not count)"
        )
    source = _resolution_set(session, label_set)
    mean = sum(values.values()) / len(values)
    earlier = session.scalar(
        select(Rating).where(
            Rating.item_id == item_id,
            Rating.annotator_id == source.id,
            Rating.dimension_id == dim.id,
            is_current(),
        )
    )
    if earlier is not None:
        earlier.state = "superseded"
    session.add(
        Rating(
            item_id=item_id,
            annotator_id=source.id,
            dimension_id=dim.id,
            value=float(score if score is not None else mean),
            origin=f"{ORIGIN_PREFIX}{decision}",
            n_raters=len(values),
            comment=note,
            supersedes_id=earlier.id if earlier is not None else None,
        )
    )
    session.flush()
    return Resolution(item_id, dimension, decision, score, mean, len(values), note, label_set)


def current_resolutions(
    session: Session, dimension: str, label_set: str = DEFAULT_SET
) -> dict[int, Resolution]:
    """Item id → the current decision of the set `label_set` on `dimension`."""
    rows = session.execute(
        select(Rating.item_id, Rating.value, Rating.origin, Rating.n_raters, Rating.comment)
        .join(Annotator, Annotator.id == Rating.annotator_id)
        .join(Dimension, Dimension.id == Rating.dimension_id)
        .where(
            Annotator.name == label_set,
            Annotator.kind == "aggregate",
            Dimension.name == dimension,
            is_current(),
        )
        .order_by(Rating.id)
    ).all()
    out: dict[int, Resolution] = {}
    for item_id, value, origin, n, note in rows:
        decision = decision_of(str(origin))
        if decision is None:
            continue
        score = float(value) if decision == "score" else None
        # An adjudicated label's value is the score; the raters' mean is not kept with it.
        mean = None if decision == "score" else float(value)
        out[int(item_id)] = Resolution(
            int(item_id), dimension, decision, score, mean, int(n or 0), note, label_set
        )
    return out

"""Label sets: which aggregate labels stand in for an item's human score.

A label set is an aggregate rating source (an annotator of kind `aggregate`): a dataset's
published labels (`aggregate:csmd`), or a set that `audit --fix` wrote from the raw means.
Several sets on the same items must never be averaged together — the published and the
corrected label of a pair are two answers to one question — so every analysis reads one
choice of sets:

- `--labels SET` on a command picks one set;
- otherwise the study's chosen set (`audit --fix NAME --choose`, stored as a study setting);
- otherwise every aggregate source that no audit wrote (the published labels), which is
  what studies did before label sets existed.

A resolution set (`meaningbench.analysis.resolutions`: the lead's decisions on raters'
disagreements) is read only when picked or chosen, and then with the published labels: it
settles items the raters rated, it is no rival to the labels of items nobody rated. Its
decisions are applied by `select_labels` (to frames that carry each rating's origin).

Per-rater ratings are untouched by the choice: the rule of `meaningbench.analysis.human` still lets
the study's own raters win over any label.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from sqlalchemy import Connection, select, text
from sqlalchemy.orm import Session

from meaningbench.analysis.audit import AuditResult
from meaningbench.analysis.resolutions import apply_resolutions, is_resolution_meta
from meaningbench.db.current_ratings import current_rating_sql, is_current
from meaningbench.db.models import Annotator, Dimension, Item, Rating, StudySetting
from meaningbench.errors import UserError

SETTING_KEY = "label_set"
FIX_ORIGIN = "audit"  # origin of ratings written by `audit --fix`, and meta key of their source


@dataclass
class LabelSet:
    name: str
    n_labels: int
    from_audit: bool
    resolution: bool = False  # the lead's decisions on disagreements, not labels


# Any reader of the study file: an ORM session, a SQLAlchemy connection, or the browser's
# plain sqlite3 connection. Plain SQL keeps the rule the same for all of them.
Reader = Session | Connection | sqlite3.Connection


def _rows(conn: Reader, sql: str, params: tuple[object, ...] = ()) -> list[tuple[Any, ...]]:
    if isinstance(conn, sqlite3.Connection):
        return [tuple(r) for r in conn.execute(sql, params).fetchall()]
    named = sql.replace("?", ":p0") if params else sql
    bound = {"p0": params[0]} if params else {}
    return [tuple(r) for r in conn.execute(text(named), bound).all()]


def _json(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def label_sets(conn: Reader) -> list[LabelSet]:
    """Every aggregate source with its number of current labels."""
    rows = _rows(
        conn,
        "SELECT a.name, a.meta, (SELECT COUNT(*) FROM rating r WHERE r.annotator_id = a.id "
        f"AND {current_rating_sql()}) FROM annotator a WHERE a.kind = 'aggregate' ORDER BY a.name",
    )
    out = []
    for name, meta, n in rows:
        meta = _json(meta)
        from_audit = isinstance(meta, dict) and FIX_ORIGIN in meta
        out.append(LabelSet(str(name), int(n), from_audit, is_resolution_meta(meta)))
    return out


def chosen_label_set(conn: Reader) -> str | None:
    rows = _rows(conn, "SELECT value FROM study_setting WHERE key = ?", (SETTING_KEY,))
    value = _json(rows[0][0]) if rows else None
    return str(value) if value else None


def choose_label_set(session: Session, name: str | None) -> None:
    """Make `name` the study's default label set (None: back to the published labels)."""
    if name is not None and name not in {s.name for s in label_sets(session)}:
        raise UserError(f"no aggregate label set {name!r} in this study")
    row = session.get(StudySetting, SETTING_KEY)
    if row is None:
        session.add(StudySetting(key=SETTING_KEY, value=name))
    else:
        row.value = name


def resolve_label_sets(conn: Reader, requested: str | None = None) -> list[str]:
    """The aggregate sources an analysis reads (see the module docstring)."""
    sets = label_sets(conn)
    names = {s.name for s in sets}
    published = [s.name for s in sets if not s.from_audit and not s.resolution]
    resolving = {s.name for s in sets if s.resolution}
    if requested is not None:
        if requested not in names:
            known = ", ".join(sorted(names)) or "none"
            raise UserError(f"no aggregate label set {requested!r}; label sets: {known}")
        return [requested, *published] if requested in resolving else [requested]
    chosen = chosen_label_set(conn)
    if chosen is not None and chosen in names:
        return [chosen, *published] if chosen in resolving else [chosen]
    return published


def select_labels(ratings: pd.DataFrame, keep: Sequence[str]) -> pd.DataFrame:
    """Rows of a ratings frame without the aggregate labels of sets not in `keep`, with
    the decisions of a kept resolution set applied."""
    if ratings.empty:
        return ratings
    drop = (ratings["annotator_kind"] == "aggregate") & ~ratings["annotator"].isin(list(keep))
    return apply_resolutions(ratings.loc[~drop])


@dataclass(frozen=True)
class FixResult:
    name: str
    n_written: int
    n_from_raw: int
    n_copied: int  # published labels copied where no raw ratings exist (--keep-unmatched)
    items_without: int  # labelled items left without a label in the new set

    def to_json(self) -> dict[str, object]:
        return dict(self.__dict__)

    def describe(self) -> str:
        text = (
            f"added label set {self.name!r}: {self.n_written:,} labels "
            f"({self.n_from_raw:,} raw means"
        )
        if self.n_copied:
            text += f", {self.n_copied:,} published labels copied where no raw ratings exist"
        text += ")"
        if self.items_without:
            text += (
                f"; {self.items_without:,} labelled items have no raw ratings and no label in it"
            )
        return text + f"; use it with --labels {self.name}"


@dataclass
class FixPlan:
    """What a fix would write: (item, dimension) → (value, n raters, "raw" | "published")."""

    audited: list[str]
    labels: dict[tuple[int, str], tuple[float, int | None, str]]
    result: FixResult


def plan_fix(
    session: Session, name: str, result: AuditResult, *, keep_unmatched: bool = False
) -> FixPlan:
    """The labels `add_fixed_labels` would write, without writing (the GUI's preview)."""
    if not name.strip():
        raise UserError("--fix needs a name for the new label set")
    if session.scalar(select(Annotator).where(Annotator.name == name)) is not None:
        raise UserError(f"{name!r} already exists in this study; choose another name")
    checked = result.labels
    audited = set(result.unmatched) | set(checked["label_set"].astype(str))
    written: dict[tuple[int, str], tuple[float, int | None, str]] = {}
    for r in checked.itertuples():
        n = int(r.n_raters) if pd.notna(r.n_raters) else None
        written.setdefault((int(r.item_id), str(r.dimension)), (float(r.raw_mean), n, "raw"))
    n_raw = len(written)
    copied = 0
    labelled = _labelled_items(session, sorted(audited))
    for item_id, dim, value in labelled:
        if (item_id, dim) in written:
            continue
        if keep_unmatched:
            written[(item_id, dim)] = (value, None, "published")
            copied += 1
    without = len({(i, d) for i, d, _ in labelled} - set(written))
    summary = FixResult(name, len(written), n_raw, copied, without)
    return FixPlan(sorted(audited), written, summary)


def add_fixed_labels(
    session: Session, name: str, result: AuditResult, *, keep_unmatched: bool = False
) -> FixResult:
    """A new aggregate source `name` with one label per audited (item, dimension): the raw
    mean of its pair (on the audit's 0–100 scale). Published labels are left as they are."""
    plan = plan_fix(session, name, result, keep_unmatched=keep_unmatched)
    source = Annotator(
        name=name,
        kind="aggregate",
        meta={
            FIX_ORIGIN: {
                "from": plan.audited,
                "tolerance": result.tolerance,
                "normalisation": result.normalisation,
            }
        },
    )
    session.add(source)
    session.flush()
    dims = {d.name: d.id for d in session.scalars(select(Dimension))}
    for (item_id, dim), (value, n, how) in plan.labels.items():
        session.add(
            Rating(
                item_id=item_id,
                annotator_id=source.id,
                dimension_id=dims[dim],
                value=float(np.round(value, 10)),
                origin=f"{FIX_ORIGIN}:{how}",
                n_raters=n,
            )
        )
    return plan.result


def _labelled_items(session: Session, sets: list[str]) -> list[tuple[int, str, float]]:
    """(item, dimension, first published label) of the regular items the sets labelled."""
    rows = session.execute(
        select(Rating.item_id, Dimension.name, Rating.value)
        .join(Annotator, Annotator.id == Rating.annotator_id)
        .join(Dimension, Dimension.id == Rating.dimension_id)
        .join(Item, Item.id == Rating.item_id)
        .where(Annotator.name.in_(sets), is_current(), Item.kind == "regular")
        .order_by(Rating.id)
    ).all()
    seen: dict[tuple[int, str], float] = {}
    for item_id, dim, value in rows:
        seen.setdefault((int(item_id), str(dim)), float(value))
    return [(i, d, v) for (i, d), v in seen.items()]

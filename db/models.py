"""The study file's tables (SQLAlchemy 2, typed declarative models).

Ratings are never deleted: an edit or an undo marks the old row `superseded` or `undone`
and, for an edit, writes a new row that points back at it. Scores are cached per
(metric, config hash, item) through the run they belong to.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    JSON,
    Boolean,
    CheckConstraint,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship

ITEM_KINDS = (
    "regular",
    "control-identical",
    "control-unrelated",
    "control-degraded",
    "control-repeat",
)
# The schema's list of states; which rows count is `meaningbench.db.current_ratings`.
RATING_STATES = ("current", "superseded", "undone")
SCALES = ("continuous", "likert")
# The kind of a rating source, and so of every rating it gave:
# - named: one person with an id (a study's own rater, or a rater id in a file);
# - anonymous: a file's ratings without rater ids; each rating is one unknown person's,
#   so the annotator row stands for the source, never for one rater;
# - aggregate: a label published per item (a dataset's mean), with its n when known;
# - machine: a model's ratings (`meaningbench judge --as-rater`): shown beside the raters,
#   never part of an item's human score (meaningbench.analysis.human).
ANNOTATOR_KINDS = ("named", "anonymous", "aggregate", "machine")
# How the kinds are shown (info, the import summary and dialog, agreement, the docs).
ANNOTATOR_KIND_LABELS = {
    "named": "per-rater (named)",
    "anonymous": "per-rater (anonymous)",
    "aggregate": "aggregate",
}
# `interrupted`: the process scoring a `running` run ended without closing it (killed, a
# power cut); the next scoring of the study resumes it.
RUN_STATUSES = ("pending", "running", "done", "failed", "cancelled", "interrupted")
# Where an item keeps its attributes (categories such as a sentence type, kept from a file's
# unmapped columns): `item.meta["attributes"]` = {name: value}.
ATTRIBUTES_JSON_PATH = "$.attributes"
# The study setting that lists the attribute names any item has (sorted), so that `info`
# and the browser scan the items for values only in a study that has attributes.
ATTRIBUTE_NAMES_KEY = "item_attribute_names"
# An error span marks a stretch of the output (or, for an omission, of the source).
SPAN_SIDES = ("output", "source")
SPAN_SEVERITIES = ("minor", "major")
# What became of a span a model proposed (pre-filled error spans): kept as proposed, kept
# with another extent or severity, or deleted by the rater.
PROPOSAL_FATES = ("kept", "edited", "deleted")


def utcnow() -> datetime:
    return datetime.now(UTC).replace(tzinfo=None)


def sql_now() -> str:
    """`utcnow()` as SQLAlchemy's SQLite DateTime type writes it, for raw SQL."""
    return utcnow().strftime("%Y-%m-%d %H:%M:%S.%f")


class Base(DeclarativeBase):
    type_annotation_map = {dict[str, Any]: JSON, list[Any]: JSON}


class StudySetting(Base):
    """Key/value settings of the study (seed, guidelines, QC shares, overlap, ...)."""

    __tablename__ = "study_setting"

    key: Mapped[str] = mapped_column(String(100), primary_key=True)
    value: Mapped[Any] = mapped_column(JSON, nullable=True)


class Dataset(Base):
    __tablename__ = "dataset"

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(200), unique=True)
    source_file: Mapped[str | None] = mapped_column(Text)
    format: Mapped[str | None] = mapped_column(String(20))
    imported_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)
    meta: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)

    items: Mapped[list[Item]] = relationship(back_populates="dataset")


class Item(Base):
    """One (source, output) pair to judge; control items are generated for quality control."""

    __tablename__ = "item"
    __table_args__ = (
        CheckConstraint(f"kind IN {ITEM_KINDS!r}", name="item_kind"),
        Index("ix_item_dataset", "dataset_id"),
        Index("ix_item_pair_key", "pair_key"),
        Index("ix_item_source_group", "source_group"),
        Index("ix_item_system", "system"),
        Index("ix_item_kind", "kind"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    dataset_id: Mapped[int] = mapped_column(ForeignKey("dataset.id", ondelete="CASCADE"))
    source: Mapped[str] = mapped_column(Text)
    output: Mapped[str] = mapped_column(Text)
    references: Mapped[list[Any]] = mapped_column("refs", JSON, default=list)
    system: Mapped[str | None] = mapped_column(String(200))
    # Items that share a source sentence share a group: splits, bootstrap and queue order use it.
    source_group: Mapped[str] = mapped_column(String(32))
    # Hash of (source, output, system): how imports find an item that already exists.
    pair_key: Mapped[str] = mapped_column(String(32))
    kind: Mapped[str] = mapped_column(String(20), default="regular")
    # For control items: the regular item they were derived from.
    parent_id: Mapped[int | None] = mapped_column(ForeignKey("item.id", ondelete="SET NULL"))
    external_id: Mapped[str | None] = mapped_column(String(200))
    meta: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)

    dataset: Mapped[Dataset] = relationship(back_populates="items")


class Annotator(Base):
    """A named rater, an anonymous rating source (a file's ratings without rater ids), or an
    aggregate source such as a dataset's published mean label."""

    __tablename__ = "annotator"
    __table_args__ = (CheckConstraint(f"kind IN {ANNOTATOR_KINDS!r}", name="annotator_kind"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(200), unique=True)
    kind: Mapped[str] = mapped_column(String(20), default="named")
    created_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)
    meta: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)


class Dimension(Base):
    __tablename__ = "dimension"
    __table_args__ = (CheckConstraint(f"scale IN {SCALES!r}", name="dimension_scale"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(50), unique=True)
    scale: Mapped[str] = mapped_column(String(20), default="continuous")
    min_value: Mapped[float] = mapped_column(Float, default=0.0)
    max_value: Mapped[float] = mapped_column(Float, default=100.0)
    label_low: Mapped[str] = mapped_column(Text, default="")
    label_high: Mapped[str] = mapped_column(Text, default="")
    question: Mapped[str] = mapped_column(Text, default="")
    position: Mapped[int] = mapped_column(Integer, default=0)
    active: Mapped[bool] = mapped_column(Boolean, default=True)


class Rating(Base):
    __tablename__ = "rating"
    __table_args__ = (
        CheckConstraint(f"state IN {RATING_STATES!r}", name="rating_state"),
        Index("ix_rating_lookup", "item_id", "annotator_id", "dimension_id", "state"),
        Index("ix_rating_annotator", "annotator_id", "state"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    item_id: Mapped[int] = mapped_column(ForeignKey("item.id", ondelete="CASCADE"))
    annotator_id: Mapped[int] = mapped_column(ForeignKey("annotator.id", ondelete="CASCADE"))
    dimension_id: Mapped[int] = mapped_column(ForeignKey("dimension.id", ondelete="CASCADE"))
    value: Mapped[float] = mapped_column(Float)
    start_value: Mapped[float | None] = mapped_column(Float)
    shown_at: Mapped[datetime | None] = mapped_column(DateTime)
    submitted_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)
    duration_ms: Mapped[int | None] = mapped_column(Integer)
    flagged: Mapped[bool] = mapped_column(Boolean, default=False)
    comment: Mapped[str | None] = mapped_column(Text)
    state: Mapped[str] = mapped_column(String(12), default="current")
    supersedes_id: Mapped[int | None] = mapped_column(ForeignKey("rating.id"))
    # Where the rating came from: "ui", "import:<file>", "merge:<study>".
    origin: Mapped[str] = mapped_column(String(300), default="ui")
    # For aggregate ratings: how many raters the mean stands for, when known.
    n_raters: Mapped[int | None] = mapped_column(Integer)
    # Side-by-side ratings: where the output stood on screen and beside which items,
    # {"position": 0-based, "items": [item ids in the order shown]}; None otherwise.
    display: Mapped[dict[str, Any] | None] = mapped_column(JSON)


class RatingSpan(Base):
    """An error span marked with a rating (error span annotation): character offsets into
    the item's output or source, end exclusive, with the text they cover when marked."""

    __tablename__ = "rating_span"
    __table_args__ = (
        CheckConstraint(f"side IN {SPAN_SIDES!r}", name="span_side"),
        CheckConstraint(f"severity IN {SPAN_SEVERITIES!r}", name="span_severity"),
        CheckConstraint('start >= 0 AND "end" > start', name="span_offsets"),
        Index("ix_span_rating", "rating_id"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    rating_id: Mapped[int] = mapped_column(ForeignKey("rating.id", ondelete="CASCADE"))
    side: Mapped[str] = mapped_column(String(10), default="output")
    start: Mapped[int] = mapped_column(Integer)
    end: Mapped[int] = mapped_column(Integer)
    severity: Mapped[str] = mapped_column(String(10))
    text: Mapped[str] = mapped_column(Text)


class SpanProposal(Base):
    """An error span a model proposed for a rating (pre-filled on the ESA screen) and what
    the rater made of it: the span kept as proposed or edited (`span_id`), or deleted (no
    span; the proposal stays as a record). A span of the rating that no proposal points at
    is the rater's own."""

    __tablename__ = "span_proposal"
    __table_args__ = (
        CheckConstraint(f"side IN {SPAN_SIDES!r}", name="proposal_side"),
        CheckConstraint(f"severity IN {SPAN_SEVERITIES!r}", name="proposal_severity"),
        CheckConstraint('start >= 0 AND "end" > start', name="proposal_offsets"),
        CheckConstraint(f"fate IN {PROPOSAL_FATES!r}", name="proposal_fate"),
        CheckConstraint("(fate = 'deleted') = (span_id IS NULL)", name="proposal_span"),
        Index("ix_proposal_rating", "rating_id"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    rating_id: Mapped[int] = mapped_column(ForeignKey("rating.id", ondelete="CASCADE"))
    span_id: Mapped[int | None] = mapped_column(ForeignKey("rating_span.id", ondelete="CASCADE"))
    side: Mapped[str] = mapped_column(String(10), default="output")
    start: Mapped[int] = mapped_column(Integer)
    end: Mapped[int] = mapped_column(Integer)
    severity: Mapped[str] = mapped_column(String(10))
    text: Mapped[str] = mapped_column(Text)
    # Who proposed it: the model, the metric configuration's hash and the prompt template.
    model: Mapped[str] = mapped_column(Text)
    config_hash: Mapped[str] = mapped_column(String(64))
    template: Mapped[str] = mapped_column(Text)
    fate: Mapped[str] = mapped_column(String(10))


class PracticeItem(Base):
    """A practice pair with its gold: the range a careful rater's score falls in and why.

    Practice lives apart from `item` and `rating`, so no analysis can ever count it."""

    __tablename__ = "practice_item"

    id: Mapped[int] = mapped_column(primary_key=True)
    source: Mapped[str] = mapped_column(Text)
    output: Mapped[str] = mapped_column(Text)
    low: Mapped[float] = mapped_column(Float)
    high: Mapped[float] = mapped_column(Float)
    explanation: Mapped[str] = mapped_column(Text, default="")
    position: Mapped[int] = mapped_column(Integer, default=0)


class PracticeAnswer(Base):
    """A rater's answer to a practice item, and whether it fell in the gold range."""

    __tablename__ = "practice_answer"
    __table_args__ = (Index("ix_practice_answer_rater", "annotator_id"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    practice_item_id: Mapped[int] = mapped_column(
        ForeignKey("practice_item.id", ondelete="CASCADE")
    )
    annotator_id: Mapped[int] = mapped_column(ForeignKey("annotator.id", ondelete="CASCADE"))
    value: Mapped[float] = mapped_column(Float)
    passed: Mapped[bool] = mapped_column(Boolean)
    submitted_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)


class QueueEntry(Base):
    """An annotator's place in their own, fixed-seed shuffled queue of items."""

    __tablename__ = "queue_entry"
    __table_args__ = (
        UniqueConstraint("annotator_id", "item_id", name="uq_queue_annotator_item"),
        Index("ix_queue_order", "annotator_id", "position"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    annotator_id: Mapped[int] = mapped_column(ForeignKey("annotator.id", ondelete="CASCADE"))
    item_id: Mapped[int] = mapped_column(ForeignKey("item.id", ondelete="CASCADE"))
    position: Mapped[float] = mapped_column(Float)
    skips: Mapped[int] = mapped_column(Integer, default=0)
    done: Mapped[bool] = mapped_column(Boolean, default=False)


class ItemNote(Base):
    """A flag and/or comment an annotator left on an item (independent of rating it)."""

    __tablename__ = "item_note"
    __table_args__ = (Index("ix_note_item", "item_id"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    item_id: Mapped[int] = mapped_column(ForeignKey("item.id", ondelete="CASCADE"))
    annotator_id: Mapped[int | None] = mapped_column(ForeignKey("annotator.id", ondelete="CASCADE"))
    flagged: Mapped[bool] = mapped_column(Boolean, default=True)
    comment: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)


class MetricRun(Base):
    __tablename__ = "metric_run"
    __table_args__ = (
        CheckConstraint(f"status IN {RUN_STATUSES!r}", name="run_status"),
        Index("ix_run_metric_config", "metric", "config_hash"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    metric: Mapped[str] = mapped_column(String(100))
    config: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    config_hash: Mapped[str] = mapped_column(String(64))
    # A short human label that tells two configs of one metric apart in exports and plots.
    label: Mapped[str] = mapped_column(String(200))
    model_id: Mapped[str | None] = mapped_column(Text)
    model_revision: Mapped[str | None] = mapped_column(String(100))
    device: Mapped[str | None] = mapped_column(String(20))
    versions: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    status: Mapped[str] = mapped_column(String(12), default="pending")
    started_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)
    finished_at: Mapped[datetime | None] = mapped_column(DateTime)
    n_items: Mapped[int] = mapped_column(Integer, default=0)
    n_failed: Mapped[int] = mapped_column(Integer, default=0)
    elapsed_s: Mapped[float] = mapped_column(Float, default=0.0)
    error: Mapped[str | None] = mapped_column(Text)
    # The process that claimed the run (see meaningbench.db.processes): a `running` run whose owner is
    # gone is interrupted, and its start time (seconds since boot) keeps a reused pid from
    # passing for it.
    owner_pid: Mapped[int | None] = mapped_column(Integer)
    owner_host: Mapped[str | None] = mapped_column(String(255))
    owner_started: Mapped[float | None] = mapped_column(Float)


class Score(Base):
    __tablename__ = "score"
    __table_args__ = (
        UniqueConstraint("run_id", "item_id", name="uq_score_run_item"),
        Index("ix_score_item", "item_id"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    run_id: Mapped[int] = mapped_column(ForeignKey("metric_run.id", ondelete="CASCADE"))
    item_id: Mapped[int] = mapped_column(ForeignKey("item.id", ondelete="CASCADE"))
    value: Mapped[float | None] = mapped_column(Float)
    raw: Mapped[float | None] = mapped_column(Float)
    details: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    error: Mapped[str | None] = mapped_column(Text)
    # Hash of the texts the score was computed from; a mismatch marks the score stale.
    input_hash: Mapped[str | None] = mapped_column(String(32))


class Scene(Base):
    """A semantic scene of a source sentence (UCCA-style), the unit SAMSA scores.

    Scenes belong to a source sentence (its `source_group`), not to one item, so every
    system's output of that source is scored against the same scenes. Token indices refer
    to `tokens`, the tokenization the scenes were drawn on.
    """

    __tablename__ = "scene"
    __table_args__ = (Index("ix_scene_group", "source_group", "origin"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    source_group: Mapped[str] = mapped_column(String(32))
    position: Mapped[int] = mapped_column(Integer, default=0)
    tokens: Mapped[list[Any]] = mapped_column(JSON, default=list)
    main_relation: Mapped[list[Any]] = mapped_column(JSON, default=list)  # token indices
    # [{"tokens": [indices], "centre": [indices]}, ...]
    participants: Mapped[list[Any]] = mapped_column(JSON, default=list)
    origin: Mapped[str] = mapped_column(String(20), default="manual")  # manual | parser | ucca
    annotator_id: Mapped[int | None] = mapped_column(
        ForeignKey("annotator.id", ondelete="SET NULL")
    )
    created_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)


class RegisteredModel(Base):
    """A model trained or added by the user and offered as a metric of the battery."""

    __tablename__ = "registered_model"

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(200), unique=True)
    metric: Mapped[str] = mapped_column(String(100))  # the metric that runs it, e.g. meaningbert
    path: Mapped[str] = mapped_column(Text)
    card: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    created_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)

"""A study's annotation settings: what raters see, who rates what, and the hidden QC items.

Everything but the dimensions lives in one `study_setting` row (key "annotation", a JSON
object), so a study file carries its own protocol wherever it is copied. Dimensions keep
their own table (`dimension.active`, `dimension.scale`): ratings point at those rows, and
a second copy of the same facts in the JSON would drift.

Missing keys take their defaults and unknown keys are ignored, so older and newer study
files read each other's settings without a migration.
"""

from __future__ import annotations

import json
import math
import secrets
from dataclasses import asdict, dataclass, field, fields
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from meaningbench.annotation.proposals import PrefillSource
from meaningbench.db.models import Dimension, PracticeItem, Rating, StudySetting
from meaningbench.errors import UserError

SETTINGS_KEY = "annotation"

# Appraise's Direct Assessment mix, per 100 queue entries: 80 normal, 10 degraded
# ("bad reference"), 5 identical (reference), 5 repeats.
DEFAULT_QC = {"degraded": 10, "identical": 5, "repeat": 5, "unrelated": 0, "word_soup": 0}
QC_KINDS = tuple(DEFAULT_QC)
# More than half the queue as controls would make the study mostly about the controls.
MAX_QC_PER_100 = 50

SCALE_RANGES = {"continuous": (0.0, 100.0), "likert": (1.0, 5.0)}

# How a rater judges an item; chosen when the study is set up, fixed once raters have rated.
PROTOCOLS = {
    "da": "direct assessment: a 0–100 slider per dimension",
    "esa": "error span annotation: mark meaning errors as minor or major spans, then score 0–100",
    "sxs": "side by side: the outputs of one source together, each on its own 0–100 slider",
    "likert": "Likert: five labelled points (1–5) per dimension",
}
# The protocols that take one judgement per item on the first active dimension only.
SINGLE_SCORE_PROTOCOLS = ("esa", "sxs")
DEFAULT_LIKERT_LABELS = [
    "no meaning preserved",
    "little meaning preserved",
    "about half the meaning preserved",
    "most meaning preserved",
    "all meaning preserved",
]
# The queue's selection strategies (described in `meaningbench.annotation.selection`).
SELECTIONS = {
    "random": "a random order (the default)",
    "disagreement": "items the candidate metrics rank most differently first",
    "variance": "sources whose outputs the metrics score most differently first",
    "diversity": "every cluster of metric-score profiles in proportion, from the start",
    "mix": "disagreement and diversity in turn: half the items each, from the start",
    "balanced": "the systems in turn, equal numbers of each, on shared sources first",
}
# The selections that read no metric score: they need no scored run.
SCORELESS_SELECTIONS = frozenset({"random", "balanced"})


def check_selection(name: str) -> str:
    if name not in SELECTIONS:
        raise UserError(f"Unknown selection {name!r}; choose one of {', '.join(SELECTIONS)}.")
    return name


# What happens after a rater's last failed practice attempt (see
# `meaningbench.annotation.practice`): they may not rate, or they rate and the lead sees a flag.
AFTER_FAILED_PRACTICE = {
    "stop": "the rater cannot rate until the lead lets them",
    "flag": "the rater rates, with a flag the lead sees",
}
DEFAULT_PRACTICE_ATTEMPTS = 2


# Side by side: at most this many outputs of one source on one screen.
DEFAULT_SXS_WIDTH = 4

DEFAULT_GUIDELINES = """\
# Rating meaning preservation

You will see an **original** sentence and a **simplified** version of it.

For each pair, judge how much of the original's meaning the simplified version keeps:

- **100** — everything the original says is still there (wording may differ).
- **50** — about half the information is kept, or a key detail changed.
- **0** — nothing of the original's meaning is left.

Do not rate grammar or simplicity here unless a separate scale asks for it.
If a pair is unreadable or broken, flag it (**F**) and add a comment.

Take your time; there is no right speed. Your ratings are saved the moment you submit.
"""


@dataclass(frozen=True)
class QCMix:
    """Hidden control items per 100 queue entries; the rest of the 100 are normal items."""

    degraded: int = 10
    identical: int = 5
    repeat: int = 5
    unrelated: int = 0
    word_soup: int = 0

    def total(self) -> int:
        return self.degraded + self.identical + self.repeat + self.unrelated + self.word_soup

    def normal(self) -> int:
        return 100 - self.total()

    def counts_for(self, n_regular: int) -> dict[str, int]:
        """How many controls of each kind go with `n_regular` normal items.

        The shares are per 100 queue entries, so each kind scales with the normal items:
        80 normal → 10 degraded, 5 identical, 5 repeats with the default mix.
        """
        normal = self.normal()
        if n_regular <= 0 or normal <= 0:
            return dict.fromkeys(QC_KINDS, 0)
        out = {}
        for kind in QC_KINDS:
            share = getattr(self, kind)
            # Half-up rounding (not banker's) so that a share never rounds to zero by parity.
            out[kind] = int(n_regular * share / normal + 0.5) if share > 0 else 0
        return out


@dataclass
class DimensionConfig:
    """One rating scale as the study lead configures it (a view of a `dimension` row)."""

    name: str
    scale: str = "continuous"
    active: bool = True
    label_low: str = ""
    label_high: str = ""
    question: str = ""
    position: int = 0

    @property
    def min_value(self) -> float:
        return SCALE_RANGES[self.scale][0]

    @property
    def max_value(self) -> float:
        return SCALE_RANGES[self.scale][1]


@dataclass
class AnnotationSettings:
    seed: int | None = None
    # None: every annotator rates every item; k: each item goes to k of `pool_size` slots.
    overlap_k: int | None = None
    pool_size: int = 3
    qc_enabled: bool = True
    qc: QCMix = field(default_factory=QCMix)
    guidelines: str = DEFAULT_GUIDELINES
    diff_highlighting: bool = False
    same_source_back_to_back: bool = False
    # Dataset names whose items go into the queues; None: all datasets.
    datasets: list[str] | None = None
    dimensions: list[DimensionConfig] = field(default_factory=list)
    protocol: str = "da"
    # Appraise's hidden-number mode: the slider shows no number, only that it is set.
    hidden_number: bool = False
    # Error span annotation: omissions may be marked in the source too.
    esa_source_spans: bool = False
    # Error span annotation: the stored judge configuration whose spans are pre-filled on
    # the screen for the rater to keep, edit or delete (None: the rater starts blank).
    esa_prefill: PrefillSource | None = None
    likert_labels: list[str] = field(default_factory=lambda: list(DEFAULT_LIKERT_LABELS))
    sxs_width: int = DEFAULT_SXS_WIDTH
    # Live rater checks: the thresholds below which the coordinator is warned about a rater
    # (names of `meaningbench.analysis.rater_checks.RaterThresholds`; missing: defaults).
    rater_thresholds: dict[str, float] = field(default_factory=dict)
    # Which items a queue asks first (`meaningbench.annotation.selection.STRATEGIES`), from
    # the stored scores of `selection_metrics` (run labels; None: every finished run).
    selection: str = "random"
    selection_metrics: list[str] | None = None
    # Kits show each output's system name; by default raters rate blind (none in a kit).
    show_systems: bool = False
    # The practice pass mark: `practice_pass_items` practice items (None: no pass mark)
    # within `practice_within` points of their expected range in one attempt, in at most
    # `practice_attempts` attempts; then `practice_after_failed` (`AFTER_FAILED_PRACTICE`).
    practice_pass_items: int | None = None
    practice_within: float = 0.0
    practice_attempts: int = DEFAULT_PRACTICE_ATTEMPTS
    practice_after_failed: str = "stop"

    def active_dimensions(self) -> list[DimensionConfig]:
        return sorted((d for d in self.dimensions if d.active), key=lambda d: d.position)

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data.pop("dimensions")
        return data

    @classmethod
    def from_json(cls, raw: Any) -> AnnotationSettings:
        raw = raw if isinstance(raw, dict) else {}
        known = {f.name for f in fields(cls)} - {"dimensions", "qc"}
        kwargs = {k: v for k, v in raw.items() if k in known}
        qc_raw = raw.get("qc") if isinstance(raw.get("qc"), dict) else {}
        qc = QCMix(**{k: int(v) for k, v in qc_raw.items() if k in QC_KINDS})
        thresholds = kwargs.get("rater_thresholds")
        if isinstance(thresholds, dict):
            # A NaN stored by an earlier version means no threshold: the default applies,
            # and the settings can be saved again.
            kwargs["rater_thresholds"] = {
                k: v
                for k, v in thresholds.items()
                if isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)
            }
        kwargs["esa_prefill"] = PrefillSource.from_json(raw.get("esa_prefill"))
        return cls(qc=qc, **kwargs)

    def validate(self) -> None:
        if self.overlap_k is not None:
            if self.overlap_k < 1:
                raise UserError("Overlap: each item needs at least one annotator.")
            if self.pool_size < self.overlap_k:
                raise UserError(
                    f"Overlap: {self.overlap_k} annotators per item needs a pool of at least "
                    f"{self.overlap_k} annotators (the pool is {self.pool_size})."
                )
        for kind in QC_KINDS:
            if getattr(self.qc, kind) < 0:
                raise UserError(f"Quality control: the share of {kind} items cannot be negative.")
        if self.qc.total() > MAX_QC_PER_100:
            raise UserError(
                f"Quality control: {self.qc.total()} control items per 100 is too many "
                f"(at most {MAX_QC_PER_100})."
            )
        if self.protocol not in PROTOCOLS:
            raise UserError(
                f"Unknown annotation protocol {self.protocol!r}; choose one of "
                f"{', '.join(PROTOCOLS)}."
            )
        if self.esa_prefill is not None and self.protocol != "esa":
            raise UserError(
                "Pre-filled error spans belong to the esa protocol, not "
                f"{self.protocol!r}; choose esa, or no pre-filled spans."
            )
        if len(self.likert_labels) != 5:
            raise UserError("Likert: give one label for each of the five points.")
        if self.sxs_width < 2:
            raise UserError("Side by side: at least two outputs go on one screen.")
        check_selection(self.selection)
        if self.selection_metrics is not None and not self.selection_metrics:
            raise UserError(
                "The selection needs at least one metric run to read: choose one or more, "
                "or all of them for every finished run."
            )
        if self.datasets is not None and not self.datasets:
            raise UserError("Choose at least one dataset for the queues.")
        if self.dimensions and not any(d.active for d in self.dimensions):
            raise UserError("At least one rating dimension must be active.")
        for d in self.dimensions:
            if d.scale not in SCALE_RANGES:
                raise UserError(f"Dimension {d.name!r}: unknown scale {d.scale!r}.")
        self._validate_practice()
        for name, value in self.rater_thresholds.items():
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise UserError(f"Rater threshold {name}: {value!r} is not a number.")
            if not math.isfinite(value):
                raise UserError(f"Rater threshold {name}: {value!r} is not a finite number.")

    def _validate_practice(self) -> None:
        """The pass mark's own values; whether the study's practice items can reach it is
        `check_pass_mark`'s (it needs them)."""
        items, within = self.practice_pass_items, self.practice_within
        if items is not None and (isinstance(items, bool) or not isinstance(items, int)):
            raise UserError(f"Practice pass mark: {items!r} items is not a whole number.")
        if items is not None and items < 1:
            raise UserError(
                f"Practice pass mark: {items} items cannot be a pass mark; at least 1 practice "
                "item must be passed (or set no pass mark)."
            )
        if (
            isinstance(within, bool)
            or not isinstance(within, int | float)
            or not math.isfinite(within)
            or not 0 <= within <= 100
        ):
            raise UserError(
                f"Practice pass mark: within {_shown(within)} points is outside 0–100 (0: "
                "inside the expected range itself)."
            )
        attempts = self.practice_attempts
        if isinstance(attempts, bool) or not isinstance(attempts, int) or attempts < 1:
            raise UserError(
                f"Practice attempts: {attempts!r} is not a number of attempts (1 or more)."
            )
        if self.practice_after_failed not in AFTER_FAILED_PRACTICE:
            raise UserError(
                f"After the last failed practice attempt: {self.practice_after_failed!r} is "
                f"not one of {', '.join(AFTER_FAILED_PRACTICE)}."
            )


def _shown(value: object) -> str:
    return format(value, "g") if isinstance(value, float) else repr(value)


def check_pass_mark(session: Session, settings: AnnotationSettings) -> None:
    """Refuse a pass mark that no rater could reach: more items to pass than the study has
    practice items (none at all included)."""
    needed = settings.practice_pass_items
    if needed is None:
        return
    have = int(session.scalar(select(func.count()).select_from(PracticeItem)) or 0)
    if needed > have:
        raise UserError(
            f"Practice pass mark: {needed} practice items must be passed, but the study has "
            f"{have} practice item{'' if have == 1 else 's'}, so no rater could pass. "
            + (
                "Add practice items first (meaningbench practice STUDY --add FILE), "
                if not have
                else f"Ask for at most {have}, or add practice items, "
            )
            + "then set the pass mark."
        )


def _dimension_configs(session: Session) -> list[DimensionConfig]:
    rows = session.scalars(select(Dimension).order_by(Dimension.position, Dimension.id)).all()
    return [
        DimensionConfig(
            name=d.name,
            scale=d.scale,
            active=bool(d.active),
            label_low=d.label_low,
            label_high=d.label_high,
            question=d.question,
            position=d.position,
        )
        for d in rows
    ]


def load_settings(session: Session) -> AnnotationSettings:
    """The study's settings (defaults where it has none); the dimensions from their table."""
    row = session.get(StudySetting, SETTINGS_KEY)
    settings = AnnotationSettings.from_json(row.value if row is not None else None)
    settings.dimensions = _dimension_configs(session)
    return settings


def ensure_seed(session: Session) -> int:
    """The study's randomisation seed, drawn and stored on first use so it never changes."""
    settings = load_settings(session)
    if settings.seed is None:
        settings.seed = secrets.randbits(31)
        _write_json(session, settings)
    return settings.seed


def _write_json(session: Session, settings: AnnotationSettings) -> None:
    data = settings.to_json()
    try:
        # Python writes NaN and Infinity, which JSON does not have: every reader of the
        # study (and this one, on the next open) must be able to parse what is stored.
        json.dumps(data, allow_nan=False)
    except ValueError as exc:
        raise UserError(f"The study's settings cannot be stored as JSON: {exc}.") from None
    row = session.get(StudySetting, SETTINGS_KEY)
    if row is None:
        session.add(StudySetting(key=SETTINGS_KEY, value=data))
    else:
        row.value = data


# Ratings that raters gave under the study's protocol: rated here, or rated in a copy of
# the study and brought in by `merge` (which names the copy in the origin). Imported
# published labels do not lock the protocol: no rater of this study gave them.
RATER_ORIGINS = (
    (Rating.origin == "ui")
    | Rating.origin.startswith("merge:")
    | (Rating.origin.startswith("merge-conflict:"))
)


def _rated_in_study(session: Session) -> int:
    return int(session.scalar(select(func.count()).select_from(Rating).where(RATER_ORIGINS)) or 0)


def save_settings(session: Session, settings: AnnotationSettings) -> None:
    """Store the settings; a dimension that already has ratings keeps its scale, and a study
    whose raters have rated keeps its protocol (its ratings would mean something else)."""
    settings.validate()
    check_pass_mark(session, settings)
    stored = session.get(StudySetting, SETTINGS_KEY)
    before = AnnotationSettings.from_json(stored.value if stored is not None else None).protocol
    if before != settings.protocol:
        rated = _rated_in_study(session)
        if rated:
            raise UserError(
                f"The study's raters have given {rated} ratings under the {before!r} protocol; "
                f"it can no longer change to {settings.protocol!r} (start a new study)."
            )
    if settings.protocol == "likert":
        for cfg in settings.dimensions:
            if cfg.active:
                cfg.scale = "likert"
    elif settings.protocol in SINGLE_SCORE_PROTOCOLS:
        for cfg in settings.dimensions:
            if cfg.active:
                cfg.scale = "continuous"
    if settings.seed is None:
        settings.seed = secrets.randbits(31)
    _write_json(session, settings)
    existing = {d.name: d for d in session.scalars(select(Dimension)).all()}
    for cfg in settings.dimensions:
        row = existing.get(cfg.name)
        if row is None:
            row = Dimension(name=cfg.name)
            session.add(row)
        elif row.scale != cfg.scale and row.id is not None:
            n = session.scalar(
                select(func.count()).select_from(Rating).where(Rating.dimension_id == row.id)
            )
            if n:
                raise UserError(
                    f"Dimension {cfg.name!r} already has {n} ratings on its {row.scale} scale; "
                    "its scale can no longer change (add a new dimension instead)."
                )
        lo, hi = SCALE_RANGES[cfg.scale]
        row.scale = cfg.scale
        row.min_value, row.max_value = lo, hi
        row.active = cfg.active
        row.label_low = cfg.label_low
        row.label_high = cfg.label_high
        row.question = cfg.question
        row.position = cfg.position

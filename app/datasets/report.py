"""What an import did, for the terminal, the GUI and `--json`."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from meaningbench.core.wording import counted
from meaningbench.datasets.rows import listed
from meaningbench.db.models import ANNOTATOR_KIND_LABELS
from meaningbench.metrics.languages import language_label

MAX_WARNINGS = 20
# Values of one attribute the summary names (the most frequent first).
MAX_VALUES_SHOWN = 5
KIND_LABELS = ANNOTATOR_KIND_LABELS


@dataclass
class SourceSummary:
    """The ratings of one kind in one import: rows read, ratings stored, raters."""

    kind: str  # named | anonymous | aggregate
    rating_rows: int = 0  # ratings read from the file (a wide row holds one per dimension)
    stored: int = 0  # ratings added to the study by this import
    already_there: int = 0  # ratings an earlier import of this file had stored
    raters: int = 0  # named: distinct raters; anonymous: one per rating; aggregate: sources
    n_raters_known: int = 0  # aggregate: labels that say how many raters they stand for
    n_raters_total: int = 0  # aggregate: the raters those labels stand for, summed

    @property
    def label(self) -> str:
        return KIND_LABELS.get(self.kind, self.kind)

    def describe(self) -> str:
        if self.kind == "named":
            who = f"{self.raters:,} named rater{'s' if self.raters != 1 else ''}"
        elif self.kind == "anonymous":
            who = "raters unknown, each rating one person"
        else:
            who = f"{self.raters:,} aggregate source{'s' if self.raters != 1 else ''}"
            if self.n_raters_known:
                who += f", n given on {self.n_raters_known:,} labels"
        rows, stored = counted(self.rating_rows, "rating row"), counted(self.stored, "rating")
        line = f"{self.label}: {rows}, {stored} stored"
        if self.already_there:
            line += f", {self.already_there:,} already there"
        return f"{line} ({who})"


@dataclass
class ImportReport:
    file: str
    container: str = ""  # csv | tsv | jsonl
    shape: str = ""  # pairs | csmd | long | wide
    # The kind of the file's ratings (named, anonymous, aggregate; "mixed" when a long
    # file's annotator_kind column sets several), and whether the user said it.
    rating_kind: str = ""
    rating_kind_given: bool = False
    datasets: list[str] = field(default_factory=list)
    datasets_created: list[str] = field(default_factory=list)
    columns: dict[str, Any] = field(default_factory=dict)
    ignored_columns: list[str] = field(default_factory=list)
    # Columns kept as item attributes; per attribute name, the items of this file per value
    # (the first few values; `attributes_more` counts the items with other values).
    attribute_columns: list[str] = field(default_factory=list)
    attributes: dict[str, dict[str, int]] = field(default_factory=dict)
    attributes_more: dict[str, int] = field(default_factory=dict)
    # Items the study had that this file gave attributes they lacked.
    items_given_attributes: int = 0
    rows_read: int = 0
    items_created: int = 0
    # Items created with an empty output (a system that deleted everything): kept as data.
    empty_outputs: int = 0
    # Items of this file that the dataset held before this import (a re-import adds nothing).
    items_existing: int = 0
    # Rating values read from the file; always ratings_added + ratings_existing: rows are
    # never merged as duplicates (two identical anonymous rows are two people who agreed).
    ratings_read: int = 0
    ratings_added: int = 0
    # Ratings an earlier import of this same file (same name, same dataset) had stored.
    ratings_existing: int = 0
    # Rows without ratings that name an item an earlier row named (pairs files).
    duplicate_rows: int = 0
    # A named rater rating the same item and dimension again (all kept; the rater's mean
    # counts), and an aggregate source giving an item a second label (both kept).
    repeated_ratings: int = 0
    conflicting_ratings: int = 0
    sources: list[SourceSummary] = field(default_factory=list)
    annotators: list[str] = field(default_factory=list)
    annotators_created: list[str] = field(default_factory=list)
    # Ratings added per dimension.
    dimensions: dict[str, int] = field(default_factory=dict)
    dimensions_created: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    # The study's language after the import (ISO 639-1).
    language: str = ""
    elapsed_s: float = 0.0
    _warning_counts: dict[str, int] = field(default_factory=dict, repr=False)

    def warn(self, kind: str, message: str) -> None:
        """Keep the first few warnings of each kind; count the rest."""
        n = self._warning_counts.get(kind, 0) + 1
        self._warning_counts[kind] = n
        if n <= 5 and len(self.warnings) < MAX_WARNINGS:
            self.warnings.append(message)

    def finish_warnings(self) -> None:
        for kind, n in self._warning_counts.items():
            if n > 5:
                self.warnings.append(f"... and {n - 5} more {kind} warnings")
        self._warning_counts = {}

    @property
    def nothing_new(self) -> bool:
        return (
            self.items_created == 0 and self.ratings_added == 0 and self.items_given_attributes == 0
        )

    def attribute_lines(self) -> list[str]:
        """One line per kept attribute: its values with their numbers of items."""
        lines = []
        for name, counts in self.attributes.items():
            shown = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
            values = ", ".join(
                f"{listed(v) if v else '(empty)'} {n:,}" for v, n in shown[:MAX_VALUES_SHOWN]
            )
            rest = len(shown) - MAX_VALUES_SHOWN
            more = self.attributes_more.get(name, 0)
            if rest > 0 or more:
                values += " and others" if not values else ", …"
            lines.append(f"{listed(name)}: {values}" if values else listed(name))
        return lines

    def source(self, kind: str) -> SourceSummary:
        for summary in self.sources:
            if summary.kind == kind:
                return summary
        summary = SourceSummary(kind)
        self.sources.append(summary)
        return summary

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out.pop("_warning_counts", None)
        for d, s in zip(out["sources"], self.sources, strict=True):
            d["label"] = s.label
        out["rating_kind_label"] = KIND_LABELS.get(self.rating_kind, self.rating_kind)
        return out

    def summary_lines(self) -> list[str]:
        how = "as you said" if self.rating_kind_given else "inferred; --ratings overrides"
        kind = KIND_LABELS.get(self.rating_kind, self.rating_kind) or "none"
        lines = [
            f"imported {self.file} ({self.container}, {self.shape} shape) into "
            f"dataset{'s' if len(self.datasets) > 1 else ''} {', '.join(self.datasets) or '-'}",
            f"  ratings are:          {kind} ({how})",
            *(
                [f"  study language:       {language_label(self.language)}"]
                if self.language
                else []
            ),
            f"  rows read:            {self.rows_read:,}",
            f"  items created:        {self.items_created:,}",
            f"  items already there:  {self.items_existing:,}",
            *(
                [f"  empty outputs:        {self.empty_outputs:,} (kept as system outputs)"]
                if self.empty_outputs
                else []
            ),
            f"  rating rows read:     {self.ratings_read:,}",
            f"  ratings stored:       {self.ratings_added:,}",
        ]
        if self.ratings_existing:
            lines.append(
                f"  ratings already there: {self.ratings_existing:,} (an earlier import of "
                "this file)"
            )
        for summary in self.sources:
            lines.append(f"    {summary.describe()}")
        if self.duplicate_rows:
            lines.append(f"  repeated item rows:   {self.duplicate_rows:,} (no ratings; one item)")
        if self.repeated_ratings:
            lines.append(
                f"  repeated ratings:     {self.repeated_ratings:,} (a rater rated an item "
                "again; all kept, the rater's mean counts)"
            )
        if self.conflicting_ratings:
            lines.append(f"  conflicting labels:   {self.conflicting_ratings:,} (all kept)")
        if self.annotators:
            shown = ", ".join(self.annotators[:10])
            more = f" and {len(self.annotators) - 10} more" if len(self.annotators) > 10 else ""
            lines.append(f"  annotators:           {shown}{more}")
        if self.dimensions:
            dims = ", ".join(f"{k} ({v:,})" for k, v in self.dimensions.items())
            lines.append(f"  ratings by dimension: {dims}")
        if self.dimensions_created:
            lines.append(f"  dimensions created:   {', '.join(self.dimensions_created)}")
        for n, line in enumerate(self.attribute_lines()):
            lines.append(f"  {'item attributes:' if n == 0 else '':<21} {line}")
        if self.items_given_attributes:
            lines.append(
                f"  attributes added to:  {self.items_given_attributes:,} items the study had"
            )
        if self.ignored_columns:
            lines.append(f"  columns ignored:      {', '.join(self.ignored_columns)}")
        lines.append(f"  time:                 {self.elapsed_s:.1f} s")
        for warning in self.warnings:
            lines.append(f"  warning: {warning}")
        return lines

"""What an import did, for the terminal, the GUI and `--json`."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

MAX_WARNINGS = 20


@dataclass
class ImportReport:
    file: str
    container: str = ""  # csv | tsv | jsonl
    shape: str = ""  # pairs | csmd | long | wide
    datasets: list[str] = field(default_factory=list)
    datasets_created: list[str] = field(default_factory=list)
    columns: dict[str, Any] = field(default_factory=dict)
    ignored_columns: list[str] = field(default_factory=list)
    rows_read: int = 0
    items_created: int = 0
    # Items of this file that the dataset held before this import (a re-import adds nothing).
    items_existing: int = 0
    ratings_added: int = 0
    ratings_existing: int = 0
    # Rows identical (in every mapped field) to an earlier row of the same file: imported once.
    duplicate_rows: int = 0
    duplicate_ratings: int = 0
    # The same annotator rating the same item and dimension twice with different values.
    conflicting_ratings: int = 0
    annotators: list[str] = field(default_factory=list)
    annotators_created: list[str] = field(default_factory=list)
    # Ratings added per dimension.
    dimensions: dict[str, int] = field(default_factory=dict)
    dimensions_created: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
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
        return self.items_created == 0 and self.ratings_added == 0

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out.pop("_warning_counts", None)
        return out

    def summary_lines(self) -> list[str]:
        lines = [
            f"imported {self.file} ({self.container}, {self.shape} shape) into "
            f"dataset{'s' if len(self.datasets) > 1 else ''} {', '.join(self.datasets) or '-'}",
            f"  rows read:            {self.rows_read:,}",
            f"  items created:        {self.items_created:,}",
            f"  items already there:  {self.items_existing:,}",
            f"  ratings added:        {self.ratings_added:,}",
        ]
        if self.ratings_existing:
            lines.append(f"  ratings already there: {self.ratings_existing:,}")
        if self.duplicate_rows:
            lines.append(f"  duplicate rows:       {self.duplicate_rows:,} (imported once)")
        if self.conflicting_ratings:
            lines.append(f"  conflicting ratings:  {self.conflicting_ratings:,} (all kept)")
        if self.annotators:
            shown = ", ".join(self.annotators[:10])
            more = f" and {len(self.annotators) - 10} more" if len(self.annotators) > 10 else ""
            lines.append(f"  annotators:           {shown}{more}")
        if self.dimensions:
            dims = ", ".join(f"{k} ({v:,})" for k, v in self.dimensions.items())
            lines.append(f"  ratings by dimension: {dims}")
        if self.dimensions_created:
            lines.append(f"  dimensions created:   {', '.join(self.dimensions_created)}")
        if self.ignored_columns:
            lines.append(f"  columns ignored:      {', '.join(self.ignored_columns)}")
        lines.append(f"  time:                 {self.elapsed_s:.1f} s")
        for warning in self.warnings:
            lines.append(f"  warning: {warning}")
        return lines

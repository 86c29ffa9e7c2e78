"""What the import dialog shows before anything is written: the first rows and the plan.

Uses the importer's own reader and planner (`meaningbench.datasets`), so the preview says exactly
what `import_file` will do with the same file, format and mapping. Qt-free.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from meaningbench.errors import InputError
from meaningbench.metrics.languages import LANGUAGE_NAMES
from meaningbench.queries.files import StudyHandle, study_of

if TYPE_CHECKING:
    pass

PREVIEW_ROWS = 20
# The languages the dialog offers: (ISO 639-1 code, "German (de)"), by name.
LANGUAGE_CHOICES = tuple(
    (code, f"{name} ({code})")
    for code, name in sorted(LANGUAGE_NAMES.items(), key=lambda kv: kv[1])
)


def current_language(handle: StudyHandle) -> str:
    """The study's language, which the dialog proposes for the next import."""
    study = study_of(handle)
    from meaningbench.datasets.language import study_language

    return study_language(study)


# Fields the mapping editor offers, in the order a user thinks of them.
MAPPED_FIELDS = (
    ("source", "Source (original)"),
    ("output", "Output (simplification)"),
    ("system", "System"),
    ("annotator", "Annotator"),
    ("dimension", "Dimension (long shape)"),
    ("rating", "Rating (long shape)"),
    ("label", "Mean rating (label)"),
    ("id", "Item id"),
    ("dataset", "Dataset"),
)


@dataclass(frozen=True)
class Preview:
    columns: list[str] = field(default_factory=list)
    rows: list[list[str]] = field(default_factory=list)
    # Each shown row's number as error messages give it (1-based, a CSV header is row 1).
    row_numbers: list[int] = field(default_factory=list)
    container: str = ""
    shape: str = ""
    rating_kind: str = ""  # named | anonymous | aggregate: what the import will store
    rating_kind_given: bool = False
    used: dict[str, object] = field(default_factory=dict)  # field -> column(s)
    ignored: list[str] = field(default_factory=list)
    # Columns no field reads, kept as item attributes (categories).
    attributes: list[str] = field(default_factory=list)
    error: InputError | None = None

    def field_of(self) -> dict[str, str]:
        """Column -> the field it was matched to (for the preview's headers)."""
        out: dict[str, str] = {}
        for name, cols in self.used.items():
            for col in cols if isinstance(cols, list) else [cols]:
                out.setdefault(str(col), name)
        return out


def known_dimensions(study_path: Path | None) -> dict[str, Any]:
    """The study's dimensions as the importer will match rating columns to them."""
    from meaningbench.datasets.store import BulkWriter
    from meaningbench.queries.browser import connect_readonly

    if study_path is None:
        return {}
    if not study_path.exists():
        # A study the import will make: it starts with a new study's dimensions.
        from meaningbench.datasets.plan import DimInfo
        from meaningbench.db.study import DEFAULT_DIMENSIONS

        return {str(d["name"]): DimInfo(str(d["name"])) for d in DEFAULT_DIMENSIONS}
    conn = connect_readonly(str(study_path))
    try:
        return BulkWriter.known_dimensions(conn)
    finally:
        conn.close()


def _cell(value: Any) -> str:
    if value is None:
        return ""
    text = str(value)
    return text if len(text) <= 300 else text[:299] + "…"


def build_preview(
    path: Path,
    fmt: str,
    mapping: Any,
    study_path: Path | None,
    *,
    encoding: str = "utf-8",
    ratings: str | None = None,
    drop: list[str] | None = None,
) -> Preview:
    """The first rows and the plan; an InputError is kept in `error`, never raised."""
    from meaningbench.datasets.importer import open_source
    from meaningbench.datasets.plan import SHAPES, make_plan

    columns: list[str] = []
    rows: list[list[str]] = []
    row_numbers: list[int] = []
    container = ""
    try:
        source = open_source(path, fmt, encoding)
        columns = list(source.columns)
        container = (
            "jsonl"
            if source.container == "jsonl"
            else ("tsv" if source.delimiter == "\t" else "csv")
        )
        for row_no, record in source.rows():
            row_numbers.append(int(row_no))
            if isinstance(record, dict):
                rows.append([_cell(record.get(c)) for c in columns])
            else:
                rows.append([_cell(v) for v in record])
            if len(rows) >= PREVIEW_ROWS:
                break
        plan = make_plan(
            columns,
            mapping,
            shape=fmt if fmt in SHAPES else None,
            known=known_dimensions(study_path),
            path=path,
            ratings=ratings,
            drop=drop,
        )
        return Preview(
            columns,
            rows,
            row_numbers,
            container,
            shape=plan.shape,
            rating_kind=plan.rating_kind,
            rating_kind_given=plan.rating_kind_given,
            used=plan.used_columns(),
            ignored=list(plan.ignored),
            attributes=list(plan.attributes),
        )
    except InputError as exc:
        # What was read before the refusal is still shown.
        return Preview(columns, rows, row_numbers, container, error=exc)


def make_mapping(fields: dict[str, str], dimensions: dict[str, str]) -> Any:
    """A UserMapping from the editor's choices (only what the user set; the rest is auto)."""
    from meaningbench.datasets.mapping import UserMapping

    return UserMapping(fields=dict(fields), dimensions=dict(dimensions))

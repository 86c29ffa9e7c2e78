"""Export a study's items (with mean ratings and metric scores) or its per-rater ratings.

Two tables, CSV/TSV or JSONL by the file's extension:
- items (default): one row per item, with per dimension `<dim>_human`, the item's human
  score by the one rule of `meaningbench.analysis.human` (exactly what correlate, report, the
  dashboard and training use), `<dim>_mean` and `<dim>_n`, the mean over the item's raters
  (named and anonymous; each rater's ratings averaged first) and how many raters,
  `<dim>_label` for aggregate labels published with the data (a dataset's mean label is
  not one more rater, so it is kept apart; it is the human score where no rater rated),
  and one column per metric configuration (`meaningbench.analysis.score_columns.score_matrix`, named by the canonical metric spec);
- ratings (`--ratings`): the long shape, one row per current rating with its flag and
  comment, plus one row with empty rating fields for each regular item nobody rated
  (control items nobody rated are the study's own business and left out). Importing it
  into an empty study gives the same datasets, rated items, references, systems and
  ratings back.

Both read aggregate labels by the study's label-set rule
(`meaningbench.analysis.label_sets`): the items table the chosen set, as every analysis;
the ratings table every set, or with `labels` only that one.

Items are read in id order, one batch at a time, so a million-item study exports in
bounded memory (the metric matrix aside: one float per item and metric).

CSV/TSV text cells that a spreadsheet would run as formulas get a leading quote unless
`raw_cells` is asked for, and a notice file beside the table says so when any cell got one
(`meaningbench.core.cells`); the file is written whole or not at all
(`meaningbench.core.atomic_file`).
"""

from __future__ import annotations

import csv
import json
import math
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import IO, Any

import numpy as np
from sqlalchemy import Connection, text

from meaningbench.analysis.human import item_scores
from meaningbench.analysis.label_sets import resolve_label_sets, select_labels
from meaningbench.analysis.resolutions import ORIGIN_PREFIX as RESOLUTION_ORIGIN
from meaningbench.analysis.score_columns import score_matrix
from meaningbench.core.atomic_file import replace_atomically
from meaningbench.core.cells import CellMode, neutralise, notice_path, notice_text
from meaningbench.core.json_values import json_line
from meaningbench.datasets.attribute_columns import AttributeColumns
from meaningbench.db.current_ratings import current_rating_sql
from meaningbench.db.frames import ITEM_COLUMNS, ratings_frame
from meaningbench.db.study import Study
from meaningbench.errors import UserError

BATCH = 10_000
PROGRESS_EVERY = 10_000  # rows
# Called with the number of rows written so far.
Progress = Callable[[int], None] | None
# The item columns an export writes: all but those the study derives (the group of outputs
# of one source, a control item's parent id), which belong to no imported file.
EXPORTED_ITEM_COLUMNS = [c for c in ITEM_COLUMNS if c not in ("source_group", "parent_id")]
RATING_COLUMNS = [
    "annotator",
    "annotator_kind",
    "dimension",
    "rating",
    "n_raters",
    "flagged",
    "comment",
]


@dataclass
class ExportReport:
    path: str
    format: str
    table: str  # items | ratings
    rows: int = 0
    items: int = 0
    columns: list[str] = field(default_factory=list)
    # How text cells were written: "spreadsheet-safe" (formula-like text quoted) or "raw".
    cells: CellMode = "spreadsheet-safe"
    cells_quoted: int = 0  # text cells that got a leading quote
    notice: str | None = None  # the notice file written beside the table, when cells changed
    label_sets: list[str] = field(default_factory=list)  # aggregate sources written
    elapsed_s: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def export_format(path: Path) -> str:
    suffix = path.suffix.lower()
    if suffix in (".jsonl", ".ndjson"):
        return "jsonl"
    if suffix == ".csv":
        return "csv"
    if suffix in (".tsv", ".tab"):
        return "tsv"
    raise UserError(f"{path}: choose the format by the extension: .csv, .tsv or .jsonl")


def _item_batches(conn: Connection) -> Iterator[list[tuple[Any, ...]]]:
    last = 0
    sql = text(  # EXPORTED_ITEM_COLUMNS, in its order
        "SELECT i.id, d.name, i.external_id, i.kind, i.system, i.source, i.output, i.refs "
        "FROM item i JOIN dataset d ON d.id = i.dataset_id WHERE i.id > :last "
        "ORDER BY i.id LIMIT :n"
    )
    while True:
        rows = [tuple(r) for r in conn.execute(sql, {"last": last, "n": BATCH})]
        if not rows:
            return
        last = rows[-1][0]
        yield rows


def _refs(raw: Any) -> list[str]:
    if not raw:
        return []
    value = json.loads(raw) if isinstance(raw, str) else raw
    return list(value)


@dataclass
class _Sink:
    """Where the rows go: the open file, the report (which says how to write text cells)
    and whom to tell how far the export got."""

    fh: IO[str]
    report: ExportReport
    progress: Progress


class _Writer:
    """CSV/TSV or JSONL rows with the same columns; floats written so they read back exactly."""

    def __init__(self, out: _Sink, fmt: str, columns: list[str]) -> None:
        self.fmt = fmt
        self.progress = out.progress
        self.written = 0
        fh = self.fh = out.fh
        self.columns = columns
        report = self.report = out.report
        self.safe = fmt != "jsonl" and report.cells == "spreadsheet-safe"
        if fmt != "jsonl":
            # CRLF as RFC 4180 has it: the csv module quotes a cell only for the characters
            # of its line terminator, and a text with a bare CR must be quoted to read back.
            delimiter = "\t" if fmt == "tsv" else ","
            self.csv = csv.writer(fh, delimiter=delimiter, lineterminator="\r\n")
            self.csv.writerow([self._text(c) for c in columns])

    def _text(self, value: str) -> str:
        if not self.safe:
            return value
        cell = neutralise(value)
        if cell is not value:
            self.report.cells_quoted += 1
        return cell

    def row(self, values: list[Any]) -> None:
        self.written += 1
        if self.progress is not None and self.written % PROGRESS_EVERY == 0:
            self.progress(self.written)
        if self.fmt == "jsonl":
            obj = {c: _json_value(v) for c, v in zip(self.columns, values, strict=True)}
            self.fh.write(json_line(obj))
        else:
            cells = []
            for v in values:
                cell = _cell(v)
                # Only text is quoted: a number (-3.5) stays a number for the spreadsheet.
                if self.safe and isinstance(v, str):
                    cell = self._text(cell)
                cells.append(cell)
            self.csv.writerow(cells)


def _json_value(v: Any) -> Any:
    if isinstance(v, float) and (math.isnan(v) or math.isinf(v)):
        return None
    if hasattr(v, "item") and callable(v.item):  # numpy scalars
        return _json_value(v.item())
    return v


def _cell(v: Any) -> Any:
    v = _json_value(v)
    if v is None:
        return ""
    if isinstance(v, list):
        return json.dumps(v, ensure_ascii=False)
    if isinstance(v, float):
        return repr(v)
    return v


def _dimensions(conn: Connection, keep: list[str]) -> tuple[list[tuple[int, str]], set[int]]:
    """Dimensions that hold current ratings (in study order), and those with aggregates (a
    lead's decisions on disagreements count only when their set is read)."""
    rows = conn.execute(
        text(
            "SELECT DISTINCT r.dimension_id, a.kind, a.name, r.origin LIKE :decision "
            f"FROM rating r JOIN annotator a ON a.id = r.annotator_id WHERE {current_rating_sql()}"
        ),
        {"decision": f"{RESOLUTION_ORIGIN}%"},
    ).all()
    used = {did for did, *_ in rows}
    with_labels = {
        did
        for did, kind, name, decision in rows
        if kind == "aggregate" and (not decision or name in keep)
    }
    dims = conn.execute(text("SELECT id, name FROM dimension ORDER BY position, id")).all()
    return [(did, name) for did, name in dims if did in used], with_labels


def _export_items(
    conn: Connection, out: _Sink, fmt: str, report: ExportReport, keep: list[str]
) -> None:
    dims, with_labels = _dimensions(conn, keep)
    matrix = score_matrix(conn)
    metric_cols = [str(c) for c in matrix.columns] if not matrix.empty else []
    attributes = AttributeColumns(conn, EXPORTED_ITEM_COLUMNS)
    columns = EXPORTED_ITEM_COLUMNS + attributes.headers
    for did, name in dims:
        columns += [f"{name}_human", f"{name}_mean", f"{name}_n"]
        if did in with_labels:
            columns.append(f"{name}_label")
    taken = set(columns)
    metric_names = [c if c not in taken else f"{c} (metric)" for c in metric_cols]
    columns += metric_names
    report.columns = columns
    writer = _Writer(out, fmt, columns)
    for batch in _item_batches(conn):
        ids = [r[0] for r in batch]
        rows = select_labels(ratings_frame(conn, item_range=(ids[0], ids[-1])), keep)
        scores = item_scores(rows)
        stats: dict[tuple[int, str], tuple[Any, ...]] = {
            (int(i), str(d)): (h, m, int(n), lab)
            for i, d, h, m, n, lab in zip(
                scores["item_id"],
                scores["dimension"],
                scores["score"],
                scores["rater_mean"],
                np.where(scores["from_aggregate"], 0, scores["n_raters"]),
                scores["label"],
                strict=True,
            )
        }
        # One conversion per batch: row access on a DataFrame costs ~9 µs per item.
        metric_values = matrix.reindex(ids).to_numpy(dtype=float) if metric_cols else None
        attribute_cells = attributes.cells(ids)
        for pos, (iid, ds, ext, kind, system, source, output, refs) in enumerate(batch):
            values: list[Any] = [iid, ds, ext, kind, system, source, output, _refs(refs)]
            values += attributes.row(attribute_cells, iid)
            for did, name in dims:
                human, mean, n, label = stats.get((iid, name), (None, None, 0, None))
                values += [human, mean, n]
                if did in with_labels:
                    values.append(label)
            if metric_values is not None:
                values += metric_values[pos].tolist()
            writer.row(values)
            report.rows += 1
        report.items += len(batch)


def _export_ratings(
    conn: Connection, out: _Sink, fmt: str, report: ExportReport, keep: list[str] | None
) -> None:
    attributes = AttributeColumns(conn, EXPORTED_ITEM_COLUMNS + RATING_COLUMNS)
    columns = EXPORTED_ITEM_COLUMNS + attributes.headers + RATING_COLUMNS
    report.columns = columns
    writer = _Writer(out, fmt, columns)
    sql = text(
        "SELECT r.item_id, a.name, a.kind, dm.name, r.value, r.n_raters, r.flagged, r.comment "
        "FROM rating r "
        "JOIN annotator a ON a.id = r.annotator_id JOIN dimension dm ON dm.id = r.dimension_id "
        f"WHERE {current_rating_sql()} AND r.item_id BETWEEN :lo AND :hi ORDER BY r.item_id, r.id"
    )
    for batch in _item_batches(conn):
        by_item: dict[int, list[tuple[Any, ...]]] = {}
        for iid, *rest in conn.execute(sql, {"lo": batch[0][0], "hi": batch[-1][0]}):
            if keep is not None and rest[1] == "aggregate" and rest[0] not in keep:
                continue  # another label set than the one asked for
            by_item.setdefault(iid, []).append(tuple(rest))
        attribute_cells = attributes.cells([r[0] for r in batch])
        for iid, ds, ext, kind, system, source, output, refs in batch:
            base: list[Any] = [iid, ds, ext, kind, system, source, output, _refs(refs)]
            base += attributes.row(attribute_cells, iid)
            ratings = by_item.get(iid)
            if not ratings:
                if kind == "regular":  # the item itself is data; an unrated control is not
                    writer.row(base + [None] * len(RATING_COLUMNS))
                    report.rows += 1
                continue
            for name, akind, dim, value, n_raters, flagged, comment in ratings:
                writer.row(base + [name, akind, dim, value, n_raters, bool(flagged), comment])
                report.rows += 1
        report.items += len(batch)


def export_study(
    study: Study,
    out_path: str | Path,
    *,
    ratings: bool = False,
    raw_cells: bool = False,
    labels: str | None = None,
    progress: Progress = None,
) -> ExportReport:
    """Write the study's items (or, with `ratings`, its per-rater ratings) to a file.

    CSV/TSV text cells that start like a formula get a leading quote, undone when
    MeaningBench imports the file with its notice beside it; `raw_cells` writes them as
    they are. `labels` names the aggregate label set to use (see the module docstring).
    """
    started = time.perf_counter()
    out = Path(out_path)
    fmt = export_format(out)
    if out.resolve() == Path(study.path).resolve():
        raise UserError(f"{out}: that is the study itself")
    if out.parent and not out.parent.exists():
        raise UserError(f"{out.parent}: no such folder")
    report = ExportReport(
        path=str(out),
        format=fmt,
        table="ratings" if ratings else "items",
        cells="raw" if raw_cells or fmt == "jsonl" else "spreadsheet-safe",
    )
    notice = notice_path(out)
    try:
        with study.engine.connect() as conn:
            # An unknown set is refused before anything is written.
            keep = resolve_label_sets(conn, labels)
            # The ratings table holds every set unless one was asked for.
            report.label_sets = list(keep) if labels or not ratings else []
            with replace_atomically(out) as fh:
                sink = _Sink(fh, report, progress)
                if ratings:
                    _export_ratings(conn, sink, fmt, report, keep if labels else None)
                else:
                    _export_items(conn, sink, fmt, report, keep)
                # Before the table takes its name: a notice never outlives its table's
                # quotes, and a table with quotes never goes without its notice.
                if report.cells_quoted:
                    with replace_atomically(notice) as nh:
                        nh.write(notice_text(out, report.cells_quoted))
                    report.notice = str(notice)
                else:
                    notice.unlink(missing_ok=True)
    except OSError as exc:  # a full disk, a read-only folder, a folder in the way
        reason = exc.strerror or str(exc)
        raise UserError(f"{out}: cannot write the export ({reason}); nothing was written") from None
    report.elapsed_s = round(time.perf_counter() - started, 3)
    return report


def cells_note(report: ExportReport) -> str:
    """One line saying how text cells were written, for the command and the dialog."""
    if report.format == "jsonl":
        return "text as it is (JSON lines: no spreadsheet formulas)"
    if report.cells == "raw":
        return "text as it is (raw cells: a spreadsheet may run text starting with = + - @)"
    if not report.cells_quoted:
        return "spreadsheet-safe: no text cell starts with = + - @, tab or CR; none changed"
    return (
        f"spreadsheet-safe: {report.cells_quoted:,} text cells starting with = + - @, tab or "
        f"CR got a leading ' (said in {Path(report.notice or '').name}; MeaningBench's import "
        "removes it while that file lies beside the table)"
    )

"""Import a rating file into a study: all or nothing, streaming, with a report.

Rows are read, checked and written batch by batch inside one transaction; the first bad
row rolls everything back, so the study is exactly as it was (the WAL journal keeps the
main file untouched until the commit). Memory stays bounded by the lookup tables (one
small entry per item and per rating), never by the file.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from app.datasets import keys
from app.datasets.mapping import UserMapping, parse_map_options
from app.datasets.plan import SHAPES, make_plan
from app.datasets.readers import TableSource, open_csv, open_table
from app.datasets.report import ImportReport
from app.datasets.rows import ParsedRow, RowParser, RowProblem
from app.datasets.store import BulkWriter, DatasetState, add_value, has_value, rating_key
from app.errors import InputError, UserError
from app.runtime import CancelToken
from db.study import Study

FORMATS = ("auto", "csv", "tsv", "jsonl", *SHAPES)
PROGRESS_EVERY = 5_000

ProgressCallback = Callable[[int, int | None, str], None]


item_keys = keys.item_keys


def open_source(path: Path, fmt: str, encoding: str) -> TableSource:
    if fmt not in FORMATS:
        raise InputError(f"unknown format {fmt!r} (one of: {', '.join(FORMATS)})")
    if fmt == "tsv":
        return open_csv(path, delimiter="\t", encoding=encoding)
    if fmt == "csv":
        return open_csv(path, delimiter=None, encoding=encoding)
    if fmt == "jsonl":
        return open_table(path, container="jsonl", encoding=encoding)
    return open_table(path, encoding=encoding)


class _Import:
    """The state of one import while it runs."""

    def __init__(
        self,
        writer: BulkWriter,
        report: ImportReport,
        path: Path,
        *,
        dataset: str | None,
        system: str | None,
        dataset_meta: dict[str, Any],
        fmt_label: str,
        label_columns: list[str],
    ) -> None:
        self.writer = writer
        self.report = report
        self.path = path
        self.dataset_override = dataset
        self.default_dataset = dataset or path.stem
        self.system = system
        self.dataset_meta = dataset_meta
        self.fmt_label = fmt_label
        self.label_columns = label_columns
        self.origin = f"import:{path.name}"
        self.file_ratings: dict[int, Any] = {}
        self.touched_existing: set[int] = set()
        self.ref_hashes: dict[int, int] = {}
        self.annotator_ids: dict[tuple[str | None, str, str], int] = {}
        self.dimension_ids: dict[str, int] = {}

    def dataset_state(self, name: str) -> DatasetState:
        state = self.writer.datasets.get(name)
        if state is None:
            state = self.writer.dataset(
                name, source_file=str(self.path), fmt=self.fmt_label, meta=self.dataset_meta
            )
            self.report.datasets.append(name)
            if state.created:
                self.report.datasets_created.append(name)
        return state

    def annotator_id(self, name: str | None, kind: str, dataset: str, row: int, column: str) -> int:
        key = (name, kind, dataset)
        aid = self.annotator_ids.get(key)
        if aid is not None:
            return aid
        if name is None:
            name = f"aggregate:{dataset}"
            meta: dict[str, Any] = {
                "dataset": dataset,
                "source_file": self.path.name,
                "columns": self.label_columns,
                "description": "mean rating published with the dataset",
            }
        else:
            meta = {"imported_from": self.path.name}
        state, created = self.writer.annotator(name, kind, meta)
        if state.kind != kind:
            raise InputError(
                f"annotator {name!r} is {state.kind} in the study but {kind} here",
                file=str(self.path),
                row=row,
                column=column,
            )
        if name not in self.report.annotators:
            self.report.annotators.append(name)
        if created:
            self.report.annotators_created.append(name)
        self.annotator_ids[key] = state.id
        return state.id

    def dimension_id(self, name: str, info_by_name: dict[str, Any]) -> int:
        did = self.dimension_ids.get(name)
        if did is None:
            did, created = self.writer.ensure_dimension(info_by_name[name])
            if created:
                self.report.dimensions_created.append(name)
            self.dimension_ids[name] = did
        return did

    def add_row(self, row_no: int, row: ParsedRow, info_by_name: dict[str, Any]) -> None:
        report, writer = self.report, self.writer
        ds_name = self.dataset_override or row.dataset or self.default_dataset
        ds = self.dataset_state(ds_name)
        system = row.system or self.system
        group, key = item_keys(row.source, row.output, system)
        by_key = ds.items.get(row.kind)
        if by_key is None:
            by_key = ds.items[row.kind] = {}
        iid = by_key.get(key)
        first_time = False
        if iid is None:
            iid = writer.add_item(
                ds.id, row.source, row.output, row.references, system, group,
                key, row.kind, row.external_id,
            )  # fmt: skip
            by_key[key] = iid
            report.items_created += 1
            first_time = True
            if row.references:
                self.ref_hashes[iid] = hash(tuple(row.references))
        elif iid < writer.first_new_item_id:
            if iid not in self.touched_existing:
                self.touched_existing.add(iid)
                first_time = True
        elif row.references and self.ref_hashes.get(iid) != hash(tuple(row.references)):
            report.warn(
                "references",
                f"row {row_no}: the references differ from an earlier row of the same "
                "item; the earlier row's were kept",
            )

        duplicate = not first_time
        for rating in row.ratings:
            aid = self.annotator_id(
                rating.annotator, rating.annotator_kind, ds_name, row_no, rating.column
            )
            did = self.dimension_id(rating.dimension, info_by_name)
            rkey = rating_key(iid, aid, did)
            in_file = has_value(self.file_ratings, rkey, rating.value)
            if in_file is True:
                report.duplicate_ratings += 1
                continue
            duplicate = False
            in_prior = None if ds.created else has_value(ds.prior, rkey, rating.value)
            if in_prior is True:
                report.ratings_existing += 1
                # Remembered as seen in this file too: a repeat of the row is a duplicate.
                add_value(self.file_ratings, rkey, rating.value)
                continue
            if in_file is False or in_prior is False:
                report.conflicting_ratings += 1
                who = rating.annotator or f"aggregate:{ds_name}"
                report.warn(
                    "conflict",
                    f"row {row_no}: {who} already gave this item another {rating.dimension} "
                    f"rating; both were kept",
                )
            add_value(self.file_ratings, rkey, rating.value)
            writer.add_rating(iid, aid, did, rating.value, self.origin, rating.n_raters)
            report.ratings_added += 1
            report.dimensions[rating.dimension] = report.dimensions.get(rating.dimension, 0) + 1
        if duplicate:
            report.duplicate_rows += 1
            report.warn("duplicate", f"row {row_no} repeats an earlier row; imported once")


def import_file(
    study: Study,
    path: str | Path,
    *,
    fmt: str = "auto",
    mapping: UserMapping | Sequence[str] | None = None,
    dataset: str | None = None,
    system: str | None = None,
    encoding: str = "utf-8",
    dataset_meta: dict[str, Any] | None = None,
    progress: ProgressCallback | None = None,
    cancel: CancelToken | None = None,
) -> ImportReport:
    """Import one file into `study`; raises InputError (and changes nothing) on bad input."""
    started = time.perf_counter()
    path = Path(path)
    user = mapping if isinstance(mapping, UserMapping) else parse_map_options(mapping)
    if dataset is not None and not dataset.strip():
        raise InputError("--dataset: the dataset name is empty")
    if system is not None and not system.strip():
        raise InputError("--system: the system name is empty")
    source = open_source(path, fmt, encoding)
    report = ImportReport(file=str(path))
    report.container = (
        "jsonl" if source.container == "jsonl" else ("tsv" if source.delimiter == "\t" else "csv")
    )

    raw = study.engine.raw_connection()
    conn = raw.driver_connection
    assert conn is not None
    writer = BulkWriter(conn)  # type: ignore[arg-type]
    try:
        known = BulkWriter.known_dimensions(conn)  # type: ignore[arg-type]
        plan = make_plan(
            source.columns, user, shape=fmt if fmt in SHAPES else None, known=known, path=path
        )
        report.shape = plan.shape
        report.columns = plan.used_columns()
        report.ignored_columns = list(plan.ignored)
        if plan.ignored:
            report.warn("columns", f"columns not imported: {', '.join(plan.ignored)}")
        parser = RowParser(plan, source.columns, source.container)
        run = _Import(
            writer,
            report,
            path,
            dataset=dataset.strip() if dataset else None,
            system=system.strip() if system else None,
            dataset_meta=dict(dataset_meta or {}),
            fmt_label=f"{report.container}/{plan.shape}",
            label_columns=[*plan.labels.values(), *([] if plan.per_rater else plan.dims.values())],
        )
        info_by_name = plan.dimension_info
        # About 100 bytes a row is typical of sentence pairs; only a hint for index handling.
        try:
            writer.begin(expected_rows=source.size // 100)
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) and "busy" not in str(exc):
                raise
            raise UserError(
                f"{study.path}: the study is busy (another program is writing to it); "
                "try again when it is done"
            ) from None
        total = source.size or None
        file_name = str(path)
        for row_no, record in source.rows():
            try:
                row = parser.parse(record)
            except RowProblem as problem:
                raise InputError(
                    str(problem), file=file_name, row=row_no, column=problem.column
                ) from None
            run.add_row(row_no, row, info_by_name)
            report.rows_read += 1
            if report.rows_read % PROGRESS_EVERY == 0:
                if cancel is not None:
                    cancel.check()
                if progress is not None:
                    progress(source.counter.done, total, f"{report.rows_read:,} rows")
        if report.rows_read == 0:
            raise InputError("no data rows (only a header?)", file=file_name)
        if cancel is not None:
            cancel.check()
        report.items_existing = len(run.touched_existing)
        writer.commit()
    except BaseException:
        writer.rollback()
        raise
    finally:
        raw.close()
    if progress is not None:
        progress(source.size, source.size or None, f"{report.rows_read:,} rows")
    if report.nothing_new:
        report.warn(
            "nothing-new",
            "nothing new: every item and rating of this file was already in "
            f"{', '.join(report.datasets)}",
        )
    report.finish_warnings()
    report.elapsed_s = round(time.perf_counter() - started, 3)
    return report

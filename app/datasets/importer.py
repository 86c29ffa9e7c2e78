"""Import a rating file into a study: all or nothing, streaming, with a report.

Rows are read, checked and written batch by batch inside one transaction; the first bad
row rolls everything back, so the study is exactly as it was (the WAL journal keeps the
main file untouched until the commit). Memory stays bounded by the lookup tables (one
small entry per item and per rating), never by the file.

Every rating row is stored: rows are grouped into items by (source, output, system), but
never merged as ratings — two identical rows of an anonymous file are two people who gave
the same score, and a named rater's repeated rating is kept (the item score averages a
rater's ratings first). What keeps a re-import from doubling a study is the file's
identity: a rating's origin is `import:<file name>`, and importing a file of that name
into the same dataset again recognises, for each (item, rater, dimension, value), as many
occurrences as that file stored before; only occurrences beyond those are new. So an
identical file adds nothing and says so, a file with rows appended adds exactly those.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from meaningbench.core import keys
from meaningbench.core.readers import TableSource, open_csv, open_table
from meaningbench.core.wording import counted
from meaningbench.datasets.attributes import AttributeTracker
from meaningbench.datasets.language import checked_language, import_language
from meaningbench.datasets.mapping import UserMapping, parse_map_options
from meaningbench.datasets.plan import SHAPES, Plan, attribute_name, make_plan
from meaningbench.datasets.report import ImportReport
from meaningbench.datasets.rows import ParsedRow, RatingValue, RowParser, RowProblem
from meaningbench.datasets.store import BulkWriter, DatasetState, rating_key
from meaningbench.db.errors import StudyBusyError
from meaningbench.db.study import Study
from meaningbench.db.writers import announced_writer
from meaningbench.errors import InputError, UserError
from meaningbench.runtime import Cancelled, CancelToken

FORMATS = ("auto", "csv", "tsv", "jsonl", *SHAPES)
PROGRESS_EVERY = 5_000
# How many offending line numbers an error names.
LINES_SHOWN = 5

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


@dataclass(frozen=True)
class RaterIds:
    """How a file's rater ids meet the study's: `same` says a rater id already in the
    study from another file is that same person; `prefix` makes this file's ids its own
    ("asset:" + "0"), for corpora that number their raters from 0 alike."""

    same: bool = False
    prefix: str = ""


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
        attribute_columns: list[str],
        raters: RaterIds,
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
        # Raters already in the study from another file, by that file: the same people?
        self.shared_raters: dict[str, list[str]] = {}
        self.raters = raters
        # Packed (item, annotator, dimension) keys rated by this file so far.
        self.file_ratings: set[int] = set()
        # Explicit aggregates: labels per (item, dimension), to refuse several per item.
        self.aggregate_cells: dict[tuple[int, int], int] = {}
        self.named_raters: dict[str, set[int]] = {}
        self.missing_rater_lines: list[int] = []
        self.missing_rater_rows = 0
        self.missing_rater_column = ""
        self.touched_existing: set[int] = set()
        self.ref_hashes: dict[int, int] = {}
        self.annotator_ids: dict[tuple[str | None, str, str], int] = {}
        self.dimension_ids: dict[str, int] = {}
        self.attributes = AttributeTracker(attribute_columns) if attribute_columns else None
        writer.load_attributes = self.attributes is not None

    def dataset_state(self, name: str) -> DatasetState:
        state = self.writer.datasets.get(name)
        if state is None:
            state = self.writer.dataset(
                name,
                source_file=str(self.path),
                fmt=self.fmt_label,
                meta=self.dataset_meta,
                origin=self.origin,
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
        if name is not None and kind == "named" and self.raters.prefix:
            name = self.raters.prefix + name
        if name is None and kind == "aggregate":
            name = f"aggregate:{dataset}"
            meta: dict[str, Any] = {
                "dataset": dataset,
                "source_file": self.path.name,
                "columns": self.label_columns,
                "description": "mean rating published with the dataset",
            }
        elif name is None:
            # One annotator row stands for the dataset's anonymous ratings: it names their
            # source, never one rater (each of its ratings is a different, unknown person).
            name = f"anonymous:{dataset}"
            meta = {
                "dataset": dataset,
                "source_file": self.path.name,
                "description": "ratings without rater ids: each one an unknown person's",
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
        elif kind == "named" and state.imported_from not in (None, self.path.name):
            self.shared_raters.setdefault(str(state.imported_from), []).append(name)
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
        ds_name = self.dataset_override or row.dataset or self.default_dataset
        ds = self.dataset_state(ds_name)
        iid, first_time = self._item_of_row(row_no, row, ds)
        if row.missing_rater is not None:
            self._note_missing_rater(row_no, row.missing_rater)
            return
        if not row.ratings and not first_time:
            self.report.duplicate_rows += 1
            self.report.warn("duplicate", f"row {row_no} names an item an earlier row named")
        for rating in row.ratings:
            self._add_rating(row_no, iid, ds, ds_name, rating, info_by_name)

    def _item_of_row(self, row_no: int, row: ParsedRow, ds: DatasetState) -> tuple[int, bool]:
        """The row's item, created if new; and whether this file names it for the first time."""
        report, writer = self.report, self.writer
        system = row.system or self.system
        group, key = item_keys(row.source, row.output, system)
        by_key = ds.items.get(row.kind)
        if by_key is None:
            by_key = ds.items[row.kind] = {}
        iid = by_key.get(key)
        first_time = False
        attrs = self.attributes
        if iid is None:
            meta = attrs.meta_json(row.attributes) if attrs and row.attributes else "{}"
            iid = writer.add_item(
                ds.id, row.source, row.output, row.references, system, group,
                key, row.kind, row.external_id, meta,
            )  # fmt: skip
            by_key[key] = iid
            report.items_created += 1
            if not row.output:
                report.empty_outputs += 1
            first_time = True
            if row.references:
                self.ref_hashes[iid] = hash(tuple(row.references))
        elif iid < writer.first_new_item_id:
            if iid not in self.touched_existing:
                self.touched_existing.add(iid)
                first_time = True
                if attrs is not None and row.attributes is not None:
                    merged = attrs.merged_with_stored(ds.attributes.get(iid), row.attributes)
                    if merged is not None:
                        writer.set_attributes(iid, merged)
        elif row.references and self.ref_hashes.get(iid) != hash(tuple(row.references)):
            report.warn(
                "references",
                f"row {row_no}: the references differ from an earlier row of the same "
                "item; the earlier row's were kept",
            )
        if attrs is not None and row.attributes is not None:
            if first_time:
                attrs.first_row(iid, row_no, row.attributes)
            else:
                attrs.same_as_before(iid, row.attributes)
        return iid, first_time

    def _note_missing_rater(self, row_no: int, column: str) -> None:
        self.missing_rater_rows += 1
        self.missing_rater_column = column
        if len(self.missing_rater_lines) < LINES_SHOWN:
            self.missing_rater_lines.append(row_no)

    def _add_rating(
        self,
        row_no: int,
        iid: int,
        ds: DatasetState,
        ds_name: str,
        rating: RatingValue,
        info_by_name: dict[str, Any],
    ) -> None:
        report = self.report
        kind = rating.annotator_kind
        aid = self.annotator_id(rating.annotator, kind, ds_name, row_no, rating.column)
        did = self.dimension_id(rating.dimension, info_by_name)
        rkey = rating_key(iid, aid, did)
        source = report.source(kind)
        source.rating_rows += 1
        report.ratings_read += 1
        prior_mine = ds.from_this_file
        seen = (rkey, rating.value)
        left = prior_mine.get(seen, 0)
        if left:
            # Stored by an earlier import of this very file: recognised, not added.
            prior_mine[seen] = left - 1
            report.ratings_existing += 1
            source.already_there += 1
            return
        self._warn_if_rated_again(row_no, rkey, ds, ds_name, rating)
        self.file_ratings.add(rkey)
        if kind == "aggregate":
            cell = (iid, did)
            self.aggregate_cells[cell] = self.aggregate_cells.get(cell, 0) + 1
            if rating.n_raters is not None:
                source.n_raters_known += 1
                source.n_raters_total += rating.n_raters
        elif kind == "named":
            self.named_raters.setdefault(ds_name, set()).add(aid)
        self.writer.add_rating(iid, aid, did, rating.value, self.origin, rating.n_raters)
        report.ratings_added += 1
        source.stored += 1
        report.dimensions[rating.dimension] = report.dimensions.get(rating.dimension, 0) + 1

    def _warn_if_rated_again(
        self, row_no: int, rkey: int, ds: DatasetState, ds_name: str, rating: RatingValue
    ) -> None:
        report = self.report
        kind = rating.annotator_kind
        again = rkey in self.file_ratings or rkey in ds.prior
        if again and kind == "named":
            report.repeated_ratings += 1
            report.warn(
                "repeated",
                f"row {row_no}: {rating.annotator} rated this item's {rating.dimension} "
                "again; all ratings are kept and the rater's mean counts",
            )
        elif again and kind == "aggregate":
            report.conflicting_ratings += 1
            report.warn(
                "conflict",
                f"row {row_no}: aggregate:{ds_name} already gave this item a "
                f"{rating.dimension} label; both were kept (if each row is one "
                "person's rating, import with --ratings anonymous)",
            )

    def check_file(self, file_name: str) -> None:
        """What only the whole file shows; raises InputError (the import rolls back)."""
        if self.missing_rater_rows:
            lines = ", ".join(str(n) for n in self.missing_rater_lines)
            more = self.missing_rater_rows - len(self.missing_rater_lines)
            others = (
                " while other rows name their rater: a file's rows either all name a rater "
                "or none does"
                if self.named_raters
                else ""
            )
            raise InputError(
                f"the rater id is empty on {self.missing_rater_rows:,} rows (lines {lines}"
                f"{f' and {more:,} more' if more > 0 else ''}){others}. Fill in the rater "
                "ids, or import every row as one rating by an unknown person with "
                "--ratings anonymous",
                file=file_name,
                row=self.missing_rater_lines[0],
                column=self.missing_rater_column,
            )
        self._check_aggregates(file_name)

    def _check_aggregates(self, file_name: str) -> None:
        """One rule for aggregate labels, inferred or said with --ratings aggregate: a few
        items with several labels (published data has them: CSMD repeats pairs) are kept,
        each repeat warned about; a file where most labelled items have several is not a
        file of labels but of ratings, and is refused."""
        several = [cell for cell, n in self.aggregate_cells.items() if n > 1]
        if not several:
            return
        items = len({iid for iid, _ in several})
        labelled = len({iid for iid, _ in self.aggregate_cells})
        if 2 * items <= labelled:
            return
        have = "item has" if items == 1 else "items have"
        raise InputError(
            f"aggregate labels: {items:,} of {labelled:,} labelled {have} several rows for "
            f"one dimension ({len(several):,} item-dimension pairs), but an aggregate is one "
            "published label per item (a few repeated items are kept with a warning; most "
            "items repeated is not a file of labels). If each row is one person's rating, "
            "say --ratings anonymous (or per-rater, with a rater column)",
            file=file_name,
        )

    def finish_attributes(self) -> None:
        attrs = self.attributes
        if attrs is not None:
            self.report.attributes = attrs.counts
            self.report.attributes_more = attrs.more
            self.report.items_given_attributes = attrs.items_given

    def finish_sources(self) -> None:
        report = self.report
        for summary in report.sources:
            if summary.kind == "named":
                summary.raters = sum(len(v) for v in self.named_raters.values())
            elif summary.kind == "anonymous":
                summary.raters = summary.rating_rows
            else:
                summary.raters = len(report.datasets)
        kinds = [s.kind for s in report.sources]
        report.rating_kind = kinds[0] if len(kinds) == 1 else ("mixed" if kinds else "")


def _check_names(dataset: str | None, system: str | None) -> None:
    if dataset is not None and not dataset.strip():
        raise InputError("--dataset: the dataset name is empty")
    if system is not None and not system.strip():
        raise InputError("--system: the system name is empty")


def _report_plan(report: ImportReport, plan: Plan) -> None:
    report.shape = plan.shape
    report.rating_kind = plan.rating_kind
    report.rating_kind_given = plan.rating_kind_given
    report.columns = plan.used_columns()
    report.ignored_columns = list(plan.ignored)
    report.attribute_columns = list(plan.attributes)
    report.attributes = {name: {} for name in map(attribute_name, plan.attributes)}
    if plan.ignored:
        report.warn("columns", f"columns not imported: {', '.join(plan.ignored)}")


def _check_shared_raters(run: _Import) -> None:
    """Rater ids are names within a study: raters 0-10 of two corpora would be taken for
    the same people, mixing their agreement, QC and straight-lining figures unseen. So a
    file's rater already in the study from another file is refused unless told."""
    if run.raters.same:
        return
    tag = run.default_dataset.replace(" ", "_")
    for other, names in run.shared_raters.items():
        shown = ", ".join(names[:8]) + (f" and {len(names) - 8} more" if len(names) > 8 else "")
        raise InputError(
            f"{counted(len(names), 'rater')} of this file ({shown}) already rated in the "
            f"study, imported from {other}: are they the same people? If so, import with "
            "--same-raters; if not, give this file's raters their own ids with --rater-prefix "
            f"(--rater-prefix {tag}: makes {tag}:{names[0]}, ...)",
            file=str(run.path),
        )


def _start_run(
    writer: BulkWriter,
    report: ImportReport,
    path: Path,
    plan: Plan,
    *,
    dataset: str | None,
    system: str | None,
    dataset_meta: dict[str, Any] | None,
    raters: RaterIds | None,
) -> _Import:
    run = _Import(
        writer,
        report,
        path,
        dataset=dataset.strip() if dataset else None,
        system=system.strip() if system else None,
        dataset_meta=dict(dataset_meta or {}),
        fmt_label=f"{report.container}/{plan.shape}",
        label_columns=[*plan.labels.values(), *([] if plan.per_rater else plan.dims.values())],
        attribute_columns=list(plan.attributes),
        raters=raters or RaterIds(),
    )
    return run


def _read_rows(
    source: TableSource,
    parser: RowParser,
    run: _Import,
    info_by_name: dict[str, Any],
    file_name: str,
    progress: ProgressCallback | None,
    cancel: CancelToken | None,
) -> None:
    """Parse and add every row; the first bad row raises InputError naming its line."""
    report = run.report
    total = source.size or None
    for row_no, record in source.rows():
        try:
            row = parser.parse(record)
            run.add_row(row_no, row, info_by_name)
        except RowProblem as problem:
            raise InputError(
                str(problem), file=file_name, row=row_no, column=problem.column
            ) from None
        report.rows_read += 1
        if report.rows_read % PROGRESS_EVERY == 0:
            if cancel is not None:
                cancel.check()
            if progress is not None:
                progress(source.counter.done, total, f"{report.rows_read:,} rows")
    if report.rows_read == 0:
        raise InputError("no data rows (only a header?)", file=file_name)


def _import_record(path: Path, writer: BulkWriter, report: ImportReport) -> dict[str, Any]:
    """What the study keeps about this import of the file."""
    return {
        "file": path.name,
        "at": writer.now,
        "rating_kind": report.rating_kind,
        "rating_kind_given": report.rating_kind_given,
        "empty_outputs": report.empty_outputs,
        "sources": [
            {
                "kind": s.kind,
                "rating_rows": s.rating_rows,
                "stored": s.stored,
                "already_there": s.already_there,
                "raters": s.raters,
                "n_raters_known": s.n_raters_known,
                "n_raters_total": s.n_raters_total,
            }
            for s in report.sources
        ],
    }


def _plan_file(
    conn: sqlite3.Connection,
    source: TableSource,
    user: UserMapping,
    fmt: str,
    path: Path,
    ratings: str | None,
    drop: Sequence[str] | None,
) -> Plan:
    known = BulkWriter.known_dimensions(conn)
    return make_plan(
        source.columns,
        user,
        shape=fmt if fmt in SHAPES else None,
        known=known,
        path=path,
        ratings=ratings,
        drop=drop,
    )


def _record_import(path: Path, writer: BulkWriter, report: ImportReport) -> None:
    record = _import_record(path, writer, report)
    # An import that adds nothing leaves the study as it was, its record included.
    if not report.nothing_new:
        for name in report.datasets:
            writer.record_import(writer.datasets[name].id, record)


def _finish_report(report: ImportReport, started: float) -> None:
    if report.nothing_new:
        report.warn(
            "nothing-new",
            "nothing new: every item and rating of this file was already in "
            f"{', '.join(report.datasets)}",
        )
    report.finish_warnings()
    report.elapsed_s = round(time.perf_counter() - started, 3)


def _store_pending(run: _Import, writer: BulkWriter, path: Path, report: ImportReport) -> None:
    """After the last row: the file-wide checks, then what the rows left to write."""
    run.check_file(str(path))
    run.finish_sources()
    run.finish_attributes()
    writer.flush()
    if run.attributes is not None and run.attributes.stored_names:
        writer.note_attribute_names(sorted(run.attributes.stored_names))
    _record_import(path, writer, report)


def _begin(writer: BulkWriter, study: Study, source: TableSource) -> None:
    # About 100 bytes a row is typical of sentence pairs; only a hint for index handling.
    try:
        writer.begin(study.path, expected_rows=source.size // 100)
    except StudyBusyError as exc:  # a program that does not name itself kept the lock
        raise UserError(f"{study.path}: {exc}") from None


def _new_report(path: Path, source: TableSource) -> ImportReport:
    report = ImportReport(file=str(path))
    report.container = (
        "jsonl" if source.container == "jsonl" else ("tsv" if source.delimiter == "\t" else "csv")
    )
    return report


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
    ratings: str | None = None,
    language: str | None = None,
    drop: Sequence[str] | None = None,
    raters: RaterIds | None = None,
    progress: ProgressCallback | None = None,
    cancel: CancelToken | None = None,
) -> ImportReport:
    """Import one file into `study`; raises InputError (and changes nothing) on bad input.

    `ratings` (per-rater | anonymous | aggregate) says what the file's ratings are when
    the inferred kind is wrong. `language` (an ISO 639-1 code) is the study's language
    (see `meaningbench.datasets.language`); None keeps the study's. Columns no field reads
    are kept as item attributes (`meaningbench.datasets.attributes`) except those `drop`
    names (`"*"`: every one). `raters`: see `RaterIds` (by default, a named rater already
    in the study from another file is refused)."""
    started = time.perf_counter()
    path = Path(path)
    user = mapping if isinstance(mapping, UserMapping) else parse_map_options(mapping)
    _check_names(dataset, system)
    if language is not None:
        checked_language(language)
    source = open_source(path, fmt, encoding)
    report = _new_report(path, source)
    raw = study.engine.raw_connection()
    conn = raw.driver_connection
    assert conn is not None
    writer = BulkWriter(conn)
    # Names this process as the lock's holder while the one transaction runs, so a
    # `score` waiting for the study can say what it waits for.
    announcement = ExitStack()
    try:
        plan = _plan_file(conn, source, user, fmt, path, ratings, drop)
        _report_plan(report, plan)
        parser = RowParser(plan, source.columns, source.container)
        run = _start_run(
            writer,
            report,
            path,
            plan,
            dataset=dataset,
            system=system,
            dataset_meta=dataset_meta,
            raters=raters,
        )
        info_by_name = plan.dimension_info
        _begin(writer, study, source)
        announcement.enter_context(announced_writer(study.path, "import"))
        had_items = conn.execute("SELECT 1 FROM item LIMIT 1").fetchone() is not None
        report.language = import_language(conn, language, had_items)
        _read_rows(source, parser, run, info_by_name, str(path), progress, cancel)
        _store_pending(run, writer, path, report)
        _check_shared_raters(run)
        if cancel is not None:
            cancel.check()
        report.items_existing = len(run.touched_existing)
        writer.commit()
    except Cancelled as exc:
        writer.rollback()
        raise Cancelled("nothing was imported (an import is all or nothing)") from exc
    except BaseException:
        writer.rollback()
        raise
    finally:
        announcement.close()
        raw.close()
    if progress is not None:
        progress(source.size, source.size or None, f"{report.rows_read:,} rows")
    _finish_report(report, started)
    return report

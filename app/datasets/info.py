"""A summary of a study from COUNT queries alone, fast on a million items.

Every figure here is an aggregate that SQLite answers from an index or one scan of a
narrow table; nothing is loaded into Python row by row.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, text

from meaningbench.annotation.protocols import describe as describe_protocol
from meaningbench.annotation.settings import SETTINGS_KEY, AnnotationSettings
from meaningbench.core.wording import counted
from meaningbench.datasets.language import LANGUAGE_KEY, stored_language
from meaningbench.datasets.rows import listed
from meaningbench.db.current_ratings import current_rating_sql
from meaningbench.db.frames import ITEM_META_COUNTS_SQL, attribute_counts, attribute_names
from meaningbench.db.models import ANNOTATOR_KIND_LABELS
from meaningbench.db.runs import RunOwner, interrupted_error
from meaningbench.db.study import Study
from meaningbench.metrics.languages import DEFAULT_LANGUAGE, language_label

MAX_LISTED = 50
MAX_IMPORTS_SHOWN = 5


@dataclass
class StudyInfo:
    path: str
    size_bytes: int
    schema: str | None
    items: int = 0
    items_by_kind: dict[str, int] = field(default_factory=dict)
    datasets: list[dict[str, Any]] = field(default_factory=list)
    systems: list[dict[str, Any]] = field(default_factory=list)
    systems_total: int = 0
    annotators: list[dict[str, Any]] = field(default_factory=list)
    annotators_total: int = 0
    dimensions: list[dict[str, Any]] = field(default_factory=list)
    # Item attributes (categories kept from imported columns): name, items with a value,
    # distinct values and the most frequent values with their numbers of items.
    attributes: list[dict[str, Any]] = field(default_factory=list)
    ratings_current: int = 0
    # Current ratings by source: the named raters together, each anonymous and each
    # aggregate source on its own (from the per-annotator counts: no extra scan).
    rating_sources: list[dict[str, Any]] = field(default_factory=list)
    metric_runs: list[dict[str, Any]] = field(default_factory=list)
    scores: int = 0
    # How the study's raters judge items (see `meaningbench.annotation.protocols`).
    annotation_protocol: dict[str, Any] = field(default_factory=dict)
    annotation_protocol_line: str = ""
    language: str = DEFAULT_LANGUAGE  # ISO 639-1 (see meaningbench.datasets.language)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def lines(self) -> list[str]:
        out = [
            f"study {self.path} ({self.size_bytes / 1e6:.1f} MB, schema {self.schema})",
            f"language: {language_label(self.language)}",
            f"items: {self.items:,}"
            + (
                " (" + ", ".join(f"{k} {v:,}" for k, v in self.items_by_kind.items()) + ")"
                if self.items_by_kind
                else ""
            ),
        ]
        out.append(f"datasets: {len(self.datasets)}")
        for d in self.datasets:
            flag = " [illustrative]" if d.get("meta", {}).get("illustrative") else ""
            out.append(f"  {d['name']}: {d['items']:,} items ({d['format'] or '?'}){flag}")
            for imp in d.get("meta", {}).get("imports", [])[-MAX_IMPORTS_SHOWN:]:
                if imp.get("empty_outputs"):
                    out.append(
                        f"    imported {imp['file']}: {imp['empty_outputs']:,} empty outputs "
                        "(system outputs with no text; each metric scores them as its "
                        "library does, or records them as not defined)"
                    )
                for src in imp.get("sources", []):
                    label = KIND_LABELS.get(src["kind"], src["kind"])
                    out.append(
                        f"    imported {imp['file']}: {label}, "
                        f"{counted(src['rating_rows'], 'rating row')}, "
                        f"{counted(src['stored'], 'rating')} stored"
                        + (
                            f", {src['already_there']:,} already there"
                            if src.get("already_there")
                            else ""
                        )
                    )
        out.append(f"systems: {self.systems_total}")
        for s in self.systems:
            out.append(
                f"  {s['name'] if s['name'] is not None else '(none)'}: "
                f"{counted(s['items'], 'item')}"
            )
        if self.systems_total > len(self.systems):
            out.append(f"  ... and {self.systems_total - len(self.systems)} more")
        if self.attributes:
            out.append(f"item attributes: {len(self.attributes)}")
        for a in self.attributes:
            values = ", ".join(f"{listed(v['value'])} {v['items']:,}" for v in a["values"])
            more = a["distinct"] - len(a["values"])
            values += f" and {more:,} more values" if more > 0 else ""
            out.append(
                f"  {listed(a['name'])} ({a['items']:,} items, {a['distinct']:,} values): {values}"
            )
        out.append(f"annotators: {self.annotators_total}")
        for a in self.annotators:
            out.append(f"  {a['name']} ({a['kind']}): {counted(a['ratings'], 'rating')}")
        if self.annotators_total > len(self.annotators):
            out.append(f"  ... and {self.annotators_total - len(self.annotators)} more")
        out.append(f"rating sources: {len(self.rating_sources)}")
        for src in self.rating_sources:
            out.append(f"  {src['source']}: {describe_source(src)}")
        out.append(f"dimensions (current ratings: {self.ratings_current:,}):")
        for d in self.dimensions:
            scale = f"{d['min_value']:g}–{d['max_value']:g} {d['scale']}"
            active = "" if d["active"] else ", inactive"
            out.append(f"  {d['name']} ({scale}{active}): {counted(d['ratings'], 'rating')}")
        if self.annotation_protocol_line:
            out.append(f"annotation protocol: {self.annotation_protocol_line}")
        out.append(f"metric runs: {len(self.metric_runs)} ({self.scores:,} scores)")
        for r in self.metric_runs:
            line = (
                f"  #{r['id']} {r['label'] or r['metric']}: {r['status']}, "
                f"{counted(r['n_items'], 'item')}"
            )
            if r["status"] == "interrupted" and r.get("error"):
                line += f" ({r['error']})"
            out.append(line)
        return out


KIND_LABELS = ANNOTATOR_KIND_LABELS


def describe_source(src: dict[str, Any]) -> str:
    """One line for a rating source of `StudyInfo.rating_sources`."""
    kind, n = src["kind"], src["ratings"]
    head = f"{src['label']}, {n:,} rating{'s' if n != 1 else ''}"
    if kind == "named":
        return f"{head} by {src['raters']:,} named rater{'s' if src['raters'] != 1 else ''}"
    if kind == "anonymous":
        return f"{head} (raters unknown: each rating one person)"
    known = src.get("n_raters_known", 0)
    if known:
        return f"{head} (published labels; n given on {known:,}, {src['n_raters_total']:,} raters)"
    return f"{head} (published labels; n not given)"


def _rating_sources(
    annotators: list[Any], per_annotator: dict[int, int], datasets: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """The named raters together, then each anonymous and aggregate source with ratings.

    Built from the per-annotator counts and the datasets' import records, so it costs no
    scan of the ratings. How many raters an aggregate's labels stand for is what the
    imports recorded.
    """
    known: dict[str, list[int]] = {}
    for d in datasets:
        for imp in d.get("meta", {}).get("imports", []):
            for src in imp.get("sources", []):
                if src.get("kind") == "aggregate":
                    acc = known.setdefault(f"aggregate:{d['name']}", [0, 0])
                    acc[0] += int(src.get("n_raters_known", 0))
                    acc[1] += int(src.get("n_raters_total", 0))
    named = [(aid, n) for aid, n, k in annotators if k == "named" and per_annotator.get(aid)]
    out: list[dict[str, Any]] = []
    if named:
        ratings = sum(per_annotator[aid] for aid, _ in named)
        out.append(
            dict(
                source=f"{len(named)} named rater{'s' if len(named) != 1 else ''}",
                kind="named",
                label=KIND_LABELS["named"],
                ratings=ratings,
                raters=len(named),
            )
        )
    for aid, name, kind in annotators:
        n = per_annotator.get(aid, 0)
        if kind == "named" or not n:
            continue
        entry = dict(source=name, kind=kind, label=KIND_LABELS.get(kind, kind), ratings=n)
        # Anonymous: one rater per rating, by definition; an aggregate is one source.
        entry["raters"] = n if kind == "anonymous" else 1
        if kind == "aggregate":
            entry["n_raters_known"], entry["n_raters_total"] = known.get(name, [0, 0])
        out.append(entry)
    return out


def _rows(conn: Connection, sql: str, **params: Any) -> list[Any]:
    return list(conn.execute(text(sql), params))


def _file_size(path: Path) -> int:
    """The study file's size with its write-ahead log, which holds not yet merged pages."""
    size = path.stat().st_size if path.exists() else 0
    wal = path.with_name(path.name + "-wal")
    if wal.exists():
        size += wal.stat().st_size
    return size


def _count_items(conn: Connection, info: StudyInfo) -> None:
    # A bare COUNT(*) is answered from the B-tree's page counts, not row by row; the
    # few control items are counted on their own range of the kind index, and the
    # regular ones are the rest.
    info.items = conn.execute(text("SELECT COUNT(*) FROM item")).scalar() or 0
    controls = _rows(
        conn,
        "SELECT kind, COUNT(*) FROM item WHERE kind != 'regular' GROUP BY kind ORDER BY kind",
    )
    regular = info.items - sum(n for _, n in controls)
    if regular:
        info.items_by_kind["regular"] = regular
    info.items_by_kind.update(dict(controls))


def _list_datasets(conn: Connection, info: StudyInfo) -> None:
    datasets = _rows(
        conn, "SELECT id, name, format, source_file, imported_at, meta FROM dataset ORDER BY id"
    )
    if len(datasets) == 1:
        counts = {datasets[0][0]: info.items}
    else:
        counts = dict(_rows(conn, "SELECT dataset_id, COUNT(*) FROM item GROUP BY dataset_id"))
    for did, name, fmt, source, imported, meta in datasets:
        info.datasets.append(
            dict(
                name=name,
                items=counts.get(did, 0),
                format=fmt,
                source_file=source,
                imported_at=str(imported) if imported else None,
                meta=json.loads(meta) if isinstance(meta, str) and meta else (meta or {}),
            )
        )


def _list_systems(conn: Connection, info: StudyInfo) -> None:
    systems = _rows(
        conn, "SELECT system, COUNT(*) AS n FROM item GROUP BY system ORDER BY n DESC, system"
    )
    info.systems_total = len(systems)
    info.systems = [dict(name=s, items=n) for s, n in systems[:MAX_LISTED]]


# Values of one attribute `info` lists (the most frequent first).
MAX_VALUES_LISTED = 10


def _list_attributes(conn: Connection, info: StudyInfo) -> None:
    # The counts take a scan of the items: only for a study whose items have attributes.
    if not attribute_names(conn):
        return
    rows = attribute_counts(_rows(conn, ITEM_META_COUNTS_SQL))
    by_name: dict[str, list[tuple[str, int]]] = {}
    for name, value, n in rows:
        by_name.setdefault(str(name), []).append((str(value), int(n)))
    for name, values in by_name.items():
        info.attributes.append(
            dict(
                name=name,
                items=sum(n for _, n in values),
                distinct=len(values),
                values=[dict(value=v, items=n) for v, n in values[:MAX_VALUES_LISTED]],
            )
        )


def _list_annotators(conn: Connection, info: StudyInfo) -> tuple[list[Any], dict[int, int]]:
    """Lists the annotators; returns every annotator row and its count of current ratings."""
    per_annotator = dict(
        _rows(
            conn,
            f"SELECT annotator_id, COUNT(*) FROM rating WHERE {current_rating_sql('')} "
            "GROUP BY annotator_id",
        )
    )
    annotators = _rows(conn, "SELECT id, name, kind FROM annotator ORDER BY id")
    info.annotators_total = len(annotators)
    info.annotators = [
        dict(name=n, kind=k, ratings=per_annotator.get(aid, 0))
        for aid, n, k in annotators[:MAX_LISTED]
    ]
    return annotators, per_annotator


def _list_dimensions(conn: Connection, info: StudyInfo) -> None:
    dimension_rows = _rows(
        conn,
        "SELECT id, name, scale, min_value, max_value, active FROM dimension ORDER BY position, id",
    )
    # One pass with a sum per dimension: a GROUP BY would sort a million rows first.
    sums = ", ".join(f"COALESCE(SUM(dimension_id = {int(d[0])}), 0)" for d in dimension_rows)
    per_dim: dict[int, int] = {}
    if sums:
        totals = conn.execute(
            text(f"SELECT {sums} FROM rating WHERE {current_rating_sql('')}")
        ).one()
        per_dim = {int(d[0]): int(n) for d, n in zip(dimension_rows, totals, strict=True)}
    for did, name, scale, lo, hi, active in dimension_rows:
        info.dimensions.append(
            dict(
                name=name,
                scale=scale,
                min_value=lo,
                max_value=hi,
                active=bool(active),
                ratings=per_dim.get(did, 0),
            )
        )


def _list_metric_runs(conn: Connection, info: StudyInfo) -> None:
    for rid, metric, label, status, n_items, finished, error, *owner in _rows(
        conn,
        "SELECT id, metric, label, status, n_items, finished_at, error, owner_pid, "
        "owner_host, owner_started FROM metric_run ORDER BY id",
    ):
        run = RunOwner.from_row((rid, status, *owner))
        if run.owner_gone:  # not stored yet (a study that cannot be written now)
            status, error = "interrupted", interrupted_error(run.owner)
        if status != "done":
            # The stored count is written when a run ends: one still running, or one whose
            # end could not be written (a kill, a full disk), holds more than it says.
            n_items = _rows(conn, "SELECT COUNT(*) FROM score WHERE run_id = :r", r=rid)[0][0]
        info.metric_runs.append(
            dict(
                id=rid,
                metric=metric,
                label=label,
                status=status,
                n_items=n_items,
                finished_at=str(finished) if finished else None,
                error=error,
            )
        )


def _describe_annotation_protocol(conn: Connection, info: StudyInfo) -> None:
    raw = conn.execute(
        text("SELECT value FROM study_setting WHERE key = :k"), {"k": SETTINGS_KEY}
    ).scalar()
    choice = describe_protocol(
        AnnotationSettings.from_json(json.loads(raw) if isinstance(raw, str) else raw)
    )
    info.annotation_protocol = choice.to_dict()
    info.annotation_protocol_line = choice.line()


def study_info(study: Study) -> StudyInfo:
    path = Path(study.path)
    size = _file_size(path)
    with study.engine.connect() as conn:
        schema = conn.execute(text("SELECT version_num FROM alembic_version")).scalar()
        info = StudyInfo(path=str(path), size_bytes=size, schema=schema)
        _count_items(conn, info)
        _list_datasets(conn, info)
        _list_systems(conn, info)
        _list_attributes(conn, info)
        annotators, per_annotator = _list_annotators(conn, info)
        _list_dimensions(conn, info)
        info.ratings_current = sum(per_annotator.values())
        info.rating_sources = _rating_sources(annotators, per_annotator, info.datasets)
        _list_metric_runs(conn, info)
        info.scores = conn.execute(text("SELECT COUNT(*) FROM score")).scalar() or 0
        _describe_annotation_protocol(conn, info)
        info.language = stored_language(
            conn.execute(
                text("SELECT value FROM study_setting WHERE key = :k"), {"k": LANGUAGE_KEY}
            ).scalar()
        )
    return info

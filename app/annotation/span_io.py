"""Error span ratings as JSON Lines: one line per rater and item, spans with offsets.

A line reads (keys in this order, UTF-8, no ASCII escaping but for U+2028, U+2029 and
U+0085, which `meaningbench.core.json_values.json_line` escapes so that no reader splits a text):

    {"dataset": "wiki", "system": "sys-a", "source": "...", "output": "...",
     "rater": "alice", "dimension": "meaning", "score": 70.0,
     "spans": [{"side": "output", "start": 4, "end": 9, "severity": "major", "text": "..."}]}

A rating made with pre-filled spans (a judge's proposals) also tells what became of them:
its spans carry `origin` (`rater`, `kept` or `edited`) and, for the judge's, `proposal`, the
index of their proposal; the line ends with `proposals`, each with its offsets, severity,
text, `model`, `config_hash`, `template` and `fate` (`kept`, `edited` or `deleted`):

    ..., "spans": [{..., "origin": "edited", "proposal": 0}],
     "proposals": [{"side": "output", ..., "model": "smollm2", "config_hash": "...",
                    "template": "esa", "fate": "edited"}]}

The export writes exactly what the import reads, so a file of the export's shape goes
through import and export unchanged, byte for byte. The import reads with the data files'
JSON Lines reader (`meaningbench.core.readers.json_objects`: lines end only at \\n, a
key twice or absurd nesting is refused). An import is all or nothing: the first bad line
stops it with its file, line and field, and nothing is stored. The export is written aside
and renamed when complete (`meaningbench.core.atomic_file`).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from meaningbench.annotation.proposals import (
    check_fates,
    fates_from_json,
    fates_of,
    proposal_json,
    spans_with_origin,
    store_fates,
)
from meaningbench.annotation.queue import get_or_create_annotator
from meaningbench.annotation.spans import Span, check_no_overlap, check_span, spans_of, store_spans
from meaningbench.core.atomic_file import replace_atomically
from meaningbench.core.json_values import json_line
from meaningbench.core.keys import pair_key
from meaningbench.core.readers import json_objects
from meaningbench.db.current_ratings import CURRENT, is_current
from meaningbench.db.models import Annotator, Dataset, Dimension, Item, Rating
from meaningbench.db.study import Study
from meaningbench.errors import InputError, UserError

KEYS = ("dataset", "system", "source", "output", "rater", "dimension", "score", "spans")
SPAN_KEYS = ("side", "start", "end", "severity", "text")


def export_spans(study: Study, out: Path, dimension: str | None = None) -> int:
    """Every named rater's current rating on the protocol's score dimension, with its spans,
    by item then rater. Returns the number of lines written."""
    with study.session() as s:
        dim = _dimension(s, dimension)
        rows = s.execute(
            select(Rating.id, Rating.value, Annotator.name, Item, Dataset.name)
            .join(Annotator, Annotator.id == Rating.annotator_id)
            .join(Item, Item.id == Rating.item_id)
            .join(Dataset, Dataset.id == Item.dataset_id)
            .where(
                Rating.dimension_id == dim.id,
                is_current(),
                Annotator.kind == "named",
                Item.kind == "regular",
            )
            .order_by(Item.id, Annotator.name)
        ).all()
        spans = spans_of(s, [r[0] for r in rows])
        fates = fates_of(s, [r[0] for r in rows])
        lines = []
        for rid, value, rater, item, ds in rows:
            line: dict[str, Any] = {
                "dataset": ds,
                "system": item.system,
                "source": item.source,
                "output": item.output,
                "rater": rater,
                "dimension": dim.name,
                "score": float(value),
                "spans": [sp.to_json() for sp in spans.get(rid, ())],
            }
            if rid in fates:  # pre-filled: where each span came from, and every proposal
                line["spans"] = spans_with_origin(spans.get(rid, ()), fates[rid])
                line["proposals"] = [proposal_json(f) for f in fates[rid]]
            lines.append(json_line(line))
    with replace_atomically(out) as f:  # a failed write leaves the old file as it was
        f.writelines(lines)
    return len(lines)


def _dimension(s: Session, name: str | None) -> Dimension:
    query = select(Dimension).order_by(Dimension.position, Dimension.id)
    if name is None:
        dim = s.scalar(query.where(Dimension.active).limit(1))
        if dim is None:
            raise UserError("The study has no active rating dimension.")
        return dim
    dim = s.scalar(query.where(Dimension.name == name))
    if dim is None:
        raise UserError(f"The study has no dimension {name!r}.")
    return dim


@dataclass
class SpanImport:
    ratings: int
    spans: int


def _field(record: dict[str, Any], key: str, kind: type, where: str) -> Any:
    if key not in record:
        raise UserError(f"{where}: field {key!r} is missing.")
    value = record[key]
    ok = isinstance(value, kind) and not (kind is not bool and isinstance(value, bool))
    if kind is float:
        ok = isinstance(value, int | float) and not isinstance(value, bool)
    if not ok:
        raise UserError(f"{where}: field {key!r} must be a {kind.__name__}, not {value!r}.")
    return value


@dataclass(frozen=True)
class _SpanLine:
    """The checked fields of one line of a spans file."""

    source: str
    output: str
    system: str | None
    dataset: str
    rater: str
    dimension: Dimension
    score: float


def _read_line(record: dict[str, Any], where: str, dims: dict[str, Dimension]) -> _SpanLine:
    """The line's fields, checked in the order they are named."""
    source = _field(record, "source", str, where)
    output = _field(record, "output", str, where)
    system = record.get("system")
    if system is not None and not isinstance(system, str):
        raise UserError(f"{where}: field 'system' must be a string or null.")
    ds_name = _field(record, "dataset", str, where)
    rater = _field(record, "rater", str, where).strip()
    if not rater:
        raise UserError(f"{where}: field 'rater' is empty.")
    dim_name = _field(record, "dimension", str, where)
    dim = dims.get(dim_name)
    if dim is None:
        raise UserError(f"{where}: field 'dimension': the study has no {dim_name!r}.")
    score = float(_field(record, "score", float, where))
    if not dim.min_value <= score <= dim.max_value:
        raise UserError(
            f"{where}: field 'score': {score:g} is outside {dim.min_value:g}–{dim.max_value:g}."
        )
    return _SpanLine(source, output, system, ds_name, rater, dim, score)


def _item_of_line(s: Session, line: _SpanLine, where: str) -> Item:
    item = s.scalar(
        select(Item)
        .join(Dataset, Dataset.id == Item.dataset_id)
        .where(
            Dataset.name == line.dataset,
            Item.pair_key == pair_key(line.source, line.output, line.system),
        )
    )
    if item is None or item.source != line.source or item.output != line.output:
        raise UserError(
            f"{where}: no item of dataset {line.dataset!r} has this source, output and "
            "system; import the items first."
        )
    return item


def _refuse_clash(
    s: Session, item: Item, annotator: Annotator, line: _SpanLine, where: str
) -> None:
    clash = s.scalar(
        select(Rating.id).where(
            Rating.item_id == item.id,
            Rating.annotator_id == annotator.id,
            Rating.dimension_id == line.dimension.id,
            is_current(),
        )
    )
    if clash is not None:
        # Conflicts never overwrite: the study's rating stands, the file is refused.
        raise UserError(
            f"{where}: {line.rater!r} already rated this item on {line.dimension.name!r}; "
            "nothing was imported."
        )


def import_spans(study: Study, path: Path) -> SpanImport:
    """Read a spans JSONL file into the study as ratings of named raters (all or nothing)."""
    origin = f"import:{path.name}"
    n_ratings = n_spans = 0
    with study.session(write=True) as s:
        dims = {d.name: d for d in s.scalars(select(Dimension))}
        for number, record in _records(path):
            where = f"{path.name}, line {number}"
            line = _read_line(record, where, dims)
            item = _item_of_line(s, line, where)
            spans = _spans(record, where, line.source, line.output)
            fates = _fates(record, where, spans, line)
            annotator = get_or_create_annotator(s, line.rater)
            if annotator.kind != "named":
                raise UserError(f"{where}: field 'rater': {line.rater!r} is not a named rater.")
            _refuse_clash(s, item, annotator, line, where)
            rating = Rating(
                item_id=item.id,
                annotator_id=annotator.id,
                dimension_id=line.dimension.id,
                value=line.score,
                state=CURRENT,
                origin=origin,
            )
            s.add(rating)
            s.flush()
            store_spans(s, rating.id, spans)
            store_fates(s, rating.id, fates)
            n_ratings += 1
            n_spans += len(spans)
    return SpanImport(ratings=n_ratings, spans=n_spans)


def _records(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """The file's objects by the one JSON Lines reader (lines end only at \\n; NaN, a key
    twice, absurd nesting or numbers refused), its errors worded as this module's."""
    try:
        yield from json_objects(path)
    except InputError as exc:
        where = f"{path.name}, line {exc.row}" if exc.row is not None else str(path)
        raise UserError(f"{where}: {exc.reason}.") from None
    except OSError as exc:
        raise UserError(f"{path}: cannot be read ({exc.strerror or exc}).") from None


def _spans(record: dict[str, Any], where: str, source: str, output: str) -> list[Span]:
    raw = _field(record, "spans", list, where)
    out = []
    for i, sp in enumerate(raw):
        at = f"{where}, field 'spans[{i}]'"
        if not isinstance(sp, dict):
            raise UserError(f"{at}: a span must be a JSON object.")
        span = Span(
            side=_field(sp, "side", str, at),
            start=_field(sp, "start", int, at),
            end=_field(sp, "end", int, at),
            severity=_field(sp, "severity", str, at),
            text=_field(sp, "text", str, at),
        )
        check_span(span, source, output, at)
        out.append(span)
    check_no_overlap(out, f"{where}, field 'spans'")
    return out


def _fates(record: dict[str, Any], where: str, spans: list[Span], line: _SpanLine) -> list[Any]:
    """What became of the line's pre-filled spans (none: the line has no `proposals`)."""
    if "proposals" not in record:
        return []
    raw = _field(record, "proposals", list, where)
    fates = fates_from_json(raw, record["spans"], spans, where)
    check_fates(fates, spans, line.source, line.output, where)
    return fates

"""Streaming readers for CSV/TSV and JSONL files, with row numbers a user can find.

Rows are decoded one physical line at a time, so a bad byte is reported at the row that
holds it instead of somewhere in a decoded block, and a file of any size is read in
constant memory. Row numbers are what a spreadsheet shows: in CSV the header is row 1 and
a quoted field that spans lines still counts as one row; in JSONL the row is the line.
"""

from __future__ import annotations

import csv
import json
import math
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from meaningbench.core.cells import SAFE_CELLS_MARKER, has_notice, restore
from meaningbench.errors import InputError

SNIFF_BYTES = 64 * 1024
DELIMITERS = (",", "\t", ";", "|")
# csv's default field limit (128 KiB) is too small for whole paragraphs; raise it once.
FIELD_LIMIT = 16 * 1024 * 1024

# Signatures of files people pick by mistake, with a hint about what to do instead.
_SIGNATURES: tuple[tuple[bytes, str], ...] = (
    (b"PK\x03\x04", "a ZIP archive (an Excel .xlsx workbook?): save the sheet as CSV (UTF-8)"),
    (b"\xd0\xcf\x11\xe0", "an old Excel/Office document: save the sheet as CSV (UTF-8)"),
    (b"SQLite format 3\x00", "an SQLite database (a study file?), not a data file"),
    (b"\x1f\x8b", "a gzip archive: decompress it first"),
    (b"%PDF", "a PDF document"),
    (b"\x89PNG", "a PNG image"),
    (b"\xff\xd8\xff", "a JPEG image"),
)


@dataclass
class ByteCounter:
    """How far the reader got, for progress reporting."""

    done: int = 0


class _DecodeProblem(Exception):
    def __init__(self, exc: UnicodeDecodeError) -> None:
        super().__init__(str(exc))
        self.exc = exc


@dataclass
class TableSource:
    """An opened data file: its columns and a stream of (row number, record)."""

    path: Path
    container: str  # "csv" | "jsonl"
    columns: list[str]
    delimiter: str | None = None
    encoding: str = "utf-8"
    size: int = 0
    counter: ByteCounter = field(default_factory=ByteCounter)
    # A spreadsheet-safe MeaningBench export (its notice file beside it, or the marker
    # column of earlier versions): the quote it put before formula-like text is removed
    # from every cell.
    safe_cells: bool = False
    # The marker column of earlier versions' exports, left out of `columns`.
    marker_column: bool = False

    def rows(self) -> Iterator[tuple[int, Any]]:
        """Records as lists aligned with `columns` (CSV) or dicts (JSONL)."""
        if self.container == "jsonl":
            return _jsonl_rows(self)
        return _csv_rows(self)


def check_text_file(path: Path, head: bytes) -> None:
    """Refuse files that are not text before any parsing produces a confusing error."""
    if head.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise InputError(
            "the file is UTF-16 encoded; save it as UTF-8 (e.g. 'CSV UTF-8' in a spreadsheet)",
            file=str(path),
        )
    for magic, what in _SIGNATURES:
        if head.startswith(magic):
            raise InputError(f"not a text data file: {what}", file=str(path))
    if b"\x00" in head:
        raise InputError("not a text file (it contains NUL bytes; a binary file?)", file=str(path))


def _decode(raw: bytes, encoding: str) -> str:
    try:
        return raw.decode(encoding)
    except UnicodeDecodeError as exc:
        raise _DecodeProblem(exc) from None
    except LookupError as exc:
        raise InputError(f"unknown encoding {encoding!r}") from exc


def _decode_message(problem: _DecodeProblem, encoding: str) -> str:
    exc = problem.exc
    bad = exc.object[exc.start : exc.start + 1].hex()
    hint = (
        "save the file as UTF-8, or name its encoding with --encoding (e.g. --encoding cp1252)"
        if encoding.replace("-", "").lower() in ("utf8", "utf8sig")
        else "check the --encoding given"
    )
    return f"not valid {encoding} text (byte 0x{bad}, byte {exc.start + 1} of the line); {hint}"


def _lines(fh: BinaryIO, counter: ByteCounter, encoding: str) -> Iterator[str]:
    first = True
    for raw in fh:
        counter.done += len(raw)
        text = _decode(raw, encoding)
        if first:
            text = text.removeprefix("\ufeff")
            first = False
        yield text


def _choose_delimiter(path: Path, header_line: str, sample_lines: list[str]) -> str:
    """The delimiter that splits the header into the most columns, consistently.

    csv.Sniffer is easily fooled by commas inside sentences; the header line rarely has
    any, so count fields there and break ties by the file's extension.
    """
    preferred = "\t" if path.suffix.lower() in (".tsv", ".tab") else ","
    order = [preferred] + [d for d in DELIMITERS if d != preferred]
    best, best_n = preferred, 1
    for delim in order:
        try:
            n = len(next(csv.reader([header_line], delimiter=delim)))
        except (csv.Error, StopIteration):
            continue
        if n > best_n:
            best, best_n = delim, n
    if best_n == 1 and sample_lines:
        try:
            return (
                csv.Sniffer().sniff("".join(sample_lines), delimiters="".join(DELIMITERS)).delimiter
            )
        except csv.Error:
            return preferred
    return best


def open_table(path: Path, *, container: str | None = None, encoding: str = "utf-8") -> TableSource:
    """Open a data file: check it is text, find its container, delimiter and columns."""
    if not path.exists():
        raise InputError("no such file", file=str(path))
    if path.is_dir():
        raise InputError("a folder, not a data file", file=str(path))
    size = path.stat().st_size
    with path.open("rb") as fh:
        head = fh.read(SNIFF_BYTES)
    check_text_file(path, head)
    if not head.strip():
        raise InputError("the file is empty", file=str(path))
    if container is None:
        suffix = path.suffix.lower()
        if suffix in (".jsonl", ".ndjson", ".json"):
            container = "jsonl"
        elif suffix in (".csv", ".tsv", ".tab", ".txt"):
            container = "csv"
        else:
            container = "jsonl" if head.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"{") else "csv"
    if container == "jsonl":
        columns = _scan_jsonl_columns(path, encoding)
        return TableSource(path, "jsonl", columns, encoding=encoding, size=size)
    return _open_csv(path, encoding, size, forced_delimiter=None)


def open_csv(path: Path, *, delimiter: str | None, encoding: str = "utf-8") -> TableSource:
    source = open_table(path, container="csv", encoding=encoding)
    if delimiter is not None and source.delimiter != delimiter:
        return _open_csv(path, encoding, source.size, forced_delimiter=delimiter)
    return source


def _open_csv(path: Path, encoding: str, size: int, forced_delimiter: str | None) -> TableSource:
    if csv.field_size_limit() < FIELD_LIMIT:
        csv.field_size_limit(FIELD_LIMIT)
    sample: list[str] = []
    with path.open("rb") as fh:
        try:
            for i, line in enumerate(_lines(fh, ByteCounter(), encoding)):
                sample.append(line)
                if i >= 50:
                    break
        except _DecodeProblem as problem:
            if not sample:
                raise InputError(
                    _decode_message(problem, encoding), file=str(path), row=1
                ) from None
    header_line = next((line for line in sample if line.strip()), "")
    delimiter = forced_delimiter or _choose_delimiter(path, header_line, sample)
    try:
        header = next(csv.reader([header_line], delimiter=delimiter))
    except csv.Error as exc:
        raise InputError(
            f"cannot read the header: {csv_problem(exc).removeprefix('malformed CSV: ')}",
            file=str(path),
            row=1,
        ) from None
    columns = [c.strip() for c in header]
    marker = len(columns) > 1 and columns[-1] == SAFE_CELLS_MARKER
    safe_cells = marker or has_notice(path)
    if marker:
        columns = columns[:-1]
    if safe_cells:
        columns = [restore(c) for c in columns]
    if not any(columns):
        raise InputError("the header row is empty", file=str(path), row=1)
    for i, col in enumerate(columns):
        if not col:
            raise InputError(f"column {i + 1} of the header has no name", file=str(path), row=1)
    seen: set[str] = set()
    for col in columns:
        if col in seen:
            raise InputError(f"the header names column {col!r} twice", file=str(path), row=1)
        seen.add(col)
    return TableSource(
        path,
        "csv",
        columns,
        delimiter,
        encoding,
        size=size,
        safe_cells=safe_cells,
        marker_column=marker,
    )


def csv_problem(exc: csv.Error) -> str:
    """A strict parser's complaint, and what it means for the file's author."""
    text = str(exc).replace("'\t'", "a tab")
    if "expected after" in text:
        text += (
            " (a cell that begins with a quote is read as quoted: it must end with one, and "
            "quotes inside it must be doubled)"
        )
    elif "new-line character seen in unquoted field" in text:
        text = (
            "its lines end with a carriage return alone (old Mac line endings): save it with "
            "LF or CRLF line endings"
        )
    elif "unexpected end of data" in text:
        text += (
            " (a quoted cell that begins in this row never closes: its closing quote is "
            "missing, or the file was cut short)"
        )
    return f"malformed CSV: {text}"


def _csv_rows(source: TableSource) -> Iterator[tuple[int, Any]]:
    n_columns = len(source.columns)
    width = n_columns + 1 if source.marker_column else n_columns  # the marker column counts
    path = str(source.path)
    with source.path.open("rb") as fh:
        reader = csv.reader(
            _lines(fh, source.counter, source.encoding),
            delimiter=source.delimiter or ",",
            quotechar='"',
            doublequote=True,
            # Lenient parsing drops a quote that opens a cell's text ("Stop," she said) and
            # accepts a file cut short inside a quoted cell: both change the data unseen.
            strict=True,
        )
        row = 0
        header_seen = False
        while True:
            row += 1
            try:
                record = next(reader)
            except StopIteration:
                return
            except _DecodeProblem as problem:
                raise InputError(
                    _decode_message(problem, source.encoding), file=path, row=row
                ) from None
            except csv.Error as exc:
                raise InputError(csv_problem(exc), file=path, row=row) from None
            if not header_seen:
                if not record or not any(f.strip() for f in record):
                    row -= 1  # leading blank lines are not the header; keep the header row 1
                    continue
                header_seen = True
                continue
            if not any(f.strip() for f in record):
                continue  # a blank line, or a spreadsheet's empty row (",,,,")
            if len(record) == n_columns and source.marker_column:
                pass  # the marker column's empty cell left off
            elif len(record) != width:
                if len(record) > width and not any(f.strip() for f in record[width:]):
                    record = record[:width]
                else:
                    hint = (
                        " (an opening quote without its closing quote?)"
                        if any("\n" in f for f in record)
                        else ""
                    )
                    raise InputError(
                        f"this row has {len(record)} fields, the header has {width}{hint}",
                        file=path,
                        row=row,
                    )
            if source.safe_cells:
                record = [restore(f) for f in record[:n_columns]]
            yield row, record


def _scan_jsonl_columns(path: Path, encoding: str) -> list[str]:
    """Columns of a JSONL file: the keys of all its objects, in first-seen order.

    Every line is read: a key that first appears late (a second dimension rated only for
    some items) would otherwise be dropped unseen, its values never checked."""
    columns: dict[str, None] = {}
    with path.open("rb") as fh:
        for line_no, line in _numbered_jsonl(fh, ByteCounter(), encoding, str(path)):
            for key in _parse_json_line(line, line_no, str(path)):
                columns.setdefault(str(key), None)
    if not columns:
        raise InputError("no JSON objects found", file=str(path))
    return list(columns)


def _numbered_jsonl(
    fh: BinaryIO, counter: ByteCounter, encoding: str, path: str
) -> Iterator[tuple[int, str]]:
    for line_no, raw in enumerate(fh, start=1):
        counter.done += len(raw)
        try:
            text = _decode(raw, encoding)
        except _DecodeProblem as problem:
            raise InputError(_decode_message(problem, encoding), file=path, row=line_no) from None
        if line_no == 1:
            text = text.removeprefix("\ufeff")
        if text.strip():
            yield line_no, text


class _JsonProblem(ValueError):
    """Valid to Python's json module, but not JSON a data row may hold."""


def _refuse_constant(name: str) -> Any:
    # Python's json reads NaN and Infinity, which JSON does not have.
    raise _JsonProblem(f"{name} is not a JSON value (write null for a missing value)")


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _JsonProblem(f"the key {key!r} appears twice in one object")
            seen.add(key)
    return obj


def _finite_float(text: str) -> float:
    # Python reads 1e999 as infinity: the message quotes the number as written instead.
    value = float(text)
    if not math.isfinite(value):
        raise _JsonProblem(f"the number {text} is too large for a float")
    return value


_DECODER = json.JSONDecoder(
    parse_constant=_refuse_constant, parse_float=_finite_float, object_pairs_hook=_unique_keys
)


def _parse_json_line(line: str, line_no: int, path: str) -> dict[str, Any]:
    try:
        obj = _DECODER.decode(line)
    except json.JSONDecodeError as exc:
        hint = (
            "; a JSON array? write one object per line (JSONL)"
            if line_no == 1 and line.lstrip().startswith("[")
            else ""
        )
        what = exc.msg.removesuffix(" at")  # "Unterminated string starting at"
        raise InputError(
            f"not valid JSON ({what} at character {exc.pos + 1}){hint}", file=path, row=line_no
        ) from None
    except _JsonProblem as exc:
        raise InputError(f"not valid JSON: {exc}", file=path, row=line_no) from None
    except RecursionError:
        # The decoder recurses once per bracket; a row's values are texts, numbers or lists.
        raise InputError(
            "not valid JSON for a data row: brackets nested too deeply "
            f"(over {sys.getrecursionlimit():,} levels)",
            file=path,
            row=line_no,
        ) from None
    except ValueError as exc:
        if "digits" in str(exc):  # an integer longer than Python converts
            raise InputError(
                f"not valid JSON for a data row: a number with more than "
                f"{sys.get_int_max_str_digits():,} digits",
                file=path,
                row=line_no,
            ) from None
        raise InputError(f"not valid JSON ({exc})", file=path, row=line_no) from None
    if not isinstance(obj, dict):
        hint = "; a JSON array? write one object per line (JSONL)" if isinstance(obj, list) else ""
        raise InputError(
            f"expected a JSON object per line (JSONL), found a {_json_type(obj)}{hint}",
            file=path,
            row=line_no,
        )
    if "\\ud" in line.lower():
        # A \uD800-style escape can decode to half a surrogate pair: text no file can hold.
        try:
            json.dumps(obj, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError:
            raise InputError(
                "contains an invalid \\u escape (half of a surrogate pair)", file=path, row=line_no
            ) from None
    return obj


def _json_type(value: Any) -> str:
    names = {list: "array", str: "string", bool: "boolean", int: "number", float: "number"}
    return "null" if value is None else names.get(type(value), type(value).__name__)


def json_objects(path: Path, encoding: str = "utf-8") -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) for each non-blank line of a JSON Lines file, by the rules of a
    data row: lines end only at \\n (a U+2028 inside a text is text), one object per line,
    no NaN, no key twice, no absurd nesting or number; InputError names the line."""
    with path.open("rb") as fh:
        for line_no, line in _numbered_jsonl(fh, ByteCounter(), encoding, str(path)):
            yield line_no, _parse_json_line(line, line_no, str(path))


def _jsonl_rows(source: TableSource) -> Iterator[tuple[int, Any]]:
    path = str(source.path)
    with source.path.open("rb") as fh:
        for line_no, line in _numbered_jsonl(fh, source.counter, source.encoding, path):
            yield line_no, _parse_json_line(line, line_no, path)

"""Turn one record of a file into a checked row: texts, references, ratings.

Everything a row can get wrong is caught here, with the row and column named, before
anything is written. The parser is built once per file from the plan, so the per-row work
is a handful of getter calls (a million rows must take seconds, not minutes).
"""

from __future__ import annotations

import json
import math
import operator
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from meaningbench.core.numbers import PLAIN_NUMBER, is_non_finite, why_not_plain
from meaningbench.datasets.mapping import dimension_for
from meaningbench.datasets.plan import DimInfo, Plan
from meaningbench.db.models import ANNOTATOR_KINDS, ITEM_KINDS

Getter = Callable[[Any], Any]


class RowProblem(Exception):
    """A bad value: the caller adds the file and row to make an InputError."""

    def __init__(self, message: str, column: str | None) -> None:
        super().__init__(message)
        self.column = column


# A long file's annotator_kind column may use the name older exports wrote.
_KIND_ALIASES = {"human": "named"}


@dataclass(slots=True)
class RatingValue:
    annotator: str | None  # None: the dataset's anonymous or aggregate source
    annotator_kind: str  # named | anonymous | aggregate
    dimension: str
    value: float
    n_raters: int | None
    column: str


@dataclass(slots=True)
class ParsedRow:
    dataset: str | None
    kind: str
    source: str
    output: str
    system: str | None
    references: list[str]
    external_id: str | None
    ratings: list[RatingValue] = field(default_factory=list)
    # The item's attributes (category columns) as this row gives them, in the plan's
    # column order; "" where the cell is empty. None when the file has none.
    attributes: tuple[str, ...] | None = None
    # Named ratings expected but the rater cell is empty: the importer collects the line
    # numbers and refuses the file (rows with and without rater ids do not mix).
    missing_rater: str | None = None  # the rater column


def _text(value: Any, column: str) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        raise RowProblem(f"expected text, found {json.dumps(value)}", column)
    if isinstance(value, (int, float)):
        return str(value)
    raise RowProblem(f"expected text, found a JSON {type(value).__name__}", column)


# What a rating cell may hold: the one rule of `meaningbench.core.numbers`, plus a decimal comma.
# A decimal comma ("72,5"): one comma between digits, no exponent.
_COMMA_NUMBER = re.compile(r"[+-]?[0-9]+,[0-9]+")
# Digits grouped in threes after a comma read both as thousands ("1,000" = 1000) and as a
# decimal comma ("1,000" = 1): such a value is refused rather than guessed.
_GROUPED_NUMBER = re.compile(r"[+-]?[1-9][0-9]{0,2}(?:,[0-9]{3})+")
_SHOWN_CHARS = 60


def shown_text(text: str) -> str:
    """A cell's text quoted exactly as written (long ones cut, and said so)."""
    if len(text) > _SHOWN_CHARS:
        return f"{text[:_SHOWN_CHARS]!r}… ({len(text):,} characters)"
    return repr(text)


def listed(text: str) -> str:
    """A name or value in a list of them (an attribute's, by `info` and the import summary):
    a plain one as it is; any other (long, with spaces at an end, line breaks or other
    characters that do not print) as `shown_text` gives it, on its line and readable."""
    plain = text.isprintable() and text == text.strip()
    return text if text and plain and len(text) <= _SHOWN_CHARS else shown_text(text)


def shown_number(number: float) -> str:
    """A float with every digit it has: 100.0000001 must not print as "100"."""
    if number == int(number) and abs(number) < 1e16:
        return str(int(number))
    return repr(number)


def _number_problem(raw: str, text: str, column: str) -> RowProblem:
    shown = shown_text(raw)
    if is_non_finite(text):
        return RowProblem(f"the rating {shown} is not a finite number", column)
    if _GROUPED_NUMBER.fullmatch(text):
        plain = text.replace(",", "")
        if text.count(",") > 1:
            return RowProblem(
                f"the rating {shown} has thousands separators, which are not accepted: "
                f"write {plain}",
                column,
            )
        return RowProblem(
            f"the rating {shown} is ambiguous: a thousands separator or a decimal comma? "
            f"write {plain} or {text.replace(',', '.')} (a decimal point, no thousands "
            "separator)",
            column,
        )
    return RowProblem(f"the rating {shown} is not a number ({why_not_plain(text)})", column)


def _json_number(value: int | float, column: str) -> float:
    try:
        return float(value)
    except OverflowError:
        digits = len(str(abs(int(value))))
        raise RowProblem(f"the rating is too large a number ({digits:,} digits)", column) from None


def parse_number(value: Any, column: str) -> float | None:
    """A rating as a float; None for an empty cell.

    Text must be a plain decimal (`meaningbench.core.numbers`) or use a decimal comma ("72,5");
    anything else is refused, quoting the cell as written. JSON numbers are numbers.
    """
    if value is None:
        return None
    if isinstance(value, bool):
        raise RowProblem(f"the rating {json.dumps(value)} is not a number", column)
    if isinstance(value, (int, float)):
        number = _json_number(value, column)
        if not math.isfinite(number):
            raise RowProblem(f"the rating {value!r} is not a finite number", column)
        return number
    if not isinstance(value, str):
        raise RowProblem(f"the rating is a JSON {type(value).__name__}, not a number", column)
    text = value.strip(" \t\r\n")
    if not text:
        return None
    if PLAIN_NUMBER.fullmatch(text):
        number = float(text)
    elif _COMMA_NUMBER.fullmatch(text) and not _GROUPED_NUMBER.fullmatch(text):
        number = float(text.replace(",", "."))
    else:
        raise _number_problem(value, text, column)
    if not math.isfinite(number):  # "1e999"
        raise RowProblem(f"the rating {shown_text(value)} is not a finite number", column)
    return number


def _references(values: list[tuple[str, Any]]) -> list[str]:
    refs: list[str] = []
    for column, value in values:
        if value is None:
            continue
        if isinstance(value, list):
            items = value
        elif isinstance(value, str):
            text = value.strip()
            if not text:
                continue
            if text.startswith("[") and text.endswith("]"):
                try:
                    items = json.loads(text)
                except (ValueError, RecursionError):
                    items = [value]  # a reference that merely starts with a bracket
                if not isinstance(items, list):
                    items = [value]
            else:
                items = [value]
        else:
            raise RowProblem("a reference must be text or a list of texts", column)
        for ref in items:
            if not isinstance(ref, str):
                raise RowProblem("a reference list must hold only texts", column)
            if ref.strip():
                refs.append(ref)
    return refs


class RowParser:
    """Parses records of one file according to a plan."""

    def __init__(self, plan: Plan, columns: list[str], container: str) -> None:
        self.plan = plan
        self.dims: dict[str, DimInfo] = plan.dimension_info
        index = {c: i for i, c in enumerate(columns)}

        def get(col: str) -> Getter:
            if container == "jsonl":
                return operator.methodcaller("get", col)
            return operator.itemgetter(index[col])

        def getter(col: str | None) -> Getter | None:
            return None if col is None else get(col)

        self.jsonl = container == "jsonl"
        self.get_source = getter(plan.source)
        self.get_output = getter(plan.output)
        self.get_system = getter(plan.system)
        self.get_id = getter(plan.id)
        self.get_kind = getter(plan.kind)
        self.get_dataset = getter(plan.dataset)
        self.get_annotator = getter(plan.annotator)
        self.get_annotator_kind = getter(plan.annotator_kind)
        self.get_n_raters = getter(plan.n_raters)
        self.get_dimension = getter(plan.dimension)
        self.get_rating = getter(plan.rating)
        self.refs = [(c, get(c)) for c in plan.references]
        self.dim_getters = [(d, c, get(c)) for d, c in plan.dims.items()]
        self.label_getters = [(d, c, get(c)) for d, c in plan.labels.items()]
        self.attribute_getters = [(c, get(c)) for c in plan.attributes]
        # Category values repeat on every row: one string object per distinct value keeps
        # a million items' attributes small.
        self._interned: dict[str, str] = {}
        self._dimension_cache: dict[str, str] = {}

    def _optional_text(self, get: Getter | None, rec: Any, column: str | None) -> str | None:
        if get is None:
            return None
        value = get(rec)
        text = (_text(value, column or "") if self.jsonl else value).strip()
        return text or None

    def _required_text(self, get: Getter | None, rec: Any, column: str, what: str) -> str:
        assert get is not None
        value = get(rec)
        text = _text(value, column) if self.jsonl else value
        if not text.strip():
            raise RowProblem(f"the {what} is empty", column)
        return text

    def _output_text(self, rec: Any, column: str) -> str:
        """An empty output is data (a system that deleted everything), not a missing cell:
        it is kept as the empty text, which every metric scores as its library defines."""
        assert self.get_output is not None
        value = self.get_output(rec)
        text = _text(value, column) if self.jsonl else value
        return text if text.strip() else ""

    def _check_scale(self, dim: str, value: float, column: str) -> None:
        info = self.dims[dim]
        if not info.min_value <= value <= info.max_value:
            raise RowProblem(
                f"the {dim} rating {shown_number(value)} is outside the dimension's scale "
                f"{info.min_value:g}–{info.max_value:g}",
                column,
            )

    def _dimension(self, raw: str, column: str) -> str:
        hit = self._dimension_cache.get(raw)
        if hit is not None:
            return hit
        mapped = self.plan.dimension_values.get(raw) or self.plan.dimension_values.get(raw.strip())
        dim = mapped or dimension_for(raw, [d for d, i in self.dims.items() if i.exists])
        if dim is None:
            known = ", ".join(d for d, i in self.dims.items() if i.exists)
            raise RowProblem(
                f"no dimension {raw!r} in the study (it has: {known}); map it with "
                f"--map dimension.NAME={raw} (NAME is created if the study lacks it)",
                column,
            )
        self._dimension_cache[raw] = dim
        return dim

    def _attributes(self, rec: Any) -> tuple[str, ...]:
        # Kept exactly as written, spaces and line separators included: the export writes
        # them back, and import must read back what it wrote. Only a cell with nothing in
        # it is empty.
        values = []
        for column, get in self.attribute_getters:
            raw = get(rec)
            value = _text(raw, column) if self.jsonl else (raw or "")
            values.append(self._interned.setdefault(value, value))
        return tuple(values)

    def _n_raters(self, rec: Any) -> int | None:
        if self.get_n_raters is None:
            return None
        column = self.plan.n_raters or ""
        number = parse_number(self.get_n_raters(rec), column)
        if number is None:
            return None
        if number < 1 or number != int(number):
            raise RowProblem(
                f"the number of raters {shown_number(number)} is not a positive whole number",
                column,
            )
        return int(number)

    def parse(self, rec: Any) -> ParsedRow:
        plan = self.plan
        source = self._required_text(self.get_source, rec, plan.source, "source")
        output = self._output_text(rec, plan.output)
        system = self._optional_text(self.get_system, rec, plan.system)
        external_id = self._optional_text(self.get_id, rec, plan.id)
        dataset = self._optional_text(self.get_dataset, rec, plan.dataset)
        kind = self._optional_text(self.get_kind, rec, plan.kind) or "regular"
        if kind not in ITEM_KINDS:
            raise RowProblem(
                f"unknown item kind {kind!r} (one of: {', '.join(ITEM_KINDS)})", plan.kind
            )
        refs = _references([(c, g(rec)) for c, g in self.refs]) if self.refs else []
        row = ParsedRow(dataset, kind, source, output, system, refs, external_id)
        if self.attribute_getters:
            row.attributes = self._attributes(rec)

        if plan.shape == "long":
            self._parse_long(rec, row)
        elif self.dim_getters:
            kind_a = plan.rating_kind
            annotator = None
            if kind_a == "named":
                annotator = self._optional_text(self.get_annotator, rec, plan.annotator)
                if annotator is None:
                    row.missing_rater = plan.annotator
                    return row
            n_raters = self._n_raters(rec) if kind_a == "aggregate" else None
            for dim, column, get in self.dim_getters:
                value = parse_number(get(rec), column)
                if value is None:
                    continue  # an empty cell: this rater did not rate this dimension
                self._check_scale(dim, value, column)
                row.ratings.append(RatingValue(annotator, kind_a, dim, value, n_raters, column))
        if self.label_getters:
            # A label is a published mean unless the user said each row is one rating.
            kind_l = "anonymous" if plan.rating_kind == "anonymous" else "aggregate"
            n_raters = self._n_raters(rec) if kind_l == "aggregate" else None
            for dim, column, get in self.label_getters:
                value = parse_number(get(rec), column)
                if value is None:
                    continue
                self._check_scale(dim, value, column)
                row.ratings.append(RatingValue(None, kind_l, dim, value, n_raters, column))
        return row

    def _parse_long(self, rec: Any, row: ParsedRow) -> None:
        plan = self.plan
        assert plan.dimension is not None and plan.rating is not None
        annotator = self._optional_text(self.get_annotator, rec, plan.annotator)
        dim_raw = self._optional_text(self.get_dimension, rec, plan.dimension)
        value = parse_number(self.get_rating(rec), plan.rating)  # type: ignore[misc]
        if annotator is None and dim_raw is None and value is None:
            return  # an item without ratings (exports write these)
        if dim_raw is None:
            raise RowProblem("the dimension is empty", plan.dimension)
        if value is None:
            raise RowProblem("the rating is empty", plan.rating)
        dim = self._dimension(dim_raw, plan.dimension)
        self._check_scale(dim, value, plan.rating)
        kind = plan.rating_kind
        if self.get_annotator_kind is not None:
            given = self._optional_text(self.get_annotator_kind, rec, plan.annotator_kind)
            if given is not None:
                given = _KIND_ALIASES.get(given, given)
                if given not in ANNOTATOR_KINDS:
                    raise RowProblem(
                        f"unknown annotator kind {given!r} (one of: {', '.join(ANNOTATOR_KINDS)})",
                        plan.annotator_kind,
                    )
                kind = given
        if kind == "named" and annotator is None:
            row.missing_rater = plan.annotator or "annotator"
            return
        n_raters = self._n_raters(rec) if kind == "aggregate" else None
        row.ratings.append(RatingValue(annotator, kind, dim, value, n_raters, plan.rating))

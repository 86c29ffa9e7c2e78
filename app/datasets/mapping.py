"""Which column of a file holds which field: synonyms, user mappings, close-name hints.

Real rating files name the same thing many ways (`original`, `Input.original`, `src`; an
annotator is a `WorkerId`, a `rater`, a `judge`). Auto-detection matches column names
against these synonyms after normalising case and punctuation; `--map field=column`
overrides any of it, and a mapped name that is not in the file gets a "did you mean".
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from meaningbench.errors import InputError

# Fields that hold one column each. Dimensions (meaning, fluency, ...) are fields too, in the
# wide shape: one rating column per dimension.
SCALAR_FIELDS = (
    "source",
    "output",
    "system",
    "annotator",
    "dimension",
    "rating",
    "label",
    "id",
    "kind",
    "dataset",
    "annotator_kind",
    "n_raters",
)
LIST_FIELDS = ("references",)
FIELDS = SCALAR_FIELDS + LIST_FIELDS


def norm(name: str) -> str:
    """Compare column names without case, spaces, dots, dashes or underscores."""
    return re.sub(r"[\s._\-]+", "", name.strip().lower())


# Synonyms in priority order: the first one present in the file wins.
SYNONYMS: dict[str, tuple[str, ...]] = {
    "source": (
        "source",
        "original",
        "input.original",
        "src",
        "complex",
        "complex_sentence",
        "source_sentence",
        "original_sentence",
        "orig",
        "input",
        "sentence",
    ),
    "output": (
        "output",
        "simplification",
        "simplified",
        "input.simplified",
        "system_output",
        "simple",
        "simplified_sentence",
        "output_sentence",
        "hypothesis",
        "hyp",
        "prediction",
        "candidate",
    ),
    "system": ("system", "system_name", "input.system", "sys", "model", "model_name"),
    "annotator": (
        "annotator",
        "annotator_id",
        "annotator_name",
        "workerid",
        "worker_id",
        "worker",
        "rater",
        "rater_id",
        "judge",
        "judge_id",
        "participant",
    ),
    "dimension": ("dimension", "aspect", "criterion", "criteria", "question", "dim"),
    "rating": ("rating", "score", "value", "judgement", "judgment", "answer"),
    "label": ("label", "mean_rating", "average_rating", "mean_score", "avg_rating"),
    "id": (
        "external_id",
        "id",
        "input.id",
        "sentence_id",
        "segment_id",
        "pair_id",
        "item_id",
    ),
    "kind": ("kind", "item_kind"),
    "dataset": ("dataset", "dataset_name"),
    "annotator_kind": ("annotator_kind",),
    "n_raters": ("n_raters", "num_raters", "raters"),
}

# Reference columns: `reference`, `refs`, `ref_2`, `Reference 3`, `Input.reference1`, ...
_REFERENCE_RE = re.compile(r"^(input)?(references?|refs?)\d*$")

# Dimension names by synonym. "adequacy" is the usual name for meaning preservation.
DIMENSION_SYNONYMS: dict[str, tuple[str, ...]] = {
    "meaning": (
        "meaning",
        "adequacy",
        "meaning_preservation",
        "meaningpreservation",
        "semantics",
        "semantic",
        "fidelity",
        "preservation",
    ),
    "fluency": ("fluency", "grammaticality", "grammar"),
    "simplicity": ("simplicity", "simpleness"),
}

# Prefixes and suffixes that mark a column as a rating of some dimension in the wide shape.
_RATING_PREFIXES = ("answer", "rating", "ratings", "score", "scores")
_RATING_SUFFIXES = ("rating", "score")


def dimension_for(name: str, known: Iterable[str]) -> str | None:
    """The study's dimension a name stands for (its own name or a synonym), or None."""
    key = norm(name)
    known = list(known)
    for dim in known:
        if norm(dim) == key:
            return dim
    for dim, synonyms in DIMENSION_SYNONYMS.items():
        if dim in known and key in {norm(s) for s in synonyms}:
            return dim
    return None


def rating_column_stem(column: str) -> tuple[str, bool]:
    """(stem, marked): `Answer.adequacy` -> ("adequacy", True); `fluency` -> ("fluency", False).

    `marked` says the column is certainly a rating column, so an unknown stem is an error
    rather than a column to ignore.
    """
    raw = column.strip()
    parts = re.split(r"[.\s]+", raw, maxsplit=1)
    if len(parts) == 2 and norm(parts[0]) in _RATING_PREFIXES:
        return parts[1], True
    low = raw.lower()
    for prefix in _RATING_PREFIXES:
        for sep in ("_", "-", " "):
            if low.startswith(prefix + sep) and len(raw) > len(prefix) + 1:
                return raw[len(prefix) + 1 :], True
    # A suffix is weaker evidence (`sari_score` is a metric, not a rating): it names a
    # dimension when the stem is one, but an unknown stem is not an error.
    for suffix in _RATING_SUFFIXES:
        for sep in ("_", "-", " ", "."):
            if low.endswith(sep + suffix) and len(raw) > len(suffix) + 1:
                return raw[: -len(suffix) - 1], False
    return raw, False


def closest(name: str, candidates: Sequence[str]) -> str | None:
    """The candidate a misspelled name most likely meant, or None."""
    by_norm = {norm(c): c for c in candidates}
    hit = difflib.get_close_matches(norm(name), list(by_norm), n=1, cutoff=0.6)
    return by_norm[hit[0]] if hit else None


@dataclass
class UserMapping:
    """What the user said with `--map`: field -> column(s), dimension -> column."""

    fields: dict[str, str] = field(default_factory=dict)
    references: list[str] = field(default_factory=list)
    # Wide shape: dimension (or a new dimension's name) -> the column holding its ratings.
    dimensions: dict[str, str] = field(default_factory=dict)
    # Long shape: a value of the dimension column -> the dimension it means.
    dimension_values: dict[str, str] = field(default_factory=dict)

    @property
    def empty(self) -> bool:
        return not (self.fields or self.references or self.dimensions or self.dimension_values)


def parse_map_options(entries: Sequence[str] | None) -> UserMapping:
    """Parse `--map field=column` entries.

    `references` may repeat or be a JSON list of columns; `dimension.NAME=VALUE` says that
    VALUE in the dimension column means dimension NAME (created if the study lacks it);
    any other field name is a dimension whose ratings are in that column (wide shape).
    """
    mapping = UserMapping()
    for entry in entries or ():
        name, sep, column = entry.partition("=")
        name, column = name.strip(), column.strip()
        if not sep or not name or not column:
            raise InputError(f"--map {entry!r}: expected FIELD=COLUMN, e.g. source=original")
        key = name.lower()
        if key in ("references", "reference", "refs"):
            if column.startswith("["):
                try:
                    cols = json.loads(column)
                except ValueError as exc:
                    raise InputError(f"--map {entry!r}: not a JSON list of columns") from exc
                if not isinstance(cols, list) or not all(isinstance(c, str) for c in cols):
                    raise InputError(f"--map {entry!r}: not a JSON list of column names")
                mapping.references.extend(cols)
            else:
                mapping.references.append(column)
        elif key.startswith("dimension."):
            dim = name.split(".", 1)[1].strip()
            if not dim:
                raise InputError(f"--map {entry!r}: expected dimension.NAME=VALUE")
            mapping.dimension_values[column] = dim
        elif key in SCALAR_FIELDS:
            if key in mapping.fields and mapping.fields[key] != column:
                raise InputError(
                    f"--map: {key} is mapped twice ({mapping.fields[key]!r}, {column!r})"
                )
            mapping.fields[key] = column
        else:
            if not re.fullmatch(r"[A-Za-z][\w\- ]{0,49}", name):
                raise InputError(
                    f"--map {entry!r}: {name!r} is neither a field ({', '.join(FIELDS)}) "
                    "nor a usable dimension name"
                )
            mapping.dimensions[name] = column
    return mapping


def find_column(columns: Sequence[str], synonyms: Sequence[str]) -> str | None:
    by_norm: dict[str, str] = {}
    for col in columns:
        by_norm.setdefault(norm(col), col)
    for syn in synonyms:
        hit = by_norm.get(norm(syn))
        if hit is not None:
            return hit
    return None


def reference_columns(columns: Sequence[str]) -> list[str]:
    return [c for c in columns if _REFERENCE_RE.match(norm(c))]

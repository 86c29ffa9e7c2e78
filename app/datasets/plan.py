"""Decide what each column of a file means: the import plan.

The plan is made once from the header (and the user's `--map`) before any row is read, so
a missing or misspelled column fails at row 1 with a suggestion, not after a million rows.

Shapes:
- `pairs`: one row per (source, output); optional per-dimension columns or a `label`
  without an annotator column are aggregate ratings (a mean published with the data);
- `csmd`: `original, simplification, label` — label is the mean meaning rating 0–100;
- `long`: one row per (item, annotator, dimension, rating);
- `wide`: one row per (item, annotator), one rating column per dimension (SimpDA 2022).
"""

from __future__ import annotations

import difflib
import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from meaningbench.datasets.mapping import (
    SCALAR_FIELDS,
    SYNONYMS,
    UserMapping,
    closest,
    dimension_for,
    find_column,
    norm,
    rating_column_stem,
    reference_columns,
)
from meaningbench.errors import InputError

SHAPES = ("pairs", "csmd", "long", "wide")
# What `--ratings` may say a file's ratings are (the kinds of meaningbench.db.models.ANNOTATOR_KINDS).
RATINGS_CHOICES = ("per-rater", "anonymous", "aggregate")
RATING_KIND_OF_CHOICE = {"per-rater": "named", "anonymous": "anonymous", "aggregate": "aggregate"}
FIELD_WORDS = {
    "source": "the source (original) sentences",
    "output": "the outputs (simplifications)",
    "annotator": "the annotators",
    "dimension": "the rated dimension",
    "rating": "the ratings",
    "label": "the mean rating (label)",
}


@dataclass(frozen=True)
class DimInfo:
    """A dimension as the importer needs it: its name and the values its scale admits."""

    name: str
    min_value: float = 0.0
    max_value: float = 100.0
    scale: str = "continuous"
    exists: bool = True


@dataclass
class Plan:
    shape: str
    source: str
    output: str
    system: str | None = None
    references: list[str] = field(default_factory=list)
    annotator: str | None = None
    dimension: str | None = None
    rating: str | None = None
    id: str | None = None
    kind: str | None = None
    dataset: str | None = None
    annotator_kind: str | None = None
    n_raters: str | None = None
    # Rating columns: dimension name -> column. Per rater when `annotator` is set (wide),
    # otherwise aggregate ratings published with the data (pairs, csmd).
    dims: dict[str, str] = field(default_factory=dict)
    # Aggregate label columns (`label`, `meaning_label`): dimension -> column.
    labels: dict[str, str] = field(default_factory=dict)
    # Long shape: a value of the dimension column -> dimension name (from --map dimension.X=V).
    dimension_values: dict[str, str] = field(default_factory=dict)
    # Every dimension the import may use, with its scale; `exists=False` ones are created.
    dimension_info: dict[str, DimInfo] = field(default_factory=dict)
    ignored: list[str] = field(default_factory=list)
    # Columns no field reads, kept per item as attributes (categories such as a sentence
    # type) in `item.meta["attributes"]`, unless the user drops them.
    attributes: list[str] = field(default_factory=list)
    # The kind of the file's ratings: named (a rater column), anonymous (one row per
    # rating, no rater column) or aggregate (a published label per item); inferred from
    # the shape unless the user said `--ratings`. A long file's annotator_kind column may
    # still set it row by row (exports write one).
    rating_kind: str = "aggregate"
    rating_kind_given: bool = False

    @property
    def per_rater(self) -> bool:
        return self.rating_kind != "aggregate"

    def used_columns(self) -> dict[str, object]:
        """Field -> column(s), for the import report."""
        out: dict[str, object] = {}
        for name in SCALAR_FIELDS:
            col = getattr(self, name, None)
            if isinstance(col, str):
                out[name] = col
        if self.references:
            out["references"] = list(self.references)
        for dim, col in self.dims.items():
            out[dim] = col
        for dim, col in self.labels.items():
            out[f"{dim} (label)"] = col
        return out


def _lookup_column(name: str, columns: list[str], path: Path, what: str) -> str:
    """The file's column a user named, tolerant of case; otherwise a "did you mean" error."""
    if name in columns:
        return name
    folded = [c for c in columns if c.lower() == name.lower()]
    if len(folded) == 1:
        return folded[0]
    guess = closest(name, columns)
    hint = f"; did you mean {guess!r}?" if guess else f"; the columns are: {', '.join(columns)}"
    raise InputError(
        f"no column {name!r} (mapped to {what}){hint}", file=str(path), row=1, column=name
    )


def _suggest_for(field_name: str, columns: list[str]) -> str | None:
    """A column whose name looks like a misspelling of one of the field's synonyms."""
    best, best_ratio = None, 0.0
    targets = [norm(s) for s in SYNONYMS.get(field_name, (field_name,))]
    for col in columns:
        for target in targets:
            ratio = difflib.SequenceMatcher(None, norm(col), target).ratio()
            if ratio > best_ratio:
                best, best_ratio = col, ratio
    return best if best_ratio >= 0.75 else None


def _missing(
    field_name: str, columns: list[str], path: Path, shape: str | None = None
) -> InputError:
    looked = ", ".join(SYNONYMS.get(field_name, (field_name,))[:6])
    guess = _suggest_for(field_name, columns)
    hint = (
        f"did you mean {guess!r}? (--map {field_name}={guess})"
        if guess
        else f"name it with --map {field_name}=COLUMN"
    )
    what = FIELD_WORDS.get(field_name, field_name)
    where = f" for the {shape} shape" if shape else ""
    return InputError(
        f"no column for {what}{where} (looked for: {looked}); the columns are: "
        f"{', '.join(columns)}; {hint}",
        file=str(path),
        row=1,
    )


def _map_user_fields(
    columns: list[str], user: UserMapping, path: Path
) -> tuple[dict[str, str | None], set[str], list[str]]:
    """The columns the user's `--map` names for fields and references, and those it uses."""
    used: set[str] = set()
    chosen: dict[str, str | None] = {}
    for name, col in user.fields.items():
        chosen[name] = _lookup_column(col, columns, path, name)
        used.add(chosen[name])  # type: ignore[arg-type]
    references = [_lookup_column(c, columns, path, "references") for c in user.references]
    used.update(references)
    return chosen, used, references


def _map_user_dimensions(
    columns: list[str],
    user: UserMapping,
    known: dict[str, DimInfo],
    path: Path,
    used: set[str],
) -> tuple[dict[str, str], dict[str, DimInfo], dict[str, str]]:
    """Rating columns and long-shape dimension values the user mapped: (dims, info, values)."""
    dims: dict[str, str] = {}
    info = dict(known)
    for dim_name, col in user.dimensions.items():
        column = _lookup_column(col, columns, path, f"dimension {dim_name}")
        target = dimension_for(dim_name, known) or dim_name
        if target not in info:
            # Mapped explicitly by the user: the one case where a dimension is created.
            info[target] = DimInfo(target, exists=False)
        if target in dims:
            raise InputError(f"--map: two columns for dimension {target!r}", file=str(path), row=1)
        dims[target] = column
        used.add(column)
    dimension_values: dict[str, str] = {}
    for value, dim_name in user.dimension_values.items():
        target = dimension_for(dim_name, known) or dim_name
        if target not in info:
            info[target] = DimInfo(target, exists=False)
        dimension_values[value] = target
    return dims, info, dimension_values


def _find_scalar_fields(
    free: list[str], chosen: dict[str, str | None], user: UserMapping, shape: str | None
) -> None:
    """Match the fields the user did not map by their synonyms; takes them out of `free`."""
    for name in SCALAR_FIELDS:
        if name in chosen:
            continue
        found = find_column(free, SYNONYMS[name])
        chosen[name] = found
        if found is not None:
            free.remove(found)
    # `rating`/`dimension` synonyms (score, value, question, ...) only mean the long shape
    # when both are there; alone they are ordinary columns.
    explicit_long = "rating" in user.fields or "dimension" in user.fields
    if (
        shape != "long"
        and not explicit_long
        and (chosen.get("rating") is None or chosen.get("dimension") is None)
    ):
        for name in ("rating", "dimension"):
            lone = chosen.get(name)
            if lone is not None:
                free.append(lone)
            chosen[name] = None


def _classify_free_columns(
    free: list[str], known: dict[str, DimInfo], dims: dict[str, str], path: Path
) -> tuple[dict[str, str], list[str]]:
    """Sort the remaining columns into labels, rating columns (added to `dims`) and
    unmapped ones (which become item attributes)."""
    labels: dict[str, str] = {}
    unmapped: list[str] = []
    for col in list(free):
        low = norm(col)
        if low.endswith("label") and len(low) > len("label"):
            labelled = dimension_for(col[: -len("label")].rstrip(" _.-"), known)
            if labelled is not None and labelled not in labels:
                labels[labelled] = col
                free.remove(col)
                continue
        stem, marked = rating_column_stem(col)
        hit = dimension_for(stem, known)
        if hit is not None:
            if hit in dims:
                raise InputError(
                    f"two columns hold {hit!r} ratings ({dims[hit]!r} and {col!r}); "
                    f"choose one with --map {hit}=COLUMN",
                    file=str(path),
                    row=1,
                    column=col,
                )
            dims[hit] = col
            free.remove(col)
        elif marked:
            raise InputError(
                f"the ratings in this column are for a dimension {stem!r} the study does not "
                f"have (it has: {', '.join(known)}); map it to one with --map DIMENSION={col}, "
                f"or create it with --map {stem.replace(' ', '_')}={col}",
                file=str(path),
                row=1,
                column=col,
            )
        else:
            unmapped.append(col)
    return labels, unmapped


def _place_label_column(
    label_col: str | None,
    annotator: str | None,
    known: dict[str, DimInfo],
    dims: dict[str, str],
    labels: dict[str, str],
    ignored: list[str],
    path: Path,
) -> None:
    """Make the generic `label` column a rater's meaning rating, the meaning label, or ignored."""
    if label_col is None:
        return
    if "meaning" not in known:
        raise InputError(
            "the study has no 'meaning' dimension for the label column",
            file=str(path),
            row=1,
            column=label_col,
        )
    if annotator is not None and "meaning" not in dims:
        # Beside an annotator column, a label is that rater's own rating.
        dims["meaning"] = label_col
    elif "meaning" not in labels:
        labels["meaning"] = label_col
    else:
        ignored.append(label_col)


def _rater_without_ratings(
    annotator: str, columns: list[str], known: dict[str, DimInfo], used: set[str], path: Path
) -> InputError:
    """A rater column with no column of ratings beside it: read as pairs, every rating of
    the file would be dropped without a word."""
    words = {norm(w) for w in SYNONYMS["rating"]} | {norm(d) for d in known}
    guesses = [
        c for c in columns if c != annotator and c not in used and any(w in norm(c) for w in words)
    ]
    hint = (
        f"--map {shlex.quote('meaning=' + guesses[0])}"
        if guesses
        else "--map meaning=COLUMN (or another dimension)"
    )
    return InputError(
        f"a rater column ({annotator!r}) but no column of ratings beside it; the columns "
        f"are: {', '.join(columns)}; name the ratings' column with {hint}, or import the "
        "pairs alone with --format pairs",
        file=str(path),
        row=1,
    )


def _detect_shape(
    chosen: dict[str, str | None],
    annotator: str | None,
    dims: dict[str, str],
    label_col: str | None,
) -> str:
    if chosen.get("dimension") and chosen.get("rating"):
        return "long"
    if annotator is not None and dims:
        return "wide"
    if (
        label_col is not None
        and not dims
        and norm(chosen.get("source") or "") == "original"
        and norm(chosen.get("output") or "") == "simplification"
    ):
        return "csmd"
    return "pairs"


def _check_shape_columns(
    shape: str,
    columns: list[str],
    chosen: dict[str, str | None],
    annotator: str | None,
    dims: dict[str, str],
    labels: dict[str, str],
    ignored: list[str],
    ratings: str | None,
    path: Path,
) -> dict[str, str]:
    """Raise if the shape lacks a column it needs; drop the columns it does not read.

    Returns the rating columns the shape keeps (none for the long shape).
    """
    for name in ("source", "output"):
        if chosen.get(name) is None:
            raise _missing(name, columns, path)
    if shape == "long":
        for name in ("dimension", "rating"):
            if chosen.get(name) is None:
                raise _missing(name, columns, path, "long")
        for col in dims.values():
            ignored.append(col)
        dims = {}
    elif shape == "wide":
        if annotator is None and ratings in (None, "per-rater"):
            raise _missing("annotator", columns, path, "wide")
        if not dims:
            raise InputError(
                "no rating columns for the wide shape (e.g. Answer.adequacy, fluency); "
                "name them with --map meaning=COLUMN",
                file=str(path),
                row=1,
            )
    elif shape == "csmd" and "meaning" not in labels and "meaning" not in dims:
        raise _missing("label", columns, path, "csmd")
    if shape in ("pairs", "csmd") and annotator is not None:
        ignored.append(annotator)
        chosen["annotator"] = None
    if shape != "long" and chosen.get("annotator_kind"):
        ignored.append(chosen["annotator_kind"])  # type: ignore[arg-type]
        chosen["annotator_kind"] = None
    return dims


def _decide_rating_kind(
    ratings: str | None,
    shape: str,
    chosen: dict[str, str | None],
    ignored: list[str],
    path: Path,
) -> str:
    """The kind of the file's ratings: the user's `--ratings`, or inferred from the shape."""
    annotator = chosen.get("annotator")
    if ratings is None:
        # A rater column makes per-rater ratings; a long file without one holds one rating
        # per row by an unknown person; a row per item without raters is a published label.
        if annotator is not None:
            return "named"
        return "anonymous" if shape == "long" else "aggregate"
    rating_kind = RATING_KIND_OF_CHOICE[ratings]
    if rating_kind == "named" and annotator is None:
        raise InputError(
            "--ratings per-rater needs a column of rater ids, and none was found; name it "
            "with --map annotator=COLUMN, or say --ratings anonymous (one rating per row, "
            "raters unknown)",
            file=str(path),
            row=1,
        )
    if rating_kind != "named" and annotator is not None:
        ignored.append(annotator)
        chosen["annotator"] = None
    return rating_kind


# An export names an attribute column so when the attribute's own name is one of its
# columns (`system (attribute)`); an import takes the suffix off again.
ATTRIBUTE_SUFFIX = " (attribute)"


def attribute_name(column: str) -> str:
    """The attribute a kept column holds: its name, trimmed, without an export's suffix."""
    name = column.strip()
    return name.removesuffix(ATTRIBUTE_SUFFIX).strip() or name


# An items export's numbers per dimension: `<dim>_human`, `<dim>_mean`, `<dim>_n`.
_EXPORT_STATISTICS = ("human", "mean", "n")
_METRIC_BASE = re.compile(r"[\[@ ]")
_UNNAMED = re.compile(r"Unnamed: \d+")
_PER_RATING = frozenset({"flagged", "comment"})


def _scores_not_categories(unmapped: list[str]) -> list[str]:
    """The unmapped columns that hold numbers about an item, not categories of it: an
    items export's statistics (the three columns of a dimension, recognised together),
    metric scores (a column named by a metric spec, `bleu`, `sari[refs=source]`) and a
    rating column no dimension claims (`score` without a dimension column), a rating's
    own flag and comment (a ratings export writes them; rows of one item differ in them),
    and the row index of a file pandas wrote (`Unnamed: 0`)."""
    from meaningbench.metrics.registry import metric_names

    present = set(unmapped)
    metrics = metric_names()
    ratings = {norm(s) for s in SYNONYMS["rating"]}
    out: list[str] = []
    for col in unmapped:
        if _UNNAMED.fullmatch(col.strip()) or norm(col) in ratings | _PER_RATING:
            out.append(col)
            continue
        stem, _, stat = col.rpartition("_")
        if (
            stat in _EXPORT_STATISTICS
            and stem
            and all(f"{stem}_{s}" in present for s in _EXPORT_STATISTICS)
        ):
            out.append(col)
            continue
        if _METRIC_BASE.split(col.strip(), maxsplit=1)[0].lower() in metrics:
            out.append(col)
    return out


def _split_attributes(
    unmapped: list[str], columns: list[str], drop: Sequence[str] | None, path: Path
) -> tuple[list[str], list[str]]:
    """The unmapped columns kept as item attributes, and those the user dropped.

    `drop=None` keeps them all; `drop` lists columns to drop, `"*"` means every one."""
    if not drop:
        return list(unmapped), []
    if "*" in drop:
        return [], list(unmapped)
    dropped: list[str] = []
    for name in drop:
        col = _lookup_column(name, columns, path, "--drop-column")
        if col not in unmapped:
            raise InputError(
                f"--drop-column {name!r}: the import reads that column; only columns no "
                f"field reads can be dropped ({', '.join(unmapped) or 'there are none'})",
                file=str(path),
                row=1,
                column=col,
            )
        dropped.append(col)
    return [c for c in unmapped if c not in dropped], dropped


def make_plan(
    columns: list[str],
    user: UserMapping,
    *,
    shape: str | None,
    known: dict[str, DimInfo],
    path: Path,
    ratings: str | None = None,
    drop: Sequence[str] | None = None,
) -> Plan:
    """Match columns to fields; `shape=None` detects it. Raises InputError at row 1.

    `ratings` (per-rater | anonymous | aggregate) overrides the inferred kind of ratings.
    Columns no field reads become item attributes, except those `drop` names (`"*"`: all).
    """
    if ratings is not None and ratings not in RATINGS_CHOICES:
        raise InputError(f"--ratings {ratings!r}: one of {', '.join(RATINGS_CHOICES)}")
    chosen, used, references = _map_user_fields(columns, user, path)
    dims, info, dimension_values = _map_user_dimensions(columns, user, known, path, used)

    free = [c for c in columns if c not in used]
    _find_scalar_fields(free, chosen, user, shape)
    if not user.references:
        references = reference_columns(free)
        free = [c for c in free if c not in references]

    labels, unmapped = _classify_free_columns(free, known, dims, path)
    # A second id column (an export's `item_id` beside `external_id`) names the item, it
    # does not categorise it.
    id_names = {norm(s) for s in SYNONYMS["id"]}
    second_ids = (
        [c for c in unmapped if norm(c) in id_names] if chosen.get("id") is not None else []
    )
    numbers = _scores_not_categories(unmapped)
    unmapped = [c for c in unmapped if c not in second_ids and c not in numbers]
    attributes, ignored = _split_attributes(unmapped, columns, drop, path)
    ignored = [*second_ids, *numbers, *ignored]
    label_col = chosen.pop("label", None)
    annotator = chosen.get("annotator")
    _place_label_column(label_col, annotator, known, dims, labels, ignored, path)

    if shape is None:
        shape = _detect_shape(chosen, annotator, dims, label_col)
        if shape == "pairs" and annotator is not None:
            raise _rater_without_ratings(annotator, columns, known, used, path)
    dims = _check_shape_columns(
        shape, columns, chosen, annotator, dims, labels, ignored, ratings, path
    )
    rating_kind = _decide_rating_kind(ratings, shape, chosen, ignored, path)

    plan = Plan(
        shape=shape,
        source=chosen["source"],  # type: ignore[arg-type]
        output=chosen["output"],  # type: ignore[arg-type]
        references=references,
        dims=dims,
        labels=labels,
        dimension_values=dimension_values,
        dimension_info=info,
        ignored=ignored,
        attributes=attributes,
    )
    for name in SCALAR_FIELDS:
        if name in ("source", "output", "label"):
            continue
        setattr(plan, name, chosen.get(name))
    plan.rating_kind = rating_kind
    plan.rating_kind_given = ratings is not None
    return plan

"""Audit published labels (aggregate rating sources) against the raw ratings they summarise.

A published dataset's label is meant to be the mean of the raw ratings of the same pair. When
a study holds both — e.g. CSMD's labels and the SimpDA 2022 / QuestEval rating files they were
averaged from — every label can be checked. Published labels do go wrong: CSMD assigned
`groupby(...).mean()` (a Series in sorted key order) onto rows in file order, so most SimpDA
and QuestEval pairs carry the mean of another pair.

Matching. A label and the raw ratings belong to the same pair when their *normalised* source,
output and dimension are equal. Normalisation (`normalise`): Unicode NFC, every run of
whitespace (tabs, newlines, non-breaking spaces) made one space, leading and trailing space
removed. Case and punctuation are kept: they can change meaning, and a label copied from a file
keeps them anyway. The system is not part of the match: a published label names no system.

Ambiguous pairs. The same normalised text can occur in several raw rows (two systems giving
the same output, or the same pair in two source files). A label cannot say which row it came
from, so the raw ratings of all those rows are pooled into one pair, and its mean follows the
one rule of `meaningbench.analysis.human` (each rater averaged first, then raters). Labels whose text is
found in more than one source file are reported in a group of their own ("a + b"). Every label
row is checked on its own: two published labels of one pair are two checks.

Raw ratings. A label is checked against the raw ratings that came with published data: the
per-rater ratings imported from rating files (origin `import:<file>`), such as the SimpDA
and QuestEval files CSMD's labels were averaged from. The study's own raters (ratings given
in the app, or merged from a rater's copy) rated for the study, not for the published
labels: their ratings are audited against only when named (`raters`), since a new rater's
few ratings are no evidence that a published label is wrong.

Scales. Labels and raw ratings are compared on 0–100. Each side's scale is read from its range
(all values within 0–5: a 1–5 Likert scale; within 0–100: 0–100); when the two differ the group
is not compared and says so, unless `scales` maps a side (`raw=1-5` or `labels=1-5`) linearly
onto 0–100.

Permutation signature. A label that misses its own pair's mean but equals (within tolerance)
the raw mean of another pair of the same source file is counted. Candidate mappings are then
tried: the k-th pair in file order (first or last appearance) receives the mean of the k-th
pair in another order (sorted by output, by source, by source then output; or file order
shifted by a few rows). The mapping that explains most labels is reported with its share —
"labels in file order took means sorted by output text" is a diagnosis a user can act on.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from meaningbench.analysis.audit_signature import signature
from meaningbench.analysis.human import item_scores
from meaningbench.analysis.pair_text import NORMALISATION, normalise
from meaningbench.analysis.resolutions import ORIGIN_PREFIX as RESOLUTION_ORIGIN
from meaningbench.errors import UserError

DEFAULT_TOLERANCE = 0.01
# Ratings whose origin starts so came in a rating file (meaningbench.datasets.importer).
IMPORTED = "import:"


@dataclass(frozen=True)
class ScaleMap:
    """`side` ("raw" or "labels") is on lo–hi and is mapped linearly onto 0–100."""

    side: str
    lo: float
    hi: float

    def apply(self, values: np.ndarray) -> np.ndarray:
        return (values - self.lo) / (self.hi - self.lo) * 100.0


def parse_scale(spec: str) -> ScaleMap:
    """`raw=1-5` or `labels=1-5` (a bare `1-5` means the raw ratings)."""
    side, _, rng = spec.rpartition("=")
    side = side.strip() or "raw"
    match = re.fullmatch(r"\s*(-?[0-9.]+)\s*[-–:]\s*(-?[0-9.]+)\s*", rng)
    if side not in ("raw", "labels") or match is None:
        raise UserError(f"--scale {spec!r}: write raw=LO-HI or labels=LO-HI, e.g. raw=1-5")
    lo, hi = float(match.group(1)), float(match.group(2))
    if hi <= lo:
        raise UserError(f"--scale {spec!r}: the top of the scale must be above its bottom")
    return ScaleMap(side, lo, hi)


def observed_scale(values: np.ndarray) -> str:
    """The scale a set of values looks like, from its range."""
    values = values[np.isfinite(values)]
    if values.size == 0:
        return "none"
    lo, hi = float(values.min()), float(values.max())
    if lo >= 0 and hi <= 5:
        return "1–5"
    if lo >= 0 and hi <= 100:
        return "0–100"
    return f"{lo:g}–{hi:g}"


@dataclass
class AuditGroup:
    """One aggregate label set against the raw ratings of one source file (one dimension)."""

    label_set: str
    source: str  # the dataset holding the raw ratings; "a + b" when several
    dimension: str
    n_labels: int
    n_equal: int = 0
    mean_abs_diff: float | None = None
    pearson: float | None = None
    n_ambiguous: int = 0  # labels whose text occurs in several raw rows
    n_other_pair: int = 0  # labels off their own mean but equal to another pair's mean
    mapping: str | None = None
    mapping_share: float | None = None
    identity_share: float | None = None
    label_scale: str = ""
    raw_scale: str = ""
    status: str = "compared"  # or "scale mismatch"

    @property
    def share_equal(self) -> float | None:
        return self.n_equal / self.n_labels if self.n_labels else None

    def equal_text(self) -> str:
        """Labels equal to their pair's mean, as every view shows them: `n (x %)`."""
        if self.status != "compared" or not self.n_labels:
            return "–"
        return f"{self.n_equal:,} ({100.0 * self.n_equal / self.n_labels:.1f} %)"

    def mapping_text(self) -> str | None:
        """The diagnosis every view shows: the likeliest mapping and how much it explains."""
        if not self.mapping:
            return None
        return (
            f"most likely {self.mapping} — explains {100 * (self.mapping_share or 0):.1f} % "
            f"of the labels (their own pair's mean: {100 * (self.identity_share or 0):.1f} %)"
        )


# The columns of the audit's group rows (`AuditResult.group_frame`), beside the label set.
GROUP_COLUMNS = (
    "source file",
    "dimension",
    "labels",
    "equal",
    "MAD",
    "Pearson",
    "ambiguous",
    "other pair",
    "status",
)


@dataclass(frozen=True)
class AuditResult:
    tolerance: float
    normalisation: str
    groups: list[AuditGroup]
    unmatched: dict[str, int]  # label set → labels with no raw ratings of the same pair
    labels: pd.DataFrame  # one row per checked label (see `LABEL_COLUMNS`)
    scale: ScaleMap | None = None
    notes: list[str] = field(default_factory=list)
    raters: list[str] = field(default_factory=list)  # the raw rating sources compared with
    chosen_raters: bool = False  # named by the user (else: those imported from files)
    imported_raters: list[str] = field(default_factory=list)  # sources from rating files
    own_raters: list[str] = field(default_factory=list)  # rated in the app or merged
    own_raters_left_out: list[str] = field(default_factory=list)

    def group_frame(self) -> pd.DataFrame:
        """One row per label set and source file, indexed by the label set, in the columns
        `GROUP_COLUMNS`: the rows every view of the audit shows (the report, the terminal,
        the Data quality tab). Counts are ints, MAD and Pearson floats (NaN where none)."""
        rows = [
            (
                g.source,
                g.dimension,
                g.n_labels,
                g.equal_text(),
                np.nan if g.mean_abs_diff is None else g.mean_abs_diff,
                np.nan if g.pearson is None else g.pearson,
                g.n_ambiguous,
                g.n_other_pair,
                g.status,
            )
            for g in self.groups
        ]
        index = pd.Index([g.label_set for g in self.groups], name="label set")
        return pd.DataFrame(rows, index=index, columns=list(GROUP_COLUMNS))

    def to_json(self) -> dict[str, object]:
        groups = []
        for g in self.groups:
            d = asdict(g)
            d["share_equal"] = g.share_equal
            groups.append(d)
        return {
            "tolerance": self.tolerance,
            "normalisation": self.normalisation,
            "scale": asdict(self.scale) if self.scale else None,
            "groups": groups,
            "unmatched": self.unmatched,
            "notes": self.notes,
            "raters": self.raters,
            "chosen_raters": self.chosen_raters,
            "imported_raters": self.imported_raters,
            "own_raters": self.own_raters,
            "own_raters_left_out": self.own_raters_left_out,
        }


LABEL_COLUMNS = [
    "rating_id",
    "item_id",
    "label_set",
    "dimension",
    "source_file",
    "source",
    "output",
    "label",
    "raw_mean",
    "n_raters",
    "n_ratings",
    "n_rows",
    "several_files",
    "resolved_by_equality",
    "diff",
    "equal",
    "other_pair",
    "mapped_mean",
    "raw_values",
]


def _pairs(raw: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    """One row per `by` group of the raw ratings (dimension and key, and maybe the file):
    the one rule's mean over every rating of the group, pooled across its rows."""
    codes, keys = pd.factorize(pd.MultiIndex.from_arrays([raw[c] for c in by]))
    scored = item_scores(raw.assign(item_id=codes).drop(columns=["dimension"]))
    scored = scored.set_index("item_id").sort_index()
    grouped = raw.assign(code=codes).groupby("code")
    out = pd.DataFrame({c: keys.get_level_values(k) for k, c in enumerate(by)})
    out["raw_mean"] = scored["score"].to_numpy()
    out["n_raters"] = scored["n_raters"].to_numpy()
    out["n_ratings"] = scored["n_ratings"].to_numpy()
    out["n_rows"] = grouped["item_id"].nunique().to_numpy()
    out["files"] = grouped["dataset"].agg(lambda s: " + ".join(sorted(set(s)))).to_numpy()
    # Where the pair first and last appears among the file's ratings (file order).
    out["first"] = grouped["rating_id"].min().to_numpy()
    out["last"] = grouped["rating_id"].max().to_numpy()
    # The ratings themselves, for views that show them beside the label (a few per pair).
    out["raw_values"] = grouped["value"].agg(list).to_numpy()
    out["source"] = grouped["source"].first().to_numpy()
    out["output"] = grouped["output"].first().to_numpy()
    return out


def _match(
    labels: pd.DataFrame, per_file: pd.DataFrame, pooled: pd.DataFrame, tol: float
) -> pd.DataFrame:
    """Each label with the raw pair it is checked against (see "Ambiguous pairs" above).

    A text found in one file: that file's pair. A text found in several files: the file
    whose mean equals the label when exactly one does (the label says where it came from);
    otherwise the pooled mean of every file, in a group named after all of them."""
    cols = [
        "dimension",
        "key",
        "raw_mean",
        "n_raters",
        "n_ratings",
        "n_rows",
        "files",
        "raw_values",
    ]
    cand = labels[["rating_id", "dimension", "key", "value"]].merge(
        per_file[cols], on=["dimension", "key"]
    )
    n_cand = cand.groupby("rating_id").size()
    cand["hit"] = (cand["value"] - cand["raw_mean"]).abs() <= tol + 1e-9
    hits = cand.groupby("rating_id")["hit"].sum()
    single = n_cand.index[n_cand == 1]
    resolved = hits.index[(n_cand > 1) & (hits == 1)]
    chosen = pd.concat(
        [
            cand[cand["rating_id"].isin(single)],
            cand[cand["rating_id"].isin(resolved) & cand["hit"]],
        ]
    ).drop(columns=["hit", "value", "dimension", "key"])
    chosen["resolved_by_equality"] = chosen["rating_id"].isin(resolved)
    chosen["several_files"] = chosen["rating_id"].isin(resolved)
    rest = n_cand.index[(n_cand > 1) & (hits != 1)]
    pooled_rows = labels[labels["rating_id"].isin(rest)][["rating_id", "dimension", "key"]]
    pooled_rows = pooled_rows.merge(pooled[cols], on=["dimension", "key"]).drop(
        columns=["dimension", "key"]
    )
    pooled_rows["resolved_by_equality"] = False
    pooled_rows["several_files"] = True
    return labels.merge(pd.concat([chosen, pooled_rows]), on="rating_id", how="left")


def _rows_with_text(items: pd.DataFrame, ratings: pd.DataFrame) -> pd.DataFrame:
    """Each rating with its item's dataset, texts and pair key."""
    text = items.set_index("item_id")[["dataset", "source", "output"]].copy()
    # Normalised once per item, not per rating: a pair's key is a property of its text.
    text["key"] = [
        normalise(s) + "\t" + normalise(o)
        for s, o in zip(text["source"], text["output"], strict=True)
    ]
    rows = ratings.join(text, on="item_id")
    return rows[rows["source"].notna()]


def raw_sources(
    rows: pd.DataFrame, raters: Sequence[str] | None
) -> tuple[pd.DataFrame, list[str], list[str]]:
    """(the per-rater ratings labels are audited against, the raters imported from files,
    the study's own raters).

    Named `raters`: their ratings, wherever they came from. Otherwise the ratings imported
    from rating files, never the study's own raters (see "Raw ratings" above)."""
    per_rater = rows[rows["annotator_kind"] != "aggregate"]
    imported = per_rater["origin"].fillna("").astype(str).str.startswith(IMPORTED)
    from_files = sorted(set(per_rater.loc[imported, "annotator"]))
    own = sorted(set(per_rater.loc[~imported, "annotator"]))
    if raters is None:
        return per_rater[imported], from_files, own
    unknown = sorted(set(raters) - set(per_rater["annotator"]))
    if unknown:
        known = ", ".join(sorted(set(per_rater["annotator"]))) or "none"
        raise UserError(f"no rater {unknown[0]!r} with ratings; raters: {known}")
    return per_rater[per_rater["annotator"].isin(raters)], from_files, own


def _split_labels(rows: pd.DataFrame, label_sets: Sequence[str] | None) -> pd.DataFrame:
    """The aggregate labels audited (a lead's decisions on disagreements summarise no file
    and are not audited)."""
    is_label = rows["annotator_kind"] == "aggregate"
    if "origin" in rows.columns:
        is_label &= ~rows["origin"].fillna("").astype(str).str.startswith(RESOLUTION_ORIGIN)
    labels = rows[is_label].drop(columns=["n_raters"], errors="ignore")
    if label_sets is not None:
        unknown = sorted(set(label_sets) - set(labels["annotator"]))
        if unknown:
            known = ", ".join(sorted(set(labels["annotator"]))) or "none"
            raise UserError(f"no aggregate label set {unknown[0]!r}; label sets: {known}")
        labels = labels[labels["annotator"].isin(label_sets)]
    if labels.empty:
        raise UserError("the study has no aggregate labels (published labels) to audit")
    return labels


def _apply_scale(
    raw: pd.DataFrame, labels: pd.DataFrame, scale: ScaleMap | None
) -> tuple[pd.DataFrame, pd.DataFrame]:
    if scale is not None:  # one side mapped onto 0–100 before anything is compared
        if scale.side == "raw":
            raw = raw.assign(value=scale.apply(raw["value"].to_numpy(dtype=np.float64)))
        else:
            labels = labels.assign(value=scale.apply(labels["value"].to_numpy(dtype=np.float64)))
    return raw, labels


def _match_labels(
    labels: pd.DataFrame, raw: pd.DataFrame, tolerance: float
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(merged, per_file): each label with its raw pair, and each file's raw pairs."""
    per_file = pd.DataFrame()
    if raw.empty:
        merged = labels.assign(raw_mean=np.nan, files=None)
    else:
        per_file = _pairs(raw, ["dimension", "dataset", "key"])
        pooled = _pairs(raw, ["dimension", "key"])
        merged = _match(labels, per_file, pooled, tolerance)
    merged = merged.rename(columns={"annotator": "label_set", "value": "label"})
    return merged, per_file


def _count_unmatched(merged: pd.DataFrame) -> dict[str, int]:
    unmatched = {
        str(k): int(v)
        for k, v in merged[merged["raw_mean"].isna()].groupby("label_set").size().items()
    }
    for name in merged["label_set"].unique():
        unmatched.setdefault(str(name), 0)
    return unmatched


def _audit_group(
    key: tuple[Any, Any, Any],
    g: pd.DataFrame,
    per_file: pd.DataFrame,
    tolerance: float,
    scale: ScaleMap | None,
    notes: list[str],
) -> tuple[AuditGroup, pd.DataFrame | None]:
    """One (label set, files, dimension) group compared; its label rows unless not compared."""
    set_name, files, dim = key
    g = g.copy()
    lab = g["label"].to_numpy(dtype=np.float64)
    rawm = g["raw_mean"].to_numpy(dtype=np.float64)
    group = AuditGroup(
        label_set=str(set_name),
        source=str(files),
        dimension=str(dim),
        n_labels=len(g),
        n_ambiguous=int(((g["n_rows"] > 1) | g["several_files"].astype(bool)).sum()),
        label_scale=observed_scale(lab),
        raw_scale=observed_scale(rawm),
    )
    # The file's own pairs: a scramble happens within one file, with that file's means.
    file_pairs = per_file[(per_file["dimension"] == dim) & (per_file["dataset"] == files)]
    if observed_scale(lab) != observed_scale(rawm) and scale is None:
        group.status = "scale mismatch"
        notes.append(
            f"{set_name} vs {files} ({dim}): labels look {group.label_scale}, raw ratings "
            f"look {group.raw_scale}; not compared (say which side to map with --scale, "
            "e.g. --scale raw=1-5)"
        )
        return group, None
    diff = lab - rawm
    equal = np.abs(diff) <= tolerance + 1e-9
    group.n_equal = int(equal.sum())
    group.mean_abs_diff = float(np.mean(np.abs(diff)))
    if len(g) > 1 and np.std(lab) > 0 and np.std(rawm) > 0:
        group.pearson = float(np.corrcoef(lab, rawm)[0, 1])
    if file_pairs.empty:  # labels resolved to several files at once: no one file order
        other = np.zeros(len(g), dtype=bool)
        mapping, share, identity, mapped = None, None, None, np.full(len(g), np.nan)
    else:
        other, mapping, share, identity, mapped = signature(g, file_pairs, tolerance)
    group.n_other_pair, group.mapping = int(other.sum()), mapping
    group.mapping_share, group.identity_share = share, identity
    g["diff"], g["equal"], g["mapped_mean"] = diff, equal, mapped
    g["other_pair"] = other
    g["source_file"] = files
    return group, g


def _label_table(out_frames: list[pd.DataFrame]) -> pd.DataFrame:
    if out_frames:
        table = pd.concat(out_frames, ignore_index=True)
        return table.reindex(columns=LABEL_COLUMNS)
    return pd.DataFrame(columns=LABEL_COLUMNS)


def audit_frames(
    items: pd.DataFrame,
    ratings: pd.DataFrame,
    *,
    tolerance: float = DEFAULT_TOLERANCE,
    scale: ScaleMap | None = None,
    label_sets: Sequence[str] | None = None,
    raters: Sequence[str] | None = None,
) -> AuditResult:
    """The audit on `meaningbench.db.frames` rows: `items` (items_frame) and `ratings` (ratings_frame).

    `label_sets` limits the aggregate sources audited (default: all); `raters` names the
    per-rater sources to audit against (default: the ratings imported from files)."""
    if tolerance < 0:
        raise UserError("--tolerance must be 0 or more")
    rows = _rows_with_text(items, ratings)
    labels = _split_labels(rows, label_sets)
    raw, from_files, own = raw_sources(rows, raters)
    left_out = own if raters is None else sorted(set(own) - set(raters))
    notes: list[str] = []
    if raw.empty:
        notes.append(
            "the study holds no raw ratings imported from rating files: nothing to compare "
            "the labels with"
        )
    if left_out:
        notes.append(
            f"not compared with the study's own raters ({', '.join(left_out)}) unless chosen "
            "(they rated for this study, not for the published labels)"
        )
    raw, labels = _apply_scale(raw, labels, scale)
    merged, per_file = _match_labels(labels, raw, tolerance)
    unmatched = _count_unmatched(merged)
    matched = merged[merged["raw_mean"].notna()].copy()
    groups: list[AuditGroup] = []
    out_frames: list[pd.DataFrame] = []
    for key, g in matched.groupby(["label_set", "files", "dimension"], sort=True):
        group, frame = _audit_group(key, g, per_file, tolerance, scale, notes)
        groups.append(group)
        if frame is not None:
            out_frames.append(frame)
    return AuditResult(
        tolerance=tolerance,
        normalisation=NORMALISATION,
        groups=groups,
        unmatched=unmatched,
        labels=_label_table(out_frames),
        scale=scale,
        notes=notes,
        raters=sorted(set(raw["annotator"])),
        chosen_raters=raters is not None,
        imported_raters=from_files,
        own_raters=own,
        own_raters_left_out=left_out,
    )


def audit_study(
    session: object,
    *,
    tolerance: float = DEFAULT_TOLERANCE,
    scale: ScaleMap | None = None,
    label_sets: Sequence[str] | None = None,
    raters: Sequence[str] | None = None,
) -> AuditResult:
    """The audit of a study's regular items (a `Session` or `Connection`)."""
    from meaningbench.db.frames import items_frame, ratings_frame

    items = items_frame(session, kinds=("regular",))  # type: ignore[arg-type]
    ratings = ratings_frame(session, kinds=("regular",))  # type: ignore[arg-type]
    return audit_frames(
        items, ratings, tolerance=tolerance, scale=scale, label_sets=label_sets, raters=raters
    )

"""A corrected CSMD: the published splits with the mean of each pair's own raw ratings.

CSMD (Beauchemin, Saggion, Khoury 2023) averages four rating sources into one label per pair,
then splits them 60/10/30 with a seeded shuffle. For SimpDA 2022 and QuestEval the per-pair
means were computed grouped by text (so in *sorted key order*) and assigned positionally onto
rows in *file order*, so most of those pairs carry the mean of another pair. ASSET (its file is
already sorted by the grouping key) and Simplicity-DA (copied without averaging) are right.

How each published row is traced to its source row (`trace="rebuild"`, all four sources):
1. each source's rows are rebuilt in CSMD's order with the label CSMD's steps give them
   (`label_rebuilt`) and the mean of their own raw ratings (`label_corrected`, by the one
   rule of `meaningbench.analysis.human`):
   - ASSET (meaning aspect): one row per (original, simplification, sentence id), file order;
     CSMD's label: the k-th mean by sorted sentence id;
   - SimpDA 2022: one row per (original, simplified, Input.id), first appearance; CSMD's
     label: the k-th mean by sorted output text (`Answer.adequacy`);
   - Simplicity-DA: every row, its `meaning` as the label (already a mean: no raw ratings);
   - QuestEval (meaning): one row per (source, simplification), *last* appearance; CSMD's
     label: the k-th mean by sorted (source, simplification);
2. the four are concatenated in that order and split as CSMD did: the `datasets` library's
   `train_test_split(test_size=0.3, seed=42)`, then `(test_size=0.1, seed=42)` on the rest,
   which is `numpy.random.default_rng(42).permutation` with ⌈0.3 n⌉ test rows and ⌊0.7 n⌋
   train rows;
3. every rebuilt row must equal the published row (both texts, and the label within 1e-6);
   otherwise the sources are not the ones CSMD was built from, and the recipe refuses.
So each row is traced by position, not by text: the 24 text pairs that occur in several
source rows (53 rows; e.g. two systems giving the same output) are never ambiguous.

With fewer sources (`trace="text"`), rows are traced by normalised text
(`meaningbench.analysis.audit.normalise`): a text found in exactly one row of the given sources takes
that row's raw mean; a text found in several rows, or in none, is left unchecked.

Columns written: the published ones (`original`, `simplification`, `label`), then
`label_published` (= `label`), `label_corrected`, `n_ratings` (raw ratings behind the
corrected label), `checked` (the corrected label comes from raw ratings of the traced row)
and `origin` (the source it came from). Unchecked rows keep the published label as corrected.
"""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from meaningbench.analysis.human import item_scores
from meaningbench.analysis.pair_text import normalise
from meaningbench.errors import UserError

SEED = 42
SOURCES = ("asset", "simpda", "simplicity_da", "questeval")
SPLITS = ("train", "dev", "test")
EXTRA_COLUMNS = ["label_published", "label_corrected", "n_ratings", "checked", "origin"]
TOL = 0.01  # "equal" on 0–100, as in `meaningbench audit`


@dataclass
class SourceRows:
    """One source's rows in CSMD's order."""

    name: str
    frame: pd.DataFrame  # original, simplification, label_rebuilt, label_corrected, n_ratings


def _read_csv(path: Path, required: list[str]) -> pd.DataFrame:
    if not path.is_file():
        raise UserError(f"{path}: no such file")
    frame = pd.read_csv(path, keep_default_na=False, na_values=[""])
    missing = [c for c in required if c not in frame.columns]
    if missing:
        raise UserError(f"{path}: missing column(s) {', '.join(missing)}")
    return frame


def _rule_means(codes: np.ndarray, raters: pd.Series, kind: str, values: pd.Series) -> pd.DataFrame:
    """Mean and n of each pair code by the one rule (each rater once, then raters)."""
    scored = item_scores(
        pd.DataFrame(
            {
                "item_id": codes,
                "annotator": raters.astype(str).to_numpy(),
                "annotator_kind": kind,
                "value": pd.to_numeric(values).to_numpy(dtype=np.float64),
            }
        )
    )
    return scored.set_index("item_id")[["score", "n_ratings"]]


def _positional(rows: pd.DataFrame, sorted_means: pd.Series, what: str) -> np.ndarray:
    """CSMD's assignment: the k-th row gets the k-th mean of the sorted groupby."""
    if len(sorted_means) != len(rows):
        raise UserError(
            f"{what}: {len(rows)} rows but {len(sorted_means)} groups; this is not the file "
            "CSMD was built from"
        )
    return np.asarray(sorted_means.to_numpy(dtype=np.float64))


def asset_rows(path: Path) -> SourceRows:
    cols = ["original", "simplification", "original_sentence_id", "aspect", "worker_id", "rating"]
    raw = _read_csv(path, cols)
    raw = raw[raw["aspect"].astype(str).isin(["meaning", "0"])].reset_index(drop=True)
    key = ["original", "simplification", "original_sentence_id"]
    rows = raw[key].drop_duplicates().reset_index(drop=True)
    rebuilt = _positional(
        rows, raw.groupby("original_sentence_id")["rating"].mean(), f"{path.name} (ASSET)"
    )
    codes = raw.groupby(key, sort=False).ngroup().to_numpy()
    means = _rule_means(codes, raw["worker_id"], "named", raw["rating"])
    own = rows.merge(raw[key].assign(code=codes).drop_duplicates(key), on=key)["code"]
    return _source("asset", rows, rebuilt, means.loc[own.to_numpy()])


def simpda_rows(path: Path) -> SourceRows:
    cols = ["WorkerId", "Input.id", "Input.original", "Input.simplified", "Answer.adequacy"]
    raw = _read_csv(path, cols)
    key = ["Input.original", "Input.simplified", "Input.id"]
    rows = raw[key].drop_duplicates().reset_index(drop=True)
    rebuilt = _positional(
        rows, raw.groupby("Input.simplified")["Answer.adequacy"].mean(), f"{path.name} (SimpDA)"
    )
    codes = raw.groupby(key, sort=False).ngroup().to_numpy()
    means = _rule_means(codes, raw["WorkerId"], "named", raw["Answer.adequacy"])
    rows = rows.rename(columns={"Input.original": "original", "Input.simplified": "simplification"})
    return _source("simpda", rows, rebuilt, means.loc[np.arange(len(rows))])


def simplicity_da_rows(path: Path) -> SourceRows:
    raw = _read_csv(path, ["orig_sent", "simp_sent", "meaning"])
    rows = raw.rename(columns={"orig_sent": "original", "simp_sent": "simplification"})
    label = pd.to_numeric(rows["meaning"]).to_numpy(dtype=np.float64)
    frame = rows[["original", "simplification"]].assign(
        label_rebuilt=label, label_corrected=label, n_ratings=np.nan, checked=False
    )
    return SourceRows("simplicity_da", frame.reset_index(drop=True))


def questeval_rows(path: Path) -> SourceRows:
    raw = _read_csv(path, ["source", "simplification", "aspect", "rating"])
    raw = raw[raw["aspect"] == "meaning"].reset_index(drop=True)
    key = ["source", "simplification"]
    rows = raw[key].drop_duplicates(keep="last").reset_index(drop=True)
    rebuilt = _positional(rows, raw.groupby(key)["rating"].mean(), f"{path.name} (QuestEval)")
    codes = raw.groupby(key, sort=False).ngroup().to_numpy()
    # No rater ids: every row is one anonymous person's rating (a rater of its own).
    means = _rule_means(codes, pd.Series(np.arange(len(raw))), "anonymous", raw["rating"])
    own = rows.merge(raw[key].assign(code=codes).drop_duplicates(key), on=key)["code"]
    rows = rows.rename(columns={"source": "original"})
    return _source("questeval", rows, rebuilt, means.loc[own.to_numpy()])


def _source(name: str, rows: pd.DataFrame, rebuilt: np.ndarray, own: pd.DataFrame) -> SourceRows:
    frame = rows[["original", "simplification"]].assign(
        label_rebuilt=rebuilt,
        label_corrected=own["score"].to_numpy(dtype=np.float64),
        n_ratings=own["n_ratings"].to_numpy(dtype=np.float64),
        checked=True,
    )
    return SourceRows(name, frame.reset_index(drop=True))


READERS: dict[str, Callable[[Path], SourceRows]] = {
    "asset": asset_rows,
    "simpda": simpda_rows,
    "simplicity_da": simplicity_da_rows,
    "questeval": questeval_rows,
}


def split_positions(n: int, seed: int = SEED) -> dict[str, np.ndarray]:
    """CSMD's 60/10/30 split of n rows (see the module docstring, step 2)."""
    perm = np.random.default_rng(seed).permutation(n)
    n_test, n_train = math.ceil(0.3 * n), math.floor(0.7 * n)
    test, rest = perm[:n_test], perm[n_test : n_test + n_train]
    perm2 = np.random.default_rng(seed).permutation(len(rest))
    n_dev, n_train2 = math.ceil(0.1 * len(rest)), math.floor(0.9 * len(rest))
    return {
        "train": rest[perm2[n_dev : n_dev + n_train2]],
        "dev": rest[perm2[:n_dev]],
        "test": test,
    }


def read_split(path: Path) -> pd.DataFrame:
    if not path.is_file():
        raise UserError(f"{path}: no such file")
    frame = pd.read_csv(path, sep="\t", keep_default_na=False, quoting=csv.QUOTE_MINIMAL)
    missing = [c for c in ("original", "simplification", "label") if c not in frame.columns]
    if missing:
        raise UserError(f"{path}: missing column(s) {', '.join(missing)}")
    frame["label"] = pd.to_numeric(frame["label"], errors="raise")
    return frame


@dataclass
class RecipeResult:
    trace: str  # "rebuild" or "text"
    splits: dict[str, pd.DataFrame]  # published rows with the extra columns
    by_source: pd.DataFrame  # the audit of each source over all its pairs
    by_split: pd.DataFrame
    notes: list[str] = field(default_factory=list)
    rebuilt_test: pd.DataFrame | None = None  # the rebuilt test split when no file was given


def _row_table(sources: dict[str, SourceRows]) -> pd.DataFrame:
    parts = [sources[n].frame.assign(origin=n) for n in SOURCES if n in sources]
    return pd.concat(parts, ignore_index=True)


def _by_source(table: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for name, part in table.groupby("origin", sort=False):
        pub = part["label_rebuilt"].to_numpy(dtype=np.float64)
        cor = part["label_corrected"].to_numpy(dtype=np.float64)
        same = np.abs(pub - cor) <= TOL
        r = float(np.corrcoef(pub, cor)[0, 1]) if np.std(pub) > 0 and np.std(cor) > 0 else None
        rows.append(
            {
                "source": name,
                "pairs": len(part),
                "raw ratings": bool(part["checked"].any()),
                "equal to own mean": float(same.mean()),
                "Pearson published vs own mean": r,
                "mean abs diff": float(np.mean(np.abs(pub - cor))),
            }
        )
    return pd.DataFrame(rows).set_index("source")


def _by_split(splits: dict[str, pd.DataFrame]) -> pd.DataFrame:
    rows = []
    for name, frame in splits.items():
        correct = np.abs(frame["label_published"] - frame["label_corrected"]) <= TOL
        wrong = frame.loc[~correct, "origin"].value_counts().to_dict()
        rows.append(
            {
                "split": name,
                "rows": len(frame),
                "checked": int(frame["checked"].sum()),
                "correct": float(correct.mean()),
                "wrong": int((~correct).sum()),
                "wrong by source": ", ".join(f"{k} {v}" for k, v in sorted(wrong.items())),
            }
        )
    return pd.DataFrame(rows).set_index("split")


def _annotate(published: pd.DataFrame, traced: pd.DataFrame) -> pd.DataFrame:
    out = published.copy()
    out["label_published"] = out["label"]
    out["label_corrected"] = traced["label_corrected"].to_numpy()
    # A count, written as an integer; empty where the label has no raw ratings behind it.
    n = pd.to_numeric(pd.Series(traced["n_ratings"].to_numpy(), index=out.index))
    out["n_ratings"] = n.round().astype("Int64")
    out["checked"] = traced["checked"].to_numpy(dtype=bool)
    out["origin"] = traced["origin"].to_numpy()
    unchecked = ~out["checked"]
    out.loc[unchecked, "label_corrected"] = out.loc[unchecked, "label_published"]
    return out


def _rebuild(published: dict[str, pd.DataFrame], table: pd.DataFrame) -> RecipeResult:
    positions = split_positions(len(table))
    splits: dict[str, pd.DataFrame] = {}
    for name, frame in published.items():
        traced = table.iloc[positions[name]].reset_index(drop=True)
        if len(traced) != len(frame):
            raise UserError(
                f"{name}: {len(frame)} published rows, {len(traced)} rebuilt: the sources are "
                "not the ones CSMD was built from"
            )
        same = (
            (traced["original"].to_numpy() == frame["original"].to_numpy())
            & (traced["simplification"].to_numpy() == frame["simplification"].to_numpy())
            & np.isclose(traced["label_rebuilt"], frame["label"], atol=1e-6, rtol=0)
        )
        if not same.all():
            first = int(np.flatnonzero(~same)[0]) + 2
            raise UserError(
                f"{name}: {int((~same).sum())} of {len(frame)} rebuilt rows differ from the "
                f"published file (first at line {first}): the sources are not the ones CSMD "
                "was built from; give fewer sources to trace rows by text instead"
            )
        splits[name] = _annotate(frame, traced)
    rebuilt_test = None
    if "test" not in published:
        traced = table.iloc[positions["test"]].reset_index(drop=True)
        rebuilt_test = traced.rename(columns={"label_rebuilt": "label"})
        rebuilt_test = _annotate(rebuilt_test[["original", "simplification", "label"]], traced)
    notes = [
        f"every published row traced to its source row by CSMD's seeded split "
        f"({sum(len(f) for f in published.values()):,} rows reproduced exactly)"
    ]
    by_split = _by_split(splits if rebuilt_test is None else {**splits, "test": rebuilt_test})
    if rebuilt_test is not None:
        notes.append("test: rebuilt from the sources (no published test file given)")
    return RecipeResult("rebuild", splits, _by_source(table), by_split, notes, rebuilt_test)


def _by_text(published: dict[str, pd.DataFrame], table: pd.DataFrame) -> RecipeResult:
    keys = [
        normalise(a) + "\t" + normalise(b)
        for a, b in zip(table["original"], table["simplification"], strict=True)
    ]
    table = table.assign(key=keys)
    counts = table["key"].value_counts()
    unique = table[table["key"].map(counts) == 1].set_index("key")
    splits = {}
    ambiguous = 0
    for name, frame in published.items():
        fkeys = pd.Series(
            [
                normalise(a) + "\t" + normalise(b)
                for a, b in zip(frame["original"], frame["simplification"], strict=True)
            ]
        )
        found = unique.reindex(fkeys)
        ambiguous += int((fkeys.map(counts).fillna(0) > 1).sum())
        traced = pd.DataFrame(
            {
                "label_corrected": found["label_corrected"].to_numpy(),
                "n_ratings": found["n_ratings"].to_numpy(),
                "checked": found["checked"].fillna(False).to_numpy(dtype=bool),
                "origin": found["origin"].fillna("").to_numpy(),
            }
        )
        splits[name] = _annotate(frame, traced)
    notes = [
        "rows traced by normalised text (not every source given); "
        f"{ambiguous:,} rows whose text occurs in several source rows are left unchecked; "
        "a row from a source not given whose text also occurs in a given source cannot be "
        "told apart (give all four sources to trace by position)"
    ]
    return RecipeResult("text", splits, _by_source(table), _by_split(splits), notes)


def build_corrected_csmd(splits: dict[str, Path], sources: dict[str, Path]) -> RecipeResult:
    """`splits`: published split files by name (train, dev, optional test); `sources`: raw
    source files by name (`SOURCES`). All four sources: rows traced by the rebuild."""
    unknown = sorted(set(sources) - set(SOURCES)) + sorted(set(splits) - set(SPLITS))
    if unknown:
        raise UserError(f"unknown input {unknown[0]!r}")
    if not sources:
        raise UserError("give at least one raw source (--simpda, --questeval, ...)")
    published = {name: read_split(path) for name, path in splits.items()}
    table = _row_table({name: READERS[name](path) for name, path in sources.items()})
    if set(sources) == set(SOURCES):
        return _rebuild(published, table)
    return _by_text(published, table)


def split_files(result: RecipeResult, out_dir: Path) -> list[Path]:
    """Where `write_result` puts each annotated split."""
    return [out_dir / f"{name}.tsv" for name in result.splits]


def write_result(result: RecipeResult, out_dir: Path, summary: Mapping[str, object]) -> None:
    """The annotated splits as TSV (CSV quoting, like the published files) and `summary` as
    summary.json, all in place together or, on an error (a full disk), none changed."""
    from meaningbench.core.atomic_file import files_in_place
    from meaningbench.core.json_values import clean_json

    out_dir.mkdir(parents=True, exist_ok=True)
    with files_in_place(out_dir) as staging:
        for path, frame in zip(split_files(result, staging), result.splits.values(), strict=True):
            frame.to_csv(path, sep="\t", index=False)
        text = json.dumps(clean_json(dict(summary)), indent=2, ensure_ascii=False) + "\n"
        (staging / "summary.json").write_text(text, encoding="utf-8")
    # A test split rebuilt without the published file is reported, not written: the recipe
    # annotates published files, it does not publish splits of its own.

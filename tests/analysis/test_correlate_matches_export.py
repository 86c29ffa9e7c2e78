"""`correlate` and `export` agree on every item's human score: the correlation from the CLI
equals scipy's on the exported file, for aggregate (CSMD), anonymous (QuestEval) and named
raters with repeated ratings."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from meaningbench.cli import main

METRICS = ("bleu", "chrf", "ter")


def _correlate_and_export(
    study: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> tuple[dict, pd.DataFrame]:
    assert main(["score", str(study), "--metrics", ",".join(METRICS), "--workers", "1"]) == 0
    capsys.readouterr()
    assert main(["correlate", str(study), "--boot", "0", "--json"]) == 0
    table = json.loads(capsys.readouterr().out)
    out = tmp_path / "items.csv"
    assert main(["export", str(study), str(out)]) == 0
    capsys.readouterr()
    return table, pd.read_csv(out, keep_default_na=True)


def _check(table: dict, items: pd.DataFrame) -> None:
    regular = items[items["kind"] == "regular"]
    for metric in METRICS:
        column = f"{metric}[refs=source]"  # the canonical name export and correlate print
        both = regular[[column, "meaning_human"]].dropna()
        r = stats.pearsonr(both[column], both["meaning_human"]).statistic
        rho = stats.spearmanr(both[column], both["meaning_human"]).statistic
        got = table["metrics"][column]
        assert got["n"] == len(both)
        assert got["pearson"] == pytest.approx(r, abs=1e-12)
        assert got["spearman"] == pytest.approx(rho, abs=1e-12)


@pytest.mark.parametrize(
    "parts",
    [("csmd", "train.tsv"), ("csmd_sources", "questeval_likert_ratings_cleaned.csv")],
    ids=["csmd-aggregate", "questeval-anonymous"],
)
def test_correlate_equals_scipy_on_the_export(
    shared_datasets: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], parts: tuple
) -> None:
    study = tmp_path / "s.mbstudy"
    assert main(["import", str(study), str(shared_datasets.joinpath(*parts))]) == 0
    capsys.readouterr()
    table, items = _correlate_and_export(study, tmp_path, capsys)
    _check(table, items)


def test_questeval_export_means_are_the_raw_file_means(
    shared_datasets: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = shared_datasets / "csmd_sources" / "questeval_likert_ratings_cleaned.csv"
    study = tmp_path / "s.mbstudy"
    assert main(["import", str(study), str(path)]) == 0
    out = tmp_path / "items.csv"
    assert main(["export", str(study), str(out)]) == 0
    capsys.readouterr()
    items = pd.read_csv(out)
    raw = pd.read_csv(path)
    raw = raw[raw["aspect"] == "meaning"].fillna({"system_name": ""})
    expected = raw.groupby(["source", "simplification", "system_name"])["rating"].agg(
        ["mean", "size"]
    )
    expected.index.names = ["source", "output", "system"]
    items = items.fillna({"system": ""}).set_index(["source", "output", "system"])
    joined = expected.join(items[["meaning_human", "meaning_mean", "meaning_n"]], how="inner")
    assert len(joined) == len(expected) == 296
    assert np.abs(joined["meaning_human"] - joined["mean"]).max() <= 1e-12
    assert (joined["meaning_mean"] == joined["meaning_human"]).all()
    assert (joined["meaning_n"] == joined["size"]).all()


REPEATS = (
    "source,output,system,annotator,meaning\n"
    "The old bridge was closed for repairs.,The bridge was closed.,a,r1,90\n"
    "The old bridge was closed for repairs.,The bridge was closed.,a,r1,30\n"
    "The old bridge was closed for repairs.,The bridge was closed.,a,r2,80\n"
    "The old bridge was closed for repairs.,A bridge.,b,r1,20\n"
    "The old bridge was closed for repairs.,A bridge.,b,r2,40\n"
    "Rain fell all day in the valley.,It rained all day.,a,r1,100\n"
    "Rain fell all day in the valley.,It rained all day.,a,r2,70\n"
    "Rain fell all day in the valley.,It rained all day.,a,r2,90\n"
    "Rain fell all day in the valley.,Rain.,b,r1,10\n"
    "Cats sleep most of the day.,Cats sleep a lot.,a,r1,85\n"
    "Cats sleep most of the day.,Dogs bark.,b,r2,5\n"
)


def test_a_raters_repeated_ratings_count_as_their_mean_everywhere(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    study = tmp_path / "s.mbstudy"
    f = tmp_path / "repeats.csv"
    f.write_text(REPEATS, encoding="utf-8")
    assert main(["import", str(study), str(f)]) == 0
    capsys.readouterr()
    table, items = _correlate_and_export(study, tmp_path, capsys)
    _check(table, items)
    # The rule by hand: r1's 90 and 30 are one rater's 60; with r2's 80 the item is 70.
    human = dict(zip(items["output"], items["meaning_human"], strict=True))
    assert human["The bridge was closed."] == 70.0
    assert human["It rained all day."] == pytest.approx((100 + 80) / 2)
    assert dict(zip(items["output"], items["meaning_n"], strict=True))["It rained all day."] == 2

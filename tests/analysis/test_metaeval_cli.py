"""`meaningbench metaeval` on real study files: JSON of plain numbers, categories from item
attributes, refusals, and the tau-like on SimpDA 2022 against an independent count."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sqlalchemy import select

from meaningbench.cli import main
from meaningbench.db.models import Item
from tests.analysis.studybuild import add_items, add_ratings, add_scores

BLEU, ROUGE = "bleu[refs=source]", "rouge1[refs=source]"
SOURCES = [f"Source sentence number {k} says something about the weather today." for k in range(8)]


def _independent_tau_like(
    ratings: dict[str, dict[int, float]],
    metric: dict[int, float],
    groups: dict[int, str],
    threshold: float,
) -> float:
    """The LENS rule written out pair by pair, from the ratings as stored."""
    by_group: dict[str, list[int]] = {}
    for item, g in groups.items():
        by_group.setdefault(g, []).append(item)
    c = d = 0
    for items in by_group.values():
        for a, b in itertools.combinations(sorted(items), 2):
            votes = []
            for rater in ratings.values():
                if a in rater and b in rater:
                    diff = rater[a] - rater[b]
                    votes.append(0 if abs(diff) <= threshold else (1 if diff > 0 else -1))
            plus, minus = votes.count(1), votes.count(-1)
            if 2 * plus > len(votes):
                major = 1
            elif 2 * minus > len(votes):
                major = -1
            else:
                continue
            diff_m = metric[a] - metric[b]
            m = 0 if diff_m == 0 else (1 if diff_m > 0 else -1)
            if m == major:
                c += 1
            else:
                d += 1
    return (c - d) / (c + d)


@pytest.fixture
def built(new_study):
    rng = np.random.default_rng(4)
    rows = [(s, f"{s} output {k}", f"sys{k}") for s in SOURCES for k in range(3)]
    ids = add_items(new_study, rows)
    kinds = {i: ("split" if n % 2 else "lexical") for n, i in enumerate(ids)}
    with new_study.session() as s:
        for item in s.scalars(select(Item).where(Item.id.in_(ids))):
            item.meta = {"attributes": {"type": kinds[item.id]}}
    truth = rng.uniform(10, 90, len(ids))
    ratings = {}
    for name in ("ann", "bob", "cat"):
        values = {
            i: float(np.round(np.clip(t + rng.normal(0, 10), 0, 100)))
            for i, t in zip(ids, truth, strict=True)
        }
        ratings[name] = values
        add_ratings(new_study, name, values)
    good = {i: float(np.round(t + rng.normal(0, 8))) for i, t in zip(ids, truth, strict=True)}
    noise = {i: float(rng.uniform(0, 100)) for i in ids}
    add_scores(new_study, "bleu", good)
    add_scores(new_study, "rouge1", noise)
    return new_study.path, ids, kinds, ratings, good, rows


def _run_json(capsys, *args: str) -> dict:
    assert main(["metaeval", *args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_metaeval_json_has_every_figure_as_a_plain_number(built, capsys) -> None:
    path, ids, kinds, ratings, good, rows = built
    out = _run_json(
        capsys,
        str(path),
        "--by",
        "type",
        "--pairs-within",
        "type",
        "--resamples",
        "200",
        "--seed",
        "1",
    )
    values = out["values"]
    assert {v["category"] for v in values} == {None, "lexical", "split"}
    for v in values:
        assert v["value"] is None or isinstance(v["value"], float)
        assert v["value"] is not None or v["not_defined"].startswith("not defined")
    source_of = {i: r[0] for i, r in zip(ids, rows, strict=True)}
    groups = {i: f"{source_of[i]}|{kinds[i]}" for i in ids}
    tau = next(
        v
        for v in values
        if v["measure"] == "tau_like" and v["metric"] == BLEU and v["category"] is None
    )
    assert tau["value"] == pytest.approx(_independent_tau_like(ratings, good, groups, 5.0))
    lexical = {i for i in ids if kinds[i] == "lexical"}
    tau_lex = next(
        v
        for v in values
        if v["measure"] == "tau_like" and v["metric"] == BLEU and v["category"] == "lexical"
    )
    expected = _independent_tau_like(
        {r: {i: x for i, x in vals.items() if i in lexical} for r, vals in ratings.items()},
        good,
        {i: groups[i] for i in lexical},
        5.0,
    )
    assert tau_lex["value"] == pytest.approx(expected)
    ranking = out["ranking"]
    assert ranking["measure"] == "pearson" and ranking["test"] == "perm-both"
    first = ranking["ranking"][0]
    assert first["metric"] == BLEU and first["cluster"] == 1
    assert ranking["ranking"][1]["cluster"] == 2  # a random metric is significantly worse
    assert ranking["p_values"][BLEU][ROUGE] <= 0.05
    lo, hi = first["interval"]
    assert lo <= first["value"] <= hi
    assert "seed 1" in out["methods"] and "at most 5 points" in out["methods"]


def test_metaeval_text_and_refusals(built, capsys) -> None:
    path = str(built[0])
    assert (
        main(
            [
                "metaeval",
                path,
                "--resamples",
                "50",
                "--measures",
                "pearson,kendall_b,spa",
                "--group-by",
                "system",
            ]
        )
        == 0
    )
    text = capsys.readouterr().out
    assert "Ranking by pearson" in text and "Methods:" in text
    assert main(["metaeval", path, "--tie-threshold", "150"]) == 2
    assert "0–100" in capsys.readouterr().err
    assert main(["metaeval", path, "--by", "colour"]) == 2
    assert "known attributes: type" in capsys.readouterr().err
    assert (
        main(
            ["metaeval", path, "--measures", "pearson", "--test", "williams", "--group-by", "item"]
        )
        == 2
    )


def test_simpda_tau_like_equals_an_independent_count(
    shared_datasets: Path, new_study, capsys
) -> None:
    from meaningbench.datasets.importer import import_file
    from tests.analysis.test_shared_datasets import _score

    path = shared_datasets / "simpda2022" / "simpDA_2022.csv"
    import_file(new_study, path)
    bleu = _score(new_study, "bleu")
    out = _run_json(
        capsys,
        str(new_study.path),
        "--measures",
        "tau_like,pearson",
        "--resamples",
        "100",
        "--test",
        "perm-items",
    )
    tau = next(v for v in out["values"] if v["measure"] == "tau_like")
    raw = pd.read_csv(path)
    key = ["Input.original", "Input.simplified", "Input.system"]
    codes = {k: n for n, k in enumerate(raw[key].drop_duplicates().itertuples(index=False))}
    ratings: dict[str, dict[int, float]] = {}
    for row in raw.itertuples(index=False):
        item = codes[(row[2], row[3], row[4])]
        ratings.setdefault(str(row[0]), {})[item] = float(row[5])
    metric = {n: bleu[tuple(k)] for k, n in codes.items()}
    # The file's own source id: two of its ids carry two spellings of one sentence.
    source_id = dict(zip(raw[key].itertuples(index=False), raw["Input.id"], strict=True))
    groups = {n: source_id[k] for k, n in codes.items()}
    assert tau["value"] == pytest.approx(_independent_tau_like(ratings, metric, groups, 5.0))
    assert tau["concordant"] + tau["discordant"] > 100


def test_report_has_a_which_metric_section_with_its_methods(built, tmp_path) -> None:
    path = built[0]
    out = tmp_path / "r.html"
    assert main(["report", str(path), str(out), "--no-sanity", "--boot", "100",
                 "--seed", "7", "--by", "type"]) == 0  # fmt: skip
    html = out.read_text(encoding="utf-8")
    section = html[html.index("<h2 id='which-metric'>") :]
    assert "<th>cluster</th>" in section and "<h4>type = lexical</h4>" in section
    assert "<h3>p-values</h3>" in section
    methods = section[section.index("<p class='methods'>") :]
    for words in (
        "PERM-BOTH",
        "100 resamples, seed 7",
        "α = 0.05",
        "at most 5 points",
        "“all outputs together”",
        "per type",
    ):
        assert words in methods


def test_metaeval_ranks_by_spa_with_a_permutation_test(built, capsys) -> None:
    path, *_ = built
    out = _run_json(
        capsys, str(path), "--measures", "pearson,spa", "--rank-by", "spa", "--resamples", "50"
    )
    ranking = out["ranking"]
    assert ranking["measure"] == "spa" and ranking["test"] == "perm-both"
    spa = {v["metric"]: v["value"] for v in out["values"] if v["measure"] == "spa"}
    assert {r["metric"]: r["value"] for r in ranking["ranking"]} == spa
    assert all(r["cluster"] >= 1 and r["interval"] is None for r in ranking["ranking"])
    assert "SPA is recomputed on each resample" in out["methods"]
    assert main(["metaeval", str(path), "--rank-by", "spa", "--test", "boot-both"]) == 2
    assert "permutation test" in capsys.readouterr().err

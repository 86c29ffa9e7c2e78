"""Every rating row counts once: kinds inferred and chosen, anonymous files, bad input.

Oracles are pandas on the raw file and the `krippendorff` package; the study is read with
the plain sqlite3 module.
"""

from __future__ import annotations

import json
from pathlib import Path

import krippendorff
import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from meaningbench.analysis.human import item_scores
from meaningbench.cli import main
from meaningbench.datasets.importer import import_file
from meaningbench.db.frames import ratings_frame
from meaningbench.db.study import create_study
from tests.datasets.helpers import count, rows, write

QUESTEVAL = ("csmd_sources", "questeval_likert_ratings_cleaned.csv")
KEYS = ["source", "simplification", "system_name"]


def _questeval(shared_datasets: Path) -> Path:
    return shared_datasets.joinpath(*QUESTEVAL)


def _study_scores(study_path: Path) -> pd.DataFrame:
    """The item scores by the one rule, keyed by the item's texts, system and dimension."""
    items = pd.DataFrame(
        rows_of(study_path, "SELECT id, source, output, system FROM item"),
        columns=["item_id", "source", "simplification", "system_name"],
    )
    from meaningbench.db.study import open_study

    with open_study(study_path) as study, study.session() as s:
        scores = item_scores(ratings_frame(s))
    return scores.merge(items, on="item_id")


def rows_of(path: Path, sql: str) -> list[tuple]:
    import sqlite3

    conn = sqlite3.connect(path)
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


def test_questeval_is_anonymous_per_rater_ratings(
    shared_datasets: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _questeval(shared_datasets)
    raw = pd.read_csv(path)
    study = tmp_path / "q.mbstudy"
    assert main(["import", str(study), str(path), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert (report["rating_kind"], report["rating_kind_given"]) == ("anonymous", False)
    assert report["ratings_read"] == report["ratings_added"] == len(raw) == 14_830
    [source] = report["sources"]
    assert (source["kind"], source["rating_rows"], source["stored"]) == (
        "anonymous",
        14_830,
        14_830,
    )
    assert rows_of(study, "SELECT COUNT(*) FROM rating") == [(14_830,)]
    assert rows_of(study, "SELECT name, kind FROM annotator") == [
        ("anonymous:questeval_likert_ratings_cleaned", "anonymous")
    ]
    groups = raw.groupby([*KEYS, "aspect"], dropna=False)["rating"]
    assert report["items_created"] == raw.groupby(KEYS, dropna=False).ngroups == 296

    # Every item × aspect: the study's score is the pandas mean of the raw rows, n the rows.
    got = _study_scores(study)
    assert len(got) == groups.ngroups == 888
    expected = groups.agg(["mean", "size"]).reset_index()
    expected["system_name"] = (
        expected["system_name"].astype(object).where(expected["system_name"].notna(), None)
    )
    merged = got.merge(
        expected,
        left_on=["source", "simplification", "system_name", "dimension"],
        right_on=[*KEYS, "aspect"],
        how="outer",
        validate="one_to_one",
    )
    assert len(merged) == 888 and merged["score"].notna().all()
    assert np.abs(merged["score"] - merged["mean"]).max() <= 1e-12
    assert (merged["n_raters"] == merged["size"]).all()
    assert (merged["n_ratings"] == merged["size"]).all()

    # Agreement: alpha as the krippendorff package computes it on items × rating slots.
    assert main(["agreement", str(study), "--json", "--boot", "200"]) == 0
    agreement = json.loads(capsys.readouterr().out)
    meaning = raw[raw["aspect"] == "meaning"].copy()
    meaning["slot"] = meaning.groupby(KEYS, dropna=False).cumcount()
    meaning["item"] = meaning.groupby(KEYS, dropna=False).ngroup()
    data = meaning.pivot(index="slot", columns="item", values="rating").to_numpy(dtype=float)
    oracle = krippendorff.alpha(reliability_data=data, level_of_measurement="interval")
    assert agreement["alpha"] == pytest.approx(oracle, rel=1e-9)
    assert (agreement["n_annotators"], agreement["n_anonymous"]) == (0, len(meaning))
    assert agreement["icc_model"] == "ICC(1,1)"
    for estimate, (low, high) in (
        (agreement["alpha"], agreement["alpha_ci"]),
        (agreement["icc"], agreement["icc_ci"]),
        (agreement["icc_k"], agreement["icc_k_ci"]),
        (agreement["spearman_brown"], agreement["spearman_brown_ci"]),
    ):
        assert low < estimate < high
    assert "ICC(2,1), ICC(2,k), ICC(3,·)" in agreement["not_shown"]
    assert agreement["loo"] == {}

    # The same file again into the same dataset: recognised row for row, nothing added.
    assert main(["import", str(study), str(path), "--json"]) == 0
    again = json.loads(capsys.readouterr().out)
    assert (again["ratings_added"], again["ratings_existing"]) == (0, 14_830)
    assert rows_of(study, "SELECT COUNT(*) FROM rating") == [(14_830,)]


def test_aggregate_said_of_a_file_with_several_rows_per_item_is_refused(
    shared_datasets: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    study = tmp_path / "s.mbstudy"
    create_study(study).close()
    before = study.read_bytes()
    path = _questeval(shared_datasets)
    assert main(["import", str(study), str(path), "--ratings", "aggregate"]) == 2
    err = capsys.readouterr().err
    assert "aggregate labels: 296 of 296 labelled items have several rows for one dimension" in err
    assert "(888 item-dimension pairs)" in err and "Traceback" not in err
    assert study.read_bytes() == before


MIXED = (
    "source,output,annotator,aspect,rating\n"
    "S1.,O1.,r1,meaning,80\n"
    "S1.,O1.,,meaning,70\n"  # line 3: no rater
    "S2.,O2.,r2,meaning,60\n"
    "S2.,O2.,,meaning,50\n"  # line 5
)


def test_rows_with_and_without_rater_ids_are_refused_with_their_lines(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    study = tmp_path / "s.mbstudy"
    create_study(study).close()
    before = study.read_bytes()
    f = write(tmp_path / "mixed.csv", MIXED)
    assert main(["import", str(study), str(f)]) == 2
    err = capsys.readouterr().err
    assert f"{f}, row 3, column 'annotator'" in err
    assert "the rater id is empty on 2 rows (lines 3, 5) while other rows name their rater" in err
    assert "--ratings anonymous" in err and "Traceback" not in err
    assert study.read_bytes() == before

    # Said to be anonymous, every row is one rating of an unknown person.
    assert main(["import", str(study), str(f), "--ratings", "anonymous", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["ratings_added"] == 4 and report["rating_kind"] == "anonymous"
    assert "annotator" in report["ignored_columns"]
    assert count_path(study, "SELECT COUNT(*) FROM annotator WHERE kind = 'anonymous'") == 1


def count_path(path: Path, sql: str) -> int:
    return int(rows_of(path, sql)[0][0])


def test_a_long_file_with_an_empty_rater_is_never_an_aggregate(new_study, tmp_path: Path) -> None:
    from meaningbench.errors import InputError

    f = write(tmp_path / "one.csv", "source,output,annotator,aspect,rating\nS.,O.,,meaning,80\n")
    with pytest.raises(InputError, match=r"rater id is empty on 1 rows \(lines 2\)") as info:
        import_file(new_study, f)
    assert info.value.row == 2
    assert count(new_study, "SELECT COUNT(*) FROM rating") == 0
    report = import_file(new_study, f, ratings="anonymous")
    assert report.rating_kind == "anonymous" and report.ratings_added == 1


def test_per_rater_needs_a_rater_column(new_study, tmp_path: Path) -> None:
    from meaningbench.errors import InputError

    f = write(tmp_path / "q.csv", "source,output,aspect,rating\nS.,O.,meaning,80\n")
    with pytest.raises(InputError, match="--ratings per-rater needs a column of rater ids"):
        import_file(new_study, f, ratings="per-rater")


def test_the_three_kinds_are_inferred_from_the_columns(new_study, tmp_path: Path) -> None:
    named = write(tmp_path / "n.csv", "source,output,rater,meaning\nA.,B.,r1,50\nA.,B.,r2,70\n")
    anonymous = write(tmp_path / "a.csv", "source,output,aspect,rating\nA.,B.,meaning,50\n")
    aggregate = write(tmp_path / "g.csv", "source,output,label\nA.,B.,60\n")
    kinds = [import_file(new_study, f).rating_kind for f in (named, anonymous, aggregate)]
    assert kinds == ["named", "anonymous", "aggregate"]
    stored = rows(new_study, "SELECT a.kind, COUNT(*) FROM rating r JOIN annotator a "
                  "ON a.id = r.annotator_id GROUP BY a.kind ORDER BY a.kind")  # fmt: skip
    assert stored == [("aggregate", 1), ("anonymous", 1), ("named", 2)]


# -- properties ------------------------------------------------------------------------

_texts = st.sampled_from(["A.", "B.", "C, d.", 'E "f".'])
_rows = st.lists(
    st.tuples(
        _texts,
        _texts,
        st.sampled_from(["s1", "s2"]),
        st.sampled_from(["meaning", "fluency"]),
        st.integers(0, 100),
    ),  # fmt: skip
    min_size=1,
    max_size=40,
)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=_rows, dup=st.integers(0, 5))
def test_n_rating_rows_in_are_n_ratings_stored(tmp_path_factory, data, dup) -> None:
    """Anonymous rows, with exact duplicates added: every row is a rating, and every item's
    score is the pandas mean of its rows."""
    data = data + data[:dup]
    frame = pd.DataFrame(data, columns=["source", "output", "system", "aspect", "rating"])
    folder = tmp_path_factory.mktemp("prop")
    f = folder / "r.csv"
    frame.to_csv(f, index=False)
    study = create_study(folder / "s.mbstudy")
    try:
        report = import_file(study, f)
        assert report.ratings_added == report.ratings_read == len(frame)
        assert count(study, "SELECT COUNT(*) FROM rating") == len(frame)
        with study.session() as s:
            scores = item_scores(ratings_frame(s))
        texts = dict(
            ((i,), (src, out, sy))
            for i, src, out, sy in rows(study, "SELECT id, source, output, system FROM item")
        )
        got = {(*texts[(i,)], d): v for i, d, v in
               zip(scores["item_id"], scores["dimension"], scores["score"], strict=True)}  # fmt: skip
        expected = frame.groupby(["source", "output", "system", "aspect"])["rating"].mean()
        assert len(got) == len(expected)
        for key, mean in expected.items():
            assert got[key] == pytest.approx(mean, abs=1e-12)
    finally:
        study.close()


@settings(max_examples=30, deadline=None)
@given(
    ratings=st.lists(
        st.tuples(st.integers(0, 4), st.sampled_from(["r1", "r2", "r3"]), st.integers(0, 100)),
        min_size=1,
        max_size=30,
    )
)
def test_a_raters_repeats_are_averaged_before_the_raters(ratings) -> None:
    frame = pd.DataFrame(ratings, columns=["item_id", "annotator", "value"]).assign(
        annotator_kind="named"
    )
    got = item_scores(frame).set_index("item_id")
    per_rater = frame.groupby(["item_id", "annotator"])["value"].mean()
    expected = per_rater.groupby(level=0).mean()
    n = per_rater.groupby(level=0).size()
    for item, mean in expected.items():
        assert got.loc[item, "score"] == pytest.approx(mean, abs=1e-12)
        assert got.loc[item, "n_raters"] == n[item]


def test_anonymous_ratings_round_trip_through_the_ratings_export(
    shared_datasets: Path, tmp_path: Path
) -> None:
    from meaningbench.datasets.exporters import export_study

    a = create_study(tmp_path / "a.mbstudy")
    b = create_study(tmp_path / "b.mbstudy")
    try:
        import_file(a, _questeval(shared_datasets), dataset="questeval")
        out = tmp_path / "ratings.csv"
        export_study(a, out, ratings=True)
        back = import_file(b, out)
        assert back.rating_kind == "anonymous" and back.ratings_added == 14_830
        sql = (
            "SELECT i.source, i.output, i.system, a.name, a.kind, d.name, r.value FROM rating r "
            "JOIN item i ON i.id = r.item_id JOIN annotator a ON a.id = r.annotator_id "
            "JOIN dimension d ON d.id = r.dimension_id"
        )
        assert sorted(rows(b, sql), key=repr) == sorted(rows(a, sql), key=repr)
    finally:
        a.close()
        b.close()


def test_info_shows_each_imports_rows_and_stored_ratings(new_study, tmp_path: Path) -> None:
    from meaningbench.datasets.info import study_info

    f = write(tmp_path / "q.csv", "source,output,aspect,rating\nS.,O.,meaning,8\nS.,O.,meaning,8\n")
    import_file(new_study, f)
    import_file(new_study, f)  # nothing new: not recorded
    write(tmp_path / "q.csv", "source,output,aspect,rating\nS.,O.,meaning,8\nS.,O.,meaning,8\n"
          "S.,O.,meaning,8\n")  # fmt: skip
    import_file(new_study, f)  # one row appended
    text = "\n".join(study_info(new_study).lines())
    assert "imported q.csv: per-rater (anonymous), 2 rating rows, 2 ratings stored\n" in text
    assert "3 rating rows, 1 rating stored, 2 already there\n" in text
    assert text.count("imported q.csv") == 2
    assert "  anonymous:q: per-rater (anonymous), 3 ratings (raters unknown" in text


def test_info_shows_how_many_raters_aggregate_labels_stand_for(new_study, tmp_path: Path) -> None:
    from meaningbench.datasets.info import study_info

    f = write(
        tmp_path / "m.csv", "source,output,label,n_raters\nA.,B.,50,3\nC.,D.,70,7\nE.,F.,9,\n"
    )
    report = import_file(new_study, f)
    [agg] = report.sources
    assert (agg.kind, agg.n_raters_known, agg.n_raters_total) == ("aggregate", 2, 10)
    text = "\n".join(study_info(new_study).lines())
    assert "aggregate:m: aggregate, 3 ratings (published labels; n given on 2, 10 raters)" in text

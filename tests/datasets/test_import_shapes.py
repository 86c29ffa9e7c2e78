"""Each shape the importer knows, detected from the columns or named with --format/--map."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from meaningbench.core.keys import pair_key, source_group_key
from meaningbench.datasets.importer import RaterIds, import_file
from tests.datasets.helpers import count, rows, write, write_jsonl


def test_plain_pairs_csv_with_system_and_id(new_study, tmp_path: Path) -> None:
    f = write(
        tmp_path / "pairs.csv",
        "id,source,output,system\n"
        "a1,The cat sat on the mat.,A cat sat.,sysA\n"
        "a2,The cat sat on the mat.,The cat sat.,sysB\n"
        'a3,"Dogs bark, loudly.","Dogs bark.",sysA\n',
    )
    report = import_file(new_study, f)
    assert report.shape == "pairs" and report.container == "csv"
    assert (report.rows_read, report.items_created, report.ratings_added) == (3, 3, 0)
    assert report.datasets == ["pairs"]
    got = rows(
        new_study,
        "SELECT source, output, system, external_id, source_group, pair_key, kind, refs FROM item ORDER BY id",
    )
    assert got[2][:4] == ("Dogs bark, loudly.", "Dogs bark.", "sysA", "a3")
    for source, output, system, _ext, group, key, kind, refs in got:
        assert group == source_group_key(source)
        assert key == pair_key(source, output, system)
        assert kind == "regular" and json.loads(refs) == []
    # Two outputs of one source share its source group.
    assert got[0][4] == got[1][4] != got[2][4]


@pytest.mark.parametrize(
    ("delimiter", "name"),
    [("\t", "x.tsv"), (";", "x.csv"), ("|", "x.txt"), (",", "x.dat")],
)
def test_any_delimiter_is_sniffed(new_study, tmp_path: Path, delimiter: str, name: str) -> None:
    # Sentences full of commas must not fool the choice of delimiter.
    d = delimiter
    text = (
        f"source{d}output{d}system\n"
        f'"First, second, third, fourth."{d}"One, two."{d}s1\n'
        f'"A ""quoted"" word, here."{d}"Quoted{d} and, split\nover lines"{d}s2\n'
    )
    report = import_file(new_study, write(tmp_path / name, text))
    assert report.rows_read == 2
    got = rows(new_study, "SELECT source, output FROM item ORDER BY id")
    assert got == [
        ("First, second, third, fourth.", "One, two."),
        ('A "quoted" word, here.', f"Quoted{d} and, split\nover lines"),
    ]


def test_csmd_shape_keeps_label_as_aggregate_rating(new_study, tmp_path: Path) -> None:
    f = write(
        tmp_path / "train.tsv",
        "original\tsimplification\tlabel\n"
        'He said ""no"" twice.\tHe said no.\t66.5\n'
        '"She left, then ""returned""."\tShe came back.\t12\n',
    )
    # Second row: an opening quote means CSV quoting, doubled quotes inside.
    report = import_file(new_study, f)
    assert report.shape == "csmd" and report.container == "tsv"
    assert report.ratings_added == 2 and report.annotators == ["aggregate:train"]
    got = rows(
        new_study,
        "SELECT i.source, r.value, a.name, a.kind, a.meta, d.name, r.origin, r.state FROM rating r "
        "JOIN item i ON i.id = r.item_id JOIN annotator a ON a.id = r.annotator_id "
        "JOIN dimension d ON d.id = r.dimension_id ORDER BY r.id",
    )
    assert got[0][0] == 'He said ""no"" twice.'  # not quoted: quotes are literal
    assert got[1][0] == 'She left, then "returned".'
    assert [g[1] for g in got] == [66.5, 12.0]
    name, kind, meta, dim, origin, state = got[0][2:]
    assert (name, kind, dim, origin, state) == (
        "aggregate:train",
        "aggregate",
        "meaning",
        "import:train.tsv",
        "current",
    )
    meta = json.loads(meta)
    assert (
        meta["source_file"] == "train.tsv"
        and meta["dataset"] == "train"
        and meta["columns"] == ["label"]
    )


def test_long_shape_under_other_column_names(new_study, tmp_path: Path) -> None:
    f = write(
        tmp_path / "long.csv",
        "complex,simple,model,judge,aspect,score\n"
        "Src one.,Out one.,m1,r1,adequacy,80\n"
        "Src one.,Out one.,m1,r1,fluency,70\n"
        "Src one.,Out one.,m1,r2,meaning,60\n"
        "Src one.,Out two.,m2,r1,Simplicity,55.5\n",
    )
    report = import_file(new_study, f)
    assert report.shape == "long"
    assert report.columns["annotator"] == "judge" and report.columns["rating"] == "score"
    assert (report.items_created, report.ratings_added) == (2, 4)
    got = rows(
        new_study,
        "SELECT i.output, i.system, a.name, a.kind, d.name, r.value FROM rating r "
        "JOIN item i ON i.id = r.item_id JOIN annotator a ON a.id = r.annotator_id "
        "JOIN dimension d ON d.id = r.dimension_id ORDER BY r.id",
    )
    assert got == [
        ("Out one.", "m1", "r1", "named", "meaning", 80.0),
        ("Out one.", "m1", "r1", "named", "fluency", 70.0),
        ("Out one.", "m1", "r2", "named", "meaning", 60.0),
        ("Out two.", "m2", "r1", "named", "simplicity", 55.5),
    ]


def test_wide_simpda_shape(new_study, tmp_path: Path) -> None:
    f = write(
        tmp_path / "simpda.csv",
        "WorkerId,Input.id,Input.original,Input.simplified,Input.system,Answer.adequacy,Answer.fluency,Answer.simplicity\n"
        '0,40,"A long, complex sentence.",A short one.,GPT-3-few-shot,100,90,91\n'
        '1,40,"A long, complex sentence.",A short one.,GPT-3-few-shot,91,100,\n'
        '0,40,"A long, complex sentence.",Another one.,Muss,20,30,40\n',
    )
    report = import_file(new_study, f)
    assert report.shape == "wide"
    assert report.columns["meaning"] == "Answer.adequacy"
    assert (report.rows_read, report.items_created, report.ratings_added) == (3, 2, 8)
    assert report.dimensions == {"meaning": 3, "fluency": 3, "simplicity": 2}
    assert sorted(report.annotators) == ["0", "1"]
    per_item = rows(
        new_study,
        "SELECT i.system, i.external_id, COUNT(DISTINCT r.annotator_id), COUNT(*) FROM item i "
        "JOIN rating r ON r.item_id = i.id GROUP BY i.id ORDER BY i.id",
    )
    assert per_item == [("GPT-3-few-shot", "40", 2, 5), ("Muss", "40", 1, 3)]
    assert count(new_study, "SELECT COUNT(*) FROM annotator WHERE kind = 'named'") == 2


def test_references_from_several_columns_and_from_a_json_list(new_study, tmp_path: Path) -> None:
    f = write(
        tmp_path / "refs.csv",
        "source,output,reference_1,reference_2\nS1.,O1.,R1a.,R1b.\nS2.,O2.,R2a.,\n",
    )
    import_file(new_study, f)
    g = write(
        tmp_path / "refs2.csv",
        'source,output,references\nS3.,O3.,"[""R3a."", ""R3b, c.""]"\nS4.,O4.,[not json\n',
    )
    import_file(new_study, g)
    h = write_jsonl(
        tmp_path / "refs3.jsonl",
        [{"source": "S5.", "output": "O5.", "references": ["R5a.", "R5b."]}],
    )
    import_file(new_study, h)
    got = [json.loads(r[0]) for r in rows(new_study, "SELECT refs FROM item ORDER BY id")]
    assert got == [["R1a.", "R1b."], ["R2a."], ["R3a.", "R3b, c."], ["[not json"], ["R5a.", "R5b."]]


def test_references_mapped_as_json_list_of_columns(new_study, tmp_path: Path) -> None:
    f = write(tmp_path / "m.csv", "src_text,simp,gold_a,gold_b\nS.,O.,A.,B.\n")
    import_file(
        new_study,
        f,
        mapping=["source=src_text", "output=simp", 'references=["gold_a", "gold_b"]'],
    )
    assert json.loads(rows(new_study, "SELECT refs FROM item")[0][0]) == ["A.", "B."]


def test_jsonl_with_numbers_and_optional_keys(new_study, tmp_path: Path) -> None:
    f = write_jsonl(
        tmp_path / "data.jsonl",
        [
            {"source": "S1.", "output": "O1.", "system": "a", "annotator": "x", "meaning": 70},
            {"source": "S1.", "output": "O1.", "system": "a", "annotator": "y", "meaning": 75.5},
            {"source": "S2.", "output": "O2.", "annotator": "x", "meaning": None},
        ],
    )
    report = import_file(new_study, f)
    assert report.container == "jsonl" and report.shape == "wide"
    assert (report.items_created, report.ratings_added) == (2, 2)
    assert rows(new_study, "SELECT system FROM item ORDER BY id") == [("a",), (None,)]


def test_a_spreadsheets_empty_rows_are_blank_lines(new_study, tmp_path: Path) -> None:
    """Excel writes rows it once held as ",,,,": no data, so no error."""
    f = write(tmp_path / "x.csv", "source,output,annotator,meaning\nS.,O.,r,50\n,,,\n\n,,,\n")
    report = import_file(new_study, f)
    assert (report.rows_read, report.ratings_added) == (1, 1)


def test_pairs_asked_for_keep_no_rater_column(new_study, tmp_path: Path) -> None:
    """A rater column without ratings is refused unless pairs alone are asked for."""
    f = write(tmp_path / "raters.csv", "source,output,annotator\nS.,O.,anna\nT.,P.,ben\n")
    report = import_file(new_study, f, fmt="pairs")
    assert (report.items_created, report.ratings_added) == (2, 0)


def test_a_jsonl_key_that_first_appears_late_is_read(new_study, tmp_path: Path) -> None:
    """A second dimension rated only near the end of a long file is imported, not dropped."""
    lines = [
        {"source": f"S{i}.", "output": f"O{i}.", "annotator": "x", "meaning": 50}
        for i in range(1500)
    ]
    lines[-1]["fluency"] = 70
    report = import_file(new_study, write_jsonl(tmp_path / "late.jsonl", lines))
    assert report.ratings_added == 1501
    assert rows(
        new_study,
        "SELECT r.value FROM rating r JOIN dimension d ON d.id = r.dimension_id "
        "WHERE d.name = 'fluency'",
    ) == [(70.0,)]


def test_map_renames_fields_and_creates_a_mapped_dimension(new_study, tmp_path: Path) -> None:
    f = write(
        tmp_path / "custom.csv",
        "sent,simp,who,grammar_points,adequacy_score\nS.,O.,ann,4,80\n",
    )
    report = import_file(
        new_study,
        f,
        mapping=["source=sent", "output=simp", "annotator=who", "coherence=grammar_points"],
    )
    assert report.dimensions_created == ["coherence"]
    assert report.dimensions == {"coherence": 1, "meaning": 1}
    dims = dict(rows(new_study, "SELECT name, active FROM dimension"))
    assert "coherence" in dims and dims["coherence"] == 0


def test_map_synonym_names_an_existing_dimension(new_study, tmp_path: Path) -> None:
    f = write(tmp_path / "g.csv", "source,output,who,gp\nS.,O.,ann,40\n")
    report = import_file(new_study, f, mapping=["annotator=who", "grammaticality=gp"])
    assert report.dimensions == {"fluency": 1} and report.dimensions_created == []


def test_map_adequacy_column_to_meaning(new_study, tmp_path: Path) -> None:
    f = write(tmp_path / "w.csv", "source,output,rater,q1\nS.,O.,r,55\n")
    report = import_file(new_study, f, mapping=["meaning=q1"])
    assert report.shape == "wide" and report.dimensions == {"meaning": 1}
    assert report.dimensions_created == []


def test_long_dimension_value_mapped_explicitly(new_study, tmp_path: Path) -> None:
    f = write(
        tmp_path / "l.csv",
        "source,output,annotator,aspect,rating\nS.,O.,r,info kept,3\nS.,O.,r,fluency,4\n",
    )
    report = import_file(new_study, f, mapping=["dimension.meaning=info kept"])
    assert report.dimensions == {"meaning": 1, "fluency": 1}
    report = import_file(
        new_study,
        write(tmp_path / "l2.csv", "source,output,annotator,aspect,rating\nS.,O.,r,grammar ok,3\n"),
        mapping=["dimension.grammar_ok=grammar ok"],
        raters=RaterIds(same=True),
    )
    assert report.dimensions_created == ["grammar_ok"]


def test_dataset_and_system_options(new_study, tmp_path: Path) -> None:
    f = write(tmp_path / "p.csv", "source,output,system\nS.,O.,\nS.,P.,named\n")
    report = import_file(new_study, f, dataset="mine", system="default-sys")
    assert report.datasets == ["mine"]
    assert rows(new_study, "SELECT system FROM item ORDER BY id") == [("default-sys",), ("named",)]


def test_dataset_column_splits_rows_into_datasets(new_study, tmp_path: Path) -> None:
    f = write(tmp_path / "d.csv", "dataset,source,output\nA,S.,O.\nB,S.,O.\nA,S2.,O2.\n")
    report = import_file(new_study, f)
    assert sorted(report.datasets) == ["A", "B"]
    got = rows(
        new_study,
        "SELECT d.name, COUNT(*) FROM item i JOIN dataset d ON d.id = i.dataset_id GROUP BY d.name",
    )
    assert got == [("A", 2), ("B", 1)]


def test_pairs_with_dimension_columns_and_no_annotator_are_aggregates(
    new_study, tmp_path: Path
) -> None:
    f = write(tmp_path / "agg.csv", "source,output,meaning,fluency,n_raters\nS.,O.,72.5,80,5\n")
    report = import_file(new_study, f)
    assert report.shape == "pairs"
    got = rows(
        new_study,
        "SELECT a.name, a.kind, r.n_raters, r.value FROM rating r JOIN annotator a ON a.id = r.annotator_id ORDER BY r.id",
    )
    assert got == [("aggregate:agg", "aggregate", 5, 72.5), ("aggregate:agg", "aggregate", 5, 80.0)]


def test_forced_formats(new_study, tmp_path: Path) -> None:
    # A .txt of tab-separated values read as TSV by --format tsv.
    f = write(tmp_path / "odd.txt", "original\tsimplification\tlabel\nS, with comma.\tO.\t50\n")
    report = import_file(new_study, f, fmt="tsv")
    assert report.container == "tsv" and report.shape == "csmd"
    g = write(tmp_path / "j.data", '{"source": "S.", "output": "O."}\n')
    assert import_file(new_study, g, fmt="jsonl").container == "jsonl"
    h = write(tmp_path / "l.csv", "source,output,annotator,dimension,rating\nS.,O.,a,meaning,5\n")
    assert import_file(new_study, h, fmt="long").shape == "long"


def test_utf8_bom_and_crlf_line_ends(new_study, tmp_path: Path) -> None:
    f = tmp_path / "excel.csv"
    f.write_bytes("\ufeffsource,output\r\nÉté chaud.,Il fait chaud.\r\n".encode())
    report = import_file(new_study, f)
    assert report.rows_read == 1
    assert rows(new_study, "SELECT source, output FROM item") == [("Été chaud.", "Il fait chaud.")]


def test_decimal_comma_in_semicolon_files(new_study, tmp_path: Path) -> None:
    f = write(tmp_path / "eu.csv", "source;output;label\nS.;O.;72,5\n")
    import_file(new_study, f)
    assert rows(new_study, "SELECT value FROM rating") == [(72.5,)]


def test_label_beside_an_annotator_is_that_raters_rating(new_study, tmp_path: Path) -> None:
    f = write(tmp_path / "r.csv", "source,output,annotator,label\nS.,O.,ann1,40\n")
    report = import_file(new_study, f)
    assert report.shape == "wide"
    assert rows(
        new_study, "SELECT a.name, a.kind FROM rating r JOIN annotator a ON a.id = r.annotator_id"
    ) == [("ann1", "named")]


def test_likert_dimension_accepts_its_scale(new_study, tmp_path: Path) -> None:
    from sqlalchemy import update

    from meaningbench.db.models import Dimension

    with new_study.session() as s:
        s.execute(
            update(Dimension)
            .where(Dimension.name == "fluency")
            .values(scale="likert", min_value=1, max_value=5)
        )
    f = write(tmp_path / "lk.csv", "source,output,annotator,fluency\nS.,O.,a,4\n")
    assert import_file(new_study, f).ratings_added == 1

"""Exports: items with means and metric columns, per-rater ratings; export then import."""

from __future__ import annotations

import csv
import json
import statistics
from collections import Counter
from pathlib import Path

import pytest

from meaningbench.datasets.exporters import export_study
from meaningbench.datasets.importer import import_file
from meaningbench.db.models import MetricRun, Score
from meaningbench.db.study import Study, create_study
from meaningbench.errors import UserError
from tests.datasets.helpers import rows, write, write_jsonl

CSMD = (
    "original\tsimplification\tlabel\n"
    '"A ""quoted"", long sentence."\tA sentence.\t66.25\n'
    "Same pair.\tSame output.\t10\n"
    "Same pair.\tSame output.\t80\n"  # two published labels for one pair: both kept
    "Multi\tline?\t0.1\n"
)
WIDE = (
    "WorkerId,Input.id,Input.original,Input.simplified,Input.system,Answer.adequacy,Answer.fluency,reference\n"
    '0,7,"Line one,\nline two.",Short.,sysA,100,90,Ref one.\n'
    '1,7,"Line one,\nline two.",Short.,sysA,91,,Ref one.\n'
    "2,8,Another source.,Another output.,sysB,12.5,40,\n"
)


def _build(path: Path, tmp: Path) -> Study:
    study = create_study(path)
    import_file(study, write(tmp / "csmd.tsv", CSMD))
    import_file(study, write(tmp / "wide.csv", WIDE), dataset="simp da")
    write_jsonl(
        tmp / "plain.jsonl",
        [
            {"source": "Unrated source.", "output": "Unrated output.", "references": ["R1", "R2"]},
            {"source": "Unrated source.", "output": "Unrated output.", "kind": "control-repeat"},
            {"source": "Ünïcödé «text».", "output": "Text.", "system": "x", "id": "ext-1"},
        ],
    )
    import_file(study, tmp / "plain.jsonl")
    long = "source,output,annotator,aspect,rating\nAnother source.,Another output.,r9,coh,4\n"
    import_file(
        study,
        write(tmp / "long.csv", long),
        dataset="simp da",
        system="sysB",
        mapping=["dimension.coherence=coh"],
    )
    return study


def _items(study: Study) -> Counter:
    got = rows(
        study,
        "SELECT d.name, i.source, i.output, i.system, i.refs, i.kind, i.external_id "
        "FROM item i JOIN dataset d ON d.id = i.dataset_id",
    )
    return Counter((d, s, o, sy, tuple(json.loads(r)), k, e) for d, s, o, sy, r, k, e in got)


def _ratings(study: Study) -> Counter:
    return Counter(
        rows(
            study,
            "SELECT d.name, i.source, i.output, i.system, i.kind, a.name, a.kind, dm.name, "
            "r.value, r.n_raters FROM rating r JOIN item i ON i.id = r.item_id "
            "JOIN dataset d ON d.id = i.dataset_id JOIN annotator a ON a.id = r.annotator_id "
            "JOIN dimension dm ON dm.id = r.dimension_id WHERE r.state = 'current'",
        )
    )


@pytest.mark.parametrize("suffix", [".csv", ".tsv", ".jsonl"])
def test_ratings_export_then_import_gives_the_same_study(tmp_path: Path, suffix: str) -> None:
    a = _build(tmp_path / "a.mbstudy", tmp_path)
    out = tmp_path / f"ratings{suffix}"
    report = export_study(a, out, ratings=True)
    assert report.items == 8
    b = create_study(tmp_path / "b.mbstudy")
    back = import_file(b, out, mapping=["dimension.coherence=coherence"])
    assert back.shape == "long"
    # Every item but the control nobody rated (the study's own business, not data).
    unrated_control = (
        "plain",
        "Unrated source.",
        "Unrated output.",
        None,
        (),
        "control-repeat",
        None,
    )
    assert _items(b) == _items(a) - Counter([unrated_control])
    assert _ratings(b) == _ratings(a)
    assert sum(_ratings(a).values()) == 4 + 5 + 1
    kinds = dict(rows(b, "SELECT name, kind FROM annotator"))
    assert kinds["aggregate:csmd"] == "aggregate" and kinds["0"] == "named"
    # And once more: nothing new.
    assert import_file(b, out, mapping=["dimension.coherence=coherence"]).nothing_new
    a.close()
    b.close()


def test_items_export_means_counts_and_labels(tmp_path: Path) -> None:
    a = _build(tmp_path / "a.mbstudy", tmp_path)
    out = tmp_path / "items.csv"
    report = export_study(a, out)
    with out.open(encoding="utf-8", newline="") as fh:
        table = list(csv.DictReader(fh))
    assert len(table) == report.items == 8
    assert "meaning_label" in table[0] and "fluency_label" not in table[0]
    assert {"coherence_mean", "coherence_n", "fluency_mean", "fluency_n"} <= set(table[0])
    by_output = {r["output"]: r for r in table}
    short = by_output["Short."]
    # Oracle: the mean of the file's two human adequacy ratings, computed here.
    assert float(short["meaning_mean"]) == statistics.mean([100, 91])
    assert short["meaning_n"] == "2" and short["fluency_n"] == "1"
    assert short["meaning_label"] == ""
    assert json.loads(short["references"]) == ["Ref one."]
    same = by_output["Same output."]
    assert float(same["meaning_label"]) == statistics.mean([10, 80])
    assert same["meaning_mean"] == "" and same["meaning_n"] == "0"
    # Exactly what the study holds, with full float precision.
    assert float(by_output["A sentence."]["meaning_label"]) == 66.25

    # Importing the items export gives the items and the aggregate labels (means) back.
    c = create_study(tmp_path / "c.mbstudy")
    back = import_file(c, out)
    assert set(back.ignored_columns) >= {"item_id", "meaning_mean", "meaning_n"}
    assert _items(c) == _items(a)
    labels = rows(
        c,
        "SELECT i.output, r.value FROM rating r JOIN item i ON i.id = r.item_id "
        "JOIN annotator a ON a.id = r.annotator_id WHERE a.kind = 'aggregate'",
    )
    assert sorted(labels) == sorted(
        [("A sentence.", 66.25), ("Same output.", 45.0), ("line?", 0.1)]
    )
    a.close()
    c.close()


def test_metric_columns_from_the_score_matrix(tmp_path: Path) -> None:
    a = _build(tmp_path / "a.mbstudy", tmp_path)
    ids = [r[0] for r in rows(a, "SELECT id FROM item ORDER BY id")]
    with a.session() as s:
        run = MetricRun(metric="bleu", config={}, config_hash="h1", label="BLEU", status="done")
        s.add(run)
        s.flush()
        s.add_all(Score(run_id=run.id, item_id=i, value=float(i) / 3, raw=i) for i in ids[:3])
    out = tmp_path / "items.jsonl"
    report = export_study(a, out)
    assert report.columns[-1] == "bleu[refs=source]"
    lines = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [line["bleu[refs=source]"] for line in lines] == [i / 3 for i in ids[:3]] + [None] * (
        len(ids) - 3
    )
    assert lines[0]["references"] == [] and isinstance(lines[0]["meaning_n"], int)
    a.close()


def test_export_of_an_empty_study_and_bad_targets(new_study, tmp_path: Path) -> None:
    report = export_study(new_study, tmp_path / "e.csv")
    assert report.rows == 0
    header = (tmp_path / "e.csv").read_text(encoding="utf-8").strip().split(",")
    assert header == [
        "item_id",
        "dataset",
        "external_id",
        "kind",
        "system",
        "source",
        "output",
        "references",
    ]
    with pytest.raises(UserError, match="extension"):
        export_study(new_study, tmp_path / "x.xlsx")
    with pytest.raises(UserError, match="no such folder"):
        export_study(new_study, tmp_path / "missing" / "x.csv")
    odd = create_study(tmp_path / "odd.csv")  # a study file whose name looks like a CSV
    with pytest.raises(UserError, match="study itself"):
        export_study(odd, tmp_path / "odd.csv")
    odd.close()


def test_export_streams_in_batches(new_study, tmp_path: Path) -> None:
    lines = "".join(f"Source {i}.,Output {i}.,{i % 100}\n" for i in range(25_000))
    import_file(new_study, write(tmp_path / "many.csv", "source,output,meaning\n" + lines))
    out = tmp_path / "many.csv.out.csv"
    report = export_study(new_study, out)
    assert report.items == 25_000
    with out.open(encoding="utf-8", newline="") as fh:
        table = list(csv.DictReader(fh))
    assert [int(r["item_id"]) for r in table] == sorted(int(r["item_id"]) for r in table)
    assert all(float(r["meaning_label"]) == int(r["source"].split()[1][:-1]) % 100 for r in table)

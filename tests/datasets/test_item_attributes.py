"""Item attributes: a file's unmapped columns kept as categories of its items, through
import, info, export and the round trip back, merge and the Parquet dataset."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pandas as pd
import pytest
from sqlalchemy import select

from meaningbench.annotation.merge import merge_ratings
from meaningbench.datasets.exporters import export_study
from meaningbench.datasets.importer import import_file
from meaningbench.datasets.info import study_info
from meaningbench.db.frames import item_attributes_frame
from meaningbench.db.models import Rating
from meaningbench.db.study import Study, copy_study, create_study, open_study
from meaningbench.errors import InputError
from tests.datasets.helpers import rows, snapshot, write, write_jsonl

QUESTEVAL = "csmd_sources/questeval_likert_ratings_cleaned.csv"

# SimpEval-like: per-rater long rows, a sentence type per output.
SIMPEVAL = """\
source,output,system,rater,aspect,rating,sentence_type
The cat sat on the mat.,A cat sat.,lens,r1,meaning,80,paraphrase
The cat sat on the mat.,A cat sat.,lens,r2,meaning,70,paraphrase
The cat sat on the mat.,The cat sat. It was on a mat.,muss,r1,meaning,90,splitting
Dogs bark at night.,Dogs bark.,lens,r1,meaning,60,deletion
Dogs bark at night.,Dogs bark.,lens,r3,meaning,65,deletion
Rain fell all day.,It rained.,muss,r2,meaning,75,
"""


def attributes_by_text(study: Study) -> dict[tuple[str, str, str | None], dict[str, str]]:
    """(source, output, system) → the item's attributes, read with plain sqlite3."""
    out = {}
    for source, output, system, meta in rows(
        study, "SELECT source, output, system, meta FROM item"
    ):
        out[(source, output, system)] = json.loads(meta).get("attributes", {})
    return out


def test_questeval_keeps_simplification_type(tmp_path: Path, shared_datasets: Path) -> None:
    # The copy in tests/fixtures/datasets: the same bytes as the public file.
    path = shared_datasets / QUESTEVAL
    study = create_study(tmp_path / "q.mbstudy")
    report = import_file(study, path)
    assert report.attribute_columns == ["simplification_type"]
    assert report.ignored_columns == [] and not any("not imported" in w for w in report.warnings)
    # Oracle: pandas, one value per item as the file gives it (item = source, output, system).
    frame = pd.read_csv(path, keep_default_na=False, dtype=str)
    expected: dict[tuple[str, str, str | None], str] = {}
    for (src, out, system), group in frame.groupby(["source", "simplification", "system_name"]):
        values = set(group["simplification_type"])
        assert len(values) == 1  # the file is consistent, so the import must accept it
        expected[(src, out, system or None)] = values.pop()
    stored = attributes_by_text(study)
    assert len(stored) == len(expected) == report.items_created
    assert {k: v["simplification_type"] for k, v in stored.items()} == expected
    counts = pd.Series(list(expected.values())).value_counts().to_dict()
    assert report.attributes == {"simplification_type": counts}
    assert any(line.startswith("  item attributes:") for line in report.summary_lines())
    # The reader the analyses use agrees, and `info` lists the values with their counts.
    with study.session() as s:
        wide = item_attributes_frame(s)
    assert wide["simplification_type"].value_counts().to_dict() == counts
    listed = study_info(study).attributes
    assert listed == [
        {
            "name": "simplification_type",
            "items": len(expected),
            "distinct": len(counts),
            "values": [
                {"value": v, "items": n}
                for v, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
            ],
        }
    ]
    study.close()


def test_a_written_file_keeps_its_category_column(tmp_path: Path) -> None:
    study = create_study(tmp_path / "s.mbstudy")
    report = import_file(study, write(tmp_path / "simpeval.csv", SIMPEVAL))
    assert report.items_created == 4 and report.attribute_columns == ["sentence_type"]
    assert attributes_by_text(study) == {
        ("The cat sat on the mat.", "A cat sat.", "lens"): {"sentence_type": "paraphrase"},
        ("The cat sat on the mat.", "The cat sat. It was on a mat.", "muss"): {
            "sentence_type": "splitting"
        },
        ("Dogs bark at night.", "Dogs bark.", "lens"): {"sentence_type": "deletion"},
        ("Rain fell all day.", "It rained.", "muss"): {},  # an empty cell stores nothing
    }
    assert report.attributes["sentence_type"] == {
        "paraphrase": 1,
        "splitting": 1,
        "deletion": 1,
        "": 1,
    }
    lines = "\n".join(study_info(study).lines())
    assert "item attributes: 1" in lines
    assert "sentence_type (3 items, 3 values): deletion 1, paraphrase 1, splitting 1" in lines
    study.close()


def test_jsonl_numbers_are_kept_as_text(tmp_path: Path) -> None:
    study = create_study(tmp_path / "s.mbstudy")
    data = write_jsonl(
        tmp_path / "pairs.jsonl",
        [
            {"source": "A b c.", "output": "A b.", "level": 3, "domain": "news"},
            {"source": "D e f.", "output": "D e.", "level": 1.5, "domain": None},
        ],
    )
    import_file(study, data)
    assert attributes_by_text(study) == {
        ("A b c.", "A b.", None): {"level": "3", "domain": "news"},
        ("D e f.", "D e.", None): {"level": "1.5"},
    }
    study.close()


def test_a_category_that_differs_within_an_item_is_refused_and_nothing_changes(
    tmp_path: Path,
) -> None:
    study = create_study(tmp_path / "s.mbstudy")
    import_file(study, write(tmp_path / "first.csv", "source,output\nX y z.,X y.\n"))
    before = snapshot(study)
    bad = SIMPEVAL.replace("r2,meaning,70,paraphrase", "r2,meaning,70,splitting")
    path = write(tmp_path / "bad.csv", bad)
    with pytest.raises(InputError) as err:
        import_file(study, path)
    message = str(err.value)
    assert str(path) in message and "row 3" in message and "'sentence_type'" in message
    assert "'splitting' here but 'paraphrase' on row 2" in message
    assert snapshot(study) == before
    # An empty cell on one row of an item and a value on another differ too.
    gap = SIMPEVAL.replace("r3,meaning,65,deletion", "r3,meaning,65,")
    with pytest.raises(InputError) as err:
        import_file(study, write(tmp_path / "gap.csv", gap))
    assert "row 6" in str(err.value) and "empty here but 'deletion' on row 5" in str(err.value)
    assert snapshot(study) == before
    study.close()


def test_a_later_file_adds_categories_but_never_changes_one(tmp_path: Path) -> None:
    study = create_study(tmp_path / "s.mbstudy")
    plain = "\n".join(",".join(r.split(",")[:6]) for r in SIMPEVAL.splitlines()) + "\n"
    import_file(study, write(tmp_path / "ratings.csv", plain), dataset="simpeval")
    assert all(v == {} for v in attributes_by_text(study).values())
    types = (
        "source,output,system,sentence_type\n"
        "The cat sat on the mat.,A cat sat.,lens,paraphrase\n"
        "Dogs bark at night.,Dogs bark.,lens,deletion\n"
    )
    report = import_file(study, write(tmp_path / "types.csv", types), dataset="simpeval")
    assert report.items_created == 0 and report.items_given_attributes == 2
    assert not report.nothing_new
    stored = attributes_by_text(study)
    assert stored[("Dogs bark at night.", "Dogs bark.", "lens")] == {"sentence_type": "deletion"}
    assert stored[("Rain fell all day.", "It rained.", "muss")] == {}
    # The same file again adds nothing.
    assert import_file(study, write(tmp_path / "types.csv", types), dataset="simpeval").nothing_new
    before = snapshot(study)
    other = types.replace("deletion", "compression")
    with pytest.raises(InputError) as err:
        import_file(study, write(tmp_path / "other.csv", other), dataset="simpeval")
    assert "row 3" in str(err.value) and "the study has 'deletion'" in str(err.value)
    assert snapshot(study) == before
    study.close()


def test_drop_column(tmp_path: Path) -> None:
    path = write(
        tmp_path / "two.csv",
        "\n".join(line + (",x" if n == 0 else ",1") for n, line in enumerate(SIMPEVAL.splitlines()))
        + "\n",
    )
    study = create_study(tmp_path / "a.mbstudy")
    report = import_file(study, path, drop=["x"])
    assert report.attribute_columns == ["sentence_type"] and report.ignored_columns == ["x"]
    assert {k for v in attributes_by_text(study).values() for k in v} == {"sentence_type"}
    study.close()
    study = create_study(tmp_path / "b.mbstudy")
    report = import_file(study, path, drop=["*"])
    assert report.attribute_columns == [] and set(report.ignored_columns) == {"x", "sentence_type"}
    assert all(v == {} for v in attributes_by_text(study).values())
    with pytest.raises(InputError, match="the import reads that column"):
        import_file(study, path, drop=["rater"])
    with pytest.raises(InputError, match="did you mean 'sentence_type'"):
        import_file(study, path, drop=["sentence_typ"])
    study.close()


def test_a_row_index_column_is_no_category(tmp_path: Path) -> None:
    # A file pandas read and wrote again carries its row index as `Unnamed: 0`; a long
    # file's rows of one item differ in it, and it is no category of the item.
    lines = SIMPEVAL.splitlines()
    text = "\n".join(f"{'Unnamed: 0' if n == 0 else n - 1},{line}" for n, line in enumerate(lines))
    study = create_study(tmp_path / "s.mbstudy")
    report = import_file(study, write(tmp_path / "indexed.csv", text + "\n"))
    assert report.attribute_columns == ["sentence_type"]
    assert report.ignored_columns == ["Unnamed: 0"]
    study.close()


def _read_csv(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh))


@pytest.mark.parametrize("suffix", ["csv", "jsonl"])
def test_export_writes_attributes_and_the_round_trip_keeps_them(tmp_path: Path, suffix) -> None:
    a = create_study(tmp_path / "a.mbstudy")
    # A `system` attribute too (the file's systems are in `model`): the export's own column
    # keeps the name, the attribute's gets a suffix, and the import takes it off again.
    lines = SIMPEVAL.replace("source,output,system,", "source,output,model,").splitlines()
    text = "\n".join(line + (",system" if n == 0 else ",kept") for n, line in enumerate(lines))
    import_file(a, write(tmp_path / "simpeval.csv", text + "\n"), mapping=["system=model"])
    # One of an item's two ratings flagged with a comment: the export's rows of that item
    # differ in them, and they are no category of it.
    with a.session(write=True) as s:
        first = s.scalars(select(Rating).order_by(Rating.id)).first()
        assert first is not None
        first.flagged, first.comment = True, "unsure"
        s.commit()
    out = tmp_path / f"ratings.{suffix}"
    report = export_study(a, out, ratings=True)
    assert "sentence_type" in report.columns and "system (attribute)" in report.columns
    if suffix == "csv":
        table = _read_csv(out)
        by_output = {r["output"]: r for r in table}
        assert by_output["A cat sat."]["sentence_type"] == "paraphrase"
        assert by_output["It rained."]["sentence_type"] == ""
    b = create_study(tmp_path / "b.mbstudy")
    back = import_file(b, out)
    assert back.ignored_columns == ["item_id", "flagged", "comment"]
    assert attributes_by_text(b) == attributes_by_text(a)
    assert attributes_by_text(b)[("Dogs bark at night.", "Dogs bark.", "lens")] == {
        "sentence_type": "deletion",
        "system": "kept",
    }
    # The items export has them too, and importing it does not take its statistics or
    # metric columns for categories.
    items = tmp_path / f"items.{suffix}"
    export_study(a, items)
    c = create_study(tmp_path / "c.mbstudy")
    again = import_file(c, items)
    assert sorted(again.attribute_columns) == ["sentence_type", "system (attribute)"]
    assert attributes_by_text(c) == attributes_by_text(a)
    for study in (a, b, c):
        study.close()


def test_merge_keeps_attributes(tmp_path: Path) -> None:
    lead = create_study(tmp_path / "lead.mbstudy")
    import_file(lead, write(tmp_path / "simpeval.csv", SIMPEVAL), dataset="simpeval")
    lead.close()
    copy_study(tmp_path / "lead.mbstudy", tmp_path / "copy.mbstudy")
    lead, copy = open_study(tmp_path / "lead.mbstudy"), open_study(tmp_path / "copy.mbstudy")
    # The copy gets a new item with its category, a category the lead's item lacks, and a
    # second attribute, `domain`, the lead has never seen.
    extra = (
        "source,output,system,rater,aspect,rating,sentence_type,domain\n"
        "Snow fell.,It snowed.,lens,r9,meaning,50,paraphrase,news\n"
        "Rain fell all day.,It rained.,muss,r9,meaning,40,compression,\n"
        "Dogs bark at night.,Dogs bark.,lens,r9,meaning,55,deletion,wiki\n"
    )
    import_file(copy, write(tmp_path / "extra.csv", extra), dataset="simpeval")
    report = merge_ratings(lead, copy.path)
    assert report.items_added == 1
    stored = attributes_by_text(lead)
    assert stored[("Snow fell.", "It snowed.", "lens")] == {
        "sentence_type": "paraphrase",
        "domain": "news",
    }
    assert stored[("Rain fell all day.", "It rained.", "muss")] == {"sentence_type": "compression"}
    assert stored[("Dogs bark at night.", "Dogs bark.", "lens")] == {
        "sentence_type": "deletion",
        "domain": "wiki",
    }
    assert stored == attributes_by_text(copy)
    listed = {a["name"]: a for a in study_info(lead).attributes}
    assert listed["domain"]["values"] == [
        {"value": "news", "items": 1},
        {"value": "wiki", "items": 1},
    ]
    assert listed["sentence_type"]["items"] == 5
    lead.close()
    copy.close()


def test_parquet_dataset_keeps_attributes(tmp_path: Path) -> None:
    pq = pytest.importorskip("pyarrow.parquet")
    from meaningbench.analysis.dataset_export import RATINGS_FILE, export_dataset

    study = create_study(tmp_path / "s.mbstudy")
    import_file(study, write(tmp_path / "simpeval.csv", SIMPEVAL))
    export_dataset(study, tmp_path / "ds", n_boot=20)
    table = pq.read_table(tmp_path / "ds" / RATINGS_FILE).to_pylist()
    assert len(table) == 6
    for row in table:
        key = (row["source"], row["output"], row["system"])
        expected = attributes_by_text(study)[key].get("sentence_type")
        assert row["attributes"] == {"sentence_type": expected}
    card = (tmp_path / "ds" / "README.md").read_text(encoding="utf-8")
    assert "attributes" in card
    study.close()

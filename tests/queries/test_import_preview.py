"""What the import dialog reads before anything is written, on a real study file."""

from __future__ import annotations

from pathlib import Path

from meaningbench.datasets.importer import import_file
from meaningbench.db.study import DEFAULT_DIMENSIONS
from meaningbench.queries.import_preview import build_preview, known_dimensions, make_mapping
from meaningbench.queries.study import study_counts

WIDE = "source,output,system,annotator,meaning,fluency\nS1.,O1.,a,r1,90,80\nS2.,O2.,a,r1,40,\n"


def test_known_dimensions_are_the_studys(new_study) -> None:
    known = known_dimensions(new_study.path)
    assert list(known) == [
        d["name"] for d in sorted(DEFAULT_DIMENSIONS, key=lambda d: d["position"])
    ]
    assert known_dimensions(None) == {}


def test_the_preview_shows_rows_and_plan_and_writes_nothing(new_study, tmp_path: Path) -> None:
    path = tmp_path / "ratings.csv"
    path.write_text(WIDE, encoding="utf-8")
    preview = build_preview(path, "auto", make_mapping({}, {}), new_study.path)
    assert preview.error is None
    assert preview.columns == ["source", "output", "system", "annotator", "meaning", "fluency"]
    assert preview.rows == [
        ["S1.", "O1.", "a", "r1", "90", "80"],
        ["S2.", "O2.", "a", "r1", "40", ""],
    ]
    assert preview.row_numbers == [2, 3] and preview.container == "csv"
    assert preview.rating_kind == "named"
    assert study_counts(new_study).items == 0  # a preview never writes
    # The import then does what the preview said: two items, three ratings.
    import_file(new_study, path, dataset="d")
    counts = study_counts(new_study)
    assert (counts.items, counts.ratings) == (2, 3)


def test_a_bad_file_is_a_message_in_the_preview_not_an_exception(new_study, tmp_path) -> None:
    path = tmp_path / "no-source.csv"
    path.write_text("output,meaning\nO1.,90\n", encoding="utf-8")
    preview = build_preview(path, "auto", make_mapping({}, {}), new_study.path)
    assert preview.error is not None and "source" in str(preview.error)

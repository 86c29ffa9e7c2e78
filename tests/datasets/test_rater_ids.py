"""Rater ids across files: an id already in the study from another file is refused until
the user says whether it is the same person (--same-raters) or another (--rater-prefix)."""

from __future__ import annotations

from pathlib import Path

from meaningbench.cli import main
from meaningbench.datasets.importer import import_file
from meaningbench.db.study import create_study
from tests.datasets.helpers import refused_unchanged, rows, write

FIRST = "source,output,annotator,meaning\nS1.,O1.,0,70\nS1.,O1.,1,60\nS2.,O2.,0,40\n"
SECOND = "source,output,annotator,meaning\nT1.,P1.,0,90\nT1.,P1.,7,20\n"


def _study(tmp_path: Path) -> Path:
    path = tmp_path / "s.mbstudy"
    study = create_study(path)
    import_file(study, write(tmp_path / "simpda.csv", FIRST))
    study.close()
    return path


def _raters(study_path: Path) -> list[tuple[str, int]]:
    from meaningbench.db.study import open_study

    study = open_study(study_path)
    try:
        return rows(
            study,
            "SELECT a.name, COUNT(r.id) FROM annotator a JOIN rating r ON r.annotator_id = a.id "
            "WHERE a.kind = 'named' GROUP BY a.name ORDER BY a.name",
        )
    finally:
        study.close()


def test_a_rater_id_from_another_file_is_refused_and_nothing_changes(tmp_path: Path) -> None:
    path = _study(tmp_path)
    second = write(tmp_path / "asset.csv", SECOND)
    err = refused_unchanged(path, lambda s: import_file(s, second))
    text = str(err)
    assert err.file == str(second)
    assert "1 rater of this file (0) already rated in the study, imported from simpda.csv" in text
    assert "--same-raters" in text and "--rater-prefix asset: makes asset:0" in text


def test_the_same_people_or_their_own_ids(tmp_path: Path) -> None:
    path = _study(tmp_path)
    second = write(tmp_path / "asset.csv", SECOND)
    assert main(["import", str(path), str(second), "--rater-prefix", "asset:"]) == 0
    assert _raters(path) == [("0", 2), ("1", 1), ("asset:0", 1), ("asset:7", 1)]
    again = tmp_path / "again.mbstudy"
    assert main(["import", str(again), str(tmp_path / "simpda.csv")]) == 0
    assert main(["import", str(again), str(second), "--same-raters"]) == 0
    assert _raters(again) == [("0", 3), ("1", 1), ("7", 1)]


def test_the_same_file_again_and_new_raters_are_not_refused(tmp_path: Path) -> None:
    path = _study(tmp_path)
    assert main(["import", str(path), str(tmp_path / "simpda.csv")]) == 0  # nothing new
    new = write(tmp_path / "new.csv", "source,output,annotator,meaning\nU.,Q.,9,50\n")
    assert main(["import", str(path), str(new)]) == 0
    assert _raters(path) == [("0", 2), ("1", 1), ("9", 1)]

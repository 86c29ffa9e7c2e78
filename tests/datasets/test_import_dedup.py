"""Duplicates are reported and imported once; importing a file twice adds nothing."""

from __future__ import annotations

from pathlib import Path

from app.datasets.importer import import_file
from tests.datasets.helpers import count, rows, snapshot, write

WIDE = (
    "source,output,system,annotator,meaning,fluency\n"
    "S1.,O1.,a,r1,80,90\n"
    "S1.,O1.,a,r2,70,60\n"
    "S1.,O1.,a,r1,80,90\n"  # an exact duplicate of row 2
    "S2.,O2.,b,r1,10,20\n"
)


def test_exact_duplicate_rows_are_counted_not_doubled(new_study, tmp_path: Path) -> None:
    report = import_file(new_study, write(tmp_path / "w.csv", WIDE))
    assert report.rows_read == 4
    assert report.duplicate_rows == 1 and report.duplicate_ratings == 2
    assert (report.items_created, report.ratings_added) == (2, 6)
    assert count(new_study, "SELECT COUNT(*) FROM rating") == 6
    assert any("row 4 repeats an earlier row" in w for w in report.warnings)


def test_duplicate_pair_rows_without_ratings(new_study, tmp_path: Path) -> None:
    f = write(tmp_path / "p.csv", "source,output\nS.,O.\nS.,O.\nS.,  O.\n")
    report = import_file(new_study, f)
    # Whitespace differences do not make a new item (keys normalise whitespace).
    assert (report.items_created, report.duplicate_rows) == (1, 2)


def test_same_file_twice_into_one_dataset_adds_nothing(new_study, tmp_path: Path) -> None:
    f = write(tmp_path / "w.csv", WIDE)
    import_file(new_study, f)
    before = snapshot(new_study)
    again = import_file(new_study, f)
    assert snapshot(new_study) == before
    assert (again.items_created, again.items_existing) == (0, 2)
    assert (again.ratings_added, again.ratings_existing) == (0, 6)
    assert again.nothing_new and any("nothing new" in w for w in again.warnings)


def test_same_file_into_another_dataset_makes_new_items(new_study, tmp_path: Path) -> None:
    f = write(tmp_path / "w.csv", WIDE)
    import_file(new_study, f)
    other = import_file(new_study, f, dataset="copy")
    assert (other.items_created, other.ratings_added) == (2, 6)
    assert count(new_study, "SELECT COUNT(*) FROM item") == 4


def test_reimport_adds_only_what_is_new(new_study, tmp_path: Path) -> None:
    import_file(new_study, write(tmp_path / "w.csv", WIDE))
    more = WIDE + "S1.,O1.,a,r3,75,75\nS3.,O3.,a,r1,50,50\n"
    report = import_file(new_study, write(tmp_path / "w.csv", more))
    assert (report.items_created, report.items_existing) == (1, 2)
    assert (report.ratings_added, report.ratings_existing) == (4, 6)
    assert count(new_study, "SELECT COUNT(*) FROM rating") == 10


def test_conflicting_labels_for_one_pair_are_both_kept_and_reported(
    new_study, tmp_path: Path
) -> None:
    f = write(tmp_path / "c.tsv", "original\tsimplification\tlabel\nS.\tO.\t10\nS.\tO.\t80\n")
    report = import_file(new_study, f)
    assert (report.items_created, report.ratings_added, report.conflicting_ratings) == (1, 2, 1)
    assert sorted(v for (v,) in rows(new_study, "SELECT value FROM rating")) == [10.0, 80.0]


def test_references_conflict_keeps_the_first(new_study, tmp_path: Path) -> None:
    f = write(
        tmp_path / "r.csv",
        "source,output,annotator,meaning,reference\nS.,O.,a,5,R1.\nS.,O.,b,6,R2.\n",
    )
    report = import_file(new_study, f)
    assert rows(new_study, "SELECT refs FROM item") == [('["R1."]',)]
    assert any("references differ" in w for w in report.warnings)


def test_kind_is_part_of_the_item_key(new_study, tmp_path: Path) -> None:
    f = write(tmp_path / "k.csv", "source,output,kind\nS.,O.,regular\nS.,O.,control-repeat\n")
    assert import_file(new_study, f).items_created == 2

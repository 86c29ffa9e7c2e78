"""Every rating row is stored once: identical rows are all kept, a re-import adds nothing."""

from __future__ import annotations

from pathlib import Path

from meaningbench.datasets.importer import import_file
from tests.datasets.helpers import count, rows, snapshot, write

WIDE = (
    "source,output,system,annotator,meaning,fluency\n"
    "S1.,O1.,a,r1,80,90\n"
    "S1.,O1.,a,r2,70,60\n"
    "S1.,O1.,a,r1,80,90\n"  # the same rater's same ratings again: a repeated rating
    "S2.,O2.,b,r1,10,20\n"
)


def test_identical_rows_are_all_kept_and_reported_as_repeats(new_study, tmp_path: Path) -> None:
    report = import_file(new_study, write(tmp_path / "w.csv", WIDE))
    assert report.rows_read == 4
    assert (report.items_created, report.ratings_read, report.ratings_added) == (2, 8, 8)
    assert report.repeated_ratings == 2  # r1's second meaning and fluency of S1/O1
    assert count(new_study, "SELECT COUNT(*) FROM rating") == 8
    assert any("row 4: r1 rated this item's meaning again" in w for w in report.warnings)
    [named] = report.sources
    assert (named.kind, named.rating_rows, named.stored, named.raters) == ("named", 8, 8, 2)


def test_identical_anonymous_rows_are_two_people(new_study, tmp_path: Path) -> None:
    f = write(
        tmp_path / "q.csv",
        "source,output,aspect,rating\nS.,O.,meaning,80\nS.,O.,meaning,80\nS.,O.,meaning,20\n",
    )
    report = import_file(new_study, f)
    assert (report.rating_kind, report.ratings_added, report.repeated_ratings) == (
        "anonymous",
        3,
        0,
    )
    got = rows(
        new_study,
        "SELECT a.name, a.kind, r.value FROM rating r JOIN annotator a ON a.id = r.annotator_id "
        "ORDER BY r.id",
    )
    assert got == [("anonymous:q", "anonymous", v) for v in (80.0, 80.0, 20.0)]


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
    assert (again.ratings_read, again.ratings_added, again.ratings_existing) == (8, 0, 8)
    assert again.nothing_new and any("nothing new" in w for w in again.warnings)


def test_same_file_into_another_dataset_makes_new_items(new_study, tmp_path: Path) -> None:
    f = write(tmp_path / "w.csv", WIDE)
    import_file(new_study, f)
    other = import_file(new_study, f, dataset="copy")
    assert (other.items_created, other.ratings_added) == (2, 8)
    assert count(new_study, "SELECT COUNT(*) FROM item") == 4


def test_reimport_adds_only_the_rows_appended(new_study, tmp_path: Path) -> None:
    import_file(new_study, write(tmp_path / "w.csv", WIDE))
    # Appended: a third identical r1 row (one more repeat) and two new ratings rows.
    more = WIDE + "S1.,O1.,a,r1,80,90\nS1.,O1.,a,r3,75,75\nS3.,O3.,a,r1,50,50\n"
    report = import_file(new_study, write(tmp_path / "w.csv", more))
    assert (report.items_created, report.items_existing) == (1, 2)
    assert (report.ratings_added, report.ratings_existing) == (6, 8)
    assert count(new_study, "SELECT COUNT(*) FROM rating") == 14


def test_conflicting_labels_for_one_pair_are_both_kept_and_reported(
    new_study, tmp_path: Path
) -> None:
    f = write(
        tmp_path / "c.tsv",
        "original\tsimplification\tlabel\nS.\tO.\t10\nS.\tO.\t80\nT.\tP.\t50\n",
    )
    report = import_file(new_study, f)
    assert (report.items_created, report.ratings_added, report.conflicting_ratings) == (2, 3, 1)
    assert sorted(v for (v,) in rows(new_study, "SELECT value FROM rating")) == [10.0, 50.0, 80.0]


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

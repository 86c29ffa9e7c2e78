"""Merging another copy's ratings: added, duplicates left out, conflicts kept as history."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import select

from meaningbench.annotation.merge import merge_ratings
from meaningbench.annotation.session import AnnotationSession
from meaningbench.annotation.settings import load_settings, save_settings
from meaningbench.db.models import Annotator, Item, ItemNote, QueueEntry, Rating
from meaningbench.db.study import Study, copy_study, create_study, open_study
from meaningbench.errors import UserError
from tests.annotation.factories import add_items


@pytest.fixture
def pair(tmp_path: Path):
    """Two copies of one study (the lead's and an annotator's), with QC items on."""
    a = create_study(tmp_path / "lead.mbstudy")
    add_items(a, 10, 2)
    with a.session() as s:
        cfg = load_settings(s)
        cfg.seed = 3
        save_settings(s, cfg)
    a.close()
    copy_study(tmp_path / "lead.mbstudy", tmp_path / "copy.mbstudy")
    a = open_study(tmp_path / "lead.mbstudy")
    b = open_study(tmp_path / "copy.mbstudy")
    yield a, b
    a.close()
    b.close()


def _rate_all(study: Study, name: str, value: float, limit: int | None = None) -> list[int]:
    sess = AnnotationSession(study, name)
    done = []
    while (item := sess.current()) is not None and (limit is None or len(done) < limit):
        sess.submit(item.item_id, {"meaning": value})
        sess.advance()
        done.append(item.item_id)
    return done


def _current(study: Study) -> dict[tuple[str, str, str], float]:
    """(pair key, item kind, annotator) → current value, comparable across files."""
    with study.session() as s:
        rows = s.execute(
            select(Item.pair_key, Item.kind, Annotator.name, Rating.value)
            .join(Item, Item.id == Rating.item_id)
            .join(Annotator, Annotator.id == Rating.annotator_id)
            .where(Rating.state == "current")
        ).all()
    return {(k, kind, name): v for k, kind, name, v in rows}


def _control_keys(study: Study) -> set[str]:
    with study.session() as s:
        return set(s.scalars(select(Item.pair_key).where(Item.kind != "regular")))


def test_another_annotators_ratings_come_in(pair) -> None:
    a, b = pair
    _rate_all(a, "alice", 40)
    _rate_all(b, "bob", 60)  # bob's queue and its controls were built in the copy
    expected = _current(a) | _current(b)
    keys_here = _control_keys(a)
    bobs_new_controls = _control_keys(b) - keys_here
    report = merge_ratings(a, b.path)
    assert report.annotators_added == ["bob"]
    assert report.ratings_added == len(_current(b))
    assert report.conflicts == [] and report.duplicates == 0
    assert _current(a) == expected
    with a.session() as s:
        origins = set(
            s.scalars(select(Rating.origin).join(Annotator).where(Annotator.name == "bob"))
        )
        controls = s.scalars(select(Item).where(Item.kind != "regular")).all()
        assert all(c.parent_id is not None for c in controls)
    # Controls drawn for bob in the copy that alice's queue here did not have come in;
    # the ones both copies share are matched.
    assert report.items_added == len(bobs_new_controls) > 0
    assert _control_keys(a) == keys_here | bobs_new_controls
    assert origins == {"merge:copy.mbstudy"}


def test_merging_twice_changes_nothing(pair) -> None:
    a, b = pair
    _rate_all(b, "bob", 60, limit=5)
    first = merge_ratings(a, b.path)
    n = len(_current(a))
    again = merge_ratings(a, b.path)
    assert first.ratings_added == 5
    assert again.ratings_added == 0 and again.duplicates == 5
    assert len(_current(a)) == n


def test_a_conflict_never_overwrites(pair) -> None:
    a, b = pair
    ours = _rate_all(a, "alice", 30, limit=3)
    theirs = _rate_all(b, "alice", 70, limit=3)
    assert ours == theirs  # the same queue in both copies
    report = merge_ratings(a, b.path)
    assert len(report.conflicts) == 3
    assert {(c.ours, c.theirs, c.annotator, c.dimension) for c in report.conflicts} == {
        (30.0, 70.0, "alice", "meaning")
    }
    with a.session() as s:
        rows = s.scalars(select(Rating).where(Rating.item_id == ours[0]).order_by(Rating.id)).all()
    assert [(r.value, r.state, r.origin) for r in rows] == [
        (30.0, "current", "ui"),
        (70.0, "superseded", "merge-conflict:copy.mbstudy"),
    ]


def test_history_and_notes_come_along(pair) -> None:
    a, b = pair
    sess = AnnotationSession(b, "bob")
    item = sess.current().item_id
    sess.flag(item, "odd output")
    sess.submit(item, {"meaning": 20})
    sess.previous()
    sess.submit(item, {"meaning": 25})
    report = merge_ratings(a, b.path)
    assert report.ratings_added == 2 and report.notes_added == 1
    with a.session() as s:
        old, new = s.scalars(select(Rating).order_by(Rating.id)).all()
        note = s.scalar(select(ItemNote))
    assert (old.state, new.state, new.supersedes_id) == ("superseded", "current", old.id)
    assert note.comment == "odd output" and note.flagged


def test_items_only_the_other_copy_has_are_added(pair) -> None:
    a, b = pair
    extra = add_items(b, 2, 1, dataset="late", seed=99)
    with b.session() as s:
        cfg = load_settings(s)
        cfg.qc_enabled = False
        save_settings(s, cfg)
    sess = AnnotationSession(b, "carol")
    for item_id in extra:
        sess.submit(item_id, {"meaning": 50})
    report = merge_ratings(a, b.path)
    assert report.items_added == 2 and report.ratings_added == 2
    with a.session() as s:
        added = s.scalars(select(Item).where(Item.source.contains("(late 99"))).all()
        assert {i.dataset.name for i in added} == {"late"} and len(added) == 2


def test_queues_here_count_merged_ratings_as_done(pair) -> None:
    a, b = pair
    AnnotationSession(a, "bob")  # bob has a queue in the lead's copy too
    rated = _rate_all(b, "bob", 55, limit=4)
    merge_ratings(a, b.path)
    with a.session() as s:
        done = set(
            s.scalars(
                select(QueueEntry.item_id)
                .join(Annotator, Annotator.id == QueueEntry.annotator_id)
                .where(Annotator.name == "bob", QueueEntry.done.is_(True))
            )
        )
    assert len(done) == len(rated)
    assert AnnotationSession(a, "bob").progress().rated == 4


def test_bad_targets_are_user_errors(pair, tmp_path: Path) -> None:
    a, _ = pair
    with pytest.raises(UserError, match="itself"):
        merge_ratings(a, a.path)
    junk = tmp_path / "junk.mbstudy"
    junk.write_text("not a database")
    with pytest.raises(UserError, match="not a MeaningBench study"):
        merge_ratings(a, junk)
    with pytest.raises(UserError, match="no such"):
        merge_ratings(a, tmp_path / "missing.mbstudy")


def test_other_file_is_left_untouched(pair) -> None:
    a, b = pair
    _rate_all(b, "bob", 60, limit=2)
    b.close()
    before = b.path.read_bytes()
    merge_ratings(a, b.path)
    assert b.path.read_bytes() == before


def test_merge_command_reports_conflicts_and_exit_codes(pair, capsys) -> None:
    import json

    from meaningbench.cli import main

    a, b = pair
    _rate_all(a, "alice", 30, limit=2)
    _rate_all(b, "alice", 70, limit=2)
    _rate_all(b, "bob", 55, limit=1)
    a_path, b_path = a.path, b.path
    a.close()
    b.close()
    assert main(["merge", str(a_path), str(b_path), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert len(report["conflicts"]) == 2
    assert report["annotators_added"] == ["bob"]
    merged = open_study(a_path)
    current = _current(merged)
    merged.close()
    assert sorted(v for (_, _, who), v in current.items() if who == "bob") == [55.0]
    assert sorted(v for (_, _, who), v in current.items() if who == "alice") == [30.0, 30.0]
    assert main(["merge", str(a_path), str(a_path)]) == 2
    assert "cannot be merged into itself" in capsys.readouterr().err
    assert main(["merge", str(a_path), str(a_path.with_name("nope.mbstudy"))]) == 2


def test_merged_ratings_name_the_copy_they_came_from(pair, tmp_path: Path) -> None:
    from meaningbench.datasets.importer import import_file

    a, b = pair
    _rate_all(b, "bob", 60, limit=1)
    pairs = "source,output,annotator,meaning\nA merged source.,A merged output.,carol,40\n"
    (tmp_path / "b.csv").write_text(pairs, encoding="utf-8")
    import_file(b, tmp_path / "b.csv")
    _rate_all(a, "bob", 20, limit=1)  # the same item, another value: a conflict
    merge_ratings(a, b.path)
    with a.session() as s:
        origins = dict(
            s.execute(
                select(Annotator.name, Rating.origin)
                .join(Annotator, Annotator.id == Rating.annotator_id)
                .where(Annotator.name == "carol")
            ).all()
        )
        bob = s.execute(
            select(Rating.state, Rating.origin)
            .join(Annotator, Annotator.id == Rating.annotator_id)
            .where(Annotator.name == "bob")
            .order_by(Rating.id)
        ).all()
    assert origins == {"carol": "merge:copy.mbstudy"}
    assert [tuple(r) for r in bob] == [
        ("current", "ui"),
        ("superseded", "merge-conflict:copy.mbstudy"),
    ]


@pytest.mark.parametrize(
    ("revision", "advice"),
    [
        ("9999", "written by a newer MeaningBench (schema 9999; this one knows schemas up to"),
        ("0001", "written by an older MeaningBench (schema 0001, this one has"),
    ],
)
def test_another_schema_is_explained(pair, capsys, revision: str, advice: str) -> None:
    import sqlite3

    from meaningbench.cli import main

    a, b = pair
    a_path, b_path = a.path, b.path
    a.close()
    b.close()
    conn = sqlite3.connect(b_path)
    conn.execute("UPDATE alembic_version SET version_num = ?", (revision,))
    conn.commit()
    conn.close()
    before = a_path.read_bytes()
    assert main(["merge", str(a_path), str(b_path)]) == 2
    err = capsys.readouterr().err
    assert advice in err and "Traceback" not in err
    if revision == "9999":
        assert "Update MeaningBench to merge that copy" in err
        assert "open it once in this version" not in err
    else:
        assert "open that copy once in this MeaningBench, which upgrades it" in err
    assert a_path.read_bytes() == before

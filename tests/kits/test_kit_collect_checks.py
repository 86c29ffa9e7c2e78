"""`collect` on edited, forged and malformed kits: each refused by name, nothing of it merged,
the kits beside it collected; the kits folder only read; the report's counts the rows written."""

from __future__ import annotations

import hashlib
import json
import shutil
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest
from sqlalchemy import func, select

from meaningbench.cli import main
from meaningbench.db.models import Item, Rating
from meaningbench.db.study import copy_study, open_study
from meaningbench.kits.record import kit_records, store_records
from tests.kits.campaign_helpers import (
    FORGE_FIRST_RATING,
    held_in_kit,
    held_ratings,
    lead_keys,
    lead_study,
    rate_kit,
)


def _kits(tmp_path: Path, raters: str = "ana,ben", rated: int = 4) -> tuple[Path, Path]:
    """The lead's study and a folder of returned kits (sent back: one whole file each)."""
    lead = tmp_path / "lead.mbstudy"
    lead_study(lead, seed=1, n_sources=8).close()
    made = tmp_path / "made"
    assert main(["kit", str(lead), "--raters", raters, "--out", str(made)]) == 0
    back = tmp_path / "back"
    back.mkdir()
    for name in raters.split(","):
        rate_kit(made / f"{name}.mbkit", name, rated)
        copy_study(made / f"{name}.mbkit", back / f"{name}.mbkit")
    return lead, back


def _sql(path: Path, *statements: str) -> None:
    """Edit a kit as anyone could, with SQLite alone (foreign keys unchecked, as sqlite3's)."""
    conn = sqlite3.connect(str(path))
    with conn:
        for statement in statements:
            conn.execute(statement)
    conn.close()


def _collect(lead: Path, folder: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(["collect", str(lead), str(folder)])
    got = capsys.readouterr()
    return code, got.out, got.err


def _merged_of(lead: Path) -> dict[str, int]:
    """Rating rows the lead holds from each kit file."""
    study = open_study(lead)
    try:
        with study.session() as s:
            rows = s.execute(select(Rating.origin, func.count()).group_by(Rating.origin)).all()
    finally:
        study.close()
    return {origin.split(":", 1)[1]: n for origin, n in rows if origin.startswith("merge")}


FORGERIES = {
    "a value edited": (FORGE_FIRST_RATING,),
    "a time edited": (
        "UPDATE rating SET submitted_at = '2020-01-01 00:00:00.000000' "
        "WHERE id = (SELECT MIN(id) FROM rating)",
    ),
    "a rating deleted": ("DELETE FROM rating WHERE id = (SELECT MAX(id) FROM rating)",),
    "a rating added": (
        "INSERT INTO rating (item_id, annotator_id, dimension_id, value, submitted_at, "
        "flagged, state, origin) SELECT item_id, annotator_id, dimension_id, 12, "
        "submitted_at, 0, 'superseded', 'ui' FROM rating LIMIT 1",
    ),
    "the log cut short": (
        "DELETE FROM study_setting WHERE key = "
        "(SELECT MAX(key) FROM study_setting WHERE key LIKE 'kit_log/%')",
    ),
    "the log removed": ("DELETE FROM study_setting WHERE key LIKE 'kit_log%'",),
    "an event edited to match": (
        FORGE_FIRST_RATING,
        "UPDATE study_setting SET value = replace(value, "
        "(SELECT json_extract(value, '$.rows.ratings[0][3]') FROM study_setting "
        "WHERE key = 'kit_log/00000001'), "
        "(SELECT CAST(value AS INTEGER) FROM rating WHERE id = (SELECT MIN(id) FROM rating))) "
        "WHERE key = 'kit_log/00000001'",
    ),
}


@pytest.mark.parametrize("how", sorted(FORGERIES))
def test_a_kit_edited_with_sqlite_is_refused_by_name_and_the_others_collected(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], how: str
) -> None:
    lead, back = _kits(tmp_path)
    _sql(back / "ana.mbkit", *FORGERIES[how])
    code, out, err = _collect(lead, back, capsys)
    assert code == 1, (out, err)
    assert "ana.mbkit: the kit was changed outside MeaningBench" in err, err
    assert "nothing was merged" in err
    assert _merged_of(lead) == {"ben.mbkit": 4}
    assert "1 kit collected (4 new ratings), 1 refused" in out


def test_a_forged_value_is_refused_where_the_genuine_kit_came_in_before(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lead, back = _kits(tmp_path, raters="ana")
    assert _collect(lead, back, capsys)[0] == 0
    before = _held(lead)
    _sql(back / "ana.mbkit", FORGERIES["a value edited"][0])
    code, _out, err = _collect(lead, back, capsys)
    assert code == 1 and "ana.mbkit: the kit was changed outside MeaningBench" in err
    assert _held(lead) == before  # no conflict row, no value of the forger's


def _held(lead: Path) -> tuple[dict[tuple[str, str, str], float], int]:
    study = open_study(lead)
    try:
        return held_ratings(study)
    finally:
        study.close()


def _without_log(lead: Path, kit: Path) -> None:
    """The kit and its record as a kit made before kits kept a log."""
    _sql(kit, "DELETE FROM study_setting WHERE key LIKE 'kit_log%'")
    study = open_study(lead)
    try:
        with study.session(write=True) as s:
            records = kit_records(s)
            for record in records.values():
                record.log_key = None
            store_records(s, records)
    finally:
        study.close()


def test_a_kit_made_before_the_log_is_collected_with_a_warning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lead, back = _kits(tmp_path, raters="ana")
    _without_log(lead, back / "ana.mbkit")
    code, out, err = _collect(lead, back, capsys)
    assert code == 0, err
    assert "ana.mbkit (ana): made before kits kept a sealed log" in err
    assert "could not be checked for edits" in err
    assert "ana.mbkit (ana): 4 new ratings" in out


@pytest.mark.parametrize("value", ["150", "-1e9", "'forty'"])
def test_a_value_the_leads_scale_refuses_is_refused_even_without_a_log(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], value: str
) -> None:
    lead, back = _kits(tmp_path)
    _without_log(lead, back / "ana.mbkit")
    _sql(
        back / "ana.mbkit",
        f"UPDATE rating SET value = {value} WHERE id = (SELECT MIN(id) FROM rating)",
    )
    code, _out, err = _collect(lead, back, capsys)
    assert code == 1
    assert "ana.mbkit: rating " in err and "nothing was merged" in err
    assert ("outside meaning's scale 0–100" in err) or ("not a number" in err), err
    assert _merged_of(lead) == {"ben.mbkit": 4}


def test_item_attributes_edited_in_a_kit_never_reach_the_leads_items(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lead, back = _kits(tmp_path, raters="ana")
    _sql(
        back / "ana.mbkit",
        "UPDATE item SET meta = json_set(meta, '$.attributes', json_object('gold', 'yes'))",
    )
    assert _collect(lead, back, capsys)[0] == 0
    study = open_study(lead)
    try:
        with study.session() as s:
            metas = s.scalars(select(Item.meta)).all()
    finally:
        study.close()
    assert not any("gold" in json.dumps(m or {}) for m in metas)


def _foreign_wal(kit: Path, other: Path) -> None:
    """Beside `kit`, the -wal of another kit that is open and being written."""
    scratch = other.with_name("scratch.db")
    shutil.copyfile(other, scratch)
    conn = sqlite3.connect(str(scratch))
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA wal_autocheckpoint=0")
    with conn:
        conn.execute("UPDATE rating SET value = 1")
    shutil.copyfile(f"{scratch}-wal", f"{kit}-wal")
    conn.close()
    scratch.unlink()


def _damaged_page(kit: Path) -> None:
    data = bytearray(kit.read_bytes())
    page = int.from_bytes(data[16:18], "big") or 65536
    middle = len(data) // page // 2 * page  # a page of the tables, not the header
    data[middle : middle + page] = b"\xff" * page
    kit.write_bytes(bytes(data))


def _truncated(kit: Path) -> None:
    data = kit.read_bytes()
    kit.write_bytes(data[: len(data) // 2])


MALFORMED: dict[str, Callable[[Path, Path], None]] = {
    "a missing annotator": lambda k, _o: _sql(k, "UPDATE rating SET annotator_id = 999"),
    "a missing item": lambda k, _o: _sql(
        k, "UPDATE rating SET item_id = 9999 WHERE id = (SELECT MIN(id) FROM rating)"
    ),
    "a missing dimension": lambda k, _o: _sql(k, "UPDATE rating SET dimension_id = 77"),
    "a text value": lambda k, _o: _sql(k, "UPDATE rating SET value = 'high'"),
    "a damaged page": lambda k, _o: _damaged_page(k),
    "another kit's -wal": _foreign_wal,
    "a truncated file": lambda k, _o: _truncated(k),
}


@pytest.mark.parametrize("how", sorted(MALFORMED))
def test_a_malformed_kit_is_refused_by_name_and_the_kits_after_it_collected(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], how: str
) -> None:
    lead, back = _kits(tmp_path)
    # ana.mbkit sorts first: the kit after it must still come in.
    MALFORMED[how](back / "ana.mbkit", back / "ben.mbkit")
    code, out, err = _collect(lead, back, capsys)
    assert "Traceback" not in err
    assert code == 1, (out, err)
    refusals = [line for line in err.splitlines() if line.startswith("refused: ")]
    assert len(refusals) == 1 and f"{back / 'ana.mbkit'}: " in refusals[0], err
    assert "nothing was merged" in refusals[0]
    assert _merged_of(lead) == {"ben.mbkit": 4}


def _digests(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir())}


def test_collect_leaves_the_kits_folder_byte_for_byte_as_it_was(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lead, back = _kits(tmp_path)
    made = tmp_path / "made"  # the kits as the raters left them, not sent back
    before, before_made = _digests(back), _digests(made)
    assert _collect(lead, back, capsys)[0] == 0
    assert _collect(lead, made, capsys)[0] == 0
    assert _digests(back) == before
    assert _digests(made) == before_made


def test_the_counts_are_the_rows_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from meaningbench.annotation.session import AnnotationSession

    lead, back = _kits(tmp_path, raters="ana", rated=3)
    kit = open_study(tmp_path / "made" / "ana.mbkit")
    try:
        session = AnnotationSession(kit, "ana")
        first = session.previous()
        assert first is not None
        session.submit(first.item_id, {"meaning": 7.0})  # a revision: one earlier value
    finally:
        kit.close()
    copy_study(tmp_path / "made" / "ana.mbkit", back / "ana.mbkit")
    before, rows_before = _held(lead)
    code, out, _err = _collect(lead, back, capsys)
    after, rows_after = _held(lead)
    assert code == 0
    assert len(after) - len(before) == 3 and rows_after - rows_before == 4
    assert "ana.mbkit (ana): 3 new ratings, 1 earlier value kept as history" in out
    assert "1 kit collected (3 new ratings), 0 refused" in out


def test_a_conflict_is_no_new_rating(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lead, back = _kits(tmp_path, raters="ana", rated=2)
    assert _collect(lead, back, capsys)[0] == 0
    # The lead's copy of one of ana's ratings now differs from the kit's: a conflict.
    _sql(
        lead,
        "UPDATE rating SET value = value + 1 WHERE id = "
        "(SELECT MIN(id) FROM rating WHERE origin LIKE 'merge:%')",
    )
    before, rows_before = _held(lead)
    code, out, _err = _collect(lead, back, capsys)
    after, rows_after = _held(lead)
    assert code == 0
    assert after == before and rows_after == rows_before + 1
    assert "ana.mbkit (ana): 0 new ratings, 1 conflict kept as history, 1 already here" in out


def test_collecting_unchanged_kits_again_records_no_new_return(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lead, back = _kits(tmp_path, raters="ana")
    assert _collect(lead, back, capsys)[0] == 0
    code, out, _err = _collect(lead, back, capsys)
    assert code == 0 and "ana.mbkit (ana): 0 new ratings, 4 already here" in out
    study = open_study(lead)
    try:
        with study.session() as s:
            assert [len(r.returns) for r in kit_records(s).values()] == [1]
    finally:
        study.close()


def test_a_span_that_does_not_fit_its_item_is_refused_even_without_a_log(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from meaningbench.annotation.session import AnnotationSession
    from meaningbench.annotation.settings import load_settings, save_settings
    from meaningbench.annotation.spans import make_span

    lead = tmp_path / "lead.mbstudy"
    study = lead_study(lead, seed=1, n_sources=8)
    with study.session(write=True) as s:
        cfg = load_settings(s)
        cfg.protocol = "esa"
        save_settings(s, cfg)
    study.close()
    made, back = tmp_path / "made", tmp_path / "back"
    assert main(["kit", str(lead), "--raters", "ana", "--out", str(made)]) == 0
    kit = open_study(made / "ana.mbkit")
    try:
        session = AnnotationSession(kit, "ana")
        shown = session.current()
        assert shown is not None
        span = make_span("output", shown.output, 0, shown.output.index(" "), "minor")
        session.submit(shown.item_id, {"meaning": 40.0}, spans=(span,))
    finally:
        kit.close()
    back.mkdir()
    copy_study(made / "ana.mbkit", back / "ana.mbkit")
    _without_log(lead, back / "ana.mbkit")
    _sql(back / "ana.mbkit", 'UPDATE rating_span SET "end" = 100000')
    code, _out, err = _collect(lead, back, capsys)
    assert code == 1
    assert "ana.mbkit: a span of rating 1: offsets 0–100000 do not fit the output" in err, err
    assert _merged_of(lead) == {}


def test_a_kit_worked_every_way_the_screen_allows_is_collected(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Skips, undos, revisions and flags are all in the log: the genuine kit comes in."""
    from meaningbench.annotation.session import AnnotationSession

    lead, back = _kits(tmp_path, raters="ana", rated=0)
    kit = open_study(tmp_path / "made" / "ana.mbkit")
    try:
        session = AnnotationSession(kit, "ana")
        skipped = session.current()
        assert skipped is not None and session.skip(skipped.item_id)  # never rated
        for value in (10.0, 20.0, 30.0):
            shown = session.current()
            assert shown is not None
            session.submit(shown.item_id, {"meaning": value})
            session.advance()
        session.undo_last()  # the third rating withdrawn
        revised = session.previous()
        assert revised is not None
        session.submit(revised.item_id, {"meaning": 25.0})
        session.flag(revised.item_id, "two readings")
    finally:
        kit.close()
    copy_study(tmp_path / "made" / "ana.mbkit", back / "ana.mbkit")
    code, out, err = _collect(lead, back, capsys)
    assert code == 0, err
    assert "ana.mbkit (ana): 2 new ratings, 2 earlier values kept as history, 1 note" in out


def test_a_revision_and_an_undo_after_a_collect_come_in_as_the_rater_left_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A kit collected mid-way, then worked on: the rater's revision is the rating in force
    at the lead's (not a conflict beside the old value), and their undo withdraws it there."""
    from meaningbench.annotation.session import AnnotationSession

    lead, back = _kits(tmp_path, raters="ana", rated=3)
    assert _collect(lead, back, capsys)[0] == 0
    made = tmp_path / "made" / "ana.mbkit"
    kit = open_study(made)
    try:
        session = AnnotationSession(kit, "ana")
        session.undo_last()  # the third rating withdrawn
        revised = session.previous()
        assert revised is not None
        session.submit(revised.item_id, {"meaning": 66.0})
    finally:
        kit.close()
    copy_study(made, back / "ana.mbkit")
    code, out, err = _collect(lead, back, capsys)
    assert code == 0, err
    assert "ana.mbkit (ana): 1 new rating, 2 ratings since revised or undone" in out, out
    kit_held = held_in_kit(back / "ana.mbkit", lead)
    assert 66.0 in kit_held.values() and len(kit_held) == 2
    assert _held(lead)[0] == kit_held
    study = open_study(lead)
    try:
        with study.session() as s:
            per_key = s.execute(
                select(func.count())
                .select_from(Rating)
                .where(Rating.state == "current", Rating.origin.like("merge%"))
                .group_by(Rating.item_id, Rating.annotator_id, Rating.dimension_id)
            ).scalars()
            assert set(per_key) == {1}
            assert [len(r.returns) for r in kit_records(s).values()] == [2]
    finally:
        study.close()


def test_a_flag_given_after_a_collect_reaches_the_leads_rating(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from meaningbench.annotation.session import AnnotationSession

    lead, back = _kits(tmp_path, raters="ana", rated=2)
    assert _collect(lead, back, capsys)[0] == 0
    made = tmp_path / "made" / "ana.mbkit"
    kit = open_study(made)
    try:
        session = AnnotationSession(kit, "ana")
        rated = session.previous()
        assert rated is not None
        session.flag(rated.item_id, "two readings")
        with kit.session() as s:
            item = s.get(Item, rated.item_id)
            assert item is not None
            key = lead_keys(lead)[item.pair_key][0]
    finally:
        kit.close()
    copy_study(made, back / "ana.mbkit")
    code, out, err = _collect(lead, back, capsys)
    assert code == 0, err
    assert "ana.mbkit (ana): 0 new ratings, 2 already here, 1 note" in out, out
    study = open_study(lead)
    try:
        with study.session() as s:
            flags = s.execute(
                select(Rating.flagged, Rating.comment)
                .join(Item, Item.id == Rating.item_id)
                .where(Item.pair_key == key, Rating.origin.like("merge%"))
            ).all()
    finally:
        study.close()
    assert [tuple(f) for f in flags] == [(True, "two readings")]


def test_an_older_copy_collected_after_a_newer_one_takes_nothing_back(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Two copies of one kit in the folder, the older named after the newer: the rater's
    undo and flag in the newer copy stay, collect after collect."""
    from meaningbench.annotation.session import AnnotationSession

    lead, back = _kits(tmp_path, raters="ana", rated=2)
    made = tmp_path / "made" / "ana.mbkit"
    kit = open_study(made)
    try:
        session = AnnotationSession(kit, "ana")
        assert session.undo_last() is not None  # the second rating withdrawn
        first = session.previous()
        assert first is not None
        session.flag(first.item_id, "unsure")
    finally:
        kit.close()
    shutil.move(back / "ana.mbkit", back / "old ana.mbkit")  # sorts after the newer copy
    copy_study(made, back / "ana.mbkit")
    for _ in range(2):
        code, out, err = _collect(lead, back, capsys)
        assert code == 0, err
        assert _held(lead)[0] == held_in_kit(made, lead)
        assert "old ana.mbkit (ana): 0 new ratings, 2 already here" in out, out
    assert "ana.mbkit (ana): 0 new ratings, 2 already here" in out, out
    study = open_study(lead)
    try:
        with study.session() as s:
            flags = s.scalars(select(Rating.comment).where(Rating.flagged.is_(True))).all()
    finally:
        study.close()
    assert flags == ["unsure"]


def test_a_kit_swapped_in_the_folder_after_its_check_is_not_what_comes_in(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The file checked is the file merged: a forged kit put in place of the genuine one
    between the two (a shared folder the rater can write to) brings nothing of its own."""
    import meaningbench.kits.collecting as collecting

    lead, back = _kits(tmp_path, raters="ana")
    forged = tmp_path / "forged.mbkit"
    shutil.copyfile(back / "ana.mbkit", forged)
    _sql(forged, FORGE_FIRST_RATING)
    genuine_check = collecting.check_kit

    def check_then_swap(*args: object, **kwargs: object) -> object:
        checked = genuine_check(*args, **kwargs)  # type: ignore[arg-type]
        shutil.copyfile(forged, back / "ana.mbkit")
        return checked

    monkeypatch.setattr(collecting, "check_kit", check_then_swap)
    code, out, err = _collect(lead, back, capsys)
    assert code == 0, err
    assert "ana.mbkit (ana): 4 new ratings" in out, out
    # Exactly the genuine kit's ratings (the forged value differs from its first one; a
    # check for the value itself failed when a genuine rating happened to hold it).
    assert _held(lead)[0] == held_in_kit(tmp_path / "made" / "ana.mbkit", lead)


def test_an_item_whose_rating_the_rater_undid_after_a_collect_is_open_again_at_the_lead(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """So a kit made again for the rater offers it again, as their own kit does."""
    from meaningbench.annotation.session import AnnotationSession
    from meaningbench.db.models import Annotator, QueueEntry

    lead, back = _kits(tmp_path, raters="ana", rated=2)
    assert _collect(lead, back, capsys)[0] == 0
    made = tmp_path / "made" / "ana.mbkit"
    kit = open_study(made)
    try:
        reopened = AnnotationSession(kit, "ana").undo_last()
        assert reopened is not None
        with kit.session() as s:
            item = s.get(Item, reopened.item_id)
            assert item is not None
            key = lead_keys(lead)[item.pair_key]
    finally:
        kit.close()
    copy_study(made, back / "ana.mbkit")
    assert _collect(lead, back, capsys)[0] == 0
    study = open_study(lead)
    try:
        with study.session() as s:
            done = {
                (k, kind): d
                for k, kind, d in s.execute(
                    select(Item.pair_key, Item.kind, QueueEntry.done)
                    .join(Item, Item.id == QueueEntry.item_id)
                    .join(Annotator, Annotator.id == QueueEntry.annotator_id)
                    .where(Annotator.name == "ana")
                )
            }
    finally:
        study.close()
    assert done[key] is False
    assert sum(done.values()) == 1  # the other rating stays in force


def test_a_kit_and_its_return_record_are_stored_together(tmp_path: Path, capsys) -> None:
    """A fault while the kit's return is recorded (here SQLite itself refuses the write)
    leaves none of its ratings in: merged without a record, the kit would count as never
    returned, and a second collect would find nothing new to record it by."""
    lead, back = _kits(tmp_path, "ana", rated=4)
    conn = sqlite3.connect(lead)
    with conn:
        conn.execute(
            "CREATE TRIGGER refuse_the_record BEFORE UPDATE ON study_setting "
            "WHEN NEW.key = 'kits' BEGIN SELECT RAISE(ABORT, 'disk I/O error'); END"
        )
    conn.close()

    def state() -> tuple[int, list[str]]:
        study = open_study(lead)
        try:
            with study.session() as s:
                n = s.scalar(
                    select(func.count()).select_from(Rating).where(Rating.origin.like("merge:%"))
                )
                returns = [r for rec in kit_records(s).values() for r in rec.returns]
        finally:
            study.close()
        return int(n or 0), returns

    assert main(["collect", str(lead), str(back)]) == 2
    assert "of which nothing was merged" in capsys.readouterr().err
    assert state() == (0, [])  # and so it is
    conn = sqlite3.connect(lead)
    with conn:
        conn.execute("DROP TRIGGER refuse_the_record")
    conn.close()
    assert main(["collect", str(lead), str(back)]) == 0
    n, returns = state()
    assert n == 4 and len(returns) == 1
